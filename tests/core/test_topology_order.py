"""``core.topology.in_own_order``: a mesh's faces and edges in an order set by its vertices
alone, so the same mesh listed in any order gives the same arrays (and so the same normals,
bit for bit). Random meshes: grids with random diagonals (triangles and quads), n-gons,
faces sharing an oriented edge (not manifold); random face and edge orders, edges turned."""

import numpy as np
import pytest

from core.normals import VertexNormals
from core.topology import in_own_order


def random_mesh(rng) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Points, corners, sizes and edges of a wavy grid: quads, some split into triangles, a
    few merged into hexagons, and (for some seeds) a triangle repeated with a vertex of its
    own (two faces sharing an oriented edge)."""
    side = int(rng.integers(4, 12))
    u, v = np.meshgrid(np.arange(side), np.arange(side))
    points = np.stack([u.ravel(), v.ravel(), 0.3 * np.sin(u.ravel() + 2 * v.ravel())], axis=1).astype(np.float32)
    points[:, :2] += rng.uniform(-0.2, 0.2, (side * side, 2))
    faces = []
    cells = [(r, c) for r in range(side - 1) for c in range(side - 1)]
    merged = set()
    for r, c in cells:
        a, b, d, e = r * side + c, r * side + c + 1, (r + 1) * side + c + 1, (r + 1) * side + c
        if (r, c) in merged:
            continue
        if c + 2 < side and rng.random() < 0.15 and (r, c + 1) not in merged:  # a hexagon of two cells
            merged.add((r, c + 1))
            faces.append([a, b, b + 1, d + 1, d, e])
        elif rng.random() < 0.4:
            faces += [[a, b, d], [a, d, e]] if rng.random() < 0.5 else [[a, b, e], [b, d, e]]
        else:
            faces.append([a, b, d, e])
    if rng.random() < 0.5:  # a fin: another triangle on the first face's first edge, same way round
        points = np.concatenate([points, [[0.5, 0.0, 1.0]]]).astype(np.float32)
        faces.append([faces[0][0], faces[0][1], len(points) - 1])
    edges = {tuple(sorted((f[i], f[(i + 1) % len(f)]))) for f in faces for i in range(len(f))}
    corners = np.concatenate([np.array(f) for f in faces])
    return points, corners, np.array([len(f) for f in faces]), np.array(sorted(edges))


def relisted(corners, sizes, edges, rng):
    """The same faces (each its own corners, winding and first corner) and edges, listed in
    a random order, some edges turned round."""
    faces = np.split(corners, np.cumsum(sizes)[:-1])
    order = rng.permutation(len(faces))
    edges = edges[rng.permutation(len(edges))]
    turn = rng.random(len(edges)) < 0.5
    edges[turn] = edges[turn][:, ::-1]
    return np.concatenate([faces[i] for i in order]), sizes[order], edges


@pytest.mark.parametrize("seed", range(40))
def test_the_same_mesh_listed_in_any_order_gives_the_same_arrays_and_normals(seed):
    rng = np.random.default_rng(seed)
    points, corners, sizes, edges = random_mesh(rng)
    first = in_own_order(corners, sizes, edges)
    second = in_own_order(*relisted(corners, sizes, edges, rng))
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    # The same faces, each as it was given: its corners, winding and first corner.
    given = sorted(tuple(f) for f in np.split(corners, np.cumsum(sizes)[:-1]))
    assert sorted(tuple(f) for f in np.split(first[0], np.cumsum(first[1])[:-1])) == given
    assert (first[2][:, 0] < first[2][:, 1]).all()
    assert sorted(map(tuple, first[2])) == sorted(map(tuple, np.sort(edges, axis=1)))
    everything = np.arange(len(points))
    normals = [VertexNormals(len(points), c, s)(points, everything) for c, s, _ in (first, second)]
    np.testing.assert_array_equal(normals[0], normals[1])


def test_a_grid_listed_row_by_row_keeps_its_order():
    """Blender's Grid lists its quads row by row from their lowest corner: already in order
    (its hierarchy and every benchmark's bits are as they were)."""
    side = 9
    r, c = np.divmod(np.arange((side - 1) ** 2), side - 1)
    first = r * side + c
    corners = np.stack([first, first + 1, first + side + 1, first + side], axis=1).ravel()
    sizes = np.full(first.size, 4)
    edges = np.concatenate([np.stack([first, first + 1], 1), np.stack([first, first + side], 1)])
    ordered, same_sizes, _ = in_own_order(corners, sizes, edges)
    np.testing.assert_array_equal(ordered, corners)
    np.testing.assert_array_equal(same_sizes, sizes)
