"""The general mesh hierarchy's parts: independent sets, islands, transfer operators, frames,
loose vertices, grid detection and the topology cache (meshes made with numpy)."""

import numpy as np
import pytest

from core import GridHierarchy, HierarchyCache, LevelSettings, MeshHierarchy, Surface, build_hierarchy
from core.graph import components, independent_set, polygon_neighbours
from core.mesh import ISLAND_MINIMUM
from scenes import grid_quads, grid_rest, shuffled_triangulated_grid, tube


def test_the_independent_set_is_independent_and_maximal():
    rest, triangles = shuffled_triangulated_grid(5)
    heads, tails = polygon_neighbours(len(rest), triangles.ravel(), np.full(len(triangles), 3))
    chosen = independent_set(len(rest), heads, tails)
    assert not (chosen[heads] & chosen[tails]).any()  # independent
    covered = np.zeros(len(rest), dtype=bool)
    covered[tails[chosen[heads]]] = True
    assert (chosen | covered).all()  # maximal: every other vertex has a chosen neighbour
    np.testing.assert_array_equal(chosen, independent_set(len(rest), heads, tails))  # deterministic


def test_islands_are_labelled_by_their_smallest_vertex():
    heads, tails = polygon_neighbours(7, np.array([0, 1, 2, 4, 5, 6]), np.array([3, 3]))
    np.testing.assert_array_equal(components(7, heads, tails), [0, 0, 0, 3, 4, 4, 4])


def test_prolongation_rows_sum_to_one_and_keep_kept_vertices_and_restriction_takes_the_longest():
    rest, triangles = shuffled_triangulated_grid(5)
    hierarchy = MeshHierarchy.from_triangles(rest, triangles)
    for j in range(1, len(hierarchy.sizes)):
        coarse_count = hierarchy.sizes[j - 1]
        ones = hierarchy.prolong(j, np.ones((3, coarse_count)), "linear")
        np.testing.assert_allclose(ones, 1.0, atol=1e-6)  # rows sum to 1
        values = np.random.default_rng(j).normal(size=(3, coarse_count))
        fine = hierarchy.prolong(j, values, "linear")
        place = np.empty(len(rest), dtype=int)  # each mesh vertex's place on level j (levels have orders of their own)
        place[hierarchy.level_vertices(j)] = np.arange(hierarchy.sizes[j])
        kept = place[hierarchy.level_vertices(j - 1)]
        np.testing.assert_allclose(fine[:, kept], values, atol=1e-6)  # identity on kept vertices
    # One moving vertex: every coarse vertex it interpolates takes exactly its vector.
    d = np.zeros((3, hierarchy.sizes[-1]))
    d[:, 17] = [0.0, 0.0, -0.3]
    coarse = hierarchy.restrict(len(hierarchy.sizes) - 1, d, "max")
    moved = np.flatnonzero(np.abs(coarse).sum(axis=0))
    assert moved.size >= 1
    np.testing.assert_allclose(coarse[:, moved], np.repeat([[0.0], [0.0], [-0.3]], moved.size, axis=1))


def test_prolongation_reproduces_affine_functions_away_from_the_border():
    """Barycentric weights have linear precision: on a flat mesh, interpolating any affine
    function of the coarse positions gives its values at the fine positions, except in a
    band two spacings wide along the border, where a vertex can lie outside the coarse hull."""
    rest, triangles = shuffled_triangulated_grid(6)
    hierarchy = MeshHierarchy.from_triangles(rest, triangles)
    affine = np.random.default_rng(1).normal(size=(3, 4))
    f = lambda x: x @ affine[:, :3].T + affine[:, 3]  # noqa: E731
    assert hierarchy.sizes[2:] == [208, 992, 4225]
    for j in range(2, len(hierarchy.sizes)):  # levels 0 and 1 are nearly all border
        fine, coarse = rest[hierarchy.level_vertices(j)], rest[hierarchy.level_vertices(j - 1)]
        error = np.abs(hierarchy.prolong(j, f(coarse).T, "linear").T - f(fine)).max(axis=1)
        spacing = 2 / (np.sqrt(hierarchy.sizes[j]) - 1)
        inside = np.abs(fine[:, :2]).max(axis=1) < 1 - 2 * spacing
        assert inside.sum() > 0.25 * inside.size
        assert error[inside].max() < 1e-5
        assert error.max() > 1e-3  # the border band does not: the test can tell


def test_prolonging_a_patch_gives_what_prolonging_the_whole_level_gives():
    rest, triangles = shuffled_triangulated_grid(6)
    hierarchy = MeshHierarchy.from_triangles(rest, triangles)
    rng = np.random.default_rng(5)
    for j in range(1, len(hierarchy.sizes)):
        values = np.zeros((3, hierarchy.sizes[j - 1]), dtype=np.float32)
        patch = rng.choice(hierarchy.sizes[j - 1], size=max(1, hierarchy.sizes[j - 1] // 10), replace=False)
        values[:, patch] = rng.normal(size=(3, patch.size))
        whole = hierarchy.prolong(j, values, "linear")
        assert np.count_nonzero(whole.any(axis=0)) > patch.size  # the patch spreads to children
        np.testing.assert_array_equal(hierarchy.prolong(j, values, "linear", patch=True), whole)


@pytest.mark.parametrize("method", ["max", "average", "full_weighting"])
def test_restriction_keeps_the_length_of_a_uniform_push(method):
    rest, triangles = shuffled_triangulated_grid(5)
    hierarchy = MeshHierarchy.from_triangles(rest, triangles)
    d = np.zeros((3, hierarchy.sizes[-1]))
    d[2] = -0.1
    for j in range(len(hierarchy.sizes) - 1, 0, -1):
        d = hierarchy.restrict(j, d, method)
        np.testing.assert_allclose(d[2], -0.1, rtol=1e-6)


def test_loose_vertices_follow_no_level_but_their_own():
    rest, triangles = shuffled_triangulated_grid(4)
    loose = np.array([[5.0, 0, 0], [6.0, 0, 0]])
    rest = np.concatenate([rest, loose])
    hierarchy = MeshHierarchy.from_triangles(rest, triangles)
    n = len(rest)
    for j in range(len(hierarchy.sizes)):
        assert {n - 2, n - 1} <= set(hierarchy.level_vertices(j))
    surface = Surface(hierarchy, rest, LevelSettings.uniform(len(hierarchy.sizes), absorption=1.0))
    d = np.zeros_like(rest)
    d[: n - 2, 2] = -0.1  # the whole grid pushed down, coarse levels taking it all
    surface.step(d, 1 / 24)
    assert np.abs(surface.positions[n - 2 :] - loose).max() == 0.0
    d = np.zeros_like(rest)
    d[n - 1] = [0.0, 0.3, 0.0]
    surface.step(d, 1 / 24)
    np.testing.assert_allclose(surface.positions[n - 1], loose[1] + [0, 0.3, 0], atol=1e-6)


def test_islands_keep_at_least_a_handful_of_vertices_on_every_level():
    a, triangles = shuffled_triangulated_grid(4, seed=1)
    b = a + [3.0, 0, 0]
    rest = np.concatenate([a, b])
    hierarchy = MeshHierarchy.from_triangles(rest, np.concatenate([triangles, triangles + len(a)]))
    for j in range(len(hierarchy.sizes)):
        members = hierarchy.level_vertices(j)
        assert (members < len(a)).sum() >= ISLAND_MINIMUM and (members >= len(a)).sum() >= ISLAND_MINIMUM


def test_a_row_major_grid_gets_the_exact_grid_hierarchy_and_others_the_mesh_one():
    rest = grid_rest(4)
    quads = grid_quads(17)
    assert isinstance(build_hierarchy(rest, quads.ravel(), np.full(len(quads), 4)), GridHierarchy)
    shuffled, triangles = shuffled_triangulated_grid(4)
    assert isinstance(build_hierarchy(shuffled, triangles.ravel(), np.full(len(triangles), 3)), MeshHierarchy)
    ten = grid_rest(4)[:100]  # not (2^m + 1)^2
    assert isinstance(build_hierarchy(ten, grid_quads(10).ravel(), np.full(81, 4)), MeshHierarchy)


def test_the_cache_builds_once_per_topology_and_rest_shape():
    rest, triangles = shuffled_triangulated_grid(4)
    cache = HierarchyCache()
    sizes = np.full(len(triangles), 3)
    first = cache.get(rest, triangles.ravel(), sizes)
    assert cache.get(rest.copy(), triangles.ravel().copy(), sizes) is first
    assert cache.builds == 1
    moved = rest.copy()
    moved[0, 2] += 0.1
    assert cache.get(moved, triangles.ravel(), sizes) is not first
    assert cache.get(rest, triangles[:-1].ravel(), sizes[:-1]) is not first
    assert cache.builds == 3


def _grid_or_mesh(kind: str, level: int):
    """The hierarchy of a (2^level + 1)^2 grid: the grid's own, or a general mesh's of its
    triangles, shuffled."""
    if kind == "grid":
        return GridHierarchy(level)
    rest, triangles = shuffled_triangulated_grid(level)
    return MeshHierarchy.from_triangles(rest, triangles)


@pytest.mark.parametrize("kind", ["grid", "mesh"])
def test_restricting_a_mask_marks_exactly_the_parents_max_restriction_moves(kind):
    hierarchy = _grid_or_mesh(kind, 5)
    rng = np.random.default_rng(3)
    for j in range(len(hierarchy.sizes) - 1, 0, -1):
        mask = rng.random(hierarchy.sizes[j]) < 0.05
        expected = hierarchy.restrict(j, np.repeat(mask[None].astype(np.float32), 3, axis=0), "max")[0] > 0
        got = hierarchy.restrict_mask(j, mask)
        assert got.dtype == bool and got.any()
        assert j < len(hierarchy.sizes) - 1 or not got.all()  # a mask, not everything
        np.testing.assert_array_equal(got, expected)


def test_average_restriction_of_a_push_on_kept_vertices_alone():
    """A push only on vertices that are their own parent (no other child moves): the average
    restriction takes the own child's push. It crashed (the bincount of nothing is int64)."""
    rest, triangles = shuffled_triangulated_grid(5)
    hierarchy = MeshHierarchy.from_triangles(rest, triangles)
    level = len(hierarchy.sizes) - 1
    place = np.argsort(hierarchy.vertex_order)  # each mesh vertex's place on the finest level
    kept = place[hierarchy.inject(level - 1, np.arange(hierarchy.sizes[-1]))[:3]]
    d = np.zeros((3, hierarchy.sizes[-1]))
    d[2, kept] = -0.1
    coarse = hierarchy.restrict(level, d, "average")
    assert coarse.dtype.kind == "f" and np.isfinite(coarse).all()
    np.testing.assert_allclose(np.sort(coarse[2])[:3], -0.1)


def test_every_frame_of_a_thin_tube_turns_with_its_coarse_level():
    """Invariant 8 on a tube 80 times longer than wide (an antenna, a tail): a coarse level of
    it is nearly a line, so some vertices' neighbourhoods are too thin for a frame on either
    level. Each still gets one from its surface: turning the coarse level turns every frame
    of the next level with it (the object's axes, the last resort before, stayed put: 3 of
    27 vertices on the first level here)."""
    rest, triangles = tube(0.0125, 2.0, 16, 161)
    hierarchy = MeshHierarchy.from_triangles(rest, triangles)
    c, s = np.cos(0.6), np.sin(0.6)
    turn = np.array([[1, 0, 0], [0, c, -s], [0, s, c]]) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    at_rest = rest.T.astype(np.float64)
    for level in range(1, len(hierarchy.sizes)):
        coarse = hierarchy.inject(level - 1, at_rest)
        _surface, frames = hierarchy.prolong_with_frames(level, coarse, "linear")
        _surface, turned = hierarchy.prolong_with_frames(level, turn @ coarse, "linear")
        expected = np.einsum("ij,jkn->ikn", turn, frames(slice(None)))
        assert np.abs(turned(slice(None)) - expected).max() < 1e-9, f"level {level}"


@pytest.mark.parametrize("kind", ["grid", "mesh"])
def test_restricting_integer_fields_by_max_gives_each_parent_the_largest_of_its_marked_children(kind):
    """``restrict_max`` (the solver's boxes of the ways out of resting vertices): each parent
    of ``restrict_mask``'s gets, per row, the largest value among its children that carry one
    (the type's least marks none), and a parent of none the least, against one child at a time."""
    hierarchy = _grid_or_mesh(kind, 4)
    rng = np.random.default_rng(5)
    for j in range(len(hierarchy.sizes) - 1, 0, -1):
        fine = np.full((6, hierarchy.sizes[j]), -128, dtype=np.int8)
        marked = (rng.random(hierarchy.sizes[j]) < 0.2).nonzero()[0]
        fine[:, marked] = rng.integers(-127, 128, (6, marked.size))
        expected = np.full((6, hierarchy.sizes[j - 1]), -128, dtype=np.int8)
        for child in marked:
            alone = np.zeros(hierarchy.sizes[j], dtype=bool)
            alone[child] = True
            parents = hierarchy.restrict_mask(j, alone)
            expected[:, parents] = np.maximum(expected[:, parents], fine[:, child : child + 1])
        got = hierarchy.restrict_max(j, fine)
        assert got.dtype == np.int8 and (got != -128).any() == bool(marked.size)
        np.testing.assert_array_equal(got, expected)
