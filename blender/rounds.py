"""Which vertices a round of soft partners asks about (``blender.together``).

A frame of a group asks each member about every vertex near its colliders twice: at its
start, and after the step (which can move any vertex). A round after that moves only the
vertices it pushes, on the finest level, so after it a vertex can be inside a partner only
if the last question found it pushed or touching, or the round moved it, or it lies within
reach of a partner's face that moved (it was outside that face before, and the face moved
no further than its furthest vertex). Only those are asked again: the others would find no
push, and the round casts a few hundred rays where it cast thousands.
"""

import numpy as np

from ..core.vectors import nonzero_rows, rows_differ


class Faces:
    """A mesh's faces by their corners, to find the faces around moved vertices."""

    def __init__(self, corners: np.ndarray, sizes: np.ndarray):
        self.corners = corners
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.face = np.repeat(np.arange(sizes.size), sizes)

    def around(self, moved: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, float]:
        """The corners (their ``positions``, (c, 3)) of every face with a vertex ``moved``
        ((n,) bool), and the largest of those faces (its box's diagonal)."""
        touched = np.logical_or.reduceat(moved[self.corners], self.starts)
        corners = positions[self.corners[touched[self.face]]]
        starts = np.concatenate([[0], np.cumsum(np.diff(np.append(self.starts, self.corners.size))[touched])[:-1]])
        extent = np.maximum.reduceat(corners, starts, axis=0) - np.minimum.reduceat(corners, starts, axis=0)
        return corners, float(np.sqrt(np.einsum("ij,ij->i", extent, extent).max()))


def rows_to_ask(
    index: int,
    positions: list[np.ndarray],
    before: list[np.ndarray],
    found: list[tuple[np.ndarray, np.ndarray]],
    faces: list[Faces],
    matrices: list[np.ndarray],
) -> np.ndarray:
    """The rows of member ``index`` a round asks about: pushed at the last question
    (``found``: each member's pushes and touching flags), moved since it (``positions``
    now, ``before`` then, object space), or within reach of a face of another member that
    moved (``faces``: each member's; ``matrices``: their world matrices). A vertex resting
    on a partner is not asked again while the partner's faces near it hold still."""
    mine = positions[index]
    ask = nonzero_rows(found[index][0]) | rows_differ(mine, before[index])
    to_mine = np.linalg.inv(matrices[index])
    for other, (now, then) in enumerate(zip(positions, before, strict=True)):
        moved = rows_differ(now, then) if other != index else None
        if moved is None or not moved.any():
            continue
        move = now[moved] - then[moved]
        reach = float(np.sqrt(np.einsum("ij,ij->i", move, move).max()))
        corners, extent = faces[other].around(moved, now)
        carry = to_mine @ matrices[other]
        corners = corners @ carry[:3, :3].T + carry[:3, 3]
        # A point of a moved face, where it is, was or passed, is within its box's diagonal
        # (grown by the moves of its corners, twice) plus the move of a corner: seen in this
        # mesh's space, and past float32's rounding.
        scale = float(np.linalg.norm(carry[:3, :3], 2))
        reach = (extent + 3.0 * reach) * scale * (1.0 + 1e-4) + 1e-6 * float(np.abs(corners).max())
        ask |= _within(mine, corners, reach)
    return ask.nonzero()[0]


def _within(points: np.ndarray, centres: np.ndarray, reach: float) -> np.ndarray:
    """Which of ``points`` (n, 3) may lie within ``reach`` of one of ``centres`` (c, 3),
    (n,) bool: those in a cell of side ``reach`` next to (or holding) a centre's, which
    holds every point within reach (and some a little further)."""
    reach = max(reach, float(np.ptp(centres, axis=0).max()) / 1e5)  # cells enough to number in int64
    low = centres.min(axis=0) - reach
    shape = np.floor((centres.max(axis=0) + reach - low) / reach).astype(np.int64) + 1
    near = np.ones(points.shape[0], dtype=bool)
    for axis in range(3):  # first the box around the centres: most points are out of it
        near &= (points[:, axis] >= low[axis]) & (points[:, axis] <= low[axis] + shape[axis] * reach)
    rows = near.nonzero()[0]
    # The centres' cells once each (corners of neighbouring faces share cells), then theirs
    # and their neighbours': the same cells as from every centre, a tenth of the keys to sort.
    occupied = np.unique(_key(np.floor((centres - low) / reach).astype(np.int64), shape))
    cells = np.stack(np.unravel_index(occupied, tuple(shape)), axis=1)
    steps = np.array([(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)])
    around = (cells[:, None, :] + steps[None]).reshape(-1, 3)
    taken = np.unique(_key(np.clip(around, 0, shape - 1), shape))
    mine = np.clip(np.floor((points[rows] - low) / reach).astype(np.int64), 0, shape - 1)
    near[rows] = np.isin(_key(mine, shape), taken)
    return near


def _key(cells: np.ndarray, shape: np.ndarray) -> np.ndarray:
    """One integer per cell (c, 3) of a grid of ``shape`` cells."""
    return (cells[:, 0] * shape[1] + cells[:, 1]) * shape[2] + cells[:, 2]
