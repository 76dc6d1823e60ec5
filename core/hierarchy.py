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

    def restrict(self, level: int, fine: np.ndarray, method: Restriction) -> np.ndarray:
        """Displacement vectors of ``level`` to ``level - 1``."""
        ...

    def prolong(self, level: int, coarse: np.ndarray, method: Prolongation, patch: bool = False) -> np.ndarray:
        """Positions of ``level - 1`` interpolated to ``level``. ``patch`` says the field is
        zero outside a small patch, which a hierarchy may use to skip work."""
        ...

    def frame_basis(self, level: int, surface: np.ndarray, coarse: np.ndarray) -> FrameBasis:
        """Frames of ``level``, for any subset of its vertices, on its prolongated parent
        surface ``surface`` (3, n_j) or from the parent level itself ``coarse`` (3, n_{j-1})."""
        ...

    def inject(self, level: int, finest_values: np.ndarray) -> np.ndarray:
        """Per-vertex values (..., n_k) of the finest level sampled at ``level``'s vertices."""
        ...
