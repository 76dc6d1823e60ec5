"""The add-on in a studio pipeline: duplicates, keyframed settings, farms, point caches,
library overrides, exports."""

import bpy
import numpy as np
import pytest

from primitives import scene_with_grid


@pytest.fixture
def scene(addon):
    """A 33 x 33 grid and a ball keyed to sink 10 cm into it over frames 1-20, enabled."""
    scene, grid = scene_with_grid(30)
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.4, location=(0, 0, 0.5))
    ball = bpy.context.active_object
    ball.keyframe_insert("location", frame=1)
    ball.location.z = 0.3
    ball.keyframe_insert("location", frame=20)
    scene.frame_set(1)
    ball.select_set(True)
    grid.select_set(True)
    bpy.context.view_layer.objects.active = grid
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    yield scene, grid, ball
    bpy.ops.wm.read_homefile(use_empty=True)


def response(obj) -> np.ndarray:
    key = obj.data.shape_keys.key_blocks["Collision Response"]
    positions = np.empty(len(key.points) * 3, dtype=np.float32)
    key.points.foreach_get("co", positions)
    return positions.reshape(-1, 3)


def evaluated(obj) -> np.ndarray:
    mesh = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    positions = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", positions)
    return positions.reshape(-1, 3)


def play(scene, obj, frames, read=response) -> dict[int, np.ndarray]:
    shapes = {}
    for frame in frames:
        scene.frame_set(frame)
        shapes[frame] = read(obj).copy()
    return shapes


def select_only(obj) -> None:
    for other in bpy.context.view_layer.objects:
        other.select_set(other == obj)
    bpy.context.view_layer.objects.active = obj


# -- duplicates ---------------------------------------------------------------------------------


def test_a_duplicate_owns_its_settings_and_curves(scene):
    scene, grid, _ = scene
    grid.collision_response.friction = 0.2
    select_only(grid)
    assert bpy.ops.object.duplicate() == {"FINISHED"}  # Shift+D
    copy = bpy.context.active_object
    assert copy != grid and copy.collision_response.enabled
    original, duplicated = grid.collision_response, copy.collision_response
    assert duplicated.curves != original.curves  # its own node group, holding the same curves
    assert duplicated.profiles == original.profiles and duplicated.friction == pytest.approx(0.2)
    before = original.profiles
    duplicated.profiles = {"absorption": [1.0, 1.0], "time_to_rest": [0.1]}
    duplicated.friction = 0.9
    assert original.profiles == before and original.friction == pytest.approx(0.2)
    assert duplicated.profiles["absorption"][0] == pytest.approx(1.0)
    # Both respond, each with its own settings: the copy (all absorbed on level 0) moves as one.
    copy.location.x = 0.0  # the copy sits where the original does, under the same ball
    shapes = {obj.name: play(scene, obj, range(1, 31))[30] for obj in (grid, copy)}
    assert np.ptp(shapes[copy.name][:, 2]) < 0.5 * np.ptp(shapes[grid.name][:, 2])
