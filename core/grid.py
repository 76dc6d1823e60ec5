"""Regular grid hierarchies: (2^m + 1) x (2^m + 1) vertices, level 0 = 2 x 2.

The transfer operators of Harrison (1994) section 5.2. Vectors are component-major,
(3, rows * cols) flat, or (3, rows, cols) inside this module. Parent (u, v) of level j-1 is
vertex (2u, 2v) of level j; its children are the 3 x 3 vertices around it.
"""

from typing import Literal

import numpy as np

from .constants import SETTLED_STEP, TINY
from .frames import TangentFrames, frames_from_tangents
from .graph import settled
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
    pick = np.argmax(settled(lengths, lengths.max(initial=0.0), SETTLED_STEP), axis=0)
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

    Children beyond the border count as zero. Where the mean vanishes (opposite children
    cancel) the longest child is used.
    """
    kids = children(fine)
    lengths = np.einsum("kcij,kcij->kij", kids, kids)
    longest = np.sqrt(lengths.max(axis=0))
    weights = np.array([(2 - abs(a)) * (2 - abs(b)) for a, b in _OFFSETS], dtype=fine.dtype)
    # The mean is rescaled to the longest child's length below, so its normalisation (and
    # the missing children past a border) cannot change the result: a plain weighted sum.
    mean = np.einsum("k,kcij->cij", weights, kids)
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


def prolong(coarse: np.ndarray, cubic: bool) -> np.ndarray:
    """Prolongation (3, r, c) -> (3, 2r - 1, 2c - 1): common vertices are copied, new
    columns interpolated, then the remaining rows from the refined columns (tensor product).
    """
    channels, rows, cols = coarse.shape
    fine = np.empty((channels, 2 * rows - 1, 2 * cols - 1), dtype=coarse.dtype)
    even_rows = fine[:, ::2]
    even_rows[:, :, ::2] = coarse
    even_rows[:, :, 1::2] = _midpoints(coarse, cubic)
    # Odd rows: midpoints down the columns of the even rows (a transposed view, no copy).
    np.swapaxes(fine[:, 1::2], 1, 2)[...] = _midpoints(np.swapaxes(even_rows, 1, 2), cubic)
    return fine


def prolong_patch(coarse: np.ndarray, cubic: bool) -> np.ndarray:
    """``prolong`` of a field that is zero outside a patch: only the patch's bounding box
    and the margin its stencil reaches are computed. Exactly equal to ``prolong``."""
    _, rows, cols = coarse.shape
    moving = (coarse != 0).any(axis=0)
    hit_rows, hit_cols = np.flatnonzero(moving.any(axis=1)), np.flatnonzero(moving.any(axis=0))
    fine = np.zeros((3, 2 * rows - 1, 2 * cols - 1), dtype=coarse.dtype)
    if hit_rows.size == 0:
        return fine
    row_span = _patch_span(hit_rows[0], hit_rows[-1], rows, cubic)
    col_span = _patch_span(hit_cols[0], hit_cols[-1], cols, cubic)
    patch = prolong(coarse[:, row_span[0] : row_span[1] + 1, col_span[0] : col_span[1] + 1], cubic)
    (patch_rows, fine_rows), (patch_cols, fine_cols) = _kept(row_span, rows, cubic), _kept(col_span, cols, cubic)
    fine[:, fine_rows, fine_cols] = patch[:, patch_rows, patch_cols]
    return fine


def _patch_span(first: int, last: int, count: int, cubic: bool) -> tuple[int, int]:
    """Coarse range to prolong around non-zero values in [first, last]: a linear midpoint
    reads 1 neighbour each side; a cubic one 2, plus 1 so the crop's own edge interval,
    computed with the one-sided border rule, can be dropped (see ``_kept``)."""
    margin = 3 if cubic else 1
    return max(first - margin, 0), min(last + margin, count - 1)


def _kept(span: tuple[int, int], count: int, cubic: bool) -> tuple[slice, slice]:
    """Fine rows of a prolongated crop to keep, and where they go in the whole level.

    A cubic crop edge that is not a true border used the one-sided rule in its edge
    interval; the field is zero there on the whole grid, so that interval is dropped.
    """
    first, last = span
    start = 2 if cubic and first > 0 else 0
    stop = 2 * (last - first) + 1 - (2 if cubic and last < count - 1 else 0)
    return slice(start, stop), slice(2 * first + start, 2 * first + stop)


def grid_tangents(surface: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tangents of a grid surface (3, rows, cols) along the columns (u) and rows (v), each
    (3, rows * cols): central differences inside, one-sided at the borders."""
    du = np.empty_like(surface)
    du[:, :, 1:-1] = surface[:, :, 2:] - surface[:, :, :-2]
    du[:, :, 0] = surface[:, :, 1] - surface[:, :, 0]
    du[:, :, -1] = surface[:, :, -1] - surface[:, :, -2]
    dv = np.empty_like(surface)
    dv[:, 1:-1] = surface[:, 2:] - surface[:, :-2]
    dv[:, 0] = surface[:, 1] - surface[:, 0]
    dv[:, -1] = surface[:, -1] - surface[:, -2]
    count = surface.shape[1] * surface.shape[2]
    return du.reshape(3, count), dv.reshape(3, count)


def grid_frames(surface: np.ndarray) -> np.ndarray:
    """Frames (3, 3, rows * cols) on a grid surface (3, rows, cols): axis 0 along u, the
    normal from the u and v tangents."""
    return frames_from_tangents(*grid_tangents(surface))


class GridHierarchy:
    """The multi-resolution hierarchy of a (2^m + 1)^2 grid: levels 0 (2 x 2) to m."""

    def __init__(self, finest_level: int):
        if finest_level < 0:
            raise ValueError("a grid hierarchy needs at least level 0 (2 x 2 vertices)")
        self.finest = finest_level
        self.sizes = [grid_side(j) ** 2 for j in range(finest_level + 1)]
        self.vertex_order: np.ndarray | None = None  # the finest level is the grid in its own (row-major) order

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

    def restrict(
        self, level: int, fine: np.ndarray, method: Restriction, moving: np.ndarray | None = None
    ) -> np.ndarray:
        """Displacements of ``level`` (3, n_j) to ``level - 1``.

        Only the bounding box of the non-zero vectors is restricted: contact is a patch, and
        zero children outside it are exactly what the operators would read there.
        """
        grid = self._shape(level, fine)
        side = grid_side(level - 1)
        coarse = np.zeros((3, side, side), dtype=fine.dtype)
        if moving is None:
            nonzero = (grid != 0).any(axis=0)
            rows, cols = np.flatnonzero(nonzero.any(axis=1)), np.flatnonzero(nonzero.any(axis=0))
        else:  # the indices given: their box holds the nonzero vectors' (zeros restrict to 0)
            rows, cols = np.divmod(np.asarray(moving), grid_side(level))
        if rows.size:
            # Parents with a child in [first, last] run from first // 2 to (last + 1) // 2.
            r0, r1 = rows.min() // 2, min((rows.max() + 1) // 2, side - 1)
            c0, c1 = cols.min() // 2, min((cols.max() + 1) // 2, side - 1)
            crop = grid[:, 2 * r0 : 2 * r1 + 1, 2 * c0 : 2 * c1 + 1]
            coarse[:, r0 : r1 + 1, c0 : c1 + 1] = RESTRICTIONS[method](crop)
        return coarse.reshape(3, -1)

    def restrict_mask(self, level: int, fine: np.ndarray) -> np.ndarray:
        """Parents of ``level - 1`` with a marked child among their 3 x 3."""
        side = grid_side(level)
        padded = np.zeros((side + 2, side + 2), dtype=bool)
        padded[1:-1, 1:-1] = fine.reshape(side, side)
        coarse_side = grid_side(level - 1)
        coarse = np.zeros((coarse_side, coarse_side), dtype=bool)
        for a, b in _OFFSETS:
            coarse |= padded[1 + a :: 2, 1 + b :: 2][:coarse_side, :coarse_side]
        return coarse.ravel()

    def restrict_max(self, level: int, fine: np.ndarray) -> np.ndarray:
        """Fields (c, n) of ``level`` to ``level - 1``: each parent's the largest of its 3 x 3
        children's, the type's least where none."""
        side, coarse_side, least = grid_side(level), grid_side(level - 1), np.iinfo(fine.dtype).min
        padded = np.full((fine.shape[0], side + 2, side + 2), least, dtype=fine.dtype)
        padded[:, 1:-1, 1:-1] = fine.reshape(-1, side, side)
        coarse = np.full((fine.shape[0], coarse_side, coarse_side), least, dtype=fine.dtype)
        for a, b in _OFFSETS:
            np.maximum(coarse, padded[:, 1 + a :: 2, 1 + b :: 2][:, :coarse_side, :coarse_side], out=coarse)
        return coarse.reshape(fine.shape[0], -1)

    def prolong(self, level: int, coarse: np.ndarray, method: Prolongation, patch: bool = False) -> np.ndarray:
        """Positions of ``level - 1`` (3, n_{j-1}) carried up to ``level``.

        ``patch``: the field is zero outside a small patch; compute only around it.
        """
        carry = prolong_patch if patch else prolong
        return carry(self._shape(level - 1, coarse), cubic=method == "cubic").reshape(3, -1)

    def frame_basis(self, level: int, surface: np.ndarray) -> TangentFrames:
        """Frames on the prolongated parent surface (3, n_j) of ``level``, built on demand:
        the central differences of ``grid_tangents`` (one-sided at the borders), sliced from
        the whole level's for a chunk, by index arithmetic for a subset."""
        side = grid_side(level)
        take = lambda index: surface.take(index, axis=1)  # noqa: E731
        whole: list[tuple[np.ndarray, np.ndarray]] = []  # the whole level's, once a slice asks

        def tangents(index: slice | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if isinstance(index, slice):  # a chunk of the whole level: slicing beats gathers
                if not whole:
                    whole.append(grid_tangents(self._shape(level, surface)))
                du, dv = whole[0]
                return du[:, index], dv[:, index]
            row, col = np.divmod(index, side)
            du = take(row * side + np.minimum(col + 1, side - 1)) - take(row * side + np.maximum(col - 1, 0))
            dv = take(np.minimum(row + 1, side - 1) * side + col) - take(np.maximum(row - 1, 0) * side + col)
            return du, dv

        return TangentFrames(tangents, side * side)

    def prolong_with_frames(
        self, level: int, coarse: np.ndarray, method: Prolongation, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, TangentFrames]:
        parent = self.prolong(level, coarse, method)  # slices, no gathers: cheap whole
        frames = self.frame_basis(level, parent)
        if rows is None:
            return parent, frames
        return parent.take(rows, axis=1), frames.subset(rows)

    def dependents(self, level: int, moved: np.ndarray, method: Prolongation) -> np.ndarray:
        """The box of fine vertices around the moved parents' children: a linear midpoint
        reads the parents 1 fine step away, a cubic one up to 5 (its one-sided border rule),
        and a tangent one step further."""
        coarse_side, side = grid_side(level - 1), grid_side(level)
        grid = moved.reshape(coarse_side, coarse_side)
        rows, cols = np.flatnonzero(grid.any(axis=1)), np.flatnonzero(grid.any(axis=0))
        out = np.zeros((side, side), dtype=bool)
        if rows.size:
            reach = (5 if method == "cubic" else 1) + 1
            low = lambda first: max(2 * first - reach, 0)  # noqa: E731
            high = lambda last: min(2 * last + reach, side - 1) + 1  # noqa: E731
            out[low(rows[0]) : high(rows[-1]), low(cols[0]) : high(cols[-1])] = True
        return out.ravel()

    def inject(self, level: int, finest_values: np.ndarray) -> np.ndarray:
        """Values of the finest level (..., n_k) subsampled at the vertices of ``level``."""
        step = 2 ** (self.finest - level)
        side = grid_side(self.finest)
        grid = finest_values.reshape((*finest_values.shape[:-1], side, side))
        return np.ascontiguousarray(grid[..., ::step, ::step]).reshape((*finest_values.shape[:-1], -1))
