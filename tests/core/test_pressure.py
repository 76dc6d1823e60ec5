"""Pressure for shaders (issue 21): the elastic offsets read through a spring law.

0 where nothing springy is left, the law of how deep the elastic offsets push a vertex in
elsewhere: growing with the depth of a press, 1 at the depth set, back to 0 exactly once the
dent has sprung back, 0 on a dent kept as a plastic one and where the surface bulges out.
"""

import numpy as np
import pytest

from core import GridHierarchy, LevelSettings, MeshHierarchy, Surface
from core.pressure import PressureSettings, elastic_displacement, pressure, spring
from scenes import Sphere, grid_rest, shuffled_triangulated_grid

LEVEL = 5
SIDE = 2**LEVEL + 1
RADIUS = 0.3
UP = np.tile([0.0, 0.0, 1.0], (SIDE * SIDE, 1))  # the sheet's rest normals: pressed from above


def sink(surface: Surface, depths, fps: float = 24.0):
    """A ball of radius 0.3 over the sheet's centre, its bottom at each of ``depths`` below
    the sheet in turn, a frame each; yields the depth after each frame."""
    for depth in depths:
        ball = Sphere((0.0, 0.0, RADIUS - depth), RADIUS)
        surface.step(ball.push(surface.positions), 1 / fps)
        yield depth


def test_hookes_law_is_the_depth_over_the_full_pressure_depth_and_zero_outside_the_dent():
    """All the push on the finest level (the dent is exactly where the ball is): the pressure
    at the deepest vertex is the depth over the Full Pressure depth, at every depth of a
    sinking ball; it grows frame by frame; outside the ball's footprint it is exactly 0."""
    rest = grid_rest(LEVEL)
    surface = Surface(GridHierarchy(LEVEL), rest, LevelSettings.uniform(LEVEL + 1, time_to_rest=0.2))
    settings = PressureSettings("hooke", full_depth=0.08)
    assert not pressure(surface, settings, UP).any()  # at rest: none
    centre = SIDE * SIDE // 2
    before = 0.0
    for depth in sink(surface, np.linspace(0.01, 0.12, 12)):
        p = pressure(surface, settings, UP)
        assert p[centre] == pytest.approx(depth / 0.08, rel=1e-5)
        assert p.max() == p[centre] > before  # the deepest point, deeper each frame
        before = p.max()
        footprint = np.sqrt(RADIUS**2 - (RADIUS - depth) ** 2)  # the ball's circle at the sheet
        outside = np.linalg.norm(rest[:, :2], axis=1) > footprint + 1e-6
        assert (p[outside] == 0).all() and (p[~outside] >= 0).all()
        assert outside.sum() > 0.9 * len(rest)
    assert p[centre] == pytest.approx(1.5, rel=1e-5)  # 12 cm deep: 1.5 times full pressure
    for _ in range(48):  # the ball is gone: 2 s at 24 fps, time to rest 0.2 s
        surface.step(np.zeros_like(rest), 1 / 24)
    assert not pressure(surface, settings, UP).any()  # sprung back: exactly 0 everywhere


@pytest.mark.parametrize("seed", range(3))
def test_on_a_mesh_in_any_vertex_order_each_vertex_reads_its_own_depth(seed):
    """A mesh hierarchy keeps its levels in an order of its own (``vertex_order``, not the
    mesh's): the pressure is read in the mesh's order. A triangulated sheet, its vertices
    shuffled, all the push on the finest level: every vertex reads how far it was pushed in
    over the Full Pressure depth, the one under the ball's bottom the depth itself, and
    outside the ball's footprint exactly 0 (a new user's grid read 0.062 at a vertex pushed
    6 cm with full pressure at 10 cm, and 0.6 on one 0.86 m away: the hierarchy's order)."""
    rest, triangles = shuffled_triangulated_grid(LEVEL, seed)
    hierarchy = MeshHierarchy(rest, triangles.ravel(), np.full(len(triangles), 3))
    assert not np.array_equal(hierarchy.vertex_order, np.arange(len(rest)))
    surface = Surface(hierarchy, rest, LevelSettings.uniform(len(hierarchy.sizes), time_to_rest=0.2))
    settings = PressureSettings("hooke", full_depth=0.08)
    centre = int(np.argmin(np.linalg.norm(rest[:, :2], axis=1)))
    for depth in sink(surface, np.linspace(0.01, 0.08, 8)):
        p = pressure(surface, settings, UP)
        pushed_in = (rest[:, 2] - surface.positions[:, 2]) / 0.08
        np.testing.assert_allclose(p, pushed_in, atol=1e-5)
        assert p[centre] == pytest.approx(depth / 0.08, rel=1e-5) and p.max() == p[centre]
        footprint = np.sqrt(RADIUS**2 - (RADIUS - depth) ** 2)
        assert (p[np.linalg.norm(rest[:, :2], axis=1) > footprint + 1e-6] == 0).all()


def test_a_spread_dent_presses_where_it_is_elastic_and_a_kept_one_not_at_all():
    """Coarse levels spread the dent: the pressure is the law of how far each vertex was
    pushed (on a flat sheet the levels' elastic offsets add up to the displacement, to
    float32); a dent kept by a yield limit of 0 (clay) has no springy part: no pressure."""
    rest = grid_rest(LEVEL)
    settings = LevelSettings.uniform(LEVEL + 1, time_to_rest=0.5)
    settings.absorption[:] = [0.0, 0.3, 0.3, 0.3, 0.2, 1.0]
    surface = Surface(GridHierarchy(LEVEL), rest, settings)
    for _ in sink(surface, np.linspace(0.01, 0.08, 8)):
        pass
    moved = surface.positions - rest
    np.testing.assert_allclose(elastic_displacement(surface).T, moved, atol=2e-7)
    p = pressure(surface, PressureSettings("hooke", full_depth=0.1), UP)
    np.testing.assert_allclose(p, np.linalg.norm(moved, axis=1) / 0.1, atol=3e-6)
    assert (p > 0).sum() > 3 * (np.linalg.norm(rest[:, :2], axis=1) < 0.2).sum()  # wider than the ball
    settings.yield_limit[:] = 0.0  # clay: the same press is kept whole
    surface = Surface(GridHierarchy(LEVEL), rest, settings)
    for _ in sink(surface, np.linspace(0.01, 0.08, 8)):
        pass
    assert surface.positions[:, 2].min() < -0.079
    assert not pressure(surface, PressureSettings(), UP).any()


def test_the_biphasic_law_is_soft_then_stiff_and_continuous():
    """Lee, Terzopoulos and Waters' law, knee at half the full depth, 4 times stiffer past it:
    force x below the knee, knee + 4 (x - knee) above, scaled to 1 at the full depth
    (2.5 times the knee's force)."""
    law = PressureSettings("biphasic", full_depth=0.1, knee=0.5, stiffening=4.0)
    x = np.array([0.0, 0.025, 0.05, 0.075, 0.1, 0.2])
    np.testing.assert_allclose(spring(x, law), [0.0, 0.1, 0.2, 0.6, 1.0, 2.6], rtol=1e-12)
    fine = np.linspace(0.0, 0.3, 30001)
    values = spring(fine, law)
    assert (np.diff(values) > 0).all()  # strictly increasing
    slopes = np.diff(values) / np.diff(fine)
    np.testing.assert_allclose(slopes[fine[1:] < 0.0499], 4.0)  # soft: 1 / 0.25
    np.testing.assert_allclose(slopes[fine[:-1] > 0.0501], 16.0)  # stiff: 4 / 0.25
    assert np.abs(np.diff(values)).max() < 16.0 * 1e-5 + 1e-12  # no jump at the knee
    hooke = PressureSettings("biphasic", full_depth=0.1, stiffening=1.0)
    np.testing.assert_allclose(spring(fine, hooke), spring(fine, PressureSettings(full_depth=0.1)), rtol=1e-12)
    with pytest.raises(ValueError, match="stiffening"):
        PressureSettings("biphasic", stiffening=0.5).check()


def test_pressure_grows_with_depth_under_both_laws_on_a_spread_press():
    """A ball sinking 1 cm a frame into a sheet whose coarse levels give way (and bulge):
    the pressure at every vertex the ball touches grows frame by frame."""
    rest = grid_rest(LEVEL)
    settings = LevelSettings.uniform(LEVEL + 1, response_time=0.05)
    settings.absorption[:] = [0.0, -0.2, 0.3, 0.3, 0.3, 1.0]
    for law in ("hooke", "biphasic"):
        surface = Surface(GridHierarchy(LEVEL), rest, settings)
        chosen = PressureSettings(law, full_depth=0.1)
        last = np.zeros(len(rest), dtype=np.float32)
        for depth in sink(surface, np.linspace(0.01, 0.1, 10)):
            now = pressure(surface, chosen, UP)
            touched = np.linalg.norm(rest[:, :2], axis=1) < 0.5 * np.sqrt(RADIUS**2 - (RADIUS - depth) ** 2)
            assert (now[touched] > last[touched]).all()
            last = now
            bulging = surface.positions[:, 2] > 0
            assert bulging.sum() > 100 and (now[bulging] == 0).all()  # pulled out, not pressed
        assert last.max() == pytest.approx(1.0, rel=1e-4)  # 10 cm deep, full pressure at 10 cm
