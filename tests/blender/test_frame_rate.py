"""Frame-rate independence as an animator meets it: the same press played in a scene at 24 fps
and in one at 60 fps (the ball's keys at the same seconds) should leave the same sheet once it
has settled, every vertex of the evaluated mesh, not only the dent.

It does not yet (a strict expected failure): the dent's depth agrees, the sheet around it
differs by up to 67 % of the press's depth. A coarse level takes its share from the longest
push among the vertices a frame's step caught, and at 60 fps the coarse levels move the
dent's rim out of the ball's way before the ball reaches it (README, Timing; measured on the
core with ``tools/frame_rate.py``). The branch ``far-field-reach`` fixes settled presses
(within 0.03 % here) but slows a frame and makes sliding presses worse: not merged.
"""

import bpy
import numpy as np
import pytest
from test_contact_holds import enable
from test_secondary import apply_preset

from primitives import evaluated, keyed

PRESETS = ("Rubber", "Flesh", "Stiff Shell", "Jelly", "Belly")  # those that spring back
SETTLED = 1.5  # seconds played: pressed within 0.7 s, then held


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def settled(fps: int, seed: int) -> tuple[np.ndarray, float]:
    """A 2 m grid (33 x 33 vertices) pressed by a ball of a random size, place, depth and
    speed with one of ``PRESETS``, played at ``fps`` to ``SETTLED`` seconds: the evaluated
    sheet at the end (world space) and how deep the ball reaches below it."""
    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = fps, 1.0
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=32, y_subdivisions=32, size=2.0)
    grid = bpy.context.active_object
    radius, depth = float(rng.uniform(0.15, 0.45)), float(rng.uniform(0.03, 0.08))
    x, y = rng.uniform(-0.4, 0.4, 2)
    bpy.ops.mesh.primitive_uv_sphere_add(radius=radius, segments=32, ring_count=16)
    ball = bpy.context.active_object
    down = int(rng.integers(1, 9)) * fps // 12  # 1/12 to 2/3 s: whole frames at 24 and 60 fps
    keyed(ball, {1: (x, y, radius + 0.02), 1 + down: (x, y, radius - depth)})
    last = 1 + round(SETTLED * fps)
    scene.frame_start, scene.frame_end = 1, last
    enable(grid, [ball])
    apply_preset(PRESETS[seed % len(PRESETS)])
    for frame in range(1, last + 1):
        scene.frame_set(frame)
    return evaluated(grid), depth


@pytest.mark.xfail(strict=True, reason="the rim a frame's step catches differs between rates (README, Timing)")
def test_a_settled_press_leaves_the_same_sheet_at_24_and_60_fps():
    """Ten random presses (measured: 6 of 10 differ by 5 to 67 % of the depth; the dents agree)."""
    worst = 0.0
    for seed in range(10):
        (at_24, depth), (at_60, _) = settled(24, seed), settled(60, seed)
        assert -at_24[:, 2].min() > 0.5 * depth  # pressed (the grid rests at z = 0)
        assert -at_60[:, 2].min() == pytest.approx(-at_24[:, 2].min(), rel=0.02)  # the dent agrees
        worst = max(worst, float(np.abs(at_24 - at_60).max()) / depth)
    assert worst < 0.02, f"{worst:.2%} of the depth"


def test_changing_the_scene_frame_rate_restarts_the_response():
    """Played at 24 fps, then the scene set to 60 and played again (the keys stay on their
    frames): what shows is the response at 60 fps, bit for bit what a restart (a setting
    changed and changed back) plays, not the 24 fps one kept from before (it was: 2.8 cm off
    in a new user's scene); set back to 24, the 24 fps one again."""
    at24, _depth = settled(24, seed=3)
    scene, grid = bpy.context.scene, bpy.data.objects["Grid"]

    def played(fps: int) -> np.ndarray:
        scene.render.fps = fps
        for frame in range(1, scene.frame_end + 1):
            scene.frame_set(frame)
        return evaluated(grid)

    changed = played(60)
    grid.collision_response.start_frame = 2  # any setting changed restarts the response
    grid.collision_response.start_frame = 1
    restarted = played(60)
    assert np.abs(restarted - at24).max() > 1e-3  # the rates differ: the test tells them apart
    assert np.array_equal(changed, restarted)
    assert np.array_equal(played(24), at24)
