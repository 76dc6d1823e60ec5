"""Shared and odd data (issue 18): a mesh shared by two objects, a user's own key named like
ours, a scale of 0, a renamed object. Each gets a clear message or just works; nothing of the
user's is lost, no traceback."""

import sys

import bpy
import numpy as np
import pytest

from primitives import grid_and_ball


@pytest.fixture
def scene(addon):
    """A 33 x 33 grid and a ball keyed to sink 10 cm into it over frames 1-20."""
    yield grid_and_ball(30, {1: 0.5, 20: 0.3})
    bpy.ops.wm.read_homefile(use_empty=True)


def simulation_module(addon):
    return sys.modules[addon.__name__ + ".blender.simulation"]


def test_a_mesh_shared_by_two_objects_is_refused_with_the_way_out(scene):
    scene, grid, _ = scene
    twin = grid.copy()  # Alt+D: a second object on the same mesh
    twin.location.x = 3.0
    scene.collection.objects.link(twin)
    with pytest.raises(RuntimeError, match=r"shares its mesh 'Grid' with 'Grid\.001'.*Make Single User"):
        bpy.ops.object.collision_response_enable()
    assert grid.data.shape_keys is None and not grid.collision_response.enabled


def test_a_users_own_key_of_our_name_is_never_taken_nor_deleted(scene):
    scene, grid, _ = scene
    grid.shape_key_add(name="Basis")
    theirs = grid.shape_key_add(name="Collision Response")
    theirs.data[0].co.z = 0.25
    theirs.value = 0.5
    with pytest.raises(RuntimeError, match="has a shape key of its own named 'Collision Response'"):
        bpy.ops.object.collision_response_enable()
    assert bpy.ops.object.collision_response_disable() == {"CANCELLED"}  # not enabled: kept
    grid.collision_response.enabled = False  # set off while off (a script): nothing of it is ours
    keys = grid.data.shape_keys.key_blocks
    assert [k.name for k in keys] == ["Basis", "Collision Response"]
    assert keys["Collision Response"].data[0].co.z == 0.25 and keys["Collision Response"].value == 0.5


def test_switched_off_by_its_property_the_key_goes_and_enable_takes_it_back(scene):
    """``enabled`` set False by a script (not the Disable button): the response's key goes
    with it, as Disable removes it, and Enable works again; the user's own key and Basis are
    untouched throughout. Before, the key stayed, frozen at the last frame played, and Enable
    refused: it read the key as one of the user's own of that name."""
    scene, grid, _ = scene
    grid.shape_key_add(name="Basis")
    mine = grid.shape_key_add(name="Smile")
    mine.data[7].co.z = 0.125
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    scene.frame_set(20)
    dented = np.array([v.co for v in grid.data.shape_keys.key_blocks["Collision Response"].data])
    assert dented[:, 2].min() < -0.05
    grid.collision_response.enabled = False
    keys = grid.data.shape_keys.key_blocks
    assert [k.name for k in keys] == ["Basis", "Smile"] and keys["Smile"].data[7].co.z == 0.125
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    scene.frame_set(20)
    again = np.array([v.co for v in grid.data.shape_keys.key_blocks["Collision Response"].data])
    assert np.array_equal(again, dented)  # the same response as before
    assert grid.data.shape_keys.key_blocks["Smile"].data[7].co.z == 0.125


def test_a_collider_deleted_mid_shot_presses_no_more_and_the_panel_says_so(scene, addon):
    """The ball deleted (X) after playing to frame 20: the collider list still holds it, so it
    stays in the file, unlinked. Played again, no frame is dented and the panel names it.
    Before, it went on pressing unseen (10 cm at frame 20), saved with the file."""
    scene, grid, ball = scene
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    for frame in range(1, 21):
        scene.frame_set(frame)
    bpy.ops.object.select_all(action="DESELECT")
    ball.select_set(True)
    bpy.context.view_layer.objects.active = ball
    assert bpy.ops.object.delete() == {"FINISHED"}
    assert "Sphere" in bpy.data.objects  # held by the list
    bpy.context.view_layer.objects.active = grid
    for frame in (20, *range(1, 31)):
        scene.frame_set(frame)
        heights = np.array([v.co.z for v in grid.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.vertices])
        assert np.abs(heights).max() == 0.0, frame
    state = simulation_module(addon).get(grid)
    assert "'Sphere' was deleted: it is ignored (remove it from the list)" in state.messages


def test_hiding_a_collider_after_playing_restarts_without_it_and_showing_it_brings_it_back(scene, addon):
    """The ball hidden (the eye) after frames 1-20 were played: played again, no frame is
    dented and the panel says it is ignored; shown again, the first play's frames come back,
    bit for bit. Before, the played frames kept the hidden ball's dent until some setting
    changed, so one file showed either, by what had been played."""
    scene, grid, ball = scene
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    first = {}
    for frame in range(1, 21):
        scene.frame_set(frame)
        first[frame] = np.array([v.co for v in grid.data.shape_keys.key_blocks["Collision Response"].data])
    ball.hide_set(True)
    for frame in range(1, 21):
        scene.frame_set(frame)
        key = grid.data.shape_keys.key_blocks["Collision Response"]
        assert np.abs(np.array([v.co.z for v in key.data])).max() == 0.0, frame
    assert "'Sphere' is hidden: it is ignored" in simulation_module(addon).get(grid).messages
    ball.hide_set(False)
    for frame in range(1, 21):
        scene.frame_set(frame)
        key = grid.data.shape_keys.key_blocks["Collision Response"]
        assert np.array_equal(np.array([v.co for v in key.data]), first[frame]), frame


def test_a_collection_instance_as_collider_is_named_with_the_way_out(scene, addon):
    """An empty instancing a collection (a linked prop, say) listed as a collider: its copies
    are not collided with, and the panel says so and how to collide with them (before: "has
    no faces to collide with", as if the prop were empty)."""
    scene, grid, _ball = scene
    props = bpy.data.collections.new("Props")
    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0, 0, 0.1))
    cube = bpy.context.active_object
    for collection in cube.users_collection:
        collection.objects.unlink(cube)
    props.objects.link(cube)
    instance = bpy.data.objects.new("Prop", None)
    instance.instance_type, instance.instance_collection = "COLLECTION", props
    scene.collection.objects.link(instance)
    bpy.ops.object.select_all(action="DESELECT")
    instance.select_set(True)
    grid.select_set(True)
    bpy.context.view_layer.objects.active = grid
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    scene.frame_set(2)
    state = simulation_module(addon).get(grid)
    assert any("'Prop' instances the collection 'Props'" in m and "Make Instances Real" in m for m in state.messages)


def test_a_scale_of_zero_is_a_message_not_a_traceback_and_the_response_comes_back(scene, addon):
    scene, grid, ball = scene
    bpy.ops.object.collision_response_enable()
    simulation = simulation_module(addon)
    for frame in range(2, 11):
        scene.frame_set(frame)
    grid.scale.z = 0.0  # set while playing
    messages = simulation.update_object(grid, scene, bpy.context.evaluated_depsgraph_get())
    assert messages == ["'Grid' has a scale of 0 on some axis: give it a size to respond"]
    scene.frame_set(11)  # the frame-change handler: no exception either
    grid.scale.z = 1.0
    scene.frame_set(20)
    key = grid.data.shape_keys.key_blocks["Collision Response"]
    lowest = min(v.co.z for v in key.data)
    assert lowest == pytest.approx(0.3 - 0.4, abs=2e-3)  # pressed again, down to the ball
    ball.scale = (0.0, 0.0, 0.0)  # a collider scaled to nothing: nothing to meet
    scene.frame_set(21)
    assert np.isfinite([v.co.z for v in key.data]).all()


def test_a_renamed_object_keeps_its_simulation(scene, addon):
    scene, grid, _ = scene
    bpy.ops.object.collision_response_enable()
    simulation = simulation_module(addon)
    for frame in range(2, 6):
        scene.frame_set(frame)
    playing = simulation.get(grid)
    grid.name = "Cushion"
    scene.frame_set(6)
    assert simulation.get(grid) is playing and playing.head == 6  # stepped on, not rebuilt
    assert len(simulation._simulations) == 1  # nothing left behind under the old name
