"""Timing in seconds: the same settings give the same motion at any frame rate or sub-step count."""

import numpy as np
import pytest

from contact_scenes import Ball, Frames
from core import GridHierarchy, LevelSettings, Surface, fraction_per_step
from scenes import PRESS, grid_quads, grid_rest, grid_surface, push_all, run


def test_fraction_per_step_reaches_99_percent_at_the_set_time():
    dt = 1 / 24
    fraction = fraction_per_step(0.5, dt)
    assert (1 - fraction) ** 12 == pytest.approx(0.01)
    assert fraction_per_step(0.0, dt) == 1.0  # at once
    assert fraction_per_step(np.inf, dt) == 0.0  # never
    speeds = np.array([0.0, 1.0, 2.0])
    np.testing.assert_allclose(fraction_per_step(0.5, dt, speeds), [0, fraction, fraction_per_step(0.25, dt)])
    assert fraction_per_step(0.0, dt, 0.0) == 0.0  # a zero map freezes even an instant level


def on_twelfths(fps):
    """Press 0.5 s, release, recover 1 s; positions at every 1/12 s after the release."""
    surface = grid_surface(6, response_time=0.1, time_to_rest=0.6, yield_limit=0.03)
    surface.settings.absorption[:] = [0, 0.3, 0.4, 0.2, 0.3, 0.5, 1]
    run(surface, [PRESS], 0.5, fps)
    after = run(surface, [], 1.0, fps)
    return np.array([after[m * fps // 12 - 1] for m in range(1, 13)])


def test_one_second_of_recovery_agrees_at_24_and_60_fps_within_2_percent_of_the_dent():
    rest = grid_rest(6)
    at_24, at_60 = on_twelfths(24), on_twelfths(60)
    depth = np.abs(at_24[0] - rest).max()
    assert depth > 0.02
    assert np.abs(at_24 - at_60).max() < 0.02 * depth
    assert np.abs(at_24[-1] - rest).max() < np.abs(at_24[0] - rest).max()  # it did recover


def test_sub_steps_follow_the_same_clock_as_a_higher_frame_rate():
    # Recovery has no contact: 4 sub-steps at 24 fps are 4 steps at 96 fps, to float precision.
    rest = grid_rest(6)
    d = np.zeros_like(rest)
    d[rest.shape[0] // 2] = [0, 0, -0.1]
    by_substeps, by_frame_rate = grid_surface(6, time_to_rest=2.0), grid_surface(6, time_to_rest=2.0)
    for surface in (by_substeps, by_frame_rate):
        surface.settings.absorption[2] = 0.5
        surface.step(d, 1 / 96)
    by_substeps.settings.substeps = 4
    for _ in range(24):
        by_substeps.step(np.zeros_like(rest), 1 / 24)
        for _ in range(4):
            by_frame_rate.step(np.zeros_like(rest), 1 / 96)
        np.testing.assert_allclose(by_substeps.positions, by_frame_rate.positions, atol=1e-6)
    assert np.abs(by_substeps.positions - rest).max() > 1e-3  # still recovering: not trivially equal


def test_sub_steps_still_resolve_the_penetration_exactly():
    surface = grid_surface(7)
    surface.settings.absorption[:] = [0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1]
    surface.settings.substeps = 5
    before = surface.positions.astype(np.float64)
    d = push_all([PRESS], before)
    surface.step(d, 1 / 24)
    after = surface.positions.astype(np.float64)
    length = np.linalg.norm(d, axis=1)
    contact = length > 0
    moved = ((after - before)[contact] * (d[contact] / length[contact, None])).sum(axis=1)
    assert np.abs(moved - length[contact]).max() < 1e-5
    assert PRESS.inside_depth(after)[contact].max() < 1e-5


def test_a_resting_contact_stays_still_instead_of_flickering():
    # An elastic, damped press held still: once settled, frames agree, and the dent is the
    # same at 24 and 240 fps (touching vertices keep their offsets instead of relaxing
    # into the collider and being pushed out again on alternate frames).
    settled = {}
    for fps in (24, 240):
        surface = grid_surface(6, response_time=0.1, time_to_rest=0.3)
        surface.settings.absorption[:] = [0, 0.3, 0.4, 0.2, 0.3, 0.5, 1]
        frames = run(surface, [PRESS], 1.0, fps)
        assert np.abs(frames[-1] - frames[-2]).max() < 1e-6
        settled[fps] = frames[-1]
    depth = np.abs(settled[24] - grid_rest(6)).max()
    assert np.abs(settled[24] - settled[240]).max() < 0.02 * depth


def pressed_sheet(fps: int) -> np.ndarray:
    """A 33 x 33 sheet (2 m) pressed 5 cm by a ball of radius 0.3 coming down over 0.5 s and
    held 1 s, with Rubber's absorptions, no Response Time and no recovery (nothing timed):
    the positions at the end."""
    settings = LevelSettings.uniform(6, time_to_rest=np.inf)
    settings.absorption[:] = np.interp(np.linspace(0, 1, 6), np.linspace(0, 1, 4), [0.2, 0.5, 0.6, 0.6])
    surface = Surface(GridHierarchy(5), grid_rest(5), settings)
    t = np.arange(round(1.5 * fps) + 1) / fps
    bottom = np.where(t < 0.5, 0.1 - 0.15 * t / 0.5, -0.05)
    scene = Frames(surface, grid_quads(33), [Ball(np.stack([0 * t, 0 * t, bottom + 0.3], axis=1), 0.3)], fps=fps)
    for frame in range(t.size):
        shown = scene.play(frame)
    return shown


@pytest.mark.xfail(strict=True, reason="the far field depends on the rim vertices a frame catches (README)")
def test_a_held_press_leaves_the_whole_sheet_the_same_at_24_and_60_fps():
    """The dent agrees (the ball's lowest point, 5 cm, at both rates), but the far corner
    ends 2.39 cm down at 24 fps and 1.00 cm at 60: a coarse level's corner takes its share
    only where the ball's step catches a rim vertex 9 cm from the centre before the coarser
    levels move it away."""
    at_24, at_60 = pressed_sheet(24), pressed_sheet(60)
    dent = -at_24[:, 2].min()
    assert dent == pytest.approx(0.05, abs=1e-6) and -at_60[:, 2].min() == pytest.approx(0.05, abs=1e-6)
    assert np.abs(at_24 - at_60).max() < 0.02 * dent
