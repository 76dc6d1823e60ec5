"""What the solver needs of a multi-resolution hierarchy, whatever its topology."""

from typing import Protocol

import numpy as np

from .grid import Prolongation, Restriction


class FrameBasis(Protocol):
    """Builds the orthonormal frames (3, 3, m) of any subset of a level's vertices."""

    def __call__(self, index: slice | np.ndarray) -> np.ndarray: ...


class Hierarchy(Protocol):
    """Nested vertex sets, level 0 the coarsest; the last level is the mesh itself.

    Vectors are component-major: (3, n_j) for level j.
    """

    #: Vertex count of each level, coarse to fine.
    sizes: list[int]
    #: The mesh vertex at each place of the finest level, or None where the finest level is
    #: the mesh in its own order. Every operator works in the levels' own orders; a solver
    #: permutes its inputs and outputs (mesh order) through this.
    vertex_order: np.ndarray | None

    def restrict(
        self, level: int, fine: np.ndarray, method: Restriction, moving: np.ndarray | None = None
    ) -> np.ndarray:
        """Displacement vectors of ``level`` to ``level - 1``. ``moving``, when known: indices
        of ``level`` that include every nonzero vector (the rest of ``fine`` is not read)."""
        ...

    def restrict_mask(self, level: int, fine: np.ndarray) -> np.ndarray:
        """A (n_j,) bool mask of ``level`` to ``level - 1``: the parents with a marked child
        (max restriction of a 0/1 field, without the vector arithmetic)."""
        ...

    def restrict_max(self, level: int, fine: np.ndarray) -> np.ndarray:
        """Integer fields (c, n_j) of ``level`` to ``level - 1``: each parent's values the
        largest of its children's (as ``restrict_mask`` marks them), the type's least where
        it has none (the least marks a vertex of ``level`` as none too)."""
        ...

    def prolong(self, level: int, coarse: np.ndarray, method: Prolongation, patch: bool = False) -> np.ndarray:
        """Positions of ``level - 1`` interpolated to ``level``. ``patch`` says the field is
        zero outside a small patch, which a hierarchy may use to skip work."""
        ...

    def prolong_with_frames(
        self, level: int, coarse: np.ndarray, method: Prolongation, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, FrameBasis]:
        """``prolong(level, coarse, method)`` and the frames of ``level`` on that prolongated
        parent surface, for any subset of its vertices (together, so a hierarchy may
        interpolate positions and frames in one pass). With ``rows`` (sorted vertex indices
        of ``level``), only those vertices: positions (3, m) and frames indexed 0 .. m-1,
        equal bit for bit to the same columns of the whole level's."""
        ...

    def dependents(self, level: int, moved: np.ndarray, method: Prolongation) -> np.ndarray:
        """A (n_j,) bool mask of ``level``: the vertices whose prolongated parent position or
        frame reads a vertex of ``level - 1`` marked in ``moved`` (n_{j-1},) (a superset is
        allowed), so a step need place only those again when only the marked ones moved."""
        ...

    def inject(self, level: int, finest_values: np.ndarray) -> np.ndarray:
        """Per-vertex values of the mesh (..., n_k), in the mesh's vertex order, sampled at
        ``level``'s vertices (any level, the finest included), in the level's order."""
        ...
