"""The ten invariants of docs/method.md, on flat and bumpy grids up to 129 x 129."""

import copy

import numpy as np
import pytest

from core import GridHierarchy, LevelSettings, Surface
from scenes import PRESS, Sphere, grid_rest, grid_surface, push_all, run, touching_any

FPS = 24.0
DT = 1.0 / FPS


def one_step(surface, colliders=(PRESS,)):
    before = surface.positions.astype(np.float64)
    d = push_all(colliders, before)
    surface.step(d, DT)
    return before, d, surface.positions.astype(np.float64)


def along_d(before, d, after):
    """Motion of each contact vertex along its displacement vector, and |d|."""
    length = np.linalg.norm(d, axis=1)
    contact = length > 0
    unit = d[contact] / length[contact, None]
    return ((after - before)[contact] * unit).sum(axis=1), length[contact], contact


@pytest.mark.parametrize("restriction", ["max", "average", "full_weighting"])
@pytest.mark.parametrize("level", [7, 5, 3, 1, 0])
def test_1_and_3_contact_vertices_leave_the_collider_and_move_exactly_d(restriction, level):
    surface = grid_surface(7, yield_limit=np.inf)  # 129 x 129
    surface.settings.restriction = restriction
    surface.settings.absorption[level] = 1.0
    before, d, after = one_step(surface)
    moved, length, contact = along_d(before, d, after)
    assert contact.sum() > 500
    assert PRESS.inside_depth(after)[contact].max() < 1e-5  # invariant 1 (radius 0.6)
    assert np.abs(moved - length).max() < 1e-5  # invariant 3: never further than |d|
    assert np.isfinite(after).all()


def test_2_absorption_on_the_finest_level_moves_exactly_the_penetrating_vertices_by_d():
    surface = grid_surface(7)
    before, d, after = one_step(surface)
    contact = np.linalg.norm(d, axis=1) > 0
    np.testing.assert_allclose(after[contact], before[contact] + d[contact], atol=1e-6)
    assert np.abs(after[~contact] - before[~contact]).max() == 0.0


def smoothness_and_extent(level):
    surface = grid_surface(7)
    surface.settings.absorption[level] = 1.0
    before, d, after = one_step(surface)
    contact = np.linalg.norm(d, axis=1) > 0
    dz = (after - before)[:, 2].reshape(129, 129)
    moved = np.abs(dz) > 1e-4 * np.abs(d).max()
    # Second differences outside the contact, relative to the deepest displacement.
    lap = np.abs(dz[1:-1, 2:] + dz[1:-1, :-2] + dz[2:, 1:-1] + dz[:-2, 1:-1] - 4 * dz[1:-1, 1:-1])
    near = contact.reshape(129, 129)
    for _ in range(2):  # grow the contact by two cells: the edge of contact is a crease
        near = near | np.roll(near, 1, 0) | np.roll(near, -1, 0) | np.roll(near, 1, 1) | np.roll(near, -1, 1)
    return moved.mean(), lap[~near[1:-1, 1:-1]].max() / np.abs(d).max()


def test_3_coarse_absorption_spreads_the_response_smoothly_and_globally():
    fine_extent, _ = smoothness_and_extent(7)
    level1_extent, level1_roughness = smoothness_and_extent(1)
    level3_extent, level3_roughness = smoothness_and_extent(3)
    assert fine_extent < 0.05  # only the ~4 % in contact
    assert level3_extent > 0.2
    assert level1_extent > 0.99  # level 1 (3 x 3) moves the whole surface
    assert level1_roughness < 0.01 and level3_roughness < 0.1


def press_and_release(fps, seconds_pressed=0.5, seconds_after=1.0, **settings):
    surface = grid_surface(6, **settings)
    surface.settings.absorption[:] = [0, 0.3, 0.3, 0.2, 0.2, 0.5, 1]
    run(surface, [PRESS], seconds_pressed, fps)
    dent = surface.positions.astype(np.float64)
    after = run(surface, [], seconds_after, fps)
    return surface, dent, after


def test_4_elastic_surface_returns_to_rest_within_its_time_to_rest_at_any_frame_rate():
    rest = grid_rest(6)
    curves = {}
    for fps in (24, 60):
        _, dent, after = press_and_release(fps, time_to_rest=0.5)
        depth0 = np.abs(dent - rest).max()
        assert depth0 > 0.04
        # Depth of the dent at 0.25 s intervals after release, relative to the initial depth.
        step = fps // 4
        curves[fps] = np.array([np.abs(after[i * step - 1] - rest).max() / depth0 for i in (1, 2, 3, 4)])
        assert curves[fps][1] <= 0.01 + 1e-4  # 99 % recovered at the time to rest (0.5 s)
    np.testing.assert_allclose(curves[24], curves[60], atol=0.02)
    assert curves[24][0] == pytest.approx(0.1, abs=0.02)  # 0.01 ** 0.5 after half the time


def test_5_plastic_dent_stays_and_elasto_plastic_keeps_what_exceeded_the_yield():
    rest = grid_rest(6)
    surface, dent, after = press_and_release(24, yield_limit=0.0)
    np.testing.assert_allclose(after[-1], dent, atol=1e-6)  # float32 rounding only
    assert np.abs(dent - rest).max() > 0.04

    # Elasto-plastic, finest level only: one vertex pressed 5 cm with a 2 cm yield keeps 3 cm.
    surface = grid_surface(6, yield_limit=0.02, time_to_rest=0.2)
    d = np.zeros((surface.vertex_count, 3))
    centre = surface.vertex_count // 2
    d[centre] = [0, 0, -0.05]
    surface.step(d, DT)
    run(surface, [], 2.0, 24)
    final = surface.positions.astype(np.float64) - rest
    assert final[centre, 2] == pytest.approx(-0.03, abs=1e-6)
    assert np.abs(np.delete(final, centre, axis=0)).max() == 0.0


def test_a_step_with_nothing_to_do_is_skipped_and_skipping_changes_nothing():
    zero = np.zeros((grid_rest(6).shape[0], 3))
    # A plastic dent (yield limit 0: no elastic offset left to relax), then nothing touches it.
    surface, dent, _ = press_and_release(24, seconds_after=0.0, yield_limit=0.0)
    placed = copy.deepcopy(surface)
    placed._idle = lambda d, resting, dt: False  # the same state, placed all the same
    finest = surface.positions
    assert surface.step(zero, DT) is False and placed.step(zero, DT) is True
    assert np.array_equal(surface.positions, finest)  # skipped: the shape stays as shown
    np.testing.assert_array_equal(surface.positions, dent.astype(np.float32))
    # Placing the unchanged state again gives it back but for float32 rounding (a contact
    # step adds its push to the placed shape; a placement composes offsets in frames).
    np.testing.assert_allclose(surface.positions, placed.positions, rtol=0, atol=1e-7)
    # A resting vertex keeps elastic offsets from relaxing: with none to keep, still a skip.
    assert surface.step(zero, DT, touching=np.arange(zero.shape[0]) == 5) is False
    assert np.array_equal(surface.positions, finest)
    # An elastic dent relaxes: no skip, unless every elastic offset is kept by a resting
    # vertex (here: all of them rest; then all but one with an offset of its own).
    surface, _, _ = press_and_release(24, seconds_after=0.0, time_to_rest=0.5)
    finest = surface.positions
    assert surface.step(zero, DT, touching=np.ones(zero.shape[0], dtype=bool)) is False
    assert np.array_equal(surface.positions, finest)
    let_go = surface._levels[-1].elastic.any(axis=0)
    assert let_go.sum() > 10
    assert surface.step(zero, DT, touching=np.arange(zero.shape[0]) != np.flatnonzero(let_go)[0]) is True
    assert not np.array_equal(surface.positions, finest)
    # Let go, it relaxes back to rest, and its elastic offsets reach exactly 0 (below float32
    # resolution at the surface's size they are flushed): then its steps are skipped too.
    after = run(surface, [], 2.0, 24)
    assert not any(level.elastic.any() for level in surface._levels)
    np.testing.assert_allclose(after[-1], grid_rest(6), rtol=0, atol=1e-6)
    finest = surface.positions
    assert surface.step(zero, DT) is False
    assert np.array_equal(surface.positions, finest)
    # Elastic offsets on levels that never recover (time to rest inf) cannot change: a skip,
    # until the recovery is set going again.
    surface, dent, _ = press_and_release(24, seconds_after=0.0, time_to_rest=np.inf)
    assert surface._levels[-1].elastic.any()
    finest = surface.positions
    assert surface.step(zero, DT) is False and np.array_equal(surface.positions, finest)
    surface.settings.time_to_rest[-1] = 0.5
    assert surface.step(zero, DT) is True and np.abs(surface.positions - dent).max() > 1e-4


def damped_press(fps, response_time):
    """A held press shared with a coarse level: how far that level has given way at 0.25,
    0.5, 0.75 and 1 s, and the deepest any vertex was inside the sphere after a step."""
    surface = grid_surface(6, response_time=response_time, time_to_rest=np.inf)
    surface.settings.absorption[3] = 0.5
    given, inside = [], 0.0
    for _ in range(int(fps) + 1):
        points = surface.positions
        surface.step(PRESS.push(points), 1 / fps, touching_any([PRESS], points))
        inside = max(inside, PRESS.inside_depth(surface.positions).max())
        given.append(-surface.offsets(3)[0][:, 2].min())
    return np.array(given)[[fps // 4, fps // 2, 3 * fps // 4, fps]], inside


def test_6_damping_builds_up_at_the_same_rate_at_any_frame_rate():
    """Damping sets how fast the surface gives way: a coarse level's share arrives as
    1 - 0.01 ** (t / response time) at any frame rate, while the finest level holds the
    contact on the collider meanwhile (damping never lets a collider in)."""
    undamped, _ = damped_press(24, 0.0)
    assert undamped[0] > 0.01
    for fps in (24, 60, 120):
        given, inside = damped_press(fps, 0.5)
        after = (np.array([fps // 4, fps // 2, 3 * fps // 4, fps]) + 1) / fps  # seconds of pressing
        np.testing.assert_allclose(given / undamped, 1 - 0.01 ** (after / 0.5), atol=1e-3)
        assert inside < 1e-6


def test_7_negative_coarse_absorption_bulges_around_the_contact():
    surface = grid_surface(7)
    surface.settings.absorption[2] = -0.5
    before, d, after = one_step(surface)
    contact = np.linalg.norm(d, axis=1) > 0
    distance = np.linalg.norm(before[:, :2] - PRESS.centre[:2], axis=1)
    ring = ~contact & (distance < 0.6)
    rise = (after - before)[ring, 2]
    assert rise.min() > 0.0 and rise.max() > 0.4 * np.abs(d).max()
    assert PRESS.inside_depth(after)[contact].max() < 1e-5


def test_8_fine_details_ride_along_when_a_coarse_level_turns():
    # Bumps on odd vertices only: every coarser level is flat, the finest carries the detail.
    bumps = lambda rows, cols: 0.05 * ((rows % 2) | (cols % 2))  # noqa: E731
    rest = grid_rest(5, height=bumps)
    surface = Surface(GridHierarchy(5), rest, LevelSettings.uniform(6))
    surface.settings.absorption[0] = 1.0
    angle = np.radians(30)
    rot = np.array([[1, 0, 0], [0, np.cos(angle), -np.sin(angle)], [0, np.sin(angle), np.cos(angle)]])
    corners = [0, 32, 33 * 32, 33 * 33 - 1]
    d = np.zeros_like(rest)
    d[corners] = rest[corners] @ rot.T - rest[corners]  # turn the level-0 corners only
    surface.step(d, DT)
    turned = surface.positions.astype(np.float64)
    np.testing.assert_allclose(turned, rest @ rot.T, atol=2e-6)  # every bump turned with it
    assert np.abs(turned - rest).max() > 0.3


def test_9_a_zero_behaviour_map_stops_that_region_responding_on_that_level():
    surface = grid_surface(6)
    surface.settings.absorption[3] = 1.0
    x = grid_rest(6)[:, 0]
    left = x < PRESS.centre[0]
    surface.settings.maps["absorption"] = np.where(left, 0.0, 1.0)
    one_step(surface)
    elastic_level3, _ = surface.offsets(3)
    level3_left = surface.hierarchy.inject(3, left.astype(float)) > 0
    assert np.abs(elastic_level3[level3_left]).max() == 0.0
    assert np.abs(elastic_level3[~level3_left]).max() > 0.01

    # A zero map on the damping speed freezes that region on the coarse levels; its contact
    # still leaves the collider (the finest level takes it at once: no map lets a collider in).
    surface = grid_surface(6, response_time=0.2)
    surface.settings.absorption[3] = 1.0
    surface.settings.maps["response_time"] = np.where(left, 0.0, 1.0)
    for _ in range(5):
        points = surface.positions
        surface.step(PRESS.push(points), DT, touching_any([PRESS], points))
    elastic_level3, _ = surface.offsets(3)
    assert np.abs(elastic_level3[level3_left]).max() == 0.0
    assert np.abs(elastic_level3[~level3_left]).max() > 0.01
    assert PRESS.inside_depth(surface.positions).max() < 1e-5


def test_10_deterministic_finite_and_bounded_under_wild_collider_motion():
    rng = np.random.default_rng(7)
    path = [
        Sphere(rng.uniform(-1.5, 1.5, 3) * [1, 1, 0.4], rng.uniform(0.05, 1.2), rng.normal(size=3)) for _ in range(60)
    ]

    def play():
        surface = grid_surface(6, response_time=0.05, time_to_rest=0.3, yield_limit=0.2)
        surface.settings.absorption[:] = rng_absorption
        surface.settings.restriction = "average"
        surface.settings.prolongation = "cubic"
        total_push = 0.0
        for sphere in path:
            d = sphere.push(surface.positions)
            total_push += np.linalg.norm(d, axis=1).max()
            surface.step(d, DT)
            assert np.isfinite(surface.positions).all()
        return surface.positions, total_push

    rng_absorption = rng.uniform(-0.5, 1.0, 7)
    first, total_push = play()
    second, _ = play()
    np.testing.assert_array_equal(first, second)
    # Each step moves a level by at most what it was asked to: bounded by the pushes summed
    # over the levels (negative absorption included).
    drift = np.abs(first - grid_rest(6)).max()
    assert 0 < drift <= total_push * (1 + np.abs(rng_absorption).sum())
