"""Orthonormal per-vertex frames, the reference-offset operator and its inverse.

A frame array ``F`` has shape (3, 3, n): ``F[:, i, v]`` is axis ``i`` of vertex ``v`` in
object space (axis 0 and 1 tangents, axis 2 the normal). Offsets stored in frame
coordinates follow the surface when the frame turns (Forsey and Bartels' reference-offset
method, Harrison 1994 section 4.2.5).
"""

from collections.abc import Callable

import numpy as np

from .vectors import cross, dot, inverse_norm

#: A detail whose frame turns it further than this from its rest direction (radians) is
#: turned less, down to not at all at ``UNTRUSTED``: its parent surface there is turned over.
TRUSTED = np.pi / 2
UNTRUSTED = 3 * np.pi / 4


def identity_frames(count: int, dtype: type = np.float32) -> np.ndarray:
    """Frames equal to the object axes, shape (3, 3, count)."""
    frames: np.ndarray = np.zeros((3, 3, count), dtype=dtype)
    for axis in range(3):
        frames[axis, axis] = 1.0
    return frames


def frames_from_tangents(du: np.ndarray, dv: np.ndarray) -> np.ndarray:
    """Right-handed orthonormal frames from two surface tangents, each (3, n).

    Axis 0 follows ``du``, axis 2 is the normal ``du x dv``. Where the tangents are
    degenerate (zero or parallel) the frame is the identity, so it is always valid.
    """
    frames = np.empty((3, 3, du.shape[1]), dtype=du.dtype)
    tangent, normal = frames[:, 0], frames[:, 2]
    scale_tangent = inverse_norm(du)
    np.multiply(du, scale_tangent, out=tangent)
    cross(tangent, dv, out=normal)
    # Rounding in the cross product of nearly parallel tangents can tilt the normal off the
    # tangent: take that component out again, so F^T F = I holds to float precision.
    normal -= tangent * dot(normal, tangent)
    scale_normal = inverse_norm(normal)
    normal *= scale_normal
    cross(normal, tangent, out=frames[:, 1])
    bad = (scale_tangent == 0) | (scale_normal == 0)
    if bad.any():
        frames[:, :, bad] = identity_frames(1, du.dtype)
    return frames


def to_object(frames: np.ndarray, offsets: np.ndarray, out: np.ndarray | None = None, base=None) -> np.ndarray:
    """Offsets in frame coordinates (3, n) to object-space vectors ``F e``, plus ``base``
    (3, n) when given, written into ``out`` when given: one pass, no temporaries kept."""
    if out is None:
        out = np.empty_like(offsets)
    scratch = np.empty_like(offsets)
    np.multiply(frames[:, 0], offsets[0], out=out)
    if base is not None:
        out += base
    for axis in (1, 2):
        np.multiply(frames[:, axis], offsets[axis], out=scratch)
        out += scratch
    return out


def to_frame(frames: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Object-space vectors (3, n) to frame coordinates: ``F^T v``."""
    return frames[0] * vectors[0] + frames[1] * vectors[1] + frames[2] * vectors[2]


class TangentFrames:
    """Frames of a level made on demand for any subset of its vertices, from a function that
    gives the two tangents of vertices by index: a level's (3, 3, n) frames are never held
    at once, and vertices whose frames are not asked for cost nothing."""

    def __init__(self, tangents: Callable[[slice | np.ndarray], tuple[np.ndarray, np.ndarray]], count: int):
        self.tangents, self.count = tangents, count

    def __call__(self, index: slice | np.ndarray) -> np.ndarray:
        """Frames (3, 3, m) of the vertices ``index`` (a slice or an index array)."""
        return frames_from_tangents(*self.tangents(index))

    def subset(self, rows: np.ndarray) -> "TangentFrames":
        """The frames of vertices ``rows`` only, indexed 0 .. len(rows) - 1."""
        return TangentFrames(lambda index: self.tangents(rows[index]), rows.size)


def trust_turns(placed: np.ndarray, parent: np.ndarray, rest: np.ndarray) -> None:
    """``placed`` (3, m): points on their ``parent`` surface (3, m) plus their details turned
    by the frames there, whose details at rest were ``rest`` (3, m). A detail turned further
    than ``TRUSTED`` from its rest direction takes less of the turn, in place: none of it by
    ``UNTRUSTED`` (a frame on a parent surface that is turned over swings its details through
    the surface). The response works in rest space, where no dent turns a region over: turns
    up to a quarter, all that a dent's wall makes, are taken whole, to the bit."""
    turned = placed - parent
    facing = dot(turned, rest)
    over = (facing < 0).nonzero()[0]
    if over.size == 0:
        return
    a, b = rest[:, over], turned[:, over]
    with np.errstate(divide="ignore", invalid="ignore"):
        angle = np.arccos(np.clip(facing[over] / dot(a, a), -1.0, 1.0))
    share = np.clip((UNTRUSTED - angle) / (UNTRUSTED - TRUSTED), 0.0, 1.0)
    # ``share`` of the way along the great circle from the rest direction to the turned one
    # (a slerp); past a quarter turn the two are never nearly parallel.
    sine = np.sin(angle)
    with np.errstate(divide="ignore", invalid="ignore"):
        from_rest = np.where(sine > 0, np.sin((1 - share) * angle) / sine, 1.0).astype(a.dtype)
        to_turned = np.where(sine > 0, np.sin(share * angle) / sine, 0.0).astype(a.dtype)
    placed[:, over] = parent[:, over] + a * from_rest + b * to_turned
