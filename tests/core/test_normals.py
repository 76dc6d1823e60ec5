"""Vertex normals of a subset of a mesh's vertices, against whole-mesh sums written plainly."""

import numpy as np

from core.normals import VertexNormals


def cube():
    positions = np.array([[x, y, z] for z in (0, 1) for y in (0, 1) for x in (0, 1)], dtype=np.float32)
    faces = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]]  # outward
    return positions, np.array(faces).ravel(), np.full(6, 4)


def plain_normals(positions, faces):
    """Each face's unit normal (its fan of triangles' area, made unit), weighted by the face's
    angle at the vertex, summed at its vertices, made unit: Blender's rule, a face at a time."""
    normals = np.zeros((len(positions), 3))
    for face in faces:
        p = positions[face].astype(np.float64)
        area = sum(np.cross(p[i] - p[0], p[i + 1] - p[0]) for i in range(1, len(face) - 1))
        unit = area / np.linalg.norm(area)
        for i, vertex in enumerate(face):
            before, after = p[i - 1] - p[i], p[(i + 1) % len(face)] - p[i]
            cosine = before @ after / np.linalg.norm(before) / np.linalg.norm(after)
            normals[vertex] += unit * np.arccos(np.clip(cosine, -1, 1))
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)


def test_a_cubes_corners_point_out_along_the_diagonals():
    positions, corners, sizes = cube()
    normals = VertexNormals(8, corners, sizes)(positions, np.arange(8))
    expected = (positions - 0.5) / np.linalg.norm(positions - 0.5, axis=1, keepdims=True)
    np.testing.assert_allclose(normals, expected, atol=1e-6)


def test_any_subset_of_a_bumpy_mixed_mesh_matches_the_whole_mesh_sums_far_from_the_origin():
    rng = np.random.default_rng(3)
    side = 12
    x, y = np.meshgrid(np.arange(side, dtype=np.float64), np.arange(side, dtype=np.float64))
    positions = np.stack([x.ravel(), y.ravel(), 0.3 * rng.standard_normal(side * side)], axis=1)
    positions += 1000.0  # float32 positions far from the origin: the sums must not lose the faces
    faces = []
    for row in range(side - 1):
        for col in range(side - 1):
            a, b, c, d = row * side + col, row * side + col + 1, (row + 1) * side + col + 1, (row + 1) * side + col
            faces += [[a, b, c], [a, c, d]] if (row + col) % 3 == 0 else [[a, b, c, d]]
    last = side * side - 1
    faces.append([last - side - 1, last - side, last - 1, last])  # a bowtie (self-crossing) quad
    positions = np.vstack([positions, [[0.0, 0.0, 0.0]]]).astype(np.float32)  # and a loose vertex
    corners, sizes = np.concatenate(faces), np.array([len(f) for f in faces])
    normals = VertexNormals(len(positions), corners, sizes)
    expected = plain_normals(positions, faces)
    subsets = (
        np.arange(len(positions)),
        rng.choice(len(positions), 40, replace=False),
        np.array([len(positions) - 1, 5]),
    )
    for index in subsets:
        got = normals(positions, index)
        assert got.dtype == np.float32 and got.shape == (index.size, 3)
        np.testing.assert_allclose(got, expected[index], atol=2e-4)
    assert not normals(positions, np.array([len(positions) - 1])).any()  # the loose vertex: 0
    assert normals(positions, np.array([], dtype=int)).shape == (0, 3)
