"""Orthonormal per-vertex frames, the reference-offset operator and its inverse.

A frame array ``F`` has shape (3, 3, n): ``F[:, i, v]`` is axis ``i`` of vertex ``v`` in
object space (axis 0 and 1 tangents, axis 2 the normal). Offsets stored in frame
coordinates follow the surface when the frame turns (Forsey and Bartels' reference-offset
method, Harrison 1994 section 4.2.5).
"""

import numpy as np

from .vectors import cross, normalize


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
    t0, t0_valid = normalize(du)
    normal, normal_valid = normalize(cross(du, dv))
    frames = np.empty((3, 3, du.shape[1]), dtype=du.dtype)
    frames[:, 0] = t0
    frames[:, 2] = normal
    frames[:, 1] = cross(normal, t0)
    bad = ~(t0_valid & normal_valid)
    if bad.any():
        frames[:, :, bad] = identity_frames(1, du.dtype)
    return frames


def to_object(frames: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Offsets in frame coordinates (3, n) to object-space vectors: ``F e``."""
    return frames[:, 0] * offsets[0] + frames[:, 1] * offsets[1] + frames[:, 2] * offsets[2]


def to_frame(frames: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Object-space vectors (3, n) to frame coordinates: ``F^T v``."""
    return frames[0] * vectors[0] + frames[1] * vectors[1] + frames[2] * vectors[2]
