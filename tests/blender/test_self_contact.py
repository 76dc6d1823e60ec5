"""Self-contact (issue 20): a rigged tube bent so its inner side presses into itself."""

import bpy
import numpy as np
import pytest

from bent_tube import inside_itself, rigged_tube, shown, triangle_normals

FRAMES = range(1, 21)


@pytest.fixture
def empty(addon):
    bpy.ops.wm.read_homefile(use_empty=True)
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def enable(obj, itself: bool) -> None:
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    obj.collision_response.self_contact = itself


def test_explore(empty):
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 20
    tube, _rig = rigged_tube([(1, 0.0), (15, 120.0)])
    size = float(np.linalg.norm(np.ptp(shown(tube)[0], axis=0)))
    for itself in (False, True):
        enable(tube, itself)
        scene.frame_set(1)
        for frame in FRAMES:
            scene.frame_set(frame)
            inside = inside_itself(tube, 1e-3 * size)
            print(itself, frame, inside.sum(), tube.collision_response.enabled)
