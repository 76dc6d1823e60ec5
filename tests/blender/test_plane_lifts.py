"""A plane smaller than the mesh, tilted, pressed into it and lifted off, in real Blender.

The mesh springs back as the plane lifts. Near the plane's low edge it can go round that
edge and come up behind the plane's face: a 2 m sheet (Rubber) pressed 15 cm by a 0.6 m
plane tilted 20 degrees had ten vertices 7 cm behind the face, 2 cm in from the edge, for
three frames (a tester's scene): their pushes, along the axis the sheet's normals gave,
passed the edge. A vertex behind a flat open collider whose push meets nothing now also
tries straight through the face.

Random planes 0.4-1.0 m, tilted 10-35 degrees about a random horizontal axis, facing up or
down, keyed from above down 8-20 cm into a grid sheet or a UV sphere at a random spot, held
and lifted at a random speed; random presets. Every frame, on the evaluated mesh: no vertex
behind the plane's face over its square (along its normal) by more than 1e-3 of the mesh's
size, and the same bits played twice.
"""

import bpy
import numpy as np
import pytest
from test_contact_holds import enable, evaluated, keyed
from test_secondary import apply_preset

LAST = 34


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def pressed_and_lifted(seed: int):
    """The scene at frame 1, the responding mesh, the plane and its half size."""
    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    if seed % 2:
        bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.6)
    else:
        bpy.ops.mesh.primitive_grid_add(x_subdivisions=32, y_subdivisions=32, size=2)
    obj = bpy.context.active_object
    top = float(np.array([v.co for v in obj.data.vertices])[:, 2].max())
    half = rng.uniform(0.2, 0.5)
    turn = rng.uniform(0.0, 2 * np.pi)
    tilt = np.radians(rng.uniform(10.0, 35.0)) * np.array([np.cos(turn), np.sin(turn), 0.0])
    facing_down = seed % 3 == 0
    bpy.ops.mesh.primitive_plane_add(size=2 * half, rotation=(tilt[0] + (np.pi if facing_down else 0.0), tilt[1], 0.0))
    plane = bpy.context.active_object
    spot = rng.uniform(-0.25, 0.25, 2)
    depth = rng.uniform(0.08, 0.2)
    held, lifted = int(rng.integers(10, 16)), int(rng.integers(2, 10))
    low = (*spot, top - depth)
    keyed(plane, {1: (*spot, top + 0.6), 8: low, held: low, held + lifted: (*spot, top + 0.6)})
    scene.frame_set(1)
    enable(obj, [plane])
    apply_preset(("Rubber", "Jelly", "Flesh", "Soft Clay", "Stiff Shell")[int(rng.integers(5))])
    return scene, obj, plane, half


def behind_the_face(plane, half: float, points: np.ndarray) -> float:
    """How far the furthest of ``points`` (world) over the plane's square is on its far
    side from where the mesh came (above it: the mesh starts below the plane)."""
    matrix = np.array(plane.matrix_world)
    local = (points - matrix[:3, 3]) @ np.linalg.inv(matrix[:3, :3]).T
    over = (np.abs(local[:, 0]) <= half) & (np.abs(local[:, 1]) <= half)
    upward = 1.0 if matrix[2, 2] > 0 else -1.0  # local z pointing up, or down (facing down)
    return float(np.maximum(upward * local[over, 2], 0.0).max(initial=0.0))


@pytest.mark.parametrize("seed", range(24))
def test_a_tilted_plane_lifting_off_leaves_nothing_behind_its_face(seed):
    scene, obj, plane, half = pressed_and_lifted(seed)
    rest = np.array([v.co for v in obj.data.vertices])
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    played, deepest = [], 0.0
    for frame in range(1, LAST + 1):
        scene.frame_set(frame)
        world = evaluated(obj)
        behind = behind_the_face(plane, half, world)
        assert behind <= 1e-3 * size, f"frame {frame}: a vertex {behind:.4f} behind the plane"
        deepest = max(deepest, float(np.linalg.norm(world - rest, axis=1).max()))
        played.append(world)
    assert deepest > 0.03, f"pressed {deepest:.3f}"
    for frame in (LAST // 2, LAST):
        scene.frame_set(frame)
        np.testing.assert_array_equal(evaluated(obj), played[frame - 1])
