"""The add-on in a studio pipeline: duplicates, keyframed settings, farms, point caches,
library overrides, exports."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import bpy
import numpy as np
import pytest
from test_addon import evaluated, response

from primitives import grid_and_ball


@pytest.fixture
def scene(addon):
    """A 33 x 33 grid and a ball keyed to sink 10 cm into it over frames 1-20, enabled."""
    scene, grid, ball = grid_and_ball(30, {1: 0.5, 20: 0.3})
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    yield scene, grid, ball
    bpy.ops.wm.read_homefile(use_empty=True)


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


# -- keyframed settings -------------------------------------------------------------------------


def simulations_seen(scene, obj, frames, module) -> tuple[dict[int, np.ndarray], list]:
    """Play ``frames``; the shapes and every distinct simulation the registry held for ``obj``
    (kept alive, so a new one is never mistaken for an old one)."""
    seen: list = []
    shapes = {}
    for frame in frames:
        scene.frame_set(frame)
        shapes[frame] = response(obj).copy()
        current = module.blender.simulation.get(obj)
        if not any(current is s for s in seen):
            seen.append(current)
    return shapes, seen


def test_keyframed_settings_are_read_each_frame_and_never_restart(scene, addon):
    """Friction and standoff keyed over 30 frames: one simulation, each frame's values read as
    that frame's input (the standoff keeps the surface further from the ball once it rises)."""
    scene, grid, _ = scene
    settings = grid.collision_response
    reference, _ = simulations_seen(scene, grid, range(1, 31), addon)  # nothing keyed
    for frame, friction, standoff in ((1, 0.0, 0.0), (15, 0.0, 0.0), (30, 1.0, 0.05)):
        settings.friction, settings.standoff = friction, standoff
        settings.keyframe_insert("friction", frame=frame)
        settings.keyframe_insert("standoff", frame=frame)
    scene.frame_set(1)
    shapes, simulations = simulations_seen(scene, grid, range(1, 31), addon)
    assert len(simulations) == 1  # built once at frame 1, never rebuilt (it was 30)
    assert simulations[0].head == 30
    # Both were 0 up to frame 15: the same bits as unkeyed; then the standoff grows to 5 cm.
    for frame in range(1, 16):
        np.testing.assert_array_equal(shapes[frame], reference[frame])
    assert shapes[30][:, 2].min() < reference[30][:, 2].min() - 0.04
    # Scrubbing back shows the same bits, and so does playing again after a restart.
    for frame in (28, 7, 19, 30):
        scene.frame_set(frame)
        np.testing.assert_array_equal(response(grid), shapes[frame])
    settings.standoff = 0.0  # an edit (to the same value) restarts
    scene.frame_set(1)
    again, rebuilt = simulations_seen(scene, grid, range(1, 31), addon)
    assert not any(r is simulations[0] for r in rebuilt)
    for frame in range(1, 31):
        np.testing.assert_array_equal(again[frame], shapes[frame])


def test_only_the_settings_read_each_frame_can_be_keyframed(addon):
    """Every setting Blender lets the animator key is one the response reads at every frame
    (``animated.PER_FRAME``, the pressure's colour, the lists' highlighted rows); the others
    (the switches, the start frame, the stiffness, the per-level rows...) are what it is built
    with, and Blender refuses their key. Before, the per-level rows took a key, set at every
    frame change: each restarted the response (a frame cost 15 ms at the start, 86 ms by frame
    30) and showed each frame with that frame's value held since the start."""
    bpy.ops.mesh.primitive_uv_sphere_add()
    settings = bpy.context.active_object.collision_response
    keyable = {p.identifier for p in settings.bl_rna.properties if p.is_animatable and p.identifier != "rna_type"}
    read_each_frame = set(addon.blender.animated.PER_FRAME) | {"pressure_color", "active_collider", "active_interior"}
    assert keyable <= read_each_frame, sorted(keyable - read_each_frame)
    with pytest.raises(TypeError, match="not animatable"):
        settings.keyframe_insert("absorption_levels", frame=1)


def test_in_edit_mode_the_operators_that_change_shape_keys_say_leave_it_first(scene):
    """Enable, Disable, Bake, Free Bake and Soft Against Each Other refuse in Edit Mode with a
    message: Blender writes its own copy of the shape keys back on leaving it (a bake made there
    had its key put back at value 0, and after Free Bake the live response showed nothing).
    Back in Object Mode they work, and the bake plays the dent."""
    scene, grid, _ = scene
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    bpy.ops.object.mode_set(mode="EDIT")
    for operator in ("enable", "disable", "bake", "soft_pair"):
        with pytest.raises(RuntimeError, match="Leave Edit Mode first"):
            getattr(bpy.ops.object, f"collision_response_{operator}")()
    bpy.ops.object.mode_set(mode="OBJECT")
    select_only(grid)
    assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    bpy.ops.object.mode_set(mode="EDIT")
    with pytest.raises(RuntimeError, match="Leave Edit Mode first"):
        bpy.ops.object.collision_response_free_bake()
    bpy.ops.object.mode_set(mode="OBJECT")
    assert bpy.ops.object.collision_response_free_bake() == {"FINISHED"}
    scene.frame_set(20)
    assert (
        np.array([v.co.z for v in grid.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.vertices]).min()
        < -0.05
    )


def test_an_edit_of_a_keyframed_setting_restarts(scene, addon):
    scene, grid, _ = scene
    settings = grid.collision_response
    for frame, value in ((1, 0.0), (30, 0.01)):
        settings.standoff = value
        settings.keyframe_insert("standoff", frame=frame)
    before, built = simulations_seen(scene, grid, range(1, 31), addon)
    assert len(built) == 1
    keys = [c for c in addon.blender.animated._fcurves(grid) if c.data_path == "collision_response.standoff"]
    keys[0].keyframe_points[-1].co.y = 0.05  # as in the Graph Editor: a wider standoff at frame 30
    scene.frame_set(1)
    after, rebuilt = simulations_seen(scene, grid, range(1, 31), addon)
    assert not any(r is built[0] for r in rebuilt)
    assert after[30][:, 2].min() < before[30][:, 2].min() - 0.02  # 5 cm kept, not 1 cm


# -- point cache bake ---------------------------------------------------------------------------


def bake_both_ways(scene, obj, tmp_path, frames) -> tuple[dict, dict, str]:
    """The evaluated mesh at ``frames`` after a bake to shape keys, and after a bake of the
    same to a PC2 file (the shape keys freed first), and the file."""
    select_only(obj)
    assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    keyed = play(scene, obj, frames, evaluated)
    assert bpy.ops.object.collision_response_free_bake() == {"FINISHED"}
    path = str(tmp_path / "cache" / f"{obj.name}.pc2")
    assert bpy.ops.object.collision_response_bake(to="POINT_CACHE", filepath=path) == {"FINISHED"}
    return keyed, play(scene, obj, frames, evaluated), path


def test_a_point_cache_bake_plays_in_a_mesh_cache_modifier_as_the_shape_key_bake_does(scene, tmp_path, addon):
    scene, grid, _ = scene
    grid.modifiers.new("Subdivision", "SUBSURF").levels = 1  # generates: the cache goes before it
    keyed, cached, path = bake_both_ways(scene, grid, tmp_path, range(1, 31))
    assert [m.type for m in grid.modifiers] == ["MESH_CACHE", "SUBSURF"]
    cache = grid.modifiers["Collision Response Cache"]
    assert cache.cache_format == "PC2" and cache.filepath == path and cache.frame_start == 1.0
    assert not grid.collision_response.enabled
    assert [k.name for k in grid.data.shape_keys.key_blocks] == ["Basis"]  # nothing per frame in the .blend
    assert keyed[30][:, 2].min() < -0.09  # the dent, through the Subdivision Surface
    for frame in range(1, 31):
        np.testing.assert_allclose(cached[frame], keyed[frame], atol=1e-6)
    first, positions = addon.blender.point_cache.read(path)
    assert first == 1.0 and positions.shape == (30, len(grid.data.vertices), 3)
    assert os.path.getsize(path) == 32 + 30 * len(grid.data.vertices) * 12
    # Free Bake removes the modifier (the file stays) and returns to live.
    assert bpy.ops.object.collision_response_free_bake() == {"FINISHED"}
    assert [m.type for m in grid.modifiers] == ["SUBSURF"] and grid.collision_response.enabled


def test_a_point_cache_path_beside_the_blend_is_taken_without_a_warning(scene, tmp_path):
    """A PC2 path given as "//cache/Grid.pc2" (beside the saved .blend, as ``tools/bake.py
    --cache`` and the file browser's relative paths give it) is written there, and Blender
    warns of nothing (before: "does not support blend relative '//' prefix")."""
    _scene, _grid, _ = scene
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert bpy.ops.object.collision_response_bake(to="POINT_CACHE", filepath="//cache/Grid.pc2") == {"FINISHED"}
    assert (tmp_path / "cache" / "Grid.pc2").is_file()
    assert not [w for w in caught if "relative" in str(w.message)], [str(w.message) for w in caught]


def test_a_point_cache_bake_of_a_rigged_mesh_plays_the_pose_it_was_baked_with(addon, tmp_path):
    from benchmark_frame import scene_with

    scene, grid, ball = scene_with(32, rigged=True)
    scene.frame_set(1)  # the keyed ball where it starts (the scene was built at its end)
    for obj in (ball, grid):
        obj.select_set(True)
    bpy.context.view_layer.objects.active = grid
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    keyed, cached, _ = bake_both_ways(scene, grid, tmp_path, range(1, 31))
    assert [m.type for m in grid.modifiers] == ["ARMATURE", "MESH_CACHE"]
    middle = np.abs(keyed[30][:, :2]).max(axis=1) < 0.2
    assert keyed[30][middle, 2].min() < -0.05  # the ball's dent, under it
    for frame in range(1, 31):
        np.testing.assert_allclose(cached[frame], keyed[frame], atol=1e-5)


def test_a_point_cache_bake_that_cannot_write_reports_and_changes_nothing(scene, tmp_path):
    scene, grid, _ = scene
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(RuntimeError, match="Cannot write the point cache"):
        bpy.ops.object.collision_response_bake(to="POINT_CACHE", filepath=str(blocker / "x.pc2"))
    assert len(grid.modifiers) == 0 and grid.collision_response.enabled


# -- farms --------------------------------------------------------------------------------------


def run_bake_tool(*arguments) -> subprocess.CompletedProcess:
    tool = Path(__file__).resolve().parents[2] / "tools" / "bake.py"
    return subprocess.run(
        [sys.executable, str(tool), *map(str, arguments)], capture_output=True, text=True, timeout=300
    )


def test_the_farm_command_bakes_a_range_keeps_the_scene_and_says_what_it_does(scene, tmp_path):
    scene, grid, _ = scene
    live = play(scene, grid, range(1, 31))
    source, output = tmp_path / "shot.blend", tmp_path / "baked.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source))
    done = run_bake_tool(source, "--object", "Grid", "--frames", "5-20", "--output", output)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    progress = [line for line in lines if line.startswith("bake: Grid frame ")]
    assert progress == [f"bake: Grid frame {f} ({f - 4}/16)" for f in range(5, 21)]
    assert "bake: Grid frames 5-20 baked to shape-keys" in lines and f"bake: saved {output}" in lines
    bpy.ops.wm.open_mainfile(filepath=str(output))
    scene, grid = bpy.context.scene, bpy.data.objects["Grid"]
    assert (scene.frame_start, scene.frame_end) == (1, 30)  # the shot's range, not the bake's
    baked = [k.name for k in grid.data.shape_keys.key_blocks][1:]
    assert baked == [f"Collision Response {f:04d}" for f in range(5, 21)]
    for frame in (5, 12, 20):
        scene.frame_set(frame)
        np.testing.assert_allclose(evaluated(grid), live[frame], atol=1e-6)
    # Baked already: a message that says so (not "not enabled"), status 1; --rebake bakes again.
    again = run_bake_tool(output, "--object", "Grid", "--output", output)
    assert again.returncode == 1 and "'Grid' is baked already" in again.stderr and "--rebake" in again.stderr
    cache = tmp_path / "Grid.pc2"
    rebaked = run_bake_tool(
        output, "--object", "Grid", "--rebake", "--to", "point-cache", "--cache", cache, "--output", output
    )
    assert rebaked.returncode == 0, rebaked.stderr[-2000:]
    assert "bake: Grid: the old bake freed" in rebaked.stdout and "bake: Grid frame 30 (30/30)" in rebaked.stdout
    bpy.ops.wm.open_mainfile(filepath=str(output))
    grid = bpy.data.objects["Grid"]
    assert [k.name for k in grid.data.shape_keys.key_blocks] == ["Basis"]
    assert grid.modifiers["Collision Response Cache"].filepath == str(cache)
    bpy.context.scene.frame_set(17)
    np.testing.assert_allclose(evaluated(grid), live[17], atol=1e-6)
    # A farm's last task: the cache baked by another command attached to a fresh copy of the shot.
    attached = tmp_path / "attached.blend"
    done = run_bake_tool(source, "--object", "Grid", "--attach", "--cache", cache, "--output", attached)
    assert done.returncode == 0, done.stderr[-2000:]
    bpy.ops.wm.open_mainfile(filepath=str(attached))
    grid = bpy.data.objects["Grid"]
    assert not grid.collision_response.enabled and "Collision Response" not in grid.data.shape_keys.key_blocks
    bpy.context.scene.frame_set(23)
    np.testing.assert_allclose(evaluated(grid), live[23], atol=1e-6)
    usage = run_bake_tool(output, "--object", "Grid", "--frames", "x-y", "--output", output)
    assert usage.returncode == 2 and "expected first-last" in usage.stderr


# -- library overrides --------------------------------------------------------------------------


def character_library(
    path: Path, saved_at: int | None = None, subdivided: bool = False, disabled: bool = False
) -> dict[int, np.ndarray]:
    """Write a library .blend with a collection "Character": a rigged sheet "Body" (an armature
    sways it), its response enabled against a keyed ball in the same collection. Returns the
    live response as the library itself shows it (the evaluated mesh per frame). ``saved_at``:
    saved live at that frame, its key holding that frame's dent (by default: disabled first,
    saved without the key, then enabled again; ``disabled``: saved disabled, as the README
    advises). ``subdivided``: a Subdivision Surface (level 1) after the Armature."""
    from benchmark_frame import scene_with

    scene, grid, ball = scene_with(16, rigged=True)
    if subdivided:
        grid.modifiers.new("Subdivision", "SUBSURF").levels = 1
    scene.frame_set(1)
    grid.name = "Body"
    character = bpy.data.collections.new("Character")
    scene.collection.children.link(character)
    for obj in (grid, ball, bpy.data.objects["Rig"]):
        scene.collection.objects.unlink(obj)
        character.objects.link(obj)
    select_only(grid)
    ball.select_set(True)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    live = play(scene, grid, range(1, 31), evaluated)
    if saved_at is None:
        bpy.ops.object.collision_response_disable()  # saved without its live key, enabled again
        grid.collision_response.enabled = not disabled
    else:
        scene.frame_set(saved_at)
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return live


def overridden_body(library: Path):
    """A new shot linking the library's "Character" collection and overriding it, as Object >
    Library Override does: the scene and the overridden "Body"."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 30
    with bpy.data.libraries.load(str(library), link=True) as (_, target):
        target.collections = ["Character"]
    linked = target.collections[0]
    instance = bpy.data.objects.new("Character", None)
    instance.instance_type, instance.instance_collection = "COLLECTION", linked
    scene.collection.objects.link(instance)
    linked.override_hierarchy_create(scene, bpy.context.view_layer)
    body = next(o for o in bpy.data.objects if o.name == "Body" and o.override_library is not None)
    assert body.data.library is not None  # the mesh itself stays linked
    return scene, body


def test_a_library_override_bakes_to_a_point_cache_played_on_the_override(addon, tmp_path):
    live = character_library(tmp_path / "character.blend")
    scene, body = overridden_body(tmp_path / "character.blend")
    scene.frame_set(1)
    select_only(body)
    with pytest.raises(RuntimeError, match="shape keys cannot be added to a linked mesh"):
        bpy.ops.object.collision_response_bake()
    cache = tmp_path / "Body.pc2"
    assert bpy.ops.object.collision_response_bake(to="POINT_CACHE", filepath=str(cache)) == {"FINISHED"}
    assert body.data.library is not None and body.override_library is not None  # still the asset's
    assert [m.type for m in body.modifiers] == ["ARMATURE", "MESH_CACHE"]
    assert not [m for m in bpy.data.meshes if m.library is None and not m.name.startswith(".")]  # copy gone
    shown = play(scene, body, range(1, 31), evaluated)
    assert live[30][:, 2].min() < -0.05  # the dent the library shows
    for frame in range(1, 31):
        np.testing.assert_allclose(shown[frame], live[frame], atol=1e-5)
    # Saved and opened again: the override keeps the modifier, the cache still plays.
    path = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    body = next(o for o in bpy.data.objects if o.name == "Body" and o.override_library is not None)
    assert body.modifiers[-1].type == "MESH_CACHE"
    bpy.context.scene.frame_set(25)
    np.testing.assert_allclose(evaluated(body), live[25], atol=1e-5)


def test_an_overrides_lists_say_they_are_the_assets_and_nothing_changes(addon, tmp_path):
    """On an override the collider and interior lists are the asset file's (Blender adds no
    row to them): the list buttons say so in their poll, and Enable with a collider selected
    says so and changes nothing; Enable with the mesh alone takes the asset's colliders.
    Before, each raised a Python traceback (and Enable left the override disabled)."""
    character_library(tmp_path / "character.blend")
    _scene, body = overridden_body(tmp_path / "character.blend")
    bpy.ops.mesh.primitive_cube_add(size=0.4, location=(0, 0, 1.5))
    prop = bpy.context.active_object
    listed = [item.obj.name for item in body.collision_response.colliders]
    message = "'Body' is a library override: its lists are the asset file's"
    for operator in ("collider_add", "interior_add"):
        select_only(prop)
        body.select_set(True)
        bpy.context.view_layer.objects.active = body
        with pytest.raises(RuntimeError, match=message):
            getattr(bpy.ops.object, f"collision_response_{operator}")()
    select_only(body)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.object.collision_response_collider_remove()
    select_only(body)
    assert bpy.ops.object.collision_response_disable() == {"FINISHED"}
    select_only(prop)
    body.select_set(True)
    bpy.context.view_layer.objects.active = body
    with pytest.raises(RuntimeError, match=message + ": select it alone to enable it with them"):
        bpy.ops.object.collision_response_enable()
    assert not body.collision_response.enabled
    select_only(body)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    assert body.collision_response.enabled
    assert [item.obj.name for item in body.collision_response.colliders] == listed


@pytest.mark.parametrize("saved_at", [None, 1, 18])
def test_an_asset_saved_with_a_dent_in_its_key_is_said_on_the_override(addon, tmp_path, saved_at):
    """An asset file saved with its response live past the start frame holds that frame's dent
    in the key of the mesh a shot links: the override cannot write it, so it shows in every
    frame. The panel's message (and Enable's, Bake's) says so and what to do in the asset file;
    saved disabled or at its start frame, it says nothing of it."""
    character_library(tmp_path / "character.blend", saved_at)
    _scene, body = overridden_body(tmp_path / "character.blend")
    simulation = sys.modules[addon.__name__ + ".blender.simulation"]
    with pytest.raises(simulation.LinkedMesh) as problem:
        simulation.check(body)
    said = "its asset file was saved with a dent in the response's key" in str(problem.value)
    assert said == (saved_at == 18), str(problem.value)


# -- Geometry Nodes, USD ------------------------------------------------------------------------


def test_a_geometry_nodes_modifier_is_reported_not_ignored_silently(scene, addon):
    scene, grid, _ = scene
    lift = bpy.data.node_groups.new("Lift", "GeometryNodeTree")
    lift.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    lift.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    inputs, outputs = lift.nodes.new("NodeGroupInput"), lift.nodes.new("NodeGroupOutput")
    move = lift.nodes.new("GeometryNodeSetPosition")
    move.inputs["Offset"].default_value = (0, 0, 0.3)
    lift.links.new(inputs.outputs[0], move.inputs["Geometry"])
    lift.links.new(move.outputs["Geometry"], outputs.inputs[0])
    grid.modifiers.new("Lift", "NODES").node_group = lift
    scene.frame_set(2)
    warnings = addon.blender.simulation.get(grid).warnings
    assert any("Geometry Nodes 'Lift' is not followed" in w for w in warnings)


def usd_dent(path: str, frame: int) -> float:
    """The deepest point of the re-imported grid at ``frame`` (in a new empty file)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.usd_import(filepath=path)
    bpy.context.scene.frame_set(frame)
    grid = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    return float(evaluated(grid)[:, 2].min())


@pytest.mark.parametrize("bake", ["live", "point cache"])
def test_usd_export_without_shape_keys_animates_the_dent(scene, tmp_path, bake):
    """USD's exporter writes shape keys as blend shapes with their offsets once: the live key,
    whose offsets change every frame at weight 1, comes out static (the README says so). With
    Shape Keys off it writes the evaluated mesh every frame: the dent is there."""
    scene, grid, _ = scene
    play(scene, grid, range(1, 31))
    if bake == "point cache":
        assert bpy.ops.object.collision_response_bake(to="POINT_CACHE", filepath=str(tmp_path / "g.pc2")) == {
            "FINISHED"
        }
    select_only(grid)
    path = str(tmp_path / "shot.usdc")
    bpy.ops.wm.usd_export(filepath=path, export_animation=True, selected_objects_only=True, export_shapekeys=False)
    assert usd_dent(path, 30) == pytest.approx(-0.1, abs=2e-3)
    assert usd_dent(path, 1) == pytest.approx(0.0, abs=1e-6)
