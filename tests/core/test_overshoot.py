"""Secondary motion (issue 21): a level's response seen through a damped spring.

A ball presses a 33 x 33 sheet and leaves; one coarse level follows through a spring of a
period and a damping ratio. After the release the sheet rings with that period, and shrinks
by the ratio's decrement each period; at a ratio of 1 the response is today's, bit for bit;
24 and 60 fps agree; random settings and paths keep every contact invariant.
"""

import numpy as np
import pytest

from contact_scenes import Ball, Frames
from core import GridHierarchy, LevelSettings, MeshHierarchy, Surface
from core.overshoot import Overshoot
from scenes import grid_quads, grid_rest, shuffled_triangulated_grid

LEVEL = 5
SIDE = 2**LEVEL + 1
CENTRE = SIDE * SIDE // 2
DENT = 0.05  # how deep the ball reaches below the sheet (its bottom at -0.05 while held)


def press_and_release(
    fps: float,
    ratio: float,
    period: float,
    seconds: float = 3.0,
    time_to_rest: float = 0.3,
    response_time: float = 0.0,
    followed: list | None = None,
):
    """A ball of radius 0.3 comes down over 0.5 s, holds 0.5 s and leaves at 1 m/s; level 1
    takes 60 % of the press and follows with ``ratio`` and ``period``. Returns the frame
    times and the shown positions (frames, n, 3); ``followed`` gets level 1's elastic
    offsets (3, 9) of every frame, what the follower sees."""
    rest = grid_rest(LEVEL)
    settings = LevelSettings.uniform(LEVEL + 1, time_to_rest=time_to_rest, response_time=response_time)
    settings.absorption[:] = [0.0, 0.6, 0.0, 0.0, 0.0, 1.0]
    surface = Surface(GridHierarchy(LEVEL), rest, settings)
    frames = round(seconds * fps)
    t = np.arange(frames) / fps
    z = np.where(t < 0.5, 0.45 - 0.2 * t / 0.5, np.where(t < 1.0, 0.25, 0.25 + (t - 1.0)))
    ball = Ball(np.stack([0 * t, 0 * t, z], axis=1), 0.3)
    ratios = np.ones(LEVEL + 1)
    ratios[1] = ratio
    overshoot = Overshoot(surface, np.full(LEVEL + 1, period), ratios) if ratio < 1 else None
    scene = Frames(surface, grid_quads(SIDE), [ball], fps=fps, overshoot=overshoot)
    shown = []
    for frame in range(frames):
        shown.append(scene.play(frame))
        if followed is not None:
            followed.append(surface.elastic_offsets(1).astype(np.float64))
    return t, np.array(shown)


@pytest.mark.parametrize(("ratio", "period"), [(0.2, 0.4), (0.1, 0.25), (0.5, 0.6)])
def test_after_a_release_the_sheet_rings_with_the_period_and_decay_set(ratio, period):
    t, shown = press_and_release(60, ratio, period, seconds=4.0, time_to_rest=0.05)
    late = t >= 1.5  # the ball has left and the kinematic response is back at rest
    z, time = shown[late, CENTRE, 2], t[late]
    crossing = np.nonzero(np.sign(z[1:]) * np.sign(z[:-1]) < 0)[0]  # (not into the exact rest it settles at)
    assert crossing.size >= 3  # it swings through rest and back, more than once
    at = time[crossing] + z[crossing] / (z[crossing] - z[crossing + 1]) / 60  # zero crossings
    measured_period = 2 * np.diff(at)
    np.testing.assert_allclose(measured_period, period, rtol=0.02)
    # One period later a free swing is smaller by exp(-2 pi zeta / sqrt(1 - zeta^2)).
    shift = round(period * 60)
    assert shift == pytest.approx(period * 60)  # the periods are whole frames at 60 fps
    big = np.abs(z[:-shift]) > 1e-4
    ratios = z[shift:][big] / z[:-shift][big]
    decrement = np.exp(-2 * np.pi * ratio / np.sqrt(1 - ratio**2))
    np.testing.assert_allclose(ratios, decrement, rtol=0.02)
    assert np.abs(z).max() > 0.01 * DENT  # a swing worth seeing (0.6 mm, 1 % of the dent, at a ratio of 0.5)


def test_a_ratio_of_1_is_the_response_without_overshoot_bit_for_bit():
    _t, plain = press_and_release(24, 1.0, 0.4)
    rest = grid_rest(LEVEL)
    surface = Surface(GridHierarchy(LEVEL), rest, LevelSettings.uniform(LEVEL + 1))
    assert not Overshoot.wanted(np.ones(LEVEL + 1)) and not Overshoot.wanted(None)
    follower = Overshoot(surface, np.full(LEVEL + 1, 0.4), np.ones(LEVEL + 1))
    assert follower.levels == []  # no level is followed
    # A ratio just below 1 is as good as none: continuous, no jump at 1.
    _t, near = press_and_release(24, 0.999, 0.4)
    assert np.abs(near - plain).max() < 0.002 * DENT
    _t, swinging = press_and_release(24, 0.2, 0.4)
    assert np.abs(swinging - plain).max() > 0.1 * DENT  # while lower ratios swing


#: (ratio, period, time to rest): the swings of issue 21, and a fast spring-back (50 ms, less
#: than a frame and a quarter at 24 fps) with periods down to 50 ms (a 20 Hz swing: 1.2
#: frames a period at 24 fps) and the lowest ratio.
RATES = [
    (0.2, 0.4, 0.3),
    (0.1, 0.25, 0.3),
    (0.5, 0.6, 0.3),
    (0.2, 0.4, 0.05),
    (0.1, 0.25, 0.05),
    (0.5, 0.6, 0.05),
    (0.2, 0.1, 0.05),
    (0.1, 0.05, 0.05),
    (0.02, 0.05, 0.05),
    (0.02, 0.05, 0.3),
]


@pytest.mark.parametrize(("ratio", "period", "time_to_rest"), RATES)
def test_24_and_60_fps_agree_within_2_percent_of_the_dent(ratio, period, time_to_rest):
    """Every 1/12 s of the press, the hold, the release and the swings after it: the deepest
    point and the centre's swing agree within 2 % of the dent at 24 and 60 fps (measured
    0.02-1.38 %; 1.38 % at a 50 ms period and a ratio of 0.02), the whole sheet within 5 %
    (root mean square; measured 1.0-3.6 %, of which the response without overshoot has 1.6 %:
    where the ball's rim meets vertices a frame apart). Before, a 50 ms Time to Rest differed
    by 4.6 % (0.2, 0.4 s) to 27 % (0.02, 50 ms) at the centre: the spring-back, within part of
    a frame, was taken as a straight line over the whole frame, and the swing's query of the
    ball overwrote the contact's memory, so a held coarse vertex let go at 60 fps only."""
    t24, at24 = press_and_release(24, ratio, period, time_to_rest=time_to_rest)
    _t60, at60 = press_and_release(60, ratio, period, time_to_rest=time_to_rest)
    at24, at60 = at24[::2], at60[::5][: len(at24[::2])]  # every 1/12 s
    dent = -at24[:, CENTRE, 2].min()
    assert DENT - 1e-6 < dent < 1.3 * DENT  # held at the ball, swinging a little past it
    centre = np.abs(at24[:, CENTRE] - at60[:, CENTRE]).max()
    deepest = np.abs(at24[:, :, 2].min(axis=1) - at60[:, :, 2].min(axis=1)).max()
    assert max(centre, deepest) < 0.02 * dent, f"{max(centre, deepest) / dent:.1%} of the dent"
    rms = np.sqrt((np.linalg.norm(at24 - at60, axis=2) ** 2).mean(axis=1)).max()
    assert rms < 0.05 * dent, f"{rms / dent:.1%} of the dent"
    swing = at24[t24[::2] > 1.0, CENTRE, 2].max()
    assert swing > 0.004 * dent  # it does swing up past rest after the release


def test_any_settings_at_24_and_60_fps_differ_no_more_than_the_levels_they_follow():
    """Random ratios (0.02 to 1), periods (50 ms to 2 s), Times to Rest (20 ms to 1 s) and
    Response Times (0, 20, 100 ms): the deepest point and the centre at 24 and 60 fps agree
    within 5 % of the dent (measured up to 4.6 %, at a ratio of 0.03 with a Response Time of
    0.1 s), and within twice (1 - ratio) times how far the followed level's own offsets
    differ between the two rates (measured up to 1.86 times). That difference is the
    kinematic response's: its split of a dent among the levels is not the same at 24 and 60
    fps (up to 4 % of the dent on level 1 here) though their sum, the surface, is; a spring
    fed a step of d peaks at most 2 d, and (1 - ratio) of it is shown. Making the split
    frame-rate independent would change the response without overshoot."""
    rng = np.random.default_rng(7)
    for _case in range(16):
        ratio = float(np.exp(rng.uniform(np.log(0.02), 0)))
        period = float(np.exp(rng.uniform(np.log(0.05), np.log(2.0))))
        time_to_rest = float(np.exp(rng.uniform(np.log(0.02), 0.0)))
        response_time = float(rng.choice([0.0, 0.02, 0.1]))
        seen24: list = []
        seen60: list = []
        _t, at24 = press_and_release(24, ratio, period, 3.0, time_to_rest, response_time, seen24)
        _t, at60 = press_and_release(60, ratio, period, 3.0, time_to_rest, response_time, seen60)
        at24, at60 = at24[::2], at60[::5][: len(at24[::2])]  # every 1/12 s
        levels = np.abs(np.array(seen24[::2]) - np.array(seen60[::5][: len(seen24[::2])])).max()
        dent = -at24[:, CENTRE, 2].min()
        centre = np.abs(at24[:, CENTRE] - at60[:, CENTRE]).max()
        deepest = np.abs(at24[:, :, 2].min(axis=1) - at60[:, :, 2].min(axis=1)).max()
        worst = max(centre, deepest)
        case = f"ratio {ratio:.3f}, period {period:.3f}, rest {time_to_rest:.3f}, follow {response_time}"
        assert worst < 0.05 * dent, f"{case}: {worst / dent:.1%} of the dent"
        assert worst <= 2 * (1 - ratio) * levels, f"{case}: {worst / ((1 - ratio) * levels):.2f}"


def test_a_spring_back_within_a_frame_is_followed_as_the_solver_relaxes():
    """A level that only springs back over a frame (50 ms Time to Rest, 24 fps: 2 % left after
    a frame) is followed along its exponential, not a straight line: the follower's lag over
    such a frame is the exact solution of e'' + 2 zeta w e' + w^2 e = -x'' for x = x0 exp(-k t),
    integrated here finely (RK4, 4000 steps) from the same start."""
    rest = grid_rest(LEVEL)
    settings = LevelSettings.uniform(LEVEL + 1, time_to_rest=0.05)
    surface = Surface(GridHierarchy(LEVEL), rest, settings)
    ratio, period, dt = 0.2, 0.4, 1 / 24
    ratios = np.ones(LEVEL + 1)
    ratios[1] = ratio
    follower = Overshoot(surface, np.full(LEVEL + 1, period), ratios)
    k = np.log(100) / 0.05
    x0 = np.zeros((3, surface.hierarchy.sizes[1]))
    x0[2, 4] = -0.03  # the level's centre, released from 3 cm
    follower._last[1], follower._slope[1] = x0.copy(), np.zeros_like(x0)  # held still until now
    relaxed = x0 * np.exp(-k * dt)
    assert follower._relaxing(relaxed, x0, np.full(x0.shape[1], k), dt)[0].tolist() == [4]
    surface._levels[1].elastic[:] = relaxed.astype(np.float32)
    follower.step(dt)
    w = 2 * np.pi / period / np.sqrt(1 - ratio**2)

    def f(t, y):  # (e, e'), with x'' = k^2 x0 exp(-k t); the kick at t = 0 is -x'(0) = k x0
        return np.array([y[1], -2 * ratio * w * y[1] - w * w * y[0] - k * k * x0[2, 4] * np.exp(-k * t)])

    y, h = np.array([0.0, k * x0[2, 4]]), dt / 4000
    for i in range(4000):
        t = i * h
        a = f(t, y)
        b = f(t + h / 2, y + h / 2 * a)
        c = f(t + h / 2, y + h / 2 * b)
        d = f(t + h, y + h * c)
        y = y + h / 6 * (a + 2 * b + 2 * c + d)
    lag = follower._lag[1][2, 4]
    assert lag == pytest.approx(y[0], rel=1e-6, abs=1e-9)
    assert follower._speed[1][2, 4] == pytest.approx(y[1], rel=1e-6, abs=1e-8)
    assert abs(lag) > 0.02  # 2.06 cm (a straight line from x0 to x1 gave 2.39 cm, 16 % more)


def test_any_settings_stay_finite_bounded_out_of_the_ball_and_repeat_bit_for_bit():
    """Random periods (20 ms to 5 s, shorter than a frame too) and ratios (the lowest, 0.02,
    to 1) on every level, along random paths: every frame nothing is inside the ball, no
    face turns over, no vertex is further from rest than the bound without overshoot."""
    from test_contact import LEVEL as CONTACT_LEVEL
    from test_contact import SIDE as CONTACT_SIDE
    from test_contact import check_frame, random_settings, triangles, wandering_path

    def run(seed):
        rng = np.random.default_rng(500 + seed)
        rest = grid_rest(CONTACT_LEVEL)
        surface = Surface(GridHierarchy(CONTACT_LEVEL), rest, random_settings(rng, CONTACT_LEVEL + 1, seed % 2 == 1))
        bulge = float(-np.minimum(surface.settings.absorption, 0).sum())
        ratio = rng.uniform(0.0, 1.0, CONTACT_LEVEL + 1)  # below the lowest is the lowest
        period = np.exp(rng.uniform(np.log(0.02), np.log(5.0), CONTACT_LEVEL + 1))
        overshoot = Overshoot(surface, period, ratio)
        radius = rng.uniform(0.15, 0.35)
        ball = Ball(wandering_path(rng, 150, radius, deepest=radius * 1.4, step=0.15), radius)
        scene = Frames(surface, grid_quads(CONTACT_SIDE), [ball], overshoot=overshoot)
        reach, played = 0.0, []
        for frame in range(150):
            shown = scene.play(frame)
            reach = max(reach, radius - ball.centre[2])
            assert np.isfinite(shown).all()
            check_frame(shown, rest, ball, triangles(), reach, bulge)
            played.append(shown)
        return played

    for seed in range(4):
        first = run(seed)
        if seed == 0:
            for a, b in zip(first, run(seed), strict=True):
                np.testing.assert_array_equal(a, b)


def test_the_followers_come_to_rest_exactly():
    """Long after the release the shown positions are the rest shape, bit for bit, and the
    followers add nothing (a frame costs nothing again)."""
    _t, shown = press_and_release(24, 0.3, 0.3, seconds=12.0)
    np.testing.assert_array_equal(shown[-1], grid_rest(LEVEL).astype(np.float32))


@pytest.mark.parametrize("seed", range(3))
def test_on_a_mesh_in_any_vertex_order_each_vertex_swings_with_its_own_offsets(seed):
    """A mesh hierarchy keeps its levels in an order of its own (``vertex_order``, not the
    mesh's): the swing is added in the mesh's order. A triangulated sheet, its vertices
    shuffled, all the press on the finest level and that level followed (ratio 0.2): a
    vertex the ball never reached has no offset to follow and never swings, exactly; every
    vertex it pressed swings after the release (before, the swing landed on other vertices:
    the hierarchy's order)."""
    rest, triangles = shuffled_triangulated_grid(LEVEL, seed)
    hierarchy = MeshHierarchy(rest, triangles.ravel(), np.full(len(triangles), 3))
    levels = len(hierarchy.sizes)
    surface = Surface(hierarchy, rest, LevelSettings.uniform(levels, time_to_rest=0.3))
    ratios = np.ones(levels)
    ratios[-1] = 0.2
    fps = 24.0
    t = np.arange(72) / fps
    z = np.where(t < 0.5, 0.45 - 0.2 * t / 0.5, np.where(t < 1.0, 0.25, 0.25 + (t - 1.0)))  # leaves at 1.05 s
    ball = Ball(np.stack([0 * t, 0 * t, z], axis=1), 0.3)
    scene = Frames(surface, triangles, [ball], fps=fps, overshoot=Overshoot(surface, np.full(levels, 0.4), ratios))
    swing = np.array([np.linalg.norm(scene.play(frame) - surface.positions, axis=1) for frame in range(72)])
    reached = np.linalg.norm(rest[:, :2], axis=1) < np.sqrt(0.3**2 - 0.25**2) + 1e-6  # the deepest footprint
    assert reached.sum() > 15
    assert (swing[:, ~reached] == 0).all()
    assert (swing[t > 1.1][:, reached].max(axis=0) > 1e-3).all()
