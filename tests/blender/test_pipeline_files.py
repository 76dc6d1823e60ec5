"""What a studio pipeline's files meet: a point cache on an override whose linked stack ends
with a Subdivision Surface, a point cache asked of a file never saved, the response's own key
saved on an override and opened again, a collider deleted while listed, a linked duplicate."""

import os
import sys

import bpy
import numpy as np
import pytest
from test_addon import evaluated, response
from test_pipeline import character_library, overridden_body, play, select_only

from primitives import grid_and_ball


@pytest.fixture
def scene(addon):
    """A 33 x 33 grid and a ball keyed to sink 10 cm into it over frames 1-20, enabled."""
    scene, grid, ball = grid_and_ball(30, {1: 0.5, 20: 0.3})
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    yield scene, grid, ball
    bpy.ops.wm.read_homefile(use_empty=True)


def keys_of(obj) -> dict[str, np.ndarray]:
    """Every shape key's positions, by name."""
    found = {}
    for key in obj.data.shape_keys.key_blocks:
        positions = np.empty(len(key.data) * 3, dtype=np.float32)
        key.data.foreach_get("co", positions)
        found[key.name] = positions.reshape(-1, 3)
    return found


# -- point caches -------------------------------------------------------------------------------


def test_an_override_whose_linked_subdivision_follows_the_armature_is_refused_then_baked_its_way(addon, tmp_path):
    """An override's own modifier goes only after the linked ones: with Armature then
    Subdivision linked, the cache cannot go between them. Bake says so before touching
    anything (before: a traceback from modifier_move_to_index, the cache left after the
    Subdivision, "Vertex count mismatch", no dent, the .pc2 on disk, still enabled). The way
    out it names works: the linked Subdivision off on the override, a Subdivision of the
    shot's own after the cache plays the library's dent, vertex for vertex."""
    live = character_library(tmp_path / "character.blend", subdivided=True)
    scene, body = overridden_body(tmp_path / "character.blend")
    scene.frame_set(1)
    select_only(body)
    cache = tmp_path / "Body.pc2"
    with pytest.raises(RuntimeError, match=r"linked 'Subdivision' comes after its last deforming modifier.*Turn"):
        bpy.ops.object.collision_response_bake(to="POINT_CACHE", filepath=str(cache))
    assert [m.type for m in body.modifiers] == ["ARMATURE", "SUBSURF"]
    assert body.collision_response.enabled and body.data.library is not None and not cache.exists()
    assert not [m for m in bpy.data.meshes if m.library is None and not m.name.startswith(".")]
    linked = body.modifiers["Subdivision"]
    linked.show_viewport = linked.show_render = False
    assert bpy.ops.object.collision_response_bake(to="POINT_CACHE", filepath=str(cache)) == {"FINISHED"}
    assert [m.type for m in body.modifiers] == ["ARMATURE", "SUBSURF", "MESH_CACHE"]
    body.modifiers.new("Subdivision (shot)", "SUBSURF").levels = 1
    shown = play(scene, body, range(1, 31), evaluated)
    assert len(shown[30]) == len(live[30]) > len(body.data.vertices)
    assert live[30][:, 2].min() < -0.05  # the library's dent, through its Subdivision
    for frame in range(1, 31):
        np.testing.assert_allclose(shown[frame], live[frame], atol=1e-5)


def test_a_point_cache_of_a_file_never_saved_asks_to_save_first(scene, tmp_path, monkeypatch):
    """A point cache "//Grid.pc2" in a file never saved went to the working directory, lost to the file
    once saved elsewhere. Bake asks to save first and changes nothing; saved, it bakes
    beside the .blend."""
    scene, grid, _ = scene
    monkeypatch.chdir(tmp_path)
    assert not bpy.data.filepath
    with pytest.raises(RuntimeError, match=r"Save the \.blend first"):
        bpy.ops.object.collision_response_bake(to="POINT_CACHE")
    assert not os.listdir(tmp_path) and len(grid.modifiers) == 0 and grid.collision_response.enabled
    assert "Collision Response" in grid.data.shape_keys.key_blocks
    (tmp_path / "shot").mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot" / "shot.blend"))
    assert bpy.ops.object.collision_response_bake(to="POINT_CACHE") == {"FINISHED"}
    assert (tmp_path / "shot" / "Grid.pc2").is_file() and grid.modifiers[0].filepath == "//Grid.pc2"


# -- missing colliders --------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["deleted", "in no scene"])
def test_a_collider_no_longer_in_the_scene_is_missing_live_and_for_the_bake(scene, addon, how):
    """Object > Delete keeps a listed collider in the file (and a collection no scene holds
    keeps it out of every scene): it meets nothing live, and Bake, with no collider left, bakes
    nothing and says why (before: 30 unchanged shape keys and "Baked frames 1-30")."""
    scene, grid, ball = scene
    pressed = play(scene, grid, range(1, 21))[20]
    assert pressed[:, 2].min() < -0.09
    if how == "deleted":
        select_only(ball)
        assert bpy.ops.object.delete() == {"FINISHED"}
    else:
        outside = bpy.data.collections.new("Outside")  # linked to no scene
        outside.objects.link(ball)
        scene.collection.objects.unlink(ball)
    assert [item.obj for item in grid.collision_response.colliders] == [ball]
    rest = keys_of(grid)["Basis"]
    for frame in (1, 20, 30):  # the response restarted without it: no dent anywhere
        scene.frame_set(frame)
        np.testing.assert_array_equal(response(grid), rest)
    select_only(grid)
    assert bpy.ops.object.collision_response_bake() == {"CANCELLED"}
    assert list(keys_of(grid)) == ["Basis", "Collision Response"] and grid.collision_response.enabled
    simulation = sys.modules[addon.__name__ + ".blender.simulation"]  # what the warning says
    assert simulation.present_colliders(grid) == ([], ["'Sphere' was deleted: remove it from the list"])


# -- the response's own key across save and reopen ----------------------------------------------


def test_an_overrides_local_mesh_saved_pressed_shows_no_frozen_dent_and_enables_again(addon, tmp_path):
    """An override with its mesh made local (the live path), saved while pressed, opened again:
    Blender keeps none of the add-on's settings on an override, so it no longer responds. Its
    key, the add-on's own (marked when written), is set to 0 on load, Basis and the user's key
    left bit for bit; Enable takes the key back and plays the same dent (before: the dent
    saved at frame 18 showed 8 cm deep in every frame, and Enable said the key was the user's)."""
    character_library(tmp_path / "character.blend", disabled=True)
    scene, body = overridden_body(tmp_path / "character.blend")
    body.data = body.data.make_local()
    assert body.override_library is not None and body.data.library is None
    if body.data.shape_keys is None:
        body.shape_key_add(name="Basis")
    smile = body.shape_key_add(name="Smile")
    smile.data[5].co.z += 0.02
    smile.value = 0.5
    unpressed = play(scene, body, (1, 18, 30), evaluated)
    before = keys_of(body)
    shot_colliders = bpy.data.collections.new("Shot Colliders")  # (the override's list is the asset's)
    scene.collection.children.link(shot_colliders)
    shot_colliders.objects.link(next(o for o in scene.objects if o.name == "Sphere"))
    body.collision_response.collider_collection = shot_colliders
    select_only(body)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    played = play(scene, body, range(1, 19))[18]
    dent = evaluated(body)[:, 2].min() - unpressed[18][:, 2].min()
    assert dent < -0.05
    path = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    scene = bpy.context.scene
    body = next(o for o in bpy.data.objects if o.name == "Body" and o.override_library is not None)
    settings = body.collision_response  # none kept on an override (README): set again
    assert not settings.enabled and settings.collider_collection is None
    key = body.data.shape_keys.key_blocks["Collision Response"]
    assert key.value == 0.0 and body.data.shape_keys.key_blocks["Smile"].value == pytest.approx(0.5)
    reopened = keys_of(body)
    for name in ("Basis", "Smile"):
        np.testing.assert_array_equal(reopened[name], before[name])
    for frame in (1, 18, 30):
        scene.frame_set(frame)
        np.testing.assert_allclose(evaluated(body), unpressed[frame], atol=1e-6)
    settings.collider_collection = bpy.data.collections["Shot Colliders"]
    select_only(body)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    again = play(scene, body, range(1, 19))[18]
    np.testing.assert_array_equal(again, played)
    assert [k.name for k in body.data.shape_keys.key_blocks] == ["Basis", "Smile", "Collision Response"]


# -- linked duplicates --------------------------------------------------------------------------


def test_a_linked_duplicate_leaves_no_frozen_dent_says_why_and_single_user_responds_again(addon):
    """Alt+D shares the mesh, and with it the response's key: neither responds. The original
    says why (its mesh is shared, by which object, what to do) and shows no dent rather than
    the one of the frame it was duplicated at (before: frame 15's dent in every frame, on both);
    Basis and the user's key stay bit for bit. Made single user, each responds again."""
    scene, grid, _ = grid_and_ball(30, {1: 0.5, 20: 0.3})
    grid.shape_key_add(name="Basis")
    lift = grid.shape_key_add(name="Lift")
    lift.data[7].co.z += 0.03
    lift.value = 1.0
    before = keys_of(grid)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    played = play(scene, grid, range(1, 16))
    assert played[15][:, 2].min() < -0.04
    select_only(grid)
    assert bpy.ops.object.duplicate(linked=True) == {"FINISHED"}
    twin = bpy.context.active_object
    assert twin.data == grid.data
    rest = keys_of(grid)["Basis"]
    for frame in (16, 12, 1):
        scene.frame_set(frame)
        np.testing.assert_array_equal(response(grid), rest)
    simulation = sys.modules[addon.__name__ + ".blender.simulation"]  # what the panel says
    with pytest.raises(simulation.Unusable, match=r"'Grid' shares its mesh 'Grid' with 'Grid\.001' \(a linked"):
        simulation.check(grid)
    after = keys_of(grid)
    for name in ("Basis", "Lift"):
        np.testing.assert_array_equal(after[name], before[name])
    twin.location.x = 3.0  # beside the ball
    select_only(twin)
    assert bpy.ops.object.make_single_user(type="SELECTED_OBJECTS", object=False, obdata=True) == {"FINISHED"}
    assert twin.data != grid.data and grid.collision_response.enabled and twin.collision_response.enabled
    again = play(scene, grid, range(1, 16))
    for frame in (5, 12, 15):
        np.testing.assert_array_equal(again[frame], played[frame])
    np.testing.assert_array_equal(response(twin), keys_of(twin)["Basis"])  # nothing presses it there
