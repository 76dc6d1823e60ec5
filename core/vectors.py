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


def cross(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Column-wise cross product of two (3, n) arrays (into ``out`` if given)."""
    if out is None:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a, b))
    scratch = np.empty_like(out[0])
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        np.multiply(a[j], b[k], out=out[i])
        np.multiply(a[k], b[j], out=scratch)
        out[i] -= scratch
    return out


def inverse_norm(a: np.ndarray) -> np.ndarray:
    """1 / length of each column of a (3, n) array; 0 for columns shorter than TINY."""
    length = a[0] * a[0]
    length += a[1] * a[1]
    length += a[2] * a[2]
    np.sqrt(length, out=length)
    valid = length > TINY
    np.divide(1.0, length, out=length, where=valid)  # in place: no second array
    length[~valid] = 0.0
    return length


def nonzero_rows(a: np.ndarray) -> np.ndarray:
    """Which rows of an (n, 3) array have a nonzero component, (n,) bool: column by column,
    several times faster than ``a.any(axis=1)`` (a reduction along a short axis)."""
    return (a[:, 0] != 0) | (a[:, 1] != 0) | (a[:, 2] != 0)


def unit_rows(a: np.ndarray) -> np.ndarray:
    """The rows of an (n, 3) array scaled to length 1; a zero row stays 0."""
    length = np.linalg.norm(a, axis=1, keepdims=True)
    return np.divide(a, length, out=np.zeros_like(a), where=length > 0)


def rows_differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Which rows of two (n, 3) arrays differ, (n,) bool (see ``nonzero_rows``)."""
    differ = a != b
    return differ[:, 0] | differ[:, 1] | differ[:, 2]
