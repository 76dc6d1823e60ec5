"""A multi-resolution hierarchy for any mesh: triangles, quads, n-gons, open or closed,
several islands, loose vertices.

Each coarser level keeps a maximal independent set of the finer level's vertex graph
(vertices sharing a triangle or quad), so levels are nested. The coarse graph links coarse
vertices whose children touch (the pattern of P^T A P), so coarsening never splits an
island; its triangles (3-cliques) are the coarse surface. A removed vertex interpolates
the corners of the coarse triangle it lies in (barycentric weights: rows sum to 1, and a
flat coarse level reproduces the finer one exactly); a coarse vertex's children are the
fine vertices that interpolate it. Frames: central differences across each vertex's own
neighbourhood on its prolongated parent surface, which turn exactly with any rigid motion
and with the coarse triangles the vertex lies on (as the grid's linear prolongation does).
"""

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .constants import DTYPE, SETTLED_STEP, TINY
from .frames import TangentFrames
from .graph import (
    components,
    first_largest,
    first_smallest,
    group_argmax,
    group_starts,
    independent_set,
    polygon_neighbours,
    ranges,
    settled,
    sort_with_order,
    stable_argsort,
    symmetric_graph_of,
)
from .grid import Prolongation, Restriction
from .locality import inverse, nested_orders, relabel_stencil, relabel_transfer, stencil_readers
from .vectors import cross, dot

#: A removed vertex interpolates the three corners of a coarse triangle.
PARENTS = 3
#: Coarsening stops before a level would have fewer vertices than this...
SMALLEST_LEVEL = 4
#: An island is not coarsened below this many vertices.
ISLAND_MINIMUM = 4
#: ...or when it would keep more than this fraction of the finer level (nothing left to merge).
STALLED = 0.9
#: Rest tangents closer to parallel than this sine, or shorter than this fraction of the
#: level's median edge, give a vertex no frame of its own.
MIN_FRAME_SINE = 0.05
MIN_TANGENT = 1e-3
#: Where no neighbourhood on either level is wider than ``MIN_FRAME_SINE``, a thinner one
#: down to this still makes the frame (better than the object's axes, which never turn).
LAST_RESORT_SINE = 1e-3


@dataclass
class _Transfer:
    """Operators between level j-1 (coarse) and level j (fine); indices are level-local."""

    parents: np.ndarray  # (K, n_j) coarse parents of each fine vertex; a spare slot repeats one
    weights: np.ndarray  # (K, n_j) interpolation weights (0 in spare slots), columns sum to 1
    child_group: np.ndarray  # (e,) coarse vertex of each (coarse, child) entry
    child_fine: np.ndarray  # (e,) the fine child
    child_weight: np.ndarray  # (e,) its interpolation weight
    child_is_self: np.ndarray  # (e,) the child is the coarse vertex itself
    group_start: np.ndarray  # (n_{j-1} + 1,) where each coarse vertex's entries start
    by_child: np.ndarray  # (e,) entries ordered by fine child...
    child_start: np.ndarray  # (n_j + 1,) ...where each fine vertex's entries start in it


@dataclass
class _Stencil:
    """Per-vertex neighbours whose differences are the two tangents: du = x[u1] - x[u0]."""

    u1: np.ndarray
    u0: np.ndarray
    v1: np.ndarray
    v0: np.ndarray


@dataclass
class _FrameStencil:
    """Where a level's tangents come from: its own stencil on the prolongated parent
    surface, except at the few vertices where that surface is degenerate (neighbours with
    the same parents), which take their heaviest parent's stencil on the coarse level."""

    own: _Stencil
    fallback: np.ndarray  # level vertices using the coarse stencil
    coarse: _Stencil  # ends on the coarse level, one per fallback vertex
    fallback_slot: np.ndarray  # (n_j,) each vertex's place in ``fallback``, -1 if none
    readers: np.ndarray  # the vertices whose own stencil reads each vertex, grouped by it...
    readers_start: np.ndarray  # ...(n_j + 1,) where each vertex's group starts


class MeshHierarchy:
    """The hierarchy of an arbitrary mesh, with the operators the solver needs.

    Parameters
    ----------
    rest : (n, 3) float
        Rest positions of the mesh's vertices.
    corners, sizes
        Polygons: the vertex index of every corner, polygon after polygon, and the corner
        count of each polygon (Blender's ``loops`` and ``loop_total``).
    edges : (e, 2) int, optional
        Edges not on any polygon (wire edges), so they hold their vertices together.
    """

    def __init__(self, rest: np.ndarray, corners: np.ndarray, sizes: np.ndarray, edges: np.ndarray | None = None):
        rest = np.asarray(rest, dtype=np.float64)
        count = rest.shape[0]
        heads, tails = polygon_neighbours(count, corners, sizes, edges)
        # Level vertices as indices into the mesh, finest first while building.
        members = [np.arange(count)]
        graphs = [(heads, tails)]
        transfers: list[_Transfer] = []
        island = components(count, heads, tails)
        # The finest level's frames, the largest part of the build, need only its transfer:
        # a second thread works them out while this one coarsens further, works out the other
        # levels' frames and puts the levels in their local order (numpy lets go of the GIL in
        # its passes over large arrays). The same arrays either way.
        finest_frames = None
        with ThreadPoolExecutor(max_workers=1) as pool:
            while True:
                fine = members[-1]
                h, t = graphs[-1]
                keep = independent_set(fine.size, h, t)
                # An island that would keep fewer than a handful is not coarsened: a coarser
                # level with two points could not carry a rotation (two points are a line).
                labels = np.unique(island[fine], return_inverse=True)[1]
                keep |= np.bincount(labels, keep)[labels] < ISLAND_MINIMUM
                kept = int(keep.sum())
                if kept < SMALLEST_LEVEL or kept > STALLED * fine.size:
                    break
                level_rest = rest.take(fine, axis=0)  # (take: rows gathered several times faster)
                transfer, coarse_graph = _coarsen(level_rest, keep, h, t)
                # A vertex hung far from its parent is kept as well, and the level coarsened
                # again (rare: long edges beside short ones), until none hangs so far: the
                # others are placed anew each time.
                span = _second_shortest_edges(level_rest, h, t)
                while (stranded := _stranded(level_rest, keep, transfer, span)).any():
                    keep |= stranded
                    transfer, coarse_graph = _coarsen(level_rest, keep, h, t)
                if finest_frames is None:
                    finest_frames = pool.submit(_frame_stencil, transfer, level_rest[keep], (h, t), coarse_graph)
                transfers.append(transfer)
                members.append(fine[keep])
                graphs.append(coarse_graph)
            members.reverse()
            graphs.reverse()
            transfers.reverse()
            stencils = [
                _frame_stencil(transfers[j - 1], rest.take(members[j - 1], axis=0), graphs[j], graphs[j - 1])
                for j in range(1, len(members) - 1)
            ]
            self.sizes = [m.size for m in members]
            relabels = self._put_in_local_order(members, transfers)
            stencils = [
                relabel_stencil(stencil, *relabel) for stencil, relabel in zip(stencils, relabels[:-1], strict=True)
            ]
            if finest_frames is not None:
                stencils.append(relabel_stencil(finest_frames.result(), *relabels[-1]))
        self._stencils = stencils

    def _put_in_local_order(self, members: list[np.ndarray], transfers: list[_Transfer]) -> list[tuple]:
        """Relabel every level's vertices so that a step reads memory locally (see
        ``locality``): the levels' members and transfers (``_transfers[j - 1]``: from level
        j-1 to level j); the finest level's order is ``vertex_order``. Returns each level's
        relabelling, for its frame stencil."""
        orders = nested_orders(self.sizes, transfers)
        ranks = [inverse(order) for order in orders]
        relabels = [(ranks[j - 1], orders[j], ranks[j]) for j in range(1, len(orders))]
        self._transfers = [
            relabel_transfer(transfer, *relabel) for transfer, relabel in zip(transfers, relabels, strict=True)
        ]
        self._members = [level[order] for level, order in zip(members, orders, strict=True)]
        #: The mesh vertex at each place of the finest level: a solver reads its inputs
        #: through it and writes its output back through it.
        self.vertex_order: np.ndarray | None = self._members[-1]
        return relabels

    @classmethod
    def from_triangles(cls, rest: np.ndarray, triangles: np.ndarray) -> "MeshHierarchy":
        """Convenience for a triangle list (t, 3)."""
        triangles = np.asarray(triangles)
        return cls(rest, triangles.ravel(), np.full(len(triangles), 3))

    # -- the Hierarchy protocol -----------------------------------------------------------------

    def prolong(self, level: int, coarse: np.ndarray, method: Prolongation, patch: bool = False) -> np.ndarray:
        """Positions of ``level - 1`` interpolated to ``level``. Meshes interpolate linearly
        (barycentric weights) whatever the method: a cubic rule needs a grid. With ``patch``,
        only the children of coarse vertices with a nonzero value are computed."""
        transfer = self._transfers[level - 1]
        if not patch:
            return _interpolate(coarse, transfer.parents, transfer.weights)
        nonzero = np.flatnonzero(np.any(coarse != 0, axis=0))
        first, number = transfer.group_start[nonzero], transfer.group_start[nonzero + 1] - transfer.group_start[nonzero]
        rows = np.unique(transfer.child_fine[ranges(first, number)])
        out = np.zeros((coarse.shape[0], transfer.parents.shape[1]), dtype=np.result_type(coarse.dtype, DTYPE))
        out[:, rows] = _interpolate(coarse, transfer.parents[:, rows], transfer.weights[:, rows])
        return out

    def restrict(
        self, level: int, fine: np.ndarray, method: Restriction, moving: np.ndarray | None = None
    ) -> np.ndarray:
        """Displacements of ``level`` to ``level - 1``, over each coarse vertex's children."""
        transfer = self._transfers[level - 1]
        coarse = np.zeros((3, self.sizes[level - 1]), dtype=fine.dtype)
        if moving is None:
            lengths = np.sqrt(dot(fine, fine))
        else:  # read only there: the rest are zero
            part = fine.take(moving, axis=1)
            lengths = np.zeros(fine.shape[1], dtype=fine.dtype)
            lengths[moving] = np.sqrt(dot(part, part))
        moving = (lengths > TINY).nonzero()[0] if moving is None else moving[lengths[moving] > TINY]
        if moving.size == 0:
            return coarse
        # The entries of the moving children only (a few percent of all, in a press), in
        # their stored order (by coarse vertex), so ties break as in a dense pass.
        entries = np.sort(_entries_of(transfer, moving))
        group = transfer.child_group[entries]
        child = transfer.child_fine[entries]
        ids, best = group_argmax(group, settled(lengths[child], lengths[moving].max(), SETTLED_STEP))
        longest = fine[:, child[best]]
        if method == "max":
            coarse[:, ids] = longest
        elif method == "average":
            coarse[:, ids] = _average(fine, lengths, transfer, entries, group, child, ids, longest)
        else:
            coarse[:, ids] = _full_weighting(fine, transfer, entries, group, child, ids, longest)
        return coarse

    def restrict_mask(self, level: int, fine: np.ndarray) -> np.ndarray:
        """Coarse vertices of ``level - 1`` with a marked child."""
        transfer = self._transfers[level - 1]
        coarse = np.zeros(self.sizes[level - 1], dtype=bool)
        coarse[transfer.child_group[_entries_of(transfer, fine.nonzero()[0])]] = True
        return coarse

    def restrict_max(self, level: int, fine: np.ndarray) -> np.ndarray:
        """Fields (c, n) of ``level`` to ``level - 1``: each coarse vertex's the largest of its
        children's, the type's least where none."""
        transfer, least = self._transfers[level - 1], np.iinfo(fine.dtype).min
        coarse = np.full((fine.shape[0], self.sizes[level - 1]), least, dtype=fine.dtype)
        entries = _entries_of(transfer, (fine != least).any(axis=0).nonzero()[0])
        parents, children = transfer.child_group[entries], transfer.child_fine[entries]
        for row in range(fine.shape[0]):
            np.maximum.at(coarse[row], parents, fine[row, children])
        return coarse

    def prolong_with_frames(
        self, level: int, coarse: np.ndarray, method: Prolongation, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, TangentFrames]:
        """Positions of ``level - 1`` interpolated to ``level``, and frames on that parent
        surface: each vertex's two central differences across its neighbourhood (chosen at
        rest). They turn exactly with any rigid motion of the coarse level, since the
        weights sum to 1, and with the coarse triangles the vertex lies on. With ``rows``,
        the parent surface is interpolated only where those vertices and their stencils read
        it."""
        stencil = self._stencils[level - 1]
        if rows is None:
            surface = self.prolong(level, coarse, method)
        else:
            own = stencil.own
            needed = np.zeros(self.sizes[level], dtype=bool)
            for index in (rows, own.u1[rows], own.u0[rows], own.v1[rows], own.v0[rows]):
                needed[index] = True
            needed = needed.nonzero()[0]
            transfer = self._transfers[level - 1]
            values = _interpolate(coarse, transfer.parents[:, needed], transfer.weights[:, needed])
            surface = np.empty((3, self.sizes[level]), dtype=values.dtype)  # read only where needed
            surface[:, needed] = values

        def tangents(index: slice | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            own = stencil.own
            du, dv = _tangents(_Stencil(own.u1[index], own.u0[index], own.v1[index], own.v0[index]), surface)
            slot = stencil.fallback_slot[index]
            at = (slot >= 0).nonzero()[0]
            if at.size:
                c = stencil.coarse
                ends = _Stencil(c.u1[slot[at]], c.u0[slot[at]], c.v1[slot[at]], c.v0[slot[at]])
                du[:, at], dv[:, at] = _tangents(ends, coarse)
            return du, dv

        frames = TangentFrames(tangents, self.sizes[level])
        if rows is None:
            return surface, frames
        return surface.take(rows, axis=1), frames.subset(rows)

    def dependents(self, level: int, moved: np.ndarray, method: Prolongation) -> np.ndarray:
        """The moved coarse vertices' children, the vertices whose stencils read those, and
        the fallback vertices whose coarse stencil reads a moved vertex."""
        transfer, stencil = self._transfers[level - 1], self._stencils[level - 1]
        coarse = moved.nonzero()[0]
        out = np.zeros(self.sizes[level], dtype=bool)
        first, number = transfer.group_start[coarse], transfer.group_start[coarse + 1] - transfer.group_start[coarse]
        out[transfer.child_fine[ranges(first, number)]] = True
        children = out.nonzero()[0]
        start = stencil.readers_start
        out[stencil.readers[ranges(start[children], start[children + 1] - start[children])]] = True
        c = stencil.coarse
        out[stencil.fallback[moved[c.u1] | moved[c.u0] | moved[c.v1] | moved[c.v0]]] = True
        return out

    def inject(self, level: int, finest_values: np.ndarray) -> np.ndarray:
        """Per-vertex values of the mesh (..., n), in its own vertex order, at ``level``'s
        vertices, in the level's order."""
        return np.ascontiguousarray(finest_values[..., self._members[level]])

    def level_vertices(self, level: int) -> np.ndarray:
        """Mesh vertex indices of the vertices of ``level``, in the level's order (a local
        one, not ascending: see ``locality``)."""
        return self._members[level]


def _stranded(points: np.ndarray, keep: np.ndarray, transfer: _Transfer, span: np.ndarray) -> np.ndarray:
    """A level's vertices not kept that hang from their interpolated parent point further
    than ``STRANDED`` times their ``span`` (their second shortest edge), (n,) bool. Such a
    vertex's detail turns with the frame at its parent point, which is measured over that
    point's neighbours, much nearer: a turn of that frame swings it round (the rim of
    Blender's cylinder hung from the far end of its 1 m side edge, and a press there threw it
    a metre). Kept, it is a parent itself. On every level: the cylinder's next level hung from
    its coarsest up to 2.1 m."""
    parent = _interpolate(points[keep].T, transfer.parents, transfer.weights).T
    hang = np.sqrt(np.einsum("ij,ij->i", points - parent, points - parent))
    return ~keep & (hang > STRANDED * span)


def _second_shortest_edges(points: np.ndarray, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Each vertex's second shortest edge in the graph ``heads``, ``tails`` (sorted by head),
    (n,): inf for a vertex with fewer than two. The second: a degenerate edge (a vertex
    welded nearly onto another, common in modelled meshes) says nothing of the span a frame
    is measured over, and the two shortest are its neighbours on either side. A chunk of
    edges at a time (at a million vertices all at once would be some 400 MB), each vertex's
    edges in one chunk."""
    count = points.shape[0]
    first_edge = group_starts(heads, count)
    second = np.full(count, np.inf, dtype=np.float32)
    points = points.astype(np.float32)  # (a threshold: half the memory to gather)
    start = 0
    while start < count:
        stop = int(np.searchsorted(first_edge, first_edge[start] + EDGE_CHUNK, side="right")) - 1
        stop = min(max(stop, start + 1), count)
        lo, hi = first_edge[start], first_edge[stop]
        head, tail = heads[lo:hi], tails[lo:hi]
        step = points.take(head, axis=0) - points.take(tail, axis=0)
        length = np.sqrt(np.einsum("ij,ij->i", step, step))
        # Each vertex's shortest taken out (its first, where two tie), the shortest left.
        begins = first_edge[start:stop] - lo
        counts = np.diff(first_edge[start : stop + 1])
        has = counts > 0
        shortest = np.minimum.reduceat(length, begins[has])
        ties = np.flatnonzero(length == np.repeat(shortest, counts[has]))
        first = ties[np.r_[True, head[ties[1:]] != head[ties[:-1]]]] if ties.size else ties
        length[first] = np.inf
        second[start:stop][has] = np.minimum.reduceat(length, begins[has])
        start = stop
    return second


#: How many times its second shortest edge a vertex may hang from its parent point (most
#: hang less than once; the rim of Blender's 32-sided cylinder, 12.8 times).
STRANDED = 4.0
#: Edges measured at a time by ``_second_shortest_edges`` (about).
EDGE_CHUNK = 1 << 20


def _frame_stencil(transfer: _Transfer, coarse_rest: np.ndarray, graph, coarse_graph) -> _FrameStencil:
    """Where the frames of a level come from (``transfer`` from the level below to it): a
    stencil on its prolongated parent surface at rest, and the coarse level's stencil at the
    heaviest parent where that surface is flat around a vertex."""
    parent_surface = _interpolate(coarse_rest.T, transfer.parents, transfer.weights).T
    own, flat = _stencil(parent_surface, *graph)
    fallback = flat.nonzero()[0]
    heaviest = transfer.parents[np.argmax(settled(transfer.weights[:, fallback], 1.0), axis=0), fallback]
    heads, tails = coarse_graph
    coarse, coarse_flat = _stencil(coarse_rest, heads, tails, of=heaviest)
    if coarse_flat.any():
        # Flat on both levels (a coarse level of a thin tube is nearly a line): the thin
        # neighbourhood's own tangents still make a frame that turns with the surface,
        # where the object's axes would not turn at all.
        thin = fallback[coarse_flat]
        level_heads, level_tails = graph
        last, still_flat = _stencil(parent_surface, level_heads, level_tails, of=thin, min_sine=LAST_RESORT_SINE)
        use = ~still_flat
        for name in ("u1", "u0", "v1", "v0"):
            getattr(own, name)[thin[use]] = getattr(last, name)[use]
        keep = np.ones(fallback.size, dtype=bool)
        keep[coarse_flat.nonzero()[0][use]] = False
        fallback, heaviest = fallback[keep], heaviest[keep]
        coarse = _Stencil(*(getattr(coarse, name)[keep] for name in ("u1", "u0", "v1", "v0")))
    slot = np.full(own.u1.size, -1)
    slot[fallback] = np.arange(fallback.size)
    return _FrameStencil(own, fallback, coarse, slot, *stencil_readers(own))


def _entries_of(transfer: _Transfer, children: np.ndarray) -> np.ndarray:
    """The (coarse, child) entries of the given fine vertices, by child."""
    first, count = transfer.child_start[children], transfer.child_start[children + 1] - transfer.child_start[children]
    return transfer.by_child[ranges(first, count)]


def _interpolate(source: np.ndarray, parents: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted sums of parents' values: ``source`` (c, n_coarse), ``parents`` and
    ``weights`` (K, m); returns (c, m). One gather and multiply-add per parent slot."""
    out = source.take(parents[0], axis=1) * weights[0]
    for slot in range(1, parents.shape[0]):
        out += source.take(parents[slot], axis=1) * weights[slot]
    return out


def _average(fine, lengths, transfer, entries, group, child, ids, longest):
    """Average-displacement: where a coarse vertex's own child moves, the longer of it and
    the mean of its other moving children; elsewhere the longest child."""
    others = ~transfer.child_is_self[entries]
    size = int(ids.max()) + 1
    count = np.bincount(group[others], minlength=size)[ids]
    # float64 even where no other child moves (the bincount of nothing is an int64 array)
    mean = np.stack([np.bincount(group[others], fine[c, child[others]], minlength=size)[ids] for c in range(3)])
    mean = mean.astype(np.float64, copy=False)
    mean /= np.maximum(count, 1)
    selves = transfer.child_is_self[entries]
    own = np.zeros_like(longest)
    own_moves = np.zeros(ids.size, dtype=bool)
    where = np.searchsorted(ids, group[selves])
    own[:, where] = fine[:, child[selves]]
    own_moves[where] = True
    mean_squared, own_squared = dot(mean, mean), dot(own, own)
    scale = max(float(mean_squared.max(initial=0.0)), float(own_squared.max(initial=0.0)))
    use_mean = (
        own_moves
        & (count > 0)
        & (settled(mean_squared, scale, SETTLED_STEP) > settled(own_squared, scale, SETTLED_STEP))
    )
    return np.where(use_mean, mean, np.where(own_moves, own, longest))


def _full_weighting(fine, transfer, entries, group, child, ids, longest):
    """The interpolation-weighted sum of the children (P^T d), rescaled to the longest
    child's length; the longest child where the sum cancels out."""
    size = int(ids.max()) + 1
    weight = transfer.child_weight[entries]
    total = np.stack([np.bincount(group, weight * fine[c, child], minlength=size)[ids] for c in range(3)])
    total_length = np.sqrt(dot(total, total))
    ok = total_length > TINY
    scale = np.divide(np.sqrt(dot(longest, longest)), total_length, out=np.zeros_like(total_length), where=ok)
    return np.where(ok, total * scale, longest)


def _coarsen(rest: np.ndarray, keep: np.ndarray, heads: np.ndarray, tails: np.ndarray):
    """Transfer operators from the kept vertices to all, and the coarse graph."""
    count = keep.size
    coarse_count = int(keep.sum())
    coarse_index = np.full(count, -1)
    coarse_index[keep] = np.arange(coarse_count)
    coarse_graph = _coarse_graph(keep, coarse_index, heads, tails)
    parents, weights = _barycentric_weights(rest, keep, heads, tails, coarse_graph)
    parents[:, keep] = keep.nonzero()[0]  # a kept vertex is its own parent, once
    weights[0, keep] = 1.0
    parents = coarse_index[parents]
    # Children of each coarse vertex: every (fine, parent) entry with a weight, slot by slot.
    # They are grouped by parent (each group keeping this order) and indexed once the levels
    # are relabelled (``locality.relabel_transfer``, which every hierarchy goes through):
    # until then the transfer's index arrays are empty.
    entry = weights > 0  # (a mask reads the entries in the same order as their indices, and faster)
    child = entry.nonzero()[1]
    unset = np.zeros(0, dtype=np.int64)
    transfer = _Transfer(
        parents=parents,
        weights=weights,
        child_group=parents[entry],
        child_fine=child,
        child_weight=weights[entry],
        child_is_self=keep[child],
        group_start=unset,
        by_child=unset,
        child_start=unset,
    )
    return transfer, coarse_graph


def _coarse_graph(keep: np.ndarray, coarse_index: np.ndarray, heads: np.ndarray, tails: np.ndarray):
    """Coarse a ~ b when they are the adjacent kept vertices of one fine vertex, or of the
    two ends of a fine edge (the pattern of P^T A P for nearest-neighbour interpolation).
    Direct adjacency, not the wider interpolation, keeps the coarse graph as sparse as the
    fine one, so each coarsening still keeps about a fifth of the vertices."""
    count = keep.size
    # Adjacent kept vertices of each vertex, grouped by vertex: itself if kept, else its
    # kept neighbours (the fine graph is sorted by head, so they come grouped already).
    link = ~keep[heads] & keep[tails]
    owner = heads[link]
    size = np.bincount(owner, minlength=count)
    size[keep] = 1
    start = np.cumsum(size) - size
    kept_before = np.cumsum(keep) - keep
    parent = np.empty(int(size.sum()), dtype=np.int64)
    parent[start[keep]] = coarse_index[keep]
    parent[np.arange(owner.size) + kept_before[owner]] = coarse_index[tails[link]]
    # A fine edge's pairs: every pair of its ends' adjacent kept vertices. An edge from a
    # kept vertex to a removed one adds nothing: the kept vertex is one of the removed one's
    # own, whose pairs come next.
    forward = (heads < tails) & (keep[heads] == keep[tails])
    a, b = heads[forward], tails[forward]
    removed = (~keep).nonzero()[0]
    own = size[removed]
    total = int(np.dot(size[a], size[b])) + int(np.dot(own, own - 1)) // 2
    pairs = _kept_pairs(parent, start, size, a, b, removed)
    return symmetric_graph_of(int(keep.sum()), pairs, total)


def _kept_pairs(
    parent: np.ndarray, start: np.ndarray, size: np.ndarray, a: np.ndarray, b: np.ndarray, removed: np.ndarray
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The coarse graph's pairs (``_coarse_graph``), a block of fine edges, then of removed
    vertices, at a time: some six million at a million vertices, each block's few
    temporaries stay small (whole, each would be 50 MB to fault in)."""
    for first in range(0, a.size, PAIR_BLOCK):
        ends_a, ends_b = a[first : first + PAIR_BLOCK], b[first : first + PAIR_BLOCK]
        # Every adjacent kept vertex of one end with every one of the other, in two expansions.
        number = size[ends_a]
        left = parent[ranges(start[ends_a], number)]
        ends_b = np.repeat(ends_b, number)
        number = size[ends_b]
        yield np.repeat(left, number), parent[ranges(start[ends_b], number)]
    for first in range(0, removed.size, PAIR_BLOCK):
        # A removed vertex's own pairs: each of its adjacent kept vertices with each after it.
        vertex = removed[first : first + PAIR_BLOCK]
        entry = ranges(start[vertex], size[vertex])
        after = np.repeat(start[vertex] + size[vertex] - 1, size[vertex]) - entry
        yield np.repeat(parent[entry], after), parent[ranges(entry + 1, after)]


#: Fine edges (or removed vertices) ``_kept_pairs`` expands at a time: some 64k pairs.
PAIR_BLOCK = 1 << 14


def _barycentric_weights(rest: np.ndarray, keep: np.ndarray, heads: np.ndarray, tails: np.ndarray, coarse_graph):
    """Interpolation of each removed vertex from the coarse triangle it lies in.

    Candidates: the coarse triangles at the vertex's nearest kept neighbour (it has one at
    least, the set being maximal). The vertex is projected into each candidate's plane and takes
    the one it lies deepest inside (the largest smallest barycentric coordinate), with its
    coordinates clipped at 0 (a vertex beyond the coarse border). Where no triangle is at
    hand (a strip one coarse edge wide), the nearest point on a coarse edge; failing that,
    the nearest kept neighbour. Returns parents and weights (PARENTS, n), fine-level
    indices; the caller sets the kept vertices'.
    """
    count = keep.size
    kept_fine = keep.nonzero()[0]
    coarse_of = np.full(count, -1)
    coarse_of[kept_fine] = np.arange(kept_fine.size)
    parents = np.zeros((PARENTS, count), dtype=np.int64)
    weights = np.zeros((PARENTS, count), dtype=DTYPE)
    link = ~keep[heads] & keep[tails]
    owner, near = heads[link], coarse_of[tails[link]]  # removed vertex, a kept neighbour
    gap = np.linalg.norm(rest.take(owner, axis=0) - rest.take(kept_fine[near], axis=0), axis=1)
    ids, best = group_argmax(owner, -settled(gap, gap.max(initial=0.0)))
    parents[:, ids] = kept_fine[near[best]]  # nearest kept neighbour, the last resort
    weights[0, ids] = 1.0
    points = np.ascontiguousarray(rest.T)
    # Triangles at the nearest kept neighbour; where there are none, edges at any. The vertices
    # go by their nearest kept neighbour, so those that share one read its triangles once.
    nearest, by_nearest = sort_with_order(near[best])
    triangles = _triangles(kept_fine.size, *coarse_graph)
    placed = _place(points, ids[by_nearest], nearest, triangles, kept_fine, parents, weights)
    unplaced = ~np.isin(owner, placed)
    _place(points, owner[unplaced], near[unplaced], _coarse_edges(*coarse_graph), kept_fine, parents, weights)
    return parents, weights


def _place(points, owner, near, shapes, kept_fine, parents, weights) -> np.ndarray:
    """Each ``owner`` (fine) takes the shape at ``near`` (coarse) it lies deepest inside,
    its barycentric coordinates clipped at 0, into ``parents`` and ``weights``. Returns the
    owners placed (those with a non-degenerate shape at hand). An owner's entries are
    consecutive (it may have several).

    A vertex has some 15 to 20 candidate triangles: the owners go a chunk at a time, so the
    candidates' coordinates stay in the cache instead of filling gigabytes (1M vertices)."""
    if owner.size == 0:
        return owner
    fan, fan_start = _incidence(shapes, kept_fine.size)
    # Shape corners as rows (corners, shapes): a chunk reads its candidates' corners in one
    # gather, and their positions from the kept vertices' alone (a quarter of the level's,
    # more of them in the cache).
    corners = np.ascontiguousarray(shapes.T)
    kept_points = points.take(kept_fine, axis=1)
    number = np.diff(fan_start)[near]
    total = int(number.sum())
    if total == 0:
        return owner[:0]
    # Chunks start where an owner does (an owner may come once per kept neighbour): chunks
    # of runs of equal owners, each run as many entries as its candidates.
    starts = np.flatnonzero(np.append(True, owner[1:] != owner[:-1]))
    edges = np.append(starts, owner.size)
    placed = []
    for runs in _chunks(np.add.reduceat(number, starts), PLACE_CHUNK):
        part = slice(edges[runs.start], edges[runs.stop])
        placed.append(
            _place_chunk(
                points,
                owner[part],
                near[part],
                number[part],
                corners,
                fan,
                fan_start,
                kept_points,
                kept_fine,
                parents,
                weights,
            )
        )
    return np.concatenate(placed)


#: Candidate shapes placed at a time: a few hundred kB per coordinate array.
PLACE_CHUNK = 16384


def _place_chunk(
    points, owner, near, number, corners, fan, fan_start, kept_points, kept_fine, parents, weights
) -> np.ndarray:
    """``_place`` for a run of owners, ``number`` candidate shapes each: the shapes at
    each kept vertex ``fan`` (grouped by vertex, ``fan_start``), their ``corners`` (coarse
    indices, (corners, shapes))."""
    # The shapes of each run of equal ``near``, read once: corners and their positions.
    first = np.flatnonzero(np.append(True, near[1:] != near[:-1]))
    run_size = number[first]
    shared = corners.take(fan[ranges(fan_start[near[first]], run_size)], axis=1)
    shared_points = [kept_points.take(c, axis=1) for c in shared]
    # Every owner's candidates, in that short list.
    run_start = np.cumsum(run_size) - run_size
    candidates = ranges(np.repeat(run_start, np.diff(np.append(first, near.size))), number)
    point = np.repeat(points.take(owner, axis=1), number, axis=1)
    coordinates = _barycentric(point, *(p.take(candidates, axis=1) for p in shared_points))
    fine = np.repeat(owner, number)
    starts = np.flatnonzero(np.append(True, fine[1:] != fine[:-1])) if fine.size else fine
    # Coordinates settled (a vertex on a coarse edge: exactly 0 from the far corner), only
    # each candidate's smallest and the chosen one's: rounding keeps their order (it may
    # make two equal, never swap them), so the smallest settled is the settled smallest,
    # and the deepest candidate the same.
    depth = settled(np.min(coordinates, axis=0), 1.0, in_place=True)
    ids, best = fine[starts], first_largest(depth, starts)
    chosen = settled(coordinates[:, best], 1.0, in_place=True)
    ok = np.isfinite(chosen[0])  # not a degenerate shape
    ids, best, chosen = ids[ok], best[ok], chosen[:, ok]
    np.clip(chosen, 0.0, None, out=chosen)
    chosen /= chosen.sum(axis=0)
    parent_of = kept_fine[shared.take(candidates[best], axis=1)]
    for slot in range(PARENTS):  # row by row: a fancy index of rows and columns is several times slower
        if slot < len(parent_of):
            parents[slot, ids], weights[slot, ids] = parent_of[slot], chosen[slot]
        else:  # unused slots repeat a parent, with weight 0
            parents[slot, ids], weights[slot, ids] = parent_of[0], 0.0
    return ids


def _coarse_edges(heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Every edge of a symmetric graph once, (e, 2)."""
    forward = heads < tails
    return np.stack([heads[forward], tails[forward]], axis=1)


def _triangles(count: int, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """The 3-cliques a < b < c of a symmetric graph (sorted by head, then tail), (t, 3)."""
    start = group_starts(heads, count)
    forward = (heads < tails).nonzero()[0]
    later = np.bincount(heads[forward], minlength=count)  # each vertex's later neighbours
    bits = max(int(count - 1).bit_length(), 1)
    keys = (heads << bits) | tails  # sorted
    found = [np.zeros((0, 3), dtype=np.int64)]
    # A block of edges a < b at a time (their first ends a run of vertices, so the searches
    # stay in one stretch of the keys, and the temporaries small).
    for first in range(0, forward.size, TRIANGLE_BLOCK):
        edges = forward[first : first + TRIANGLE_BLOCK]
        a, b = heads[edges], tails[edges]
        # Each vertex's later neighbours are the end of its group (tails are sorted).
        number = later[b]
        edge = np.repeat(np.arange(a.size), number)
        c = tails[ranges(start[b + 1] - number, number)]
        # The wanted edges a < c come by a, so each search starts near the last one's end.
        wanted = (a[edge] << bits) | c
        hit = keys[np.minimum(np.searchsorted(keys, wanted), keys.size - 1)] == wanted
        found.append(np.stack([a[edge[hit]], b[edge[hit]], c[hit]], axis=1))
    return np.concatenate(found)


#: Edges ``_triangles`` reads at a time.
TRIANGLE_BLOCK = 1 << 15


def _incidence(shapes: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The shapes (rows of vertex indices) at each vertex: shape ids grouped by vertex, and
    where each vertex's group starts (count + 1)."""
    corner = shapes.ravel()
    return stable_argsort(corner) // shapes.shape[1], group_starts(corner, count)


def _barycentric(point: np.ndarray, *corners: np.ndarray) -> np.ndarray:
    """Barycentric coordinates (2 or 3, m) of points (3, m) projected onto segments or
    triangles given by their corners (each (3, m)); -inf where the shape is degenerate."""
    if len(corners) == 2:
        a, b = corners
        edge = b - a
        length = dot(edge, edge)
        t = np.divide(dot(point - a, edge), length, out=np.full(length.shape, -np.inf), where=length > 0)
        return np.stack([1 - t, t])
    a, b, c = (corner - point for corner in corners)
    normal = cross(b - a, c - a)
    area = dot(normal, normal)
    ok = area > TINY * TINY
    out = np.full((3, area.size), -np.inf)
    # The signed area of the sub-triangle opposite each corner, over the whole.
    out[0] = np.divide(dot(cross(b, c), normal), area, out=out[0], where=ok)
    out[1] = np.divide(dot(cross(c, a), normal), area, out=out[1], where=ok)
    out[2] = np.where(ok, 1 - out[0] - out[1], -np.inf)
    return out


def _stencil(
    points: np.ndarray,
    heads: np.ndarray,
    tails: np.ndarray,
    of: np.ndarray | None = None,
    min_sine: float = MIN_FRAME_SINE,
) -> tuple[_Stencil, np.ndarray]:
    """For each vertex (or each of ``of``), the ends of two central differences across its
    neighbourhood (itself and its neighbours ``heads``, ``tails``): the two points furthest
    apart along their first, and along their second, principal axis.

    Where the neighbourhood is (nearly) collinear, or one point, every end is the vertex:
    zero tangents, so object axes for good. Returns the stencil and that flat mask.
    """
    neighbourhoods = _Neighbourhoods(points, heads, tails, of)
    of = neighbourhoods.of
    count = of.size
    if count == 0:
        return _Stencil(of, of, of, of), np.zeros(0, dtype=bool)
    # The vertices a chunk of entries at a time: every per-entry temporary stays in the cache
    # and is reused, where whole ones (60 MB each at a million vertices) would each be
    # faulted in anew. Two passes: the points furthest along an axis are chosen on a scale
    # set by every neighbourhood's (``settled``), so each chunk's projections wait for it.
    chunks = _chunks(neighbourhoods.size, STENCIL_CHUNK)
    projections = [neighbourhoods.along_axes(part) for part in chunks]
    scales = [np.max([np.abs(along[axis]).max(initial=0.0) for along in projections]) for axis in range(2)]
    ends = [np.empty(count, dtype=np.int64) for _ in range(4)]
    for part, along in zip(chunks, projections, strict=True):
        ends_of, start = neighbourhoods.entries(part)
        size = neighbourhoods.size[part]
        for axis, scale in enumerate(scales):
            # The furthest either way (rounding is odd: settled(-x) is -settled(x)).
            values = settled(along[axis], scale, in_place=True)
            ends[2 * axis][part] = ends_of[first_largest(values, start, size)]
            ends[2 * axis + 1][part] = ends_of[first_smallest(values, start, size)]
    stencil = _Stencil(u1=ends[0], u0=ends[1], v1=ends[2], v0=ends[3])
    du, dv = _tangents(stencil, points.T)
    du_length, dv_length = np.linalg.norm(du, axis=0), np.linalg.norm(dv, axis=0)
    area = np.linalg.norm(np.cross(du.T, dv.T), axis=1)
    scale = np.median(du_length) if count else 0.0
    short = (du_length <= MIN_TANGENT * scale) | (dv_length <= MIN_TANGENT * scale)
    flat = short | (area <= min_sine * du_length * dv_length)
    for end in ends:
        end[flat] = of[flat]
    return stencil, flat


#: Neighbourhood entries ``_stencil`` reads at a time (about): a few hundred kB an array.
STENCIL_CHUNK = 1 << 15


def _chunks(sizes: np.ndarray, chunk: int) -> list[slice]:
    """Runs of consecutive items, each of ``sizes`` entries, with about ``chunk`` entries a
    run (an item larger than that alone)."""
    starts = np.cumsum(sizes) - sizes
    total = int(starts[-1] + sizes[-1]) if sizes.size else 0
    bounds = np.unique(np.searchsorted(starts, np.arange(0, total, chunk), side="right") - 1).tolist()
    return [slice(first, last) for first, last in zip(bounds, [*bounds[1:], sizes.size], strict=True)]


class _Neighbourhoods:
    """Each vertex of ``of`` and its neighbours in the graph ``heads``, ``tails`` (sorted by
    head) as consecutive entries: the vertex, then its neighbours in the graph's order.
    ``of``: every vertex if None."""

    def __init__(self, points: np.ndarray, heads: np.ndarray, tails: np.ndarray, of: np.ndarray | None):
        self.every_vertex = of is None  # (then a run of vertices' neighbours is a run of tails)
        if of is None:
            of = np.arange(points.shape[0])
            number = np.bincount(heads, minlength=of.size)
            first = np.cumsum(number) - number
        else:
            first = np.searchsorted(heads, of)
            number = np.searchsorted(heads, of, side="right") - first
        self.points = np.ascontiguousarray(points.T)  # component rows: gathers read contiguous memory
        self.tails, self.of, self.first, self.number = tails, of, first, number
        self.size = number + 1  # entries of each vertex

    def entries(self, part: slice) -> tuple[np.ndarray, np.ndarray]:
        """The vertices of the entries of the vertices ``part``, and where each vertex's own
        entries start among them."""
        number = self.number[part]
        size = number + 1
        start = np.cumsum(size) - size
        ends_of = np.empty(int(start[-1] + size[-1]), dtype=np.int64)
        ends_of[start] = self.of[part]
        neighbour = np.ones(ends_of.size, dtype=bool)
        neighbour[start] = False
        first = self.first[part]
        if self.every_vertex:
            ends_of[neighbour] = self.tails[first[0] : first[-1] + number[-1]]
        else:
            ends_of[neighbour] = self.tails[ranges(first, number)]
        return ends_of, start

    def along_axes(self, part: slice) -> np.ndarray:
        """Each entry's offset from its neighbourhood's centre along the neighbourhood's first
        and its second principal axis, (2, entries), for the vertices ``part``."""
        ends_of, _start = self.entries(part)
        size = self.size[part]
        count = size.size
        group = np.repeat(np.arange(count), size)
        spread = self.points.take(ends_of, axis=1)
        scratch = np.empty(group.size)
        centre = np.stack([np.bincount(group, spread[c], minlength=count) for c in range(3)]) / size
        for c in range(3):
            np.take(centre[c], group, out=scratch, mode="clip")
            spread[c] -= scratch
        covariance = np.empty((count, 3, 3))
        for i in range(3):
            for k in range(i, 3):
                np.multiply(spread[i], spread[k], out=scratch)
                covariance[:, i, k] = covariance[:, k, i] = np.bincount(group, scratch, count)
        axes = np.linalg.eigh(covariance)[1]  # columns by increasing variance
        along = np.empty((2, group.size))
        for row, axis in zip(along, (axes[:, :, 2], axes[:, :, 1]), strict=True):
            np.take(axis[:, 0], group, out=row, mode="clip")  # the dot of spread and the axis
            row *= spread[0]
            for c in (1, 2):
                np.take(axis[:, c], group, out=scratch, mode="clip")
                scratch *= spread[c]
                row += scratch
        return along


def _tangents(stencil: _Stencil, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stencil's two central differences on positions (3, n): du, dv, each (3, n)."""
    take = lambda index: positions.take(index, axis=1)  # noqa: E731
    return take(stencil.u1) - take(stencil.u0), take(stencil.v1) - take(stencil.v0)
