"""Vertex graphs as numpy arrays: adjacency from polygons, independent sets, grouped maxima.

A graph is a pair of int arrays ``(heads, tails)`` listing every edge in both directions,
sorted by ``heads`` (a CSR layout without the row pointer).
"""

from collections.abc import Iterable

import numpy as np


def polygon_neighbours(vertex_count: int, corners: np.ndarray, sizes: np.ndarray, edges=None):
    """Vertices sharing a triangle or quad, neighbours along n-gon sides, and the given
    loose edges, as a symmetric graph.

    Parameters
    ----------
    corners : (m,) int
        Vertex index of every polygon corner, polygon after polygon (Blender's loops).
    sizes : (p,) int
        Corner count of every polygon.
    edges : (e, 2) int, optional
        Extra edges, e.g. loose (wire) edges.
    """
    corners = np.asarray(corners, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    ends: list[tuple[np.ndarray, np.ndarray]] = []
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    polygons_of_size = np.bincount(sizes) if sizes.size else sizes
    for size in np.flatnonzero(polygons_of_size):
        if size < 2:
            continue
        # Polygons of one size as columns of a (size, count) table: all pairs in a few slices.
        if polygons_of_size[size] == sizes.size and corners.size == size * sizes.size:  # all: the corners are it
            columns = corners.reshape(-1, size).T
        else:
            columns = corners[starts[sizes == size] + np.arange(size)[:, None]]
        if size <= 4:  # triangles and quads: every pair (a quad's diagonals, as on a grid)
            links = [(i, j) for i in range(size) for j in range(i + 1, size)]
        else:  # n-gons: their sides only, or a 32-gon cap would be one 32-vertex clique
            links = [(i, (i + 1) % size) for i in range(size)]
        ends.extend((columns[i], columns[j]) for i, j in links)
    if edges is not None and len(edges):
        extra = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        ends.append((extra[:, 0], extra[:, 1]))
    return symmetric_graph_of(vertex_count, ends)


def ranges(first: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The concatenated index ranges first[i] .. first[i] + count[i] - 1."""
    ends = np.cumsum(count)
    return np.repeat(first - (ends - count), count) + np.arange(ends[-1] if ends.size else 0)


def symmetric_graph(vertex_count: int, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both directions of every pair ``first[i]``, ``second[i]``, without self loops or
    repeats, sorted by head, then tail."""
    return symmetric_graph_of(vertex_count, [(first, second)])


def symmetric_graph_of(
    vertex_count: int, pairs: Iterable[tuple[np.ndarray, np.ndarray]], total: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``symmetric_graph`` of the pairs of several arrays, ``[(first, second), ...]``,
    without concatenating them; or of blocks of pairs made one at a time, ``total`` pairs
    in all (the blocks need not all be in memory at once)."""
    # Each edge once (a coarse graph's pairs repeat some six times over, a quarter of them
    # loops), packed as one integer (low, high) so one sort of plain integers orders them;
    # then the other direction, ordered by its head alone (the edges being ordered by their
    # low end already), and merged (the stable sort of two sorted runs is a merge). In place
    # where it can be: at a million vertices every temporary is tens of megabytes to fault in.
    bits = max(int(vertex_count - 1).bit_length(), 1)
    mask = (1 << bits) - 1
    if total is None:
        pairs = list(pairs)
        total = sum(len(first) for first, _ in pairs)
    keys = sorted_by_groups(_edge_keys(pairs, bits, total), 2 * bits)
    new = np.empty(keys.size, dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    keys = keys[new]
    high, order = sort_with_order(keys & mask)
    high <<= bits
    high |= keys.take(order) >> bits
    both = np.concatenate([keys, high])
    both.sort(kind="stable")
    heads = both >> bits
    both &= mask
    return heads, both


def _edge_keys(pairs: Iterable[tuple[np.ndarray, np.ndarray]], bits: int, total: int) -> np.ndarray:
    """Every pair but self loops as one integer, (low << bits) | high, written into one
    array a block at a time: no temporary as large as the pairs."""
    keys = np.empty(total, dtype=np.int64)
    filled = 0
    for first, second in pairs:
        for start in range(0, len(first), BLOCK):
            low, high = np.asarray(first[start : start + BLOCK]), np.asarray(second[start : start + BLOCK])
            apart = low != high
            if not apart.all():
                low, high = low[apart], high[apart]
            part = keys[filled : filled + low.size]
            np.minimum(low, high, out=part)
            part <<= bits
            part |= np.maximum(low, high)
            filled += low.size
    return keys[:filled]


#: Items a blockwise pass handles at a time: its temporaries stay small and are reused.
BLOCK = 1 << 16


def sorted_by_groups(keys: np.ndarray, key_bits: int) -> np.ndarray:
    """Non-negative integer ``keys`` below ``2**key_bits``, sorted: first grouped by their
    top 16 bits (numpy's stable sort of 16-bit integers is a radix sort, one pass over
    them), then sorted within the groups by a stable sort (a timsort: it finds the groups'
    order and merges them at little cost): 0.25 s where a plain sort takes 0.45 s, for the
    six million keys of a million-vertex mesh's edges."""
    shift = max(key_bits - 16, 0)
    keys = keys.take(np.argsort(digits(keys, shift), kind="stable"))
    if shift:
        keys.sort(kind="stable")
    return keys


def independent_set(vertex_count: int, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """A maximal independent set (Luby): no two chosen vertices are neighbours, and every
    vertex not chosen has a chosen neighbour. Deterministic: priorities are a fixed hash.

    Returns a (vertex_count,) bool mask. Vertices without neighbours are always chosen.
    """
    index = np.arange(vertex_count, dtype=np.uint64)
    scrambled = (index * np.uint64(2654435761) + np.uint64(12345)) % np.uint64(2**32)
    priority = scrambled.astype(np.int64) * vertex_count + index.astype(np.int64)  # unique
    chosen = np.zeros(vertex_count, dtype=bool)
    open_ = np.ones(vertex_count, dtype=bool)
    while open_.any():
        # An edge with a closed end is done with for good: each round keeps the rest, still
        # in runs of equal heads, and takes each run's largest priority in one reduction.
        live = open_[heads] & open_[tails]
        if not live.all():  # (the first round: every edge)
            heads, tails = heads[live], tails[live]
        best_neighbour = np.full(vertex_count, -1, dtype=np.int64)
        if heads.size:
            starts = np.flatnonzero(np.append(True, heads[1:] != heads[:-1]))
            best_neighbour[heads[starts]] = np.maximum.reduceat(priority[tails], starts)  # (a run a vertex)
        pick = open_ & (priority > best_neighbour)
        chosen |= pick
        open_ &= ~pick
        open_[tails[pick[heads]]] = False
    return chosen


def settled(values: np.ndarray, scale, decimals: int = 9, in_place: bool = False) -> np.ndarray:
    """``values / scale`` rounded to ``decimals``, for choosing a largest: values equal but for
    rounding become equal, and the tie goes to the lower index, as it does for the mesh turned
    or moved (which rounds differently). A symmetric mesh is full of such ties (two kept
    neighbours as near, a vertex on the edge two coarse triangles share, two children pushed
    as far); broken by rounding, they would change the hierarchy, and so the response, when
    the scene is turned. ``in_place``: overwrite ``values`` (a float array), the same bits."""
    scale = float(scale)
    if not scale > 0:
        return values
    if not in_place:
        return np.round(values / scale, decimals)
    values /= scale
    return np.round(values, decimals, out=values)


def group_argmax(groups: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every group present, the position of its largest value (the first among equals).

    Returns ``(group_ids, positions)``, group ids ascending.
    """
    if values.size == 0:
        return groups[:0], np.zeros(0, dtype=np.int64)
    order = None
    if np.any(groups[1:] < groups[:-1]):  # callers mostly pass groups already sorted
        groups, order = sort_with_order(groups)
        values = values[order]
    starts = np.flatnonzero(np.append(True, groups[1:] != groups[:-1]))
    first = first_largest(values, starts)
    return groups[starts], first if order is None else order[first]


def first_largest(values: np.ndarray, starts: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """The position of the largest value (the first among equals) in each run of ``values``
    starting at ``starts`` (ascending, the first 0, none empty); ``counts``, when known,
    the length of each run."""
    if counts is None:
        counts = np.diff(np.append(starts, values.size))
    best = np.maximum.reduceat(values, starts)
    hits = np.flatnonzero(values == np.repeat(best, counts))
    return hits[np.searchsorted(hits, starts)]  # first hit at or after each run's start


def first_smallest(values: np.ndarray, starts: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """``first_largest`` of ``-values``, without negating them."""
    if counts is None:
        counts = np.diff(np.append(starts, values.size))
    best = np.minimum.reduceat(values, starts)
    hits = np.flatnonzero(values == np.repeat(best, counts))
    return hits[np.searchsorted(hits, starts)]


def sort_with_order(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``keys`` sorted, and ``np.argsort(keys, kind="stable")``, for integer keys.

    Non-negative keys below 2**32 (vertex and face indices) take a radix sort; larger ones,
    packed with their positions into one int64, a plain sort (numpy sorts plain integers
    several times faster than a stable indirect sort); other keys the indirect sort."""
    keys = np.asarray(keys)
    count = keys.size
    largest = int(keys.max()) if count else 0
    bits = max(int(count - 1).bit_length(), 1)
    if count == 0 or keys.min() < 0 or largest >= 1 << (62 - bits):
        order = np.argsort(keys, kind="stable")
        return keys[order], order
    if largest < 1 << 32:
        order = radix_argsort(keys, largest)
        return keys.take(order), order
    packed = keys.astype(np.int64) << bits
    packed |= np.arange(count)
    packed.sort()
    return (packed >> bits).astype(keys.dtype, copy=False), packed & ((1 << bits) - 1)


def radix_argsort(keys: np.ndarray, largest: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of integer keys from 0 to ``largest`` < 2**32: the
    stable sort by their low 16 bits, then by their high 16 (numpy's stable sort of 16-bit
    integers is a radix sort, linear), some twice as fast as sorting them whole at a million
    keys."""
    order = np.argsort(digits(keys, 0), kind="stable")
    if largest > 0xFFFF:
        order = order.take(np.argsort(digits(keys, 16, order), kind="stable"))
    return order


def digits(keys: np.ndarray, shift: int, order: np.ndarray | None = None) -> np.ndarray:
    """Bits ``shift`` to ``shift + 15`` of non-negative integer ``keys`` (of ``keys[order]``)
    as uint16, a block at a time: no temporary as large as the keys."""
    out = np.empty(keys.size if order is None else order.size, dtype=np.uint16)
    for start in range(0, out.size, BLOCK):
        block = keys[start : start + BLOCK] if order is None else keys.take(order[start : start + BLOCK])
        out[start : start + BLOCK] = (block >> shift) & 0xFFFF
    return out


def group_starts(groups: np.ndarray, count: int) -> np.ndarray:
    """Where each of ``count`` groups starts once ``groups`` (values below ``count``) are
    sorted, and where the last ends (count + 1): their sizes summed."""
    start = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(groups, minlength=count), out=start[1:])
    return start


def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of integer keys (see ``sort_with_order``)."""
    keys = np.asarray(keys)
    if keys.size and keys.min() >= 0 and (largest := int(keys.max())) < 1 << 32:
        return radix_argsort(keys, largest)  # (not the sorted keys as well)
    return sort_with_order(keys)[1]


def components(vertex_count: int, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Connected component (island) label of every vertex: the smallest vertex index in it.

    Label propagation with pointer jumping: each round hooks every label onto the smallest
    label across its edges, then jumps labels to their roots; a few rounds suffice.
    """
    label = np.arange(vertex_count)
    lower = label.copy()
    while heads.size:
        # Each vertex's edges are a run (heads are sorted): the smallest label across each
        # run in one reduction, then one hook per vertex, not one per edge.
        starts = np.flatnonzero(np.append(True, heads[1:] != heads[:-1]))
        np.minimum.at(lower, label[heads[starts]], np.minimum.reduceat(label[tails], starts))
        while True:  # pointer jumping: follow labels to their roots
            jumped = lower[lower]
            if np.array_equal(jumped, lower):
                break
            lower = jumped
        if np.array_equal(lower, label):
            return label
        label = lower
        # Every label is a root now, so an edge whose ends share one shares it from then on:
        # each round reads only the edges still across two labels.
        across = label[heads] != label[tails]
        heads, tails = heads[across], tails[across]
        lower = label.copy()
    return label
