"""Vertex normals of a polygon mesh at any positions, for any subset of its vertices."""

import numpy as np

from .graph import ranges
from .vectors import cross, dot, inverse_norm


class VertexNormals:
    """Vertex normals as Blender makes them: the unit normals of the faces around a vertex
    (Newell's, for any polygon), each weighted by the face's angle at the vertex, summed and
    made unit; oriented by the faces' winding. Built once per topology. A call reads only
    the faces around the vertices asked for, so vertices near a collider cost what they
    are, not the whole mesh.

    Parameters
    ----------
    vertex_count : int
    corners : (c,) int
        Each face's vertices in winding order, face after face (Blender's loops).
    sizes : (f,) int
        Corners per face.
    """

    def __init__(self, vertex_count: int, corners: np.ndarray, sizes: np.ndarray):
        corners, sizes = np.asarray(corners, dtype=np.int64), np.asarray(sizes, dtype=np.int64)
        self._sizes = sizes
        self._face_start = np.cumsum(sizes) - sizes
        self._corners = corners
        last = self._face_start + sizes - 1
        following, previous = np.arange(corners.size) + 1, np.arange(corners.size) - 1
        following[last], previous[self._face_start] = self._face_start, last  # around each face
        self._following, self._previous = corners[following], corners[previous]
        self._face_of_corner = np.repeat(np.arange(sizes.size), sizes)
        self._corners_by_vertex = np.argsort(corners, kind="stable")
        self._corner_count_of = np.bincount(corners, minlength=vertex_count)
        self._first_corner_of = np.cumsum(self._corner_count_of) - self._corner_count_of

    def __call__(self, positions: np.ndarray, index: np.ndarray) -> np.ndarray:
        """Unit normals (m, 3) of the vertices ``index`` (m,) with the mesh at ``positions``
        (n, 3); zero where a vertex has no face with an area."""
        index = np.asarray(index, dtype=np.int64)
        counts = self._corner_count_of[index]
        around = self._corners_by_vertex[ranges(self._first_corner_of[index], counts)]  # their corners
        faces = self._face_of_corner[around]
        # Each face around the vertices once, however many of its vertices were asked for.
        used = np.zeros(self._sizes.size, dtype=bool)
        used[faces] = True
        unique = used.nonzero()[0]
        sizes = self._sizes[unique]
        corner = ranges(self._face_start[unique], sizes)
        # Newell: the sum over a face's edges of a x b. Component-major, in float64 (float32
        # positions far from the origin would lose a small face's area to rounding).
        # Only the vertices of those faces are read and converted, not the whole mesh.
        take = lambda vertices: positions.take(vertices, axis=0).T.astype(np.float64, order="C")  # noqa: E731
        face_normals = _segment_sums(cross(take(self._corners[corner]), take(self._following[corner])), sizes)
        face_normals *= inverse_norm(face_normals)
        # Each face's angle at the vertex: between the edges to the corners before and after.
        at = take(self._corners[around])
        before, after = take(self._previous[around]) - at, take(self._following[around]) - at
        cosine = dot(before, after) * inverse_norm(before) * inverse_norm(after)
        angle = np.arccos(np.clip(cosine, -1.0, 1.0))
        normals = _segment_sums(np.take(face_normals, np.searchsorted(unique, faces), axis=1) * angle, counts)
        return (normals * inverse_norm(normals)).T.astype(positions.dtype)


def _segment_sums(columns: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sums of consecutive runs of ``columns`` (3, k), ``counts`` (s,) columns each: (3, s),
    0 for an empty run."""
    padded = np.concatenate([columns, np.zeros((3, 1))], axis=1)  # reduceat may start at k
    sums = np.add.reduceat(padded, np.cumsum(counts) - counts, axis=1) if counts.size else padded[:, :0]
    sums[:, counts == 0] = 0  # reduceat gives a column, not 0, for an empty run
    return sums
