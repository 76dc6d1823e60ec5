"""A mesh's topology: its faces and edges in an order of their own, and which hierarchy it
gets, built once per topology and rest shape.

A (2^m + 1)^2 quad grid in row-major vertex order (as Blender's Grid primitive makes it)
gets the thesis's exact grid hierarchy; every other mesh the general one.
"""

import hashlib
from collections import OrderedDict

import numpy as np

from .graph import ranges, sort_with_order
from .grid import GridHierarchy
from .hierarchy import Hierarchy
from .mesh import MeshHierarchy


def in_own_order(
    corners: np.ndarray, sizes: np.ndarray, edges: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``corners`` (c,) (each face's vertices in winding order, face after face), ``sizes``
    (f,) (corners per face) and ``edges`` (e, 2), in an order set by the vertices alone.

    The same mesh made twice can list its faces in another order: Blender's UV sphere
    (``primitive_uv_sphere_add``) did in 5 of 8 builds in one session, its vertices the
    same. Sums over a vertex's faces (its normal, the enclosed volume) round by that order,
    and the last bit of a normal, through contact's choices (which way out is shorter),
    moved a ball sliding off a box's edge by 6.5 cm. In this order the arrays are the same
    however the mesh was made, and so is the response, bit for bit.

    Faces are sorted by their lowest vertex, then the vertices after and before it in the
    winding (on a manifold, oriented mesh no two faces share all three), then their size;
    each keeps its winding and its first corner (Blender's triangulation of a face depends
    on it: that is the face's data, not its place in the list). Edges become (lower,
    higher), sorted."""
    corners, sizes = np.asarray(corners, dtype=np.int64), np.asarray(sizes, dtype=np.int64)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    span = int(max(corners.max(initial=-1), edges.max(initial=-1))) + 1  # keys pack two vertices
    first, second = edges[:, 0], edges[:, 1]
    packed = np.sort(np.minimum(first, second) * span + np.maximum(first, second))  # one int sort (numpy's SIMD)
    edges = np.stack(np.divmod(packed, span), axis=1)
    if sizes.size == 0:
        return corners, sizes, edges
    starts = np.cumsum(sizes) - sizes
    lowest, after, before = (np.empty(sizes.size, dtype=np.int64) for _ in range(3))
    for size in np.unique(sizes):  # faces of one size as rows of a table (a few sizes a mesh)
        faces = (sizes == size).nonzero()[0]
        table = corners[starts[faces, None] + np.arange(size)]
        at = table.argmin(axis=1)  # the first lowest
        rows = np.arange(faces.size)
        lowest[faces], after[faces], before[faces] = (table[rows, (at + step) % size] for step in (0, 1, -1))
    keys, order = sort_with_order(lowest * span + after)
    if (keys[1:] == keys[:-1]).any():  # faces sharing an oriented edge (not manifold): all keys
        order = np.lexsort((sizes, before, after, lowest))  # stable: ties keep Blender's order
    if (sizes == sizes[0]).all():
        return corners.reshape(-1, sizes[0])[order].ravel(), sizes, edges
    return corners[ranges(starts[order], sizes[order])], sizes[order], edges


def grid_level(vertex_count: int, corners: np.ndarray, sizes: np.ndarray, edges: np.ndarray | None) -> int | None:
    """The finest level m if the mesh is a (2^m + 1)^2 quad grid in row-major order, else None."""
    side = round(vertex_count**0.5)
    if side < 2 or side * side != vertex_count or (side - 1) & (side - 2):
        return None
    cells = side - 1
    if len(sizes) != cells * cells or np.any(np.asarray(sizes) != 4):
        return None
    if edges is not None and len(edges) not in (0, 2 * side * cells):
        return None  # wire edges beyond the grid's own
    row, col = np.divmod(np.arange(cells * cells), cells)
    first = row * side + col
    expected = np.sort(np.stack([first, first + 1, first + side + 1, first + side], axis=1), axis=1)
    found = np.sort(np.asarray(corners).reshape(-1, 4), axis=1)
    if not np.array_equal(found[np.lexsort(found.T[::-1])], expected[np.lexsort(expected.T[::-1])]):
        return None
    return cells.bit_length() - 1


def build_hierarchy(
    rest: np.ndarray, corners: np.ndarray, sizes: np.ndarray, edges: np.ndarray | None = None
) -> Hierarchy:
    """The grid hierarchy for a row-major (2^m + 1)^2 grid, the mesh hierarchy otherwise."""
    level = grid_level(len(rest), corners, sizes, edges)
    if level is not None:
        return GridHierarchy(level)
    return MeshHierarchy(rest, corners, sizes, edges)


class HierarchyCache:
    """Hierarchies by mesh topology and rest shape: built once, rebuilt when either changes.

    Keeps the ``capacity`` most recently used.
    """

    def __init__(self, capacity: int = 8):
        self.capacity = capacity
        self._built: OrderedDict[bytes, Hierarchy] = OrderedDict()
        self.builds = 0  # how many hierarchies were built (for tests and reports)

    def get(self, rest: np.ndarray, corners: np.ndarray, sizes: np.ndarray, edges: np.ndarray | None = None):
        key = _digest(rest, corners, sizes, edges)
        if key in self._built:
            self._built.move_to_end(key)
            return self._built[key]
        hierarchy = build_hierarchy(rest, corners, sizes, edges)
        self.builds += 1
        self._built[key] = hierarchy
        while len(self._built) > self.capacity:
            self._built.popitem(last=False)
        return hierarchy


def _digest(*arrays) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    for array in arrays:
        data = np.ascontiguousarray(np.zeros(0) if array is None else array)
        digest.update(str((data.dtype, data.shape)).encode())
        digest.update(data.tobytes())
    return digest.digest()
