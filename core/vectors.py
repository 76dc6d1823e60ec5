"""Component-major vector arithmetic on (3, n) arrays.

Each component is a contiguous row, so a dot or cross product is a handful of plain
multiply-adds on contiguous memory instead of a strided or `np.cross` call.
"""

import numpy as np

from .constants import TINY


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot product of two (3, n) arrays, shape (n,)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def norm(a: np.ndarray) -> np.ndarray:
    """Lengths of the columns of a (3, n) array, shape (n,)."""
    return np.sqrt(dot(a, a))


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Column-wise cross product of two (3, n) arrays."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a, b))
    np.multiply(a[1], b[2], out=out[0])
    out[0] -= a[2] * b[1]
    np.multiply(a[2], b[0], out=out[1])
    out[1] -= a[0] * b[2]
    np.multiply(a[0], b[1], out=out[2])
    out[2] -= a[1] * b[0]
    return out


def normalize(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit columns of a (3, n) array and a validity mask (columns longer than TINY).

    Invalid columns come back as zero vectors rather than NaN.
    """
    length = norm(a)
    valid = length > TINY
    scale = np.divide(1.0, length, out=np.zeros_like(length), where=valid)
    return a * scale, valid
