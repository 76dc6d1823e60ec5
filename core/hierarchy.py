"""What the solver needs of a multi-resolution hierarchy, whatever its topology."""

from typing import Protocol

import numpy as np

from .grid import Prolongation, Restriction


class Hierarchy(Protocol):
    """Nested vertex sets, level 0 the coarsest; the last level is the mesh itself.

    Vectors are component-major: (3, n_j) for level j.
    """

    #: Vertex count of each level, coarse to fine.
    sizes: list[int]

    def restrict(self, level: int, fine: np.ndarray, method: Restriction) -> np.ndarray:
        """Displacement vectors of ``level`` to ``level - 1``."""
        ...

    def prolong(self, level: int, coarse: np.ndarray, method: Prolongation) -> np.ndarray:
        """Positions of ``level - 1`` interpolated to ``level``."""
        ...

    def frames(self, level: int, surface: np.ndarray) -> np.ndarray:
        """Orthonormal frames (3, 3, n_j) on a prolongated surface of ``level``."""
        ...

    def inject(self, level: int, finest_values: np.ndarray) -> np.ndarray:
        """Per-vertex values (..., n_k) of the finest level sampled at ``level``'s vertices."""
        ...
