"""What a press leaves behind (issue 21), in Blender: the pressure attribute for shaders, live
and baked, and secondary motion (overshoot) with its presets, driven as an animator does."""

import bpy
import numpy as np
import pytest
from test_addon import evaluated
from test_contact_holds import wandering_played_twice
from test_rigged import PRESS, RADIUS, elbow, key_data  # noqa: F401 (elbow: the rigged tests' arm, a fixture)
from test_rigged import evaluated as posed_positions

from primitives import grid_and_ball

PRESSURE = "collision_pressure"
COLOR = "collision_pressure_color"


@pytest.fixture
def scene(addon):
    """A 33 x 33 grid, a ball sinking 10 cm into it over frames 1-20, held to 25, gone at
    26; enabled (Enable's gentle levels: absorption 0 to 0.5, time to rest 1 s)."""
    scene, grid, sphere = grid_and_ball(60, {1: 0.5, 20: 0.3, 25: 0.3, 26: 1.5})
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    yield scene, grid, sphere
    bpy.ops.wm.read_homefile(use_empty=True)


def attribute(obj, name: str, evaluated_mesh: bool = False) -> np.ndarray | None:
    """A point attribute's values ((n,) floats, (n, 4) colours) on the mesh, or on the
    evaluated mesh; None when it has none."""
    mesh = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data if evaluated_mesh else obj.data
    found = mesh.attributes.get(name)
    if found is None:
        return None
    color = found.data_type in ("FLOAT_COLOR", "BYTE_COLOR")
    values = np.empty(len(mesh.vertices) * (4 if color else 1), dtype=np.float32)
    found.data.foreach_get("color" if color else "value", values)
    return values.reshape(-1, 4) if color else values


def play(scene, grid, frames) -> tuple[dict, dict]:
    shapes, pressures = {}, {}
    for frame in frames:
        scene.frame_set(frame)
        shapes[frame], pressures[frame] = evaluated(grid).copy(), attribute(grid, PRESSURE)
    return shapes, pressures


# -- pressure -----------------------------------------------------------------------------------


def test_no_pressure_attribute_unless_asked(scene):
    scene, grid, _ = scene
    assert not grid.collision_response.pressure  # off by default
    scene.frame_set(20)
    assert attribute(grid, PRESSURE) is None and attribute(grid, COLOR) is None


def test_the_pressure_is_the_springy_depth_over_the_full_pressure_depth_each_frame(scene):
    """On the flat grid (nothing yields) each vertex's pressure is how far the response moved
    it over the Full Pressure depth (Hooke's law), every frame: 0 before the ball arrives and
    where nothing moved, 1.25 at the deepest point pressed 10 cm with full pressure at 8 cm,
    growing while the ball sinks, back to next to nothing as the dent springs back."""
    scene, grid, _ = scene
    settings = grid.collision_response
    settings.pressure, settings.pressure_depth, settings.pressure_color = True, 0.08, True
    rest = np.array([v.co for v in grid.data.vertices], dtype=np.float32)
    shapes, pressures = play(scene, grid, range(1, 61))
    deepest = []
    for frame in range(1, 61):
        moved = np.linalg.norm(shapes[frame] - rest, axis=1)
        np.testing.assert_allclose(pressures[frame], moved / 0.08, atol=2e-5)
        assert (pressures[frame][moved == 0] == 0).all()
        deepest.append(pressures[frame].max())
    assert deepest[0] == 0 and deepest[8] == 0  # frame 9: the ball has not reached the grid
    assert deepest[19] == pytest.approx(1.25, abs=1e-3)  # frame 20: 10 cm deep
    assert (np.diff(deepest[10:20]) > 0).all()  # deeper each frame while it sinks
    # 34 frames (1.4 s) after the ball left, time to rest 1 s: 0.01 ** 1.4, 0.16 % is left.
    assert 0 < deepest[59] < 0.0016 * deepest[19]
    scene.frame_set(20)
    grey = attribute(grid, COLOR)
    np.testing.assert_array_equal(grey[:, 0], np.clip(pressures[20], 0, 1))
    np.testing.assert_array_equal(grey[:, 3], 1.0)


@pytest.mark.parametrize("kind", ["grid", "uv", "ico"])
def test_each_vertex_reads_its_own_press_on_meshes_in_any_order(addon, kind):
    """A 49 x 49 grid, a UV sphere and an icosphere (their hierarchies keep the levels in an
    order of their own): a ball pressed 6 cm and held, default settings, Linear with full
    pressure at 10 cm: each vertex reads how far it was moved in along its rest normal over
    10 cm, the deepest 0.6 (a new user read 0.062 there on the grid, 0.6 on a vertex 0.86 m
    away, 0.0085 on the sphere: the hierarchy's order, not the mesh's)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 30
    if kind == "grid":
        bpy.ops.mesh.primitive_grid_add(x_subdivisions=48, y_subdivisions=48, size=2)
    elif kind == "uv":
        bpy.ops.mesh.primitive_uv_sphere_add(segments=48, ring_count=24, radius=0.5)
    else:
        bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=5, radius=0.5)
    mesh = bpy.context.active_object
    top = 0.0 if kind == "grid" else 0.5
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.3, location=(0, 0, top + 0.31))
    ball = bpy.context.active_object
    for frame, z in ((1, top + 0.31), (20, top + 0.24), (30, top + 0.24)):
        ball.location.z = z
        ball.keyframe_insert("location", frame=frame)
    scene.frame_set(1)
    mesh.select_set(True)
    bpy.context.view_layer.objects.active = mesh
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    mesh.collision_response.pressure, mesh.collision_response.pressure_depth = True, 0.1
    for frame in range(1, 31):
        scene.frame_set(frame)
    rest = np.array([v.co for v in mesh.data.vertices])
    normals = np.array([v.normal for v in mesh.data.vertices])
    inward = np.maximum(-np.einsum("ij,ij->i", evaluated(mesh) - rest, normals), 0.0) / 0.1
    p = attribute(mesh, PRESSURE)
    deepest = int(np.argmax(inward))
    assert inward[deepest] == pytest.approx(0.6, abs=1e-3)
    assert p[deepest] == pytest.approx(0.6, abs=3e-3) and p.max() < 0.6 + 3e-3
    # The rest of the press spread by the coarse levels, whose frames turn its details: read
    # against the move, within 2 % of full pressure everywhere.
    assert np.abs(p - inward).max() < 0.02
    bpy.ops.wm.read_homefile(use_empty=True)


def test_the_biphasic_law_is_soft_then_stiff(scene):
    """The same press read through the biphasic law (stiffens at half the full depth, 4 times
    stiffer): 10 cm deep with full pressure at 8 cm is (4 + 4 * 6) / (4 + 4 * 4) = 1.4."""
    scene, grid, _ = scene
    settings = grid.collision_response
    settings.pressure, settings.pressure_depth, settings.pressure_law = True, 0.08, "biphasic"
    scene.frame_set(20)
    rest = np.array([v.co for v in grid.data.vertices])
    depth = np.linalg.norm(evaluated(grid) - rest, axis=1)
    p = attribute(grid, PRESSURE)
    knee, full = 0.04, 0.04 + 4 * 0.04
    expected = np.where(depth <= knee, depth, knee + 4 * (depth - knee)) / full
    np.testing.assert_allclose(p, expected, atol=2e-5)
    assert p.max() == pytest.approx(1.4, abs=2e-3)


def test_pressure_scrubs_exactly_and_turning_it_off_removes_it(scene):
    scene, grid, _ = scene
    grid.collision_response.pressure = True
    _shapes, first = play(scene, grid, range(1, 41))
    for frame in (30, 12, 21, 40, 1, 20):  # back and forth over played frames
        scene.frame_set(frame)
        np.testing.assert_array_equal(attribute(grid, PRESSURE), first[frame])
    grid.collision_response.pressure = False
    scene.frame_set(21)
    assert attribute(grid, PRESSURE) is None


def test_a_bake_keeps_the_pressure_for_a_render_without_the_add_on(scene):
    """Baked to shape keys, each frame's pressure is kept and a Geometry Nodes modifier shows
    the current frame's, bit for bit what played live; Free Bake removes them."""
    scene, grid, _ = scene
    settings = grid.collision_response
    settings.pressure, settings.pressure_color = True, True
    _shapes, live = play(scene, grid, range(1, 41))
    scene.frame_start, scene.frame_end = 1, 40
    assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    assert grid.modifiers.get("Collision Pressure") is not None
    assert attribute(grid, PRESSURE) is None  # the live one is gone: the modifier makes it
    for frame in (1, 15, 20, 33, 40):
        scene.frame_set(frame)
        np.testing.assert_array_equal(attribute(grid, PRESSURE, evaluated_mesh=True), live[frame])
        shown = attribute(grid, COLOR, evaluated_mesh=True)
        np.testing.assert_allclose(shown[:, 0], np.clip(live[frame], 0, 1), atol=1e-7)
    assert live[20].max() > 0.5
    assert bpy.ops.object.collision_response_free_bake() == {"FINISHED"}
    assert grid.modifiers.get("Collision Pressure") is None
    assert not [a.name for a in grid.data.attributes if a.name[len(PRESSURE) + 1 :].isdigit()]
    assert attribute(grid, PRESSURE) is not None  # live again


def test_pressure_settings_and_the_overshoot_curves_are_saved_in_the_file(scene, tmp_path):
    scene, grid, _ = scene
    settings = grid.collision_response
    settings.pressure, settings.pressure_law, settings.pressure_depth = True, "biphasic", 0.05
    settings.pressure_knee, settings.pressure_stiffening = 0.3, 8.0
    settings.profiles = {"damping_ratio": [0.2, 1.0], "overshoot_period": [0.3]}
    path = str(tmp_path / "saved.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    settings = bpy.data.objects["Grid"].collision_response
    assert (settings.pressure, settings.pressure_law) == (True, "biphasic")
    assert (settings.pressure_depth, settings.pressure_knee, settings.pressure_stiffening) == pytest.approx(
        (0.05, 0.3, 8.0)
    )
    assert settings.profiles["damping_ratio"] == pytest.approx(np.linspace(0.2, 1.0, 6), abs=1e-6)
    assert settings.profiles["overshoot_period"] == pytest.approx([0.3] * 6)


# -- secondary motion ---------------------------------------------------------------------------


def apply_preset(name: str) -> None:
    path = bpy.utils.preset_find(name, "collision_response")
    assert path, f"preset {name!r} not found"
    assert bpy.ops.script.execute_preset(filepath=path, menu_idname="COLLISION_RESPONSE_MT_presets") == {"FINISHED"}


def test_jelly_swings_past_rest_after_the_release_and_rubber_does_not(scene):
    """The ball leaves at frame 26. With Jelly the sheet springs up past its rest shape and
    back down, several times, smaller each time; Rubber (no overshoot) never passes rest.
    Scrubbing back over the swings shows them bit for bit."""
    scene, grid, _ = scene
    apply_preset("Rubber")
    rubber, _ = play(scene, grid, range(1, 61))
    assert max(rubber[f][:, 2].max() for f in range(27, 61)) <= 1e-6
    apply_preset("Jelly")
    assert grid.collision_response.profiles["damping_ratio"][0] == pytest.approx(0.12)
    jelly, _ = play(scene, grid, range(1, 61))
    depth = -jelly[25][:, 2].min()
    centre = np.argmin(np.linalg.norm(np.array([v.co for v in grid.data.vertices])[:, :2], axis=1))
    z = np.array([jelly[f][centre, 2] for f in range(27, 61)])
    peaks = z[1:-1][(z[1:-1] > z[:-2]) & (z[1:-1] >= z[2:]) & (z[1:-1] > 0)]
    assert peaks.size >= 2 and peaks[0] > 0.1 * depth  # up past rest: more than a tenth of the dent
    assert (np.diff(peaks) < 0).all()  # each swing smaller
    assert z.min() < -0.02 * depth and (np.sign(z[z != 0][1:]) != np.sign(z[z != 0][:-1])).sum() >= 3
    for frame in (40, 27, 33, 59, 30):
        scene.frame_set(frame)
        np.testing.assert_array_equal(evaluated(grid), jelly[frame])


@pytest.mark.parametrize("preset", ["Jelly", "Belly"])
def test_a_random_path_with_overshoot_keeps_every_invariant_and_the_same_bits(addon, preset):
    """A ball wandering over the sheet for 120 frames, up to 15 cm a frame and down past its
    radius, with a preset that overshoots: nothing inside the ball beyond 1e-3 of its size,
    no face turned over, bounded (twice the deepest reach), every frame; again, the same bits."""
    frames = wandering_played_twice(21, 120, preset)
    swing = max(np.abs(f[:, 2]).max() for f in frames)
    assert swing > 0.05


def test_the_scene_at_rest_with_the_defaults_writes_nothing_new(scene):
    """Defaults: no overshoot follower, no pressure: the simulation is as it was."""
    scene, grid, _ = scene
    scene.frame_set(5)
    from bl_ext.user_default.collision_response.blender import simulation

    state = simulation.get(grid)
    assert state is not None and state.overshoot is None and state.pressure is None
    assert grid.collision_response.profiles["damping_ratio"] == [1.0] * 6


def test_a_rigged_arm_with_jelly_pressed_and_released_stays_out_bounded_and_scrubs_exactly(elbow, addon):  # noqa: F811
    """The rigged tests' arm, bent by its armature while a ball presses its elbow 8 cm (frames
    10-20, held to 25), then released (the ball gone by frame 30), with Jelly (it swings):
    every frame to 60 nothing is inside the ball beyond 1e-3 of its size on the evaluated
    (posed) mesh, no offset of the response key is longer than twice the press, the arm
    swings out past its rest shape after the release, and the same bits come again played
    from scratch and scrubbed back. Measured: 1.3e-4 of a metre inside at most (the allowed
    2.5e-4; the ball's polygons are up to 7.5e-5 inside its sphere), offsets up to 9.4 cm
    (16 allowed), pressed 9.2 cm in along the rest normals, swinging 8 mm out after (0.2 mm
    with every damping ratio 1: no swing)."""
    scene, arm, sphere = elbow
    scene.frame_end = 60
    far = np.array(sphere.location)  # where it came from, at frame 1
    sphere.keyframe_insert("location", frame=30)  # back there by frame 30 (held at the elbow at 25)
    scene.frame_set(25)
    assert np.linalg.norm(np.array(sphere.location) - far) > 0.4  # (held at the elbow at 25)
    scene.frame_set(1)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    apply_preset("Jelly")
    rest = np.array([v.co for v in arm.data.vertices])
    normals = np.array([v.normal for v in arm.data.vertices])
    offsets = lambda: key_data(arm.data.shape_keys.key_blocks["Collision Response"]) - rest  # noqa: E731

    def played() -> tuple[list[np.ndarray], list[np.ndarray]]:
        shown, keyed = [], []
        for frame in range(1, 61):
            scene.frame_set(frame)
            shown.append(posed_positions(arm))
            centre = np.array(sphere.matrix_world.translation)
            inside = RADIUS - np.linalg.norm(shown[-1] - centre, axis=1).min()
            assert inside < 1e-3 * RADIUS, f"frame {frame}: {inside:.5f} inside"
            keyed.append(offsets())
            longest = np.linalg.norm(keyed[-1], axis=1).max()
            assert longest <= 2 * PRESS, f"frame {frame}: an offset of {longest:.4f}"
        return shown, keyed

    first, keyed = played()
    assert addon.blender.simulation.get(arm).overshoot is not None  # followed: Jelly's levels swing
    outward = np.array([np.einsum("ij,ij->i", k, normals).max() for k in keyed])
    inward = np.array([-np.einsum("ij,ij->i", k, normals).min() for k in keyed])
    assert inward[19] > 0.5 * PRESS  # pressed (frame 20)
    assert outward[30:].max() > 0.05 * inward[19]  # it swings out past rest after the release
    for frame in (45, 12, 33, 60, 20, 31):  # scrubbed back and forth over played frames
        scene.frame_set(frame)
        np.testing.assert_array_equal(posed_positions(arm), first[frame - 1])
    arm.collision_response.standoff = 0.0  # an edit (to the same value): played again from scratch
    again, _keyed = played()
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_keyframed_full_pressure_depth_is_read_each_frame_and_never_restarts(scene, addon):
    """Full Pressure At keyed from 10 cm at frame 20 to 5 cm at frame 24 while the ball is
    held 10 cm deep: the pressure is read through each frame's depth (1 at frame 20, 2 at 24,
    the held dent the same), one simulation throughout, scrubbed back the same bits."""
    scene, grid, _ = scene
    settings = grid.collision_response
    settings.pressure = True
    edit = bpy.context.preferences.edit
    edit.keyframe_new_interpolation_type = "LINEAR"
    for frame, depth in ((20, 0.1), (24, 0.05)):
        settings.pressure_depth = depth
        settings.keyframe_insert("pressure_depth", frame=frame)
    edit.keyframe_new_interpolation_type = "BEZIER"
    scene.frame_set(1)
    built = []
    shapes, pressures = {}, {}
    for frame in range(1, 26):
        scene.frame_set(frame)
        shapes[frame], pressures[frame] = evaluated(grid).copy(), attribute(grid, PRESSURE)
        state = addon.blender.simulation.get(grid)
        if not any(state is b for b in built):
            built.append(state)
    assert len(built) == 1
    np.testing.assert_array_equal(shapes[24], shapes[20])  # held: the same dent
    assert pressures[20].max() == pytest.approx(1.0, abs=2e-3)
    assert pressures[24].max() == pytest.approx(2.0, abs=4e-3)
    np.testing.assert_allclose(pressures[22], pressures[20] / 0.75, rtol=1e-5, atol=1e-7)  # 7.5 cm
    for frame in (22, 10, 24):
        scene.frame_set(frame)
        np.testing.assert_array_equal(attribute(grid, PRESSURE), pressures[frame])
