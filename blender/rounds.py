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

    def around(self, moved: np.ndarray) -> np.ndarray:
        """The vertices (rows) of every face with a vertex ``moved`` ((n,) bool)."""
        touched = np.logical_or.reduceat(moved[self.corners], self.starts)
        return np.unique(self.corners[touched[self.face]])


def rows_to_ask(
    index: int,
    positions: list[np.ndarray],
    before: list[np.ndarray],
    found: list[tuple[np.ndarray, np.ndarray]],
    faces: list[Faces],
    matrices: list[np.ndarray],
) -> np.ndarray:
    """The rows of member ``index`` a round asks about: pushed or touching at the last
    question (``found``: each member's pushes and touching flags), moved since it
    (``positions`` now, ``before`` then, object space), or within a moved face's reach of
    another member (``faces``: each member's; ``matrices``: their world matrices)."""
    mine = positions[index]
    push, touching = found[index]
    ask = nonzero_rows(push) | touching | rows_differ(mine, before[index])
    to_mine = np.linalg.inv(matrices[index])
    for other, (now, then) in enumerate(zip(positions, before, strict=True)):
        moved = rows_differ(now, then) if other != index else None
        if moved is None or not moved.any():
            continue
        move = now[moved] - then[moved]
        reach = float(np.sqrt(np.einsum("ij,ij->i", move, move).max()))
        carry = to_mine @ matrices[other]
        corners = now[faces[other].around(moved)] @ carry[:3, :3].T + carry[:3, 3]
        # Grown by the furthest move as seen in this mesh's space, and past float32's rounding.
        pad = reach * float(np.linalg.norm(carry[:3, :3], 2)) * (1.0 + 1e-4) + 1e-6 * float(np.abs(corners).max())
        low, high = corners.min(axis=0) - pad, corners.max(axis=0) + pad
        within = np.ones(mine.shape[0], dtype=bool)
        for axis in range(3):  # column by column: a reduction along the short axis is slow
            within &= (mine[:, axis] >= low[axis]) & (mine[:, axis] <= high[axis])
        ask |= within
    return ask.nonzero()[0]
