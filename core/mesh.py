"""A multi-resolution hierarchy for any mesh: triangles, quads, n-gons, open or closed,
several islands, loose vertices.

Each coarser level keeps a maximal independent set of the finer level's vertex graph
(vertices sharing a polygon), so levels are nested. A removed vertex interpolates its
nearest kept neighbours (inverse-distance weights, rows summing to 1); a coarse vertex's
children are the fine vertices that interpolate it. The coarse graph links coarse vertices
whose children touch (the pattern of P^T A P), so coarsening never splits an island.
Frames come from a per-vertex central-difference stencil on the level's graph, chosen at
rest along two tangents: on a regular grid it is exactly the grid's own central and
one-sided differences, and it turns exactly with any rigid motion of the parent surface.
"""

from dataclasses import dataclass

import numpy as np

from .constants import DTYPE, TINY
from .frames import TangentFrames
from .graph import components, group_argmax, independent_set, polygon_neighbours, symmetric_graph
from .grid import Prolongation, Restriction
from .vectors import dot

#: A removed vertex interpolates at most this many kept neighbours (the nearest).
MAX_PARENTS = 4
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


@dataclass
class _Transfer:
    """Operators between level j-1 (coarse) and level j (fine); indices are level-local."""

    parents: np.ndarray  # (K, n_j) coarse parents of each fine vertex (padded with 0)
    weights: np.ndarray  # (K, n_j) interpolation weights (0 where padded), rows sum to 1
    child_group: np.ndarray  # (e,) coarse vertex of each (coarse, child) entry
    child_fine: np.ndarray  # (e,) the fine child
    child_weight: np.ndarray  # (e,) its interpolation weight
    child_is_self: np.ndarray  # (e,) the child is the coarse vertex itself


@dataclass
class _Stencil:
    """Per-vertex neighbours whose differences are the two tangents: du = x[u1] - x[u0]."""

    u1: np.ndarray
    u0: np.ndarray
    v1: np.ndarray
    v0: np.ndarray


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
            transfer, coarse_graph = _coarsen(rest[fine], keep, h, t)
            transfers.append(transfer)
            members.append(fine[keep])
            graphs.append(coarse_graph)
        members.reverse()
        graphs.reverse()
        transfers.reverse()
        self._members = members
        self._transfers = transfers  # _transfers[j - 1]: from level j-1 to level j
        self.sizes = [m.size for m in members]
        # Level j's frames are central differences across level j-1's vertices around each
        # vertex, chosen at rest. Level 0 has no frames (object axes).
        self._stencils = [_Stencil(*(np.arange(self.sizes[0]),) * 4)]
        for j in range(1, len(members)):
            dominant = self._transfers[j - 1].parents[0]
            self._stencils.append(_stencil(rest[members[j - 1]], dominant, *graphs[j - 1]))

    @classmethod
    def from_triangles(cls, rest: np.ndarray, triangles: np.ndarray) -> "MeshHierarchy":
        """Convenience for a triangle list (t, 3)."""
        triangles = np.asarray(triangles)
        return cls(rest, triangles.ravel(), np.full(len(triangles), 3))

    # -- the Hierarchy protocol -----------------------------------------------------------------

    def prolong(self, level: int, coarse: np.ndarray, method: Prolongation, patch: bool = False) -> np.ndarray:
        """Positions of ``level - 1`` interpolated to ``level``. Meshes interpolate linearly
        (inverse-distance weights) whatever the method: a cubic rule needs a grid."""
        transfer = self._transfers[level - 1]
        out = coarse[:, transfer.parents[0]] * transfer.weights[0]
        for parents, weights in zip(transfer.parents[1:], transfer.weights[1:], strict=True):
            out += coarse[:, parents] * weights
        return out

    def restrict(self, level: int, fine: np.ndarray, method: Restriction) -> np.ndarray:
        """Displacements of ``level`` to ``level - 1``, over each coarse vertex's children."""
        transfer = self._transfers[level - 1]
        coarse = np.zeros((3, self.sizes[level - 1]), dtype=fine.dtype)
        lengths = np.sqrt(dot(fine, fine))
        entries = np.flatnonzero(lengths[transfer.child_fine] > TINY)  # only moving children
        if entries.size == 0:
            return coarse
        group = transfer.child_group[entries]
        child = transfer.child_fine[entries]
        ids, best = group_argmax(group, lengths[child])
        longest = fine[:, child[best]]
        if method == "max":
            coarse[:, ids] = longest
        elif method == "average":
            coarse[:, ids] = _average(fine, lengths, transfer, entries, group, child, ids, longest)
        else:
            coarse[:, ids] = _full_weighting(fine, transfer, entries, group, child, ids, longest)
        return coarse

    def frame_basis(self, level: int, surface: np.ndarray, coarse: np.ndarray) -> TangentFrames:
        """Frames of ``level`` from differences across the coarse solution around each vertex."""
        stencil = self._stencils[level]
        return TangentFrames(
            coarse[:, stencil.u1] - coarse[:, stencil.u0], coarse[:, stencil.v1] - coarse[:, stencil.v0]
        )

    def inject(self, level: int, finest_values: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(finest_values[..., self._members[level]])

    def level_vertices(self, level: int) -> np.ndarray:
        """Mesh vertex indices of the vertices of ``level``."""
        return self._members[level]


def _average(fine, lengths, transfer, entries, group, child, ids, longest):
    """Average-displacement: where a coarse vertex's own child moves, the longer of it and
    the mean of its other moving children; elsewhere the longest child."""
    others = ~transfer.child_is_self[entries]
    size = int(ids.max()) + 1
    count = np.bincount(group[others], minlength=size)[ids]
    mean = np.stack([np.bincount(group[others], fine[c, child[others]], minlength=size)[ids] for c in range(3)])
    mean /= np.maximum(count, 1)
    selves = transfer.child_is_self[entries]
    own = np.zeros_like(longest)
    own_moves = np.zeros(ids.size, dtype=bool)
    where = np.searchsorted(ids, group[selves])
    own[:, where] = fine[:, child[selves]]
    own_moves[where] = True
    use_mean = own_moves & (count > 0) & (dot(mean, mean) > dot(own, own))
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
    coarse_index = np.full(count, -1)
    coarse_index[keep] = np.arange(int(keep.sum()))
    # Each removed vertex: its kept neighbours, nearest first, at most MAX_PARENTS.
    link = ~keep[heads] & keep[tails]
    fine, parent = heads[link], tails[link]
    distance = np.linalg.norm(rest[fine] - rest[parent], axis=1)
    order = np.lexsort((distance, fine))
    fine, parent, distance = fine[order], parent[order], distance[order]
    first = np.searchsorted(fine, fine)  # start of each vertex's run
    rank = np.arange(fine.size) - first
    near = rank < MAX_PARENTS
    fine, parent, distance, rank = fine[near], parent[near], distance[near], rank[near]
    inverse = 1.0 / np.maximum(distance, TINY)
    total = np.bincount(fine, inverse, minlength=count)
    parents = np.zeros((MAX_PARENTS, count), dtype=np.int64)
    weights = np.zeros((MAX_PARENTS, count), dtype=DTYPE)
    parents[rank, fine] = coarse_index[parent]
    weights[rank, fine] = inverse / total[fine]
    parents[0, keep] = coarse_index[keep]
    weights[0, keep] = 1.0
    # Children of each coarse vertex: every (fine, parent) entry with a weight, by parent.
    slot, child = np.nonzero(weights > 0)
    group = parents[slot, child]
    order = np.argsort(group, kind="stable")
    transfer = _Transfer(
        parents=parents,
        weights=weights,
        child_group=group[order],
        child_fine=child[order],
        child_weight=weights[slot, child][order],
        child_is_self=keep[child[order]],
    )
    # Coarse graph: coarse a ~ b when a child of a is a child of b or a fine neighbour of one.
    pairs = []
    forward = heads < tails
    for a, b in ((heads[forward], tails[forward]), (np.arange(count), np.arange(count))):
        for i in range(MAX_PARENTS):
            for j in range(MAX_PARENTS):
                both = (weights[i, a] > 0) & (weights[j, b] > 0)
                pairs.append(np.stack([parents[i, a[both]], parents[j, b[both]]], axis=1))
    return transfer, symmetric_graph(int(keep.sum()), np.concatenate(pairs))


def _stencil(coarse_rest: np.ndarray, dominant: np.ndarray, heads: np.ndarray, tails: np.ndarray) -> _Stencil:
    """For each fine vertex, the ends of two central differences across the coarse level:
    among its dominant parent and that parent's coarse neighbours (``heads``, ``tails``),
    the two furthest apart along their first and along their second principal axis
    (indices into the coarse level).

    Where those points are (nearly) collinear, or all one point, every end is the dominant
    parent: zero tangents, so object axes for good.
    """
    count, coarse_count = dominant.size, coarse_rest.shape[0]
    # Candidates: (fine vertex, coarse vertex) for the dominant parent and its neighbours.
    starts = np.searchsorted(heads, np.arange(coarse_count))
    degree = np.bincount(heads, minlength=coarse_count)[dominant]
    fine = np.repeat(np.arange(count), degree)
    within = np.arange(fine.size) - np.repeat(np.cumsum(degree) - degree, degree)
    coarse = np.concatenate([dominant, tails[starts[dominant[fine]] + within]])
    fine = np.concatenate([np.arange(count), fine])
    points = coarse_rest[coarse]
    members = np.bincount(fine, minlength=count)[:, None]
    centre = np.stack([np.bincount(fine, points[:, c], minlength=count) for c in range(3)], axis=1) / members
    spread = points - centre[fine]
    covariance = np.zeros((count, 3, 3))
    np.add.at(covariance, fine, spread[:, :, None] * spread[:, None, :])
    axes = np.linalg.eigh(covariance)[1]  # columns by increasing variance
    ends = []
    for axis in (axes[:, :, 2], axes[:, :, 1]):
        along = (spread * axis[fine]).sum(axis=1)
        for sign in (1.0, -1.0):
            end = dominant.copy()
            ids, best = group_argmax(fine, sign * along)
            end[ids] = coarse[best]
            ends.append(end)
    du, dv = coarse_rest[ends[0]] - coarse_rest[ends[1]], coarse_rest[ends[2]] - coarse_rest[ends[3]]
    du_length, dv_length = np.linalg.norm(du, axis=1), np.linalg.norm(dv, axis=1)
    area = np.linalg.norm(np.cross(du, dv), axis=1)
    scale = np.median(du_length) if count else 0.0
    short = (du_length <= MIN_TANGENT * scale) | (dv_length <= MIN_TANGENT * scale)
    flat = short | (area <= MIN_FRAME_SINE * du_length * dv_length)
    for end in ends:
        end[flat] = dominant[flat]
    return _Stencil(u1=ends[0], u0=ends[1], v1=ends[2], v0=ends[3])
