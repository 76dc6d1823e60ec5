"""Played frames within a memory budget (issue 17): past the budget (the add-on's
preference, Played Frames Memory) frames are let go of and simulated again from the
simulation's kept state when shown; under it every frame is kept and shown at once. Over
random collider paths played with a tiny budget, every played frame scrubbed back to shows
the bits it showed when played (the response key, the evaluated mesh, the pressure), and
playing on past the head after scrubbing gives the bits a straight play gives; with the
default budget nothing is simulated again; a budget changed mid-session is honoured."""

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


@pytest.fixture
def preferences(addon):
    """The add-on's preferences, the budget set back as it was afterwards."""
    found = bpy.context.preferences.addons[addon.__name__].preferences
    before = found.played_memory
    yield found
    found.played_memory = before


def left_out(kept, last: int) -> list[int]:
    """The frames up to ``last`` the cache let go of."""
    return [f for f in range(1, last + 1) if kept._kept[f][0] is None]


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
def test_scrubbing_back_to_any_played_frame_shows_its_bits(addon, preferences, seed, preset, settings):
    simulation = __import__(addon.__name__ + ".blender.simulation", fromlist=["get"])
    preferences.played_memory = 0  # past the budget from the first frame: frames let go of
    scene, grid = shot(seed, preset, settings)
    played = {}
    for frame in range(1, PLAYED + 1):
        scene.frame_set(frame)
        played[frame] = shown(grid)
    state = simulation.get(grid)
    # Frames were let go of (simulated again when shown): what is tested here.
    dropped = left_out(state.frames, PLAYED)
    assert len(dropped) >= 5, dropped
    rng = np.random.default_rng(seed)
    order = [*rng.integers(1, PLAYED + 1, 30), *dropped[::-1], PLAYED, *rng.permutation(dropped)[:5]]
    for frame in order:
        scene.frame_set(int(frame))
        same(shown(grid), played[int(frame)], int(frame))
    assert simulation.get(grid) is state and state.head == PLAYED  # never restarted
    assert state.replayed > 0
    scene.frame_set(int(dropped[len(dropped) // 2]))  # the solver's state away from the head
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


def test_a_rigged_sheet_kept_out_of_itself_scrubs_to_its_bits(addon, preferences):
    """The frame benchmark's rigged sheet (a bone sways it while the ball sinks 8 cm), with
    Self-Contact on: frames simulated again are posed and kept out of the mesh itself again."""
    simulation = __import__(addon.__name__ + ".blender.simulation", fromlist=["get"])
    preferences.played_memory = 0
    scene, grid, sphere = rigged_scene(32, rigged=True)
    enable(grid, [sphere], self_contact=True)
    played = {}
    for frame in range(1, 31):
        scene.frame_set(frame)
        played[frame] = shown(grid)
    dropped = left_out(simulation.get(grid).frames, 30)
    assert len(dropped) >= 5, dropped
    for frame in [*np.random.default_rng(7).integers(1, 31, 20), *dropped[::-1]]:
        scene.frame_set(int(frame))
        same(shown(grid), played[int(frame)], int(frame))


def test_under_the_budget_every_frame_shows_at_once(addon, preferences):
    """The default budget holds a short shot: scrubbing anywhere simulates nothing again,
    and the panel's line says what the frames hold."""
    simulation = __import__(addon.__name__ + ".blender.simulation", fromlist=["get"])
    assert preferences.played_memory == 1024  # the default, MB
    scene, grid = shot(44, "Jelly", {"pressure": True})
    played = {}
    for frame in range(1, PLAYED + 1):
        scene.frame_set(frame)
        played[frame] = shown(grid)
    state = simulation.get(grid)
    rng = np.random.default_rng(44)
    for frame in [*rng.integers(1, PLAYED + 1, 30), *range(PLAYED, 0, -1)]:
        scene.frame_set(int(frame))
        same(shown(grid), played[int(frame)], int(frame))
    assert state.replayed == 0 and left_out(state.frames, PLAYED) == []
    assert state.memory() == f"Played frames hold {state.nbytes / 2**20:.0f} of 1024 MB"


def test_the_budget_changed_mid_session_is_honoured(addon, preferences):
    """Played under the default budget, then the budget lowered to nothing: frames are let go
    of at once, and scrubbing shows them simulated again, the same bits; raised again,
    playing on keeps every new frame."""
    simulation = __import__(addon.__name__ + ".blender.simulation", fromlist=["get"])
    scene, grid = shot(45, "Soft Clay", {"pressure": True})
    played = {}
    for frame in range(1, 31):
        scene.frame_set(frame)
        played[frame] = shown(grid)
    state = simulation.get(grid)
    held = state.nbytes
    assert left_out(state.frames, 30) == []
    scene.frame_set(15)
    preferences.played_memory = 0  # (as in Preferences: its update fits every simulation)
    dropped = left_out(state.frames, 30)
    assert len(dropped) >= 5 and state.nbytes < held
    assert all(abs(frame - 15) > 4 for frame in dropped)  # those near the frame shown stay
    assert "simulated again when shown" in state.memory()
    for frame in [*np.random.default_rng(45).integers(1, 31, 20), *dropped[::-1]]:
        scene.frame_set(int(frame))
        same(shown(grid), played[int(frame)], int(frame))
    assert state.replayed > 0
    dropped = left_out(state.frames, 30)  # (and those near each frame scrubbed to, with nothing to spare)
    preferences.played_memory = 1024
    for frame in range(31, PLAYED + 1):
        scene.frame_set(frame)
        played[frame] = shown(grid)
    assert left_out(state.frames, PLAYED) == dropped  # the new frames kept
    replayed = state.replayed
    # (Frames 31 and 32 are kept as changes from frame 30, let go of: 33 is kept whole.)
    for frame in range(PLAYED, 32, -1):
        scene.frame_set(frame)
        same(shown(grid), played[frame], frame)
    assert state.replayed == replayed
    grid.collision_response.friction = grid.collision_response.friction  # restarts it
    for frame in range(1, PLAYED + 1):  # straight through, nothing let go of
        scene.frame_set(frame)
        same(shown(grid), played[frame], frame)
