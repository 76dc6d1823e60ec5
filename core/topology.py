"""Which hierarchy a mesh gets, built once per topology and rest shape.

A (2^m + 1)^2 quad grid in row-major vertex order (as Blender's Grid primitive makes it)
gets the thesis's exact grid hierarchy; every other mesh the general one.
"""

import hashlib
from collections import OrderedDict

import numpy as np

from .grid import GridHierarchy
from .hierarchy import Hierarchy
from .mesh import MeshHierarchy


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
