"""Regular grid hierarchies: (2^m + 1) x (2^m + 1) vertices, level 0 = 2 x 2.

The transfer operators of Harrison (1994) section 5.2. Vectors are component-major,
(3, rows * cols) flat, or (3, rows, cols) inside this module. Parent (u, v) of level j-1 is
vertex (2u, 2v) of level j; its children are the 3 x 3 vertices around it.
"""

from typing import Literal

import numpy as np

from .constants import TINY
from .frames import frames_from_tangents
from .vectors import dot

Restriction = Literal["max", "average", "full_weighting"]
Prolongation = Literal["linear", "cubic"]

_OFFSETS = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)]
_CENTRE = _OFFSETS.index((0, 0))


def grid_side(level: int) -> int:
    """Vertices along one side of a grid level."""
    return 2**level + 1


def children(fine: np.ndarray) -> np.ndarray:
    """The 3 x 3 children of every parent, shape (9, 3, rows, cols) of the coarse level.

    Children beyond the border are zero vectors. Order follows ``_OFFSETS``.
    """
    _, rows, cols = fine.shape
    coarse_rows, coarse_cols = (rows + 1) // 2, (cols + 1) // 2
    padded = np.zeros((3, rows + 2, cols + 2), dtype=fine.dtype)
    padded[:, 1:-1, 1:-1] = fine
    out = np.empty((9, 3, coarse_rows, coarse_cols), dtype=fine.dtype)
    for i, (a, b) in enumerate(_OFFSETS):
        out[i] = padded[:, 1 + a :: 2, 1 + b :: 2][:, :coarse_rows, :coarse_cols]
    return out


def _longest(kids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The longest of the children of each parent, (3, rows, cols)."""
    pick = np.argmax(lengths, axis=0)
    return np.take_along_axis(kids, pick[None, None], axis=0)[0]


def restrict_max(fine: np.ndarray) -> np.ndarray:
    """Max-displacement restriction: each parent takes its longest child vector."""
    kids = children(fine)
    return _longest(kids, np.einsum("kcij,kcij->kij", kids, kids))


def restrict_average(fine: np.ndarray) -> np.ndarray:
    """Average-displacement restriction.

    A parent whose centre child moves takes the longer of that child and the mean of its
    other non-zero children; elsewhere it takes the longest child (max-displacement).
    """
    kids = children(fine)
    lengths = np.einsum("kcij,kcij->kij", kids, kids)
    result = _longest(kids, lengths)
    centre = kids[_CENTRE]
    others = np.delete(np.arange(9), _CENTRE)
    moving = lengths[others] > TINY**2
    count = moving.sum(axis=0)
    mean = kids[others].sum(axis=0) / np.maximum(count, 1)
    centre_moves = lengths[_CENTRE] > TINY**2
    use_mean = centre_moves & (count > 0) & (dot(mean, mean) > lengths[_CENTRE])
    use_centre = centre_moves & ~use_mean
    return np.where(use_mean, mean, np.where(use_centre, centre, result))


def restrict_full_weighting(fine: np.ndarray) -> np.ndarray:
    """Full weighting combined with max: the 1-2-1 weighted mean of the children,
    rescaled to the length of the longest child (the thesis's proposed future work).

    Weights of children beyond the border are dropped and the rest renormalised. Where the
    mean vanishes (opposite children cancel) the longest child is used.
    """
    kids = children(fine)
    lengths = np.einsum("kcij,kcij->kij", kids, kids)
    longest = np.sqrt(lengths.max(axis=0))
    weights = np.array([(2 - abs(a)) * (2 - abs(b)) for a, b in _OFFSETS], dtype=fine.dtype)
    present = children(np.ones_like(fine))[:, 0]  # 1 where a child exists, 0 past the border
    total_weight = np.einsum("k,kij->ij", weights, present)
    mean = np.einsum("k,kcij->cij", weights, kids) / total_weight
    mean_length = np.sqrt(dot(mean, mean))
    ok = mean_length > TINY
    scaled = mean * np.divide(longest, mean_length, out=np.zeros_like(longest), where=ok)
    return np.where(ok, scaled, _longest(kids, lengths))


RESTRICTIONS = {"max": restrict_max, "average": restrict_average, "full_weighting": restrict_full_weighting}


def _midpoints(values: np.ndarray, cubic: bool) -> np.ndarray:
    """Values halfway between consecutive entries along the last axis.

    Linear: the mean of the two. Cubic: the 4-point (-1, 9, 9, -1) / 16 rule, one-sided
    (5, 15, -5, 1) / 16 at the ends; fewer than 4 entries fall back to linear.
    """
    if not cubic or values.shape[-1] < 4:
        return (values[..., :-1] + values[..., 1:]) * 0.5
    mid = np.empty((*values.shape[:-1], values.shape[-1] - 1), dtype=values.dtype)
    mid[..., 1:-1] = (9 * (values[..., 1:-2] + values[..., 2:-1]) - values[..., :-3] - values[..., 3:]) / 16
    mid[..., 0] = (5 * values[..., 0] + 15 * values[..., 1] - 5 * values[..., 2] + values[..., 3]) / 16
    mid[..., -1] = (5 * values[..., -1] + 15 * values[..., -2] - 5 * values[..., -3] + values[..., -4]) / 16
    return mid


def _refine_last_axis(values: np.ndarray, cubic: bool) -> np.ndarray:
    count = values.shape[-1]
    out = np.empty((*values.shape[:-1], 2 * count - 1), dtype=values.dtype)
    out[..., ::2] = values
    out[..., 1::2] = _midpoints(values, cubic)
    return out


def prolong(coarse: np.ndarray, cubic: bool) -> np.ndarray:
    """Prolongation (3, r, c) -> (3, 2r - 1, 2c - 1): common vertices are copied, new
    columns interpolated, then the remaining rows from the refined columns (tensor product).
    """
    rows_refined = _refine_last_axis(coarse, cubic)
    return np.swapaxes(_refine_last_axis(np.swapaxes(rows_refined, 1, 2), cubic), 1, 2)


def grid_frames(surface: np.ndarray) -> np.ndarray:
    """Frames on a grid surface (3, rows, cols): axis 0 along the columns (u), the normal
    from the u and v tangents; central differences inside, one-sided at the borders.
    """
    du = np.empty_like(surface)
    du[:, :, 1:-1] = surface[:, :, 2:] - surface[:, :, :-2]
    du[:, :, 0] = surface[:, :, 1] - surface[:, :, 0]
    du[:, :, -1] = surface[:, :, -1] - surface[:, :, -2]
    dv = np.empty_like(surface)
    dv[:, 1:-1] = surface[:, 2:] - surface[:, :-2]
    dv[:, 0] = surface[:, 1] - surface[:, 0]
    dv[:, -1] = surface[:, -1] - surface[:, -2]
    count = surface.shape[1] * surface.shape[2]
    return frames_from_tangents(du.reshape(3, count), dv.reshape(3, count))


class GridHierarchy:
    """The multi-resolution hierarchy of a (2^m + 1)^2 grid: levels 0 (2 x 2) to m."""

    def __init__(self, finest_level: int):
        if finest_level < 0:
            raise ValueError("a grid hierarchy needs at least level 0 (2 x 2 vertices)")
        self.finest = finest_level
        self.sizes = [grid_side(j) ** 2 for j in range(finest_level + 1)]

    @classmethod
    def for_side(cls, side: int) -> "GridHierarchy":
        """The hierarchy of a grid with ``side`` vertices along each side (2^m + 1)."""
        level = max(side - 1, 1).bit_length() - 1
        if side < 2 or grid_side(level) != side:
            raise ValueError(f"a grid side must be 2^m + 1 vertices (2, 3, 5, 9, ...), got {side}")
        return cls(level)

    def _shape(self, level: int, flat: np.ndarray) -> np.ndarray:
        side = grid_side(level)
        return flat.reshape(flat.shape[0], side, side)

    def restrict(self, level: int, fine: np.ndarray, method: Restriction) -> np.ndarray:
        """Displacements of ``level`` (3, n_j) to ``level - 1``."""
        coarse = RESTRICTIONS[method](self._shape(level, fine))
        return coarse.reshape(3, -1)

    def prolong(self, level: int, coarse: np.ndarray, method: Prolongation) -> np.ndarray:
        """Positions of ``level - 1`` (3, n_{j-1}) carried up to ``level``."""
        fine = prolong(self._shape(level - 1, coarse), cubic=method == "cubic")
        return np.ascontiguousarray(fine.reshape(3, -1))

    def frames(self, level: int, surface: np.ndarray) -> np.ndarray:
        """Frames (3, 3, n_j) on the prolongated parent surface of ``level``."""
        return grid_frames(self._shape(level, surface))

    def inject(self, level: int, finest_values: np.ndarray) -> np.ndarray:
        """Values of the finest level (..., n_k) subsampled at the vertices of ``level``."""
        step = 2 ** (self.finest - level)
        side = grid_side(self.finest)
        grid = finest_values.reshape((*finest_values.shape[:-1], side, side))
        return np.ascontiguousarray(grid[..., ::step, ::step]).reshape((*finest_values.shape[:-1], -1))
