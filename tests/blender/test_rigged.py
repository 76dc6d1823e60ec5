"""Rigged characters: a mesh bent by an armature, a collider bent by its own, other shape keys."""

import importlib
import math

import bpy
import numpy as np
import pytest
from conftest import MODULE

from primitives import scene_with_grid, weight_two_bones

RADIUS = 0.25  # the pressing sphere's
PRESS = 0.08  # how far the sphere goes into the elbow
RINGS, AROUND = 41, 32  # the arm: an open tube of radius 0.3 from z = -1 to 1


def evaluated(obj) -> np.ndarray:
    """World-space positions of the object as shown (after every modifier)."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.data
    positions = np.empty(len(mesh.vertices) * 3, dtype=np.float64)
    mesh.vertices.foreach_get("co", positions)
    matrix = np.array(evaluated.matrix_world)
    return positions.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]


def key_data(key) -> np.ndarray:
    values = np.empty(len(key.data) * 3, dtype=np.float32)
    key.data.foreach_get("co", values)
    return values.reshape(-1, 3)


def _tube() -> bpy.types.Object:
    angle = np.linspace(0, 2 * math.pi, AROUND, endpoint=False)
    z = np.linspace(-1, 1, RINGS)
    points = [(0.3 * math.cos(a), 0.3 * math.sin(a), h) for h in z for a in angle]
    faces = [
        (r * AROUND + i, r * AROUND + (i + 1) % AROUND, (r + 1) * AROUND + (i + 1) % AROUND, (r + 1) * AROUND + i)
        for r in range(RINGS - 1)
        for i in range(AROUND)
    ]
    mesh = bpy.data.meshes.new("Arm")
    mesh.from_pydata(points, [], faces)
    obj = bpy.data.objects.new("Arm", mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def _armature(name: str, bones: list[tuple[str, tuple, tuple]]) -> bpy.types.Object:
    data = bpy.data.armatures.new(name)
    rig = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    parent = None
    for bone_name, head, tail in bones:
        bone = data.edit_bones.new(bone_name)
        bone.head, bone.tail = head, tail
        if parent is not None and tuple(parent.tail) == tuple(head):
            bone.parent, bone.use_connect = parent, True
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    return rig


def _select_only(active, *others) -> None:
    bpy.ops.object.select_all(action="DESELECT")
    for obj in (active, *others):
        obj.select_set(True)
    bpy.context.view_layer.objects.active = active


@pytest.fixture
def elbow(addon):
    """An arm bound to two bones, bent 60 degrees over frames 1-10, and a ball coming to the
    outside of the elbow and pressing it over frames 10-20 (held to 25)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 25
    arm = _tube()
    rig = _armature("Rig", [("upper", (0, 0, -1), (0, 0, 0)), ("lower", (0, 0, 0), (0, 0, 1))])
    arm.parent = rig
    arm.modifiers.new("Armature", "ARMATURE").object = rig
    weight_two_bones(arm, 0.3)  # a smooth blend over the elbow
    bone = rig.pose.bones["lower"]
    bone.rotation_mode = "XYZ"
    bone.keyframe_insert("rotation_euler", frame=1)
    bone.rotation_euler.x = math.radians(60)
    bone.keyframe_insert("rotation_euler", frame=10)
    # The outside of the elbow: away from both bones' directions.
    forearm = np.array([0.0, -math.sin(math.radians(60)), math.cos(math.radians(60))])
    outside = -(np.array([0.0, 0.0, -1.0]) + forearm)
    outside /= np.linalg.norm(outside)
    bpy.ops.mesh.primitive_uv_sphere_add(segments=128, ring_count=64, radius=RADIUS)
    ball = bpy.context.active_object
    ball.name = "Ball"
    # Skinning pulls the elbow's outside in: its middle ring blends the two bones' positions,
    # 0.3 cos(30 degrees) out along the bisector.
    surface = 0.3 * math.cos(math.radians(30))
    for frame, depth in ((1, -0.5), (10, -0.05), (20, PRESS), (25, PRESS)):
        ball.location = outside * (surface + RADIUS - depth)
        ball.keyframe_insert("location", frame=frame)
    scene.frame_set(1)
    _select_only(arm, ball)
    yield scene, arm, ball
    bpy.ops.wm.read_homefile(use_empty=True)


def play_posed(scene, obj, frames) -> dict[int, np.ndarray]:
    shapes = {}
    for frame in frames:
        scene.frame_set(frame)
        shapes[frame] = evaluated(obj)
    return shapes


@pytest.mark.parametrize(("preserve_volume", "scale"), [(False, 1.0), (True, 1.0), (False, 1.5)])
def test_a_move_carried_through_the_armature_is_exactly_the_move_blender_poses(elbow, preserve_volume, scale):
    """After the step, a frame's second query carries the step's moves onto the posed surface
    through each vertex's deformation matrix instead of evaluating the mesh again. For an
    armature (linear or dual quaternion skinning) that is exact: random moves of up to 2 cm,
    carried, match the evaluated mesh's moves to float rounding, and none is lengthened more
    than the bound the query relies on (1 for unscaled bones, the forearm's scale if scaled).
    A lattice after it is not affine: such a mesh is evaluated again."""
    scene, arm, _ball = elbow
    arm.modifiers["Armature"].use_deform_preserve_volume = preserve_volume
    scene.objects["Rig"].pose.bones["lower"].scale = (scale,) * 3
    scene.frame_set(7)  # bent 42 degrees
    posed = importlib.import_module(MODULE + ".blender.posed")
    mesh_data = importlib.import_module(MODULE + ".blender.mesh_data")
    assert posed.moves_affinely(arm)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    rest = mesh_data.rest_positions(arm)
    moves = np.random.default_rng(7).uniform(-0.02, 0.02, rest.shape).astype(np.float32)
    shown = []
    for positions in (rest, rest + moves):
        mesh_data.write_shape_key(arm, positions)
        shown.append(posed.posed_positions(arm, depsgraph).astype(np.float64))
    with posed.Deformation(arm, depsgraph, scene) as deformation:
        carried = deformation.to_posed(moves, np.arange(len(rest)))
    assert np.abs(carried - moves).max() > 0.01  # the bend turns them
    assert np.abs(shown[1] - shown[0] - carried).max() < 1e-6
    bound = posed.stretch_bound(arm)
    assert bound == pytest.approx(scale, rel=1e-6)
    lengthened = np.linalg.norm(carried, axis=1) / np.linalg.norm(moves, axis=1)
    assert lengthened.max() <= bound * (1 + 1e-6) and lengthened.max() > 0.9 * scale
    lattice = bpy.data.objects.new("Lattice", bpy.data.lattices.new("Lattice"))
    scene.collection.objects.link(lattice)
    arm.modifiers.new("Lattice", "LATTICE").object = lattice
    assert not posed.moves_affinely(arm)


def test_a_bent_elbow_is_dented_where_the_ball_touches_it_and_nowhere_else(elbow):
    scene, arm, ball = elbow
    disabled = play_posed(scene, arm, range(1, 26))
    centre = np.array(ball.matrix_world.translation)
    depth = RADIUS - np.linalg.norm(disabled[25] - centre, axis=1).min()
    assert depth == pytest.approx(PRESS, abs=0.01)  # the ball really goes into the bent arm
    scene.frame_set(1)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    arm.collision_response.profiles = {"absorption": [0.0, 0.0]}  # only the finest level
    live = play_posed(scene, arm, range(1, 26))
    worst_inside, worst_elsewhere = 0.0, 0.0
    for frame in range(1, 26):
        scene.frame_set(frame)
        centre = np.array(ball.matrix_world.translation)
        distance = np.linalg.norm(live[frame] - centre, axis=1)
        worst_inside = max(worst_inside, RADIUS - distance.min())
        away = np.linalg.norm(disabled[frame] - centre, axis=1) > RADIUS + 0.05
        worst_elsewhere = max(worst_elsewhere, np.abs(live[frame] - disabled[frame])[away].max())
    assert worst_inside < 1e-3 * RADIUS
    assert worst_elsewhere < 1e-5
    # The dent is where the ball meets the posed surface: every vertex it reached lies on it.
    pressed = np.linalg.norm(disabled[25] - centre, axis=1) < RADIUS
    assert pressed.sum() > 10
    np.testing.assert_allclose(np.linalg.norm(live[25][pressed] - centre, axis=1), RADIUS, atol=1e-3 * RADIUS)


def test_a_global_response_on_the_bent_arm_keeps_out_of_the_ball(elbow):
    scene, arm, ball = elbow
    bpy.ops.object.collision_response_enable()  # its default: coarse levels give way too
    live = play_posed(scene, arm, range(1, 26))
    centre = np.array(ball.matrix_world.translation)
    for frame in range(1, 26):
        scene.frame_set(frame)
        centre = np.array(ball.matrix_world.translation)
        assert RADIUS - np.linalg.norm(live[frame] - centre, axis=1).min() < 1e-3 * RADIUS


@pytest.mark.parametrize("preset", ["", "Stiff Shell"])
def test_an_arm_straightening_away_from_a_resting_ball_never_lets_it_in(elbow, preset):
    """The elbow bent into the ball, then straightened away from it over frames 25-45 while
    the ball stays. On a frame where the posed surface has just left the ball's reach, the
    dent relaxes (fast with Stiff Shell): what that brings back inside is asked about and
    pushed out the same frame. (It was not: the query, having found nothing near the ball
    before the step, asked nothing after it, and the dent vanished with the arm 14 cm inside
    the ball on every other frame.)"""
    scene, arm, ball = elbow
    scene.frame_end = 50
    bone = arm.parent.pose.bones["lower"]
    bone.keyframe_insert("rotation_euler", frame=25)
    bone.rotation_euler.x = 0.0
    bone.keyframe_insert("rotation_euler", frame=45)
    ball.keyframe_insert("location", frame=45)
    bpy.ops.object.collision_response_enable()
    if preset:
        path = bpy.utils.preset_find(preset, "collision_response")
        bpy.ops.script.execute_preset(filepath=path, menu_idname="COLLISION_RESPONSE_MT_presets")
    for frame in range(1, 51):
        scene.frame_set(frame)
        centre = np.array(ball.matrix_world.translation)
        inside = RADIUS - np.linalg.norm(evaluated(arm) - centre, axis=1).min()
        assert inside < 1e-3 * RADIUS, f"frame {frame}: {inside:.4f} inside"


def test_bake_gives_the_posed_result_playback_gave(elbow):
    scene, arm, _ = elbow
    bpy.ops.object.collision_response_enable()
    live = play_posed(scene, arm, range(1, 26))
    assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    baked = play_posed(scene, arm, range(1, 26))
    for frame in range(1, 26):
        np.testing.assert_allclose(baked[frame], live[frame], atol=1e-5)


def test_a_subdivision_after_the_armature_keeps_working(elbow):
    scene, arm, _ = elbow
    bpy.ops.object.collision_response_enable()
    play_posed(scene, arm, range(1, 26))
    plain = key_data(arm.data.shape_keys.key_blocks["Collision Response"])
    bpy.ops.object.collision_response_disable()
    subdivision = arm.modifiers.new("Subdivision", "SUBSURF")
    scene.frame_set(1)
    bpy.ops.object.collision_response_enable()
    shown = play_posed(scene, arm, range(1, 26))
    # The response is the same (the solver sees the armature's surface), the subdivision
    # still applies on top of it, and its switch is back where the user left it.
    np.testing.assert_array_equal(key_data(arm.data.shape_keys.key_blocks["Collision Response"]), plain)
    assert len(shown[25]) > 3 * len(arm.data.vertices) and subdivision.show_viewport


def test_a_modifier_before_the_armature_that_changes_vertices_is_reported(elbow, addon):
    scene, arm, _ = elbow
    subdivision = arm.modifiers.new("Subdivision", "SUBSURF")
    bpy.ops.object.modifier_move_to_index(modifier=subdivision.name, index=0)
    assert [m.type for m in arm.modifiers] == ["SUBSURF", "ARMATURE"]
    bpy.ops.object.collision_response_enable()  # warns; playback then reports, never raises
    scene.frame_set(15)
    assert arm.collision_response.enabled
    messages = addon.blender.simulation.get(arm).messages  # what the panel shows
    assert any("changes its vertices" in m and "Subdivision" in m for m in messages)
    assert [k.name for k in arm.data.shape_keys.key_blocks] in (["Basis", "Collision Response"], ["Basis"])
    basis = key_data(arm.data.shape_keys.key_blocks["Basis"])
    np.testing.assert_array_equal(basis, np.array([v.co[:] for v in arm.data.vertices], dtype=np.float32))


@pytest.mark.parametrize("binding", ["modifier", "parent"])
def test_a_collider_bent_by_its_own_armature_dents_a_plain_mesh(addon, binding):
    """A box bound to a bone (by an Armature modifier, or by an armature parent: Blender's
    virtual modifier) is lowered 10 cm into a grid by its bone alone: its object never moves."""
    scene, grid = scene_with_grid(20)
    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0, 0, 0.3))
    box = bpy.context.active_object
    rig = _armature("Hand", [("palm", (0, 0, 0.3), (0, 0, 0.8))])
    group = box.vertex_groups.new(name="palm")
    group.add(list(range(len(box.data.vertices))), 1.0, "REPLACE")
    box.parent = rig
    if binding == "modifier":
        box.modifiers.new("Armature", "ARMATURE").object = rig
    else:
        box.parent_type = "ARMATURE"
    bone = rig.pose.bones["palm"]
    bone.keyframe_insert("location", frame=1)
    bone.location = (0, -0.15, 0)  # the bone's y axis is world z: 15 cm down, 10 cm into the grid
    bone.keyframe_insert("location", frame=15)
    scene.frame_set(1)
    _select_only(grid, box)
    bpy.ops.object.collision_response_enable()
    grid.collision_response.profiles = {"absorption": [0.0, 0.0]}
    shapes = play_posed(scene, grid, range(1, 21))
    box_now = evaluated(box)
    low, high = box_now.min(axis=0), box_now.max(axis=0)
    assert box.matrix_world.translation.z == pytest.approx(0.3)  # only the bone moved it
    assert low[2] == pytest.approx(-0.1, abs=1e-5)
    points = shapes[20]
    under = np.all((points[:, :2] > low[:2] + 1e-4) & (points[:, :2] < high[:2] - 1e-4), axis=1)
    assert under.sum() > 20
    np.testing.assert_allclose(points[under, 2], low[2], atol=1e-5)  # pushed to the box's bottom
    assert np.abs(points[~under & (np.abs(points[:, :2]).max(axis=1) > 0.3), 2]).max() < 1e-6


def test_other_animated_shape_keys_are_added_to_and_left_alone(addon):
    """A grid with a key that raises its middle 10 cm over frames 1-10, under a still ball:
    the response dents the raised surface, and the user's keys stay as they were."""
    scene, grid = scene_with_grid(20)
    grid.shape_key_add(name="Basis")
    swell = grid.shape_key_add(name="Swell")
    rest = np.array([v.co[:] for v in grid.data.vertices])
    raised = rest + np.c_[np.zeros((len(rest), 2)), 0.1 * np.exp(-np.sum(rest[:, :2] ** 2, axis=1) / 0.2)]
    swell.data.foreach_set("co", raised.astype(np.float32).ravel())
    swell.value = 0.0
    swell.keyframe_insert("value", frame=1)
    swell.value = 1.0
    swell.keyframe_insert("value", frame=10)
    bpy.ops.mesh.primitive_uv_sphere_add(segments=128, ring_count=64, radius=0.4, location=(0, 0, 0.45))
    ball = bpy.context.active_object  # 5 cm above the flat grid, 5 cm into the swollen one
    saved = {k.name: key_data(k) for k in grid.data.shape_keys.key_blocks}
    scene.frame_set(1)
    _select_only(grid, ball)
    bpy.ops.object.collision_response_enable()
    grid.collision_response.profiles = {"absorption": [0.0, 0.0]}
    shapes = play_posed(scene, grid, range(1, 21))
    distance = np.linalg.norm(shapes[20] - np.array(ball.location), axis=1)
    assert distance.min() > 0.4 * (1 - 1e-3)
    pressed = np.linalg.norm(raised - np.array(ball.location), axis=1) < 0.4
    assert pressed.sum() > 5
    np.testing.assert_allclose(distance[pressed], 0.4, atol=1e-3 * 0.4)  # dented where it swelled into the ball
    np.testing.assert_allclose(shapes[20][~pressed], raised[~pressed], atol=1e-6)  # the rest is the swell
    assert swell.value == pytest.approx(1.0) and grid.data.shape_keys.animation_data.action is not None
    bpy.ops.object.collision_response_disable()
    for key in grid.data.shape_keys.key_blocks:
        np.testing.assert_array_equal(key_data(key), saved[key.name])
    scene.frame_set(20)
    np.testing.assert_allclose(evaluated(grid), raised, atol=1e-6)


def test_editing_the_pose_animation_restarts_the_response(elbow):
    scene, arm, _ = elbow
    bpy.ops.object.collision_response_enable()
    play_posed(scene, arm, range(1, 26))
    before = key_data(arm.data.shape_keys.key_blocks["Collision Response"])
    bone = bpy.data.objects["Rig"].pose.bones["lower"]
    bone.rotation_euler.x = math.radians(45)  # bent less: the ball now presses less deep
    bone.keyframe_insert("rotation_euler", frame=10)
    bpy.context.view_layer.update()  # as after any edit in the interface
    scene.frame_set(25)  # past the old cache: only a restart from frame 1 sees the new bend
    edited = key_data(arm.data.shape_keys.key_blocks["Collision Response"])
    arm.collision_response.friction = 0.0  # a setting "change": a sure restart
    scene.frame_set(1)
    play_posed(scene, arm, range(1, 26))
    np.testing.assert_array_equal(edited, key_data(arm.data.shape_keys.key_blocks["Collision Response"]))
    assert np.abs(edited - before).max() > 0.01
