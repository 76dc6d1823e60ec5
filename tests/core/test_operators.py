"""Grid transfer operators against hand-computed small cases."""

import numpy as np
import pytest

from core.grid import (
    RESTRICTIONS,
    GridHierarchy,
    children,
    grid_frames,
    prolong,
    prolong_patch,
    restrict_average,
    restrict_full_weighting,
    restrict_max,
)


def field(vectors_by_vertex: dict, side: int = 3) -> np.ndarray:
    """A (3, side, side) vector field, zero except the given (row, col): vector entries."""
    out = np.zeros((3, side, side))
    for (row, col), vector in vectors_by_vertex.items():
        out[:, row, col] = vector
    return out


def test_children_of_a_3x3_level_follow_the_thesis_indexing():
    fine = np.arange(27, dtype=float).reshape(3, 3, 3)
    kids = children(fine)
    assert kids.shape == (9, 3, 2, 2)
    # Parent (1, 1) has only children (1, 1), (1, 2), (2, 1), (2, 2) inside the 3 x 3 level.
    order = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)]
    for index, (a, b) in enumerate(order):
        row, col = 2 + a, 2 + b
        expected = fine[:, row, col] if row < 3 and col < 3 else np.zeros(3)
        np.testing.assert_array_equal(kids[index, :, 1, 1], expected)


def test_max_restriction_takes_the_longest_child():
    fine = field({(0, 0): [0, 0, -1], (0, 1): [0, 0, -3], (1, 1): [2, 0, 0], (2, 2): [0, 0, -0.5]})
    coarse = restrict_max(fine)
    np.testing.assert_array_equal(coarse[:, 0, 0], [0, 0, -3])  # children (0,0),(0,1),(1,0),(1,1)
    np.testing.assert_array_equal(coarse[:, 0, 1], [0, 0, -3])  # children (0,1),(0,2),(1,1),(1,2)
    np.testing.assert_array_equal(coarse[:, 1, 1], [2, 0, 0])  # children (1,1),(1,2),(2,1),(2,2)
    np.testing.assert_array_equal(coarse[:, 1, 0], [2, 0, 0])


def test_average_restriction_with_a_moving_centre_takes_the_longer_of_centre_and_mean():
    fine = np.zeros((3, 5, 5))
    fine[:, 2, 2] = [0, 0, -1]  # centre child of parent (1, 1)
    fine[:, 1, 2] = [0, 0, -2]
    fine[:, 2, 3] = [0, 0, -4]  # mean of the non-zero others: -3, longer than the centre
    assert np.allclose(restrict_average(fine)[:, 1, 1], [0, 0, -3])
    fine[:, 2, 2] = [0, 0, -3.5]  # now the centre is longer
    assert np.allclose(restrict_average(fine)[:, 1, 1], [0, 0, -3.5])


def test_average_restriction_with_a_still_centre_acts_like_max():
    fine = np.zeros((3, 5, 5))
    fine[:, 1, 2] = [0, 0, -2]
    fine[:, 3, 3] = [0, 1, 0]
    assert np.allclose(restrict_average(fine)[:, 1, 1], [0, 0, -2])
    assert np.allclose(restrict_average(fine), restrict_max(fine))


def test_full_weighting_has_the_weighted_direction_and_the_longest_length():
    fine = np.zeros((3, 5, 5))
    fine[:, 2, 2] = [0, 0, -1]  # weight 4
    fine[:, 2, 3] = [2, 0, 0]  # weight 2
    # weighted sum = 4 * (0,0,-1) + 2 * (2,0,0) = (4, 0, -4): direction (1,0,-1)/sqrt2; length 2.
    expected = np.array([1.0, 0.0, -1.0]) / np.sqrt(2) * 2
    assert np.allclose(restrict_full_weighting(fine)[:, 1, 1], expected)


def test_full_weighting_falls_back_to_max_where_children_cancel():
    fine = np.zeros((3, 5, 5))
    fine[:, 2, 1] = [0, 0, 1]
    fine[:, 2, 3] = [0, 0, -1]  # equal weights, opposite: the mean vanishes
    out = restrict_full_weighting(fine)[:, 1, 1]
    assert np.isclose(np.linalg.norm(out), 1.0)


def test_linear_prolongation_averages_two_and_four():
    coarse = np.zeros((1, 2, 2))
    coarse[0] = [[0.0, 2.0], [4.0, 10.0]]
    fine = prolong(coarse, cubic=False)[0]
    np.testing.assert_allclose(fine, [[0, 1, 2], [2, 4, 6], [4, 7, 10]])


def test_cubic_prolongation_uses_minus_one_nine_nine_minus_one_inside_and_one_sided_at_borders():
    values = np.array([0.0, 1.0, 3.0, 2.0, 5.0])
    coarse = np.tile(values, (5, 1))[None]  # constant down the columns
    row = prolong(coarse, cubic=True)[0, 0]
    np.testing.assert_allclose(row[::2], values)
    assert np.isclose(row[3], (-0 + 9 * 1 + 9 * 3 - 2) / 16)
    assert np.isclose(row[5], (-1 + 9 * 3 + 9 * 2 - 5) / 16)
    assert np.isclose(row[1], (5 * 0 + 15 * 1 - 5 * 3 + 2) / 16)
    assert np.isclose(row[7], (5 * 5 + 15 * 2 - 5 * 3 + 1) / 16)


@pytest.mark.parametrize("cubic, degree", [(False, 1), (True, 3)])
def test_prolongation_reproduces_polynomials_of_its_degree(cubic, degree):
    side = 9
    u, v = np.meshgrid(np.arange(side, dtype=float), np.arange(side, dtype=float))
    poly = lambda x, y: 0.3 * x**degree - 0.1 * y**degree + 0.05 * x * y + 2  # noqa: E731
    fine = prolong(poly(u, v)[None], cubic=cubic)[0]
    uf, vf = np.meshgrid(np.arange(2 * side - 1) / 2, np.arange(2 * side - 1) / 2)
    np.testing.assert_allclose(fine, poly(uf, vf), atol=1e-9)


def test_frames_of_a_tilted_plane_are_the_tilted_axes():
    angle = np.radians(30)
    rot = np.array([[1, 0, 0], [0, np.cos(angle), -np.sin(angle)], [0, np.sin(angle), np.cos(angle)]])
    u, v = np.meshgrid(np.linspace(0, 1, 5), np.linspace(0, 1, 5))
    plane = rot @ np.stack([u.ravel(), v.ravel(), np.zeros(25)])
    frames = grid_frames(plane.reshape(3, 5, 5))
    for axis in range(3):
        np.testing.assert_allclose(frames[:, axis], np.repeat(rot[:, axis : axis + 1], 25, axis=1), atol=1e-12)


def test_injection_and_sizes_of_a_grid_hierarchy():
    hierarchy = GridHierarchy.for_side(9)
    assert hierarchy.sizes == [4, 9, 25, 81]
    values = np.arange(81.0)
    np.testing.assert_array_equal(hierarchy.inject(0, values), [0, 8, 72, 80])
    np.testing.assert_array_equal(hierarchy.inject(1, values), [0, 4, 8, 36, 40, 44, 72, 76, 80])
    with pytest.raises(ValueError, match="2\\^m \\+ 1"):
        GridHierarchy.for_side(8)


@pytest.mark.parametrize("cubic", [False, True])
@pytest.mark.parametrize("where", [(0, 0), (2, 5), (7, 8), (8, 1), (4, 4)])
def test_prolonging_a_patch_equals_prolonging_the_whole_grid(cubic, where):
    rng = np.random.default_rng(3)
    coarse = np.zeros((3, 9, 9))
    row, col = where
    coarse[:, row, max(col - 1, 0) : col + 1] = rng.normal(size=(3, min(col, 1) + 1))
    np.testing.assert_allclose(prolong_patch(coarse, cubic), prolong(coarse, cubic), atol=1e-12)
    np.testing.assert_array_equal(prolong_patch(np.zeros((3, 9, 9)), cubic), 0.0)


@pytest.mark.parametrize("method", ["max", "average", "full_weighting"])
@pytest.mark.parametrize("corner", [(0, 0), (3, 11), (10, 16), (16, 16)])
def test_restricting_only_the_contact_box_equals_restricting_the_whole_level(method, corner):
    rng = np.random.default_rng(5)
    hierarchy = GridHierarchy(4)  # 17 x 17
    fine = np.zeros((3, 17, 17))
    r, c = corner
    fine[:, max(r - 2, 0) : r + 1, max(c - 3, 0) : c + 1] = rng.normal(size=(3, min(r, 2) + 1, min(c, 3) + 1))
    whole = RESTRICTIONS[method](fine).reshape(3, -1)
    np.testing.assert_allclose(hierarchy.restrict(4, fine.reshape(3, -1), method), whole, atol=1e-12)


def test_frames_built_by_chunk_or_by_index_equal_the_whole_level():
    rng = np.random.default_rng(9)
    surface = rng.normal(size=(3, 9, 9))
    whole = grid_frames(surface)
    basis = GridHierarchy(3).frame_basis(3, surface.reshape(3, -1))
    for chunk in (slice(0, 81), slice(5, 40), slice(79, 81), slice(9, 18)):
        np.testing.assert_array_equal(basis(chunk), whole[:, :, chunk])
    index = np.array([0, 8, 40, 72, 80, 13])  # corners, centre, a border vertex
    np.testing.assert_array_equal(basis(index), whole[:, :, index])
