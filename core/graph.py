"""Vertex graphs as numpy arrays: adjacency from polygons, independent sets, grouped maxima.

A graph is a pair of int arrays ``(heads, tails)`` listing every edge in both directions,
sorted by ``heads`` (a CSR layout without the row pointer).
"""

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
    for size in np.unique(sizes):
        if size < 2:
            continue
        # Polygons of one size as columns of a (size, count) table: all pairs in a few slices.
        columns = corners[starts[sizes == size] + np.arange(size)[:, None]]
        if size <= 4:  # triangles and quads: every pair (a quad's diagonals, as on a grid)
            links = [(i, j) for i in range(size) for j in range(i + 1, size)]
        else:  # n-gons: their sides only, or a 32-gon cap would be one 32-vertex clique
            links = [(i, (i + 1) % size) for i in range(size)]
        ends.extend((columns[i], columns[j]) for i, j in links)
    if edges is not None and len(edges):
        extra = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        ends.append((extra[:, 0], extra[:, 1]))
    if not ends:
        return symmetric_graph(vertex_count, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    return symmetric_graph(vertex_count, np.concatenate([a for a, _ in ends]), np.concatenate([b for _, b in ends]))


def ranges(first: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The concatenated index ranges first[i] .. first[i] + count[i] - 1."""
    ends = np.cumsum(count)
    return np.repeat(first - (ends - count), count) + np.arange(ends[-1] if ends.size else 0)


def symmetric_graph(vertex_count: int, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both directions of every pair ``first[i]``, ``second[i]``, without self loops or
    repeats, sorted by head, then tail."""
    # Each edge once (a coarse graph's pairs repeat some ten times over), packed as one
    # integer (low, high) so a plain sort orders them; then the other direction, sorted
    # alone and merged (the stable sort of two sorted runs is a merge). In place where it
    # can be: at a million vertices every temporary is tens of megabytes to fault in.
    bits = max(int(vertex_count - 1).bit_length(), 1)
    mask = (1 << bits) - 1
    keys = np.minimum(first, second).astype(np.int64, copy=False)
    keys <<= bits
    keys |= np.maximum(first, second)
    keys.sort()
    new = np.empty(keys.size, dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    keys = keys[new]
    low, high = keys >> bits, keys & mask
    loop = low == high
    if loop.any():
        keys, low, high = keys[~loop], low[~loop], high[~loop]
    high <<= bits
    high |= low
    high.sort()
    both = np.concatenate([keys, high])
    both.sort(kind="stable")
    heads = both >> bits
    both &= mask
    return heads, both


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
        heads, tails = heads[live], tails[live]
        best_neighbour = np.full(vertex_count, -1, dtype=np.int64)
        if heads.size:
            starts = np.flatnonzero(np.append(True, heads[1:] != heads[:-1]))
            np.maximum.at(best_neighbour, heads[starts], np.maximum.reduceat(priority[tails], starts))
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

    Non-negative keys and their positions packed into one int64 sort directly (numpy sorts
    plain integers with SIMD, several times faster than a stable indirect sort); other keys
    take the indirect sort."""
    keys = np.asarray(keys)
    count = keys.size
    bits = max(int(count - 1).bit_length(), 1)
    if count == 0 or keys.min() < 0 or int(keys.max()) >= 1 << (62 - bits):
        order = np.argsort(keys, kind="stable")
        return keys[order], order
    packed = keys.astype(np.int64) << bits
    packed |= np.arange(count)
    packed.sort()
    return (packed >> bits).astype(keys.dtype, copy=False), packed & ((1 << bits) - 1)


def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of integer keys (see ``sort_with_order``)."""
    return sort_with_order(keys)[1]


def components(vertex_count: int, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Connected component (island) label of every vertex: the smallest vertex index in it.

    Label propagation with pointer jumping: each round hooks every label onto the smallest
    label across its edges, then jumps labels to their roots; a few rounds suffice.
    """
    label = np.arange(vertex_count)
    if heads.size == 0:
        return label
    # The first round's labels are the vertices: each hooks onto its smallest neighbour, one
    # reduction over each run of equal heads (a vertex each, heads being sorted).
    starts = np.flatnonzero(np.append(True, heads[1:] != heads[:-1]))
    lower = label.copy()
    np.minimum.at(lower, heads[starts], np.minimum.reduceat(tails, starts))
    while True:
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
        head_label, tail_label = label[heads], label[tails]
        across = head_label != tail_label
        heads, tails = heads[across], tails[across]
        lower = label.copy()
        np.minimum.at(lower, head_label[across], tail_label[across])
