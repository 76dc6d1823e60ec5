"""Played frames the cache does not keep (issue 17): a frame that changed much is simulated
again from the simulation's kept state when it is shown. Over random collider paths, every
played frame scrubbed back to shows the bits it showed when played (the response key, the
evaluated mesh, the pressure), and playing on past the head after scrubbing gives the bits a
straight play gives."""

import bpy
import numpy as np
import pytest
from benchmark_frame import scene_with as rigged_scene
from test_addon import evaluated, response
from test_contact_holds import ball, enable, keyed, wandering_path
from test_secondary import apply_preset, attribute

from primitives import scene_with_grid

PLAYED, LAST = 48, 60


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def shot(seed: int, preset: str | None, settings: dict):
    scene, grid = scene_with_grid(LAST)
    path = wandering_path(seed, LAST)
    sphere = ball(0.25, path[1])
    keyed(sphere, path)
    enable(grid, [sphere])
    if preset:
        apply_preset(preset)
    for name, value in settings.items():
        setattr(grid.collision_response, name, value)
    return scene, grid


def shown(grid) -> tuple:
    return response(grid).copy(), evaluated(grid).copy(), attribute(grid, "collision_pressure")


def same(found: tuple, expected: tuple, frame: int) -> None:
    for a, b in zip(found, expected, strict=True):
        if b is None:
            assert a is None, frame
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"frame {frame}")


@pytest.mark.parametrize(
    ("seed", "preset", "settings"),
    [
        (41, None, {}),
        (42, "Jelly", {"pressure": True}),  # overshoot: the shown positions are not the solver's
        (43, "Soft Clay", {"volume": True}),  # plastic, and the volume given back
    ],
)
def test_scrubbing_back_to_any_played_frame_shows_its_bits(addon, seed, preset, settings):
    simulation = __import__(addon.__name__ + ".blender.simulation", fromlist=["get"])
    scene, grid = shot(seed, preset, settings)
    played = {}
    for frame in range(1, PLAYED + 1):
        scene.frame_set(frame)
        played[frame] = shown(grid)
    state = simulation.get(grid)
    kept = state.frames
    # Frames were left out (simulated again when shown): what is tested here.
    left_out = [f for f in range(1, PLAYED + 1) if kept._kept[f][0] is None]
    assert len(left_out) >= 5, left_out
    rng = np.random.default_rng(seed)
    order = [*rng.integers(1, PLAYED + 1, 30), *left_out[::-1], PLAYED, *rng.permutation(left_out)[:5]]
    for frame in order:
        scene.frame_set(int(frame))
        same(shown(grid), played[int(frame)], int(frame))
    assert simulation.get(grid) is state and state.head == PLAYED  # never restarted
    scene.frame_set(int(left_out[len(left_out) // 2]))  # the solver's state away from the head
    after = {}
    for frame in range(PLAYED + 1, LAST + 1):  # playing on from the head's kept state
        scene.frame_set(frame)
        after[frame] = shown(grid)
    grid.collision_response.friction = grid.collision_response.friction  # restarts it
    for frame in range(1, LAST + 1):  # straight through
        scene.frame_set(frame)
        if frame > PLAYED:
            same(shown(grid), after[frame], frame)
        else:
            same(shown(grid), played[frame], frame)


def test_a_rigged_sheet_kept_out_of_itself_scrubs_to_its_bits(addon):
    """The frame benchmark's rigged sheet (a bone sways it while the ball sinks 8 cm), with
    Self-Contact on: frames simulated again are posed and kept out of the mesh itself again."""
    simulation = __import__(addon.__name__ + ".blender.simulation", fromlist=["get"])
    scene, grid, sphere = rigged_scene(32, rigged=True)
    enable(grid, [sphere], self_contact=True)
    played = {}
    for frame in range(1, 31):
        scene.frame_set(frame)
        played[frame] = shown(grid)
    kept = simulation.get(grid).frames
    left_out = [f for f in range(1, 31) if kept._kept[f][0] is None]
    assert len(left_out) >= 5, left_out
    for frame in [*np.random.default_rng(7).integers(1, 31, 20), *left_out[::-1]]:
        scene.frame_set(int(frame))
        same(shown(grid), played[int(frame)], int(frame))
