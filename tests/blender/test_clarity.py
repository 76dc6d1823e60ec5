"""Clear to an animator (issue 19): behaviour maps that scale from the level's own value,
settings in words and units, levels shown as sizes, feedback while it works."""

import warnings

import bpy
import numpy as np
import pytest
from test_addon import response

from primitives import grid_and_ball

RADIUS = 0.4
FACETS = RADIUS * (1 - np.cos(np.pi / 32) ** 2)  # how far the 32 x 16 UV sphere lies inside the true one


@pytest.fixture
def scene(addon):
    """The 33 x 33 grid (2 m, 6.25 cm between vertices) and a ball of radius 0.4 that sinks
    10 cm into it over frames 1-20, holds, and is gone at frame 22."""
    yield grid_and_ball(80, {1: 0.5, 20: 0.3, 21: 0.3, 22: 2.0}, RADIUS)
    bpy.ops.wm.read_homefile(use_empty=True)


def rest(grid) -> np.ndarray:
    return np.array([v.co for v in grid.data.vertices])


def paint(grid, name: str, where: np.ndarray, weight: float) -> None:
    """A vertex group holding the vertices ``where`` at ``weight`` (the others unassigned)."""
    group = grid.vertex_groups.new(name=name)
    group.add([int(i) for i in np.flatnonzero(where)], weight, "REPLACE")


def play(scene, grid, ball, frames) -> dict[int, np.ndarray]:
    """Each frame's response; every frame, no vertex is inside the ball (warnings are errors)."""
    shapes = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for frame in frames:
            scene.frame_set(frame)
            shapes[frame] = response(grid).copy()
            centre = np.array(ball.matrix_world.translation)
            assert np.linalg.norm(shapes[frame] - centre, axis=1).min() > RADIUS - FACETS, frame
    assert not [str(w.message) for w in caught]
    return shapes


def enable(grid, **profiles) -> None:
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    grid.collision_response.profiles = profiles


# -- 1. behaviour maps scale from the level's own value -----------------------------------------


def test_a_map_leaves_unpainted_vertices_at_the_levels_own_value(scene):
    """A map painted at full weight on a strip is no map at all: unpainted vertices weigh 1."""
    scene, grid, ball = scene
    enable(grid, absorption=[0.0, 0.5], response_time=[0.2], time_to_rest=[0.5])
    plain = play(scene, grid, ball, range(1, 41))
    paint(grid, "Strip", np.abs(rest(grid)[:, 1] - 0.5) < 0.1, 1.0)
    settings = grid.collision_response
    settings.absorption_group = settings.response_time_group = settings.time_to_rest_group = "Strip"
    settings.yield_limit_group = "Strip"
    scene.frame_set(1)
    mapped = play(scene, grid, ball, range(1, 41))
    assert -plain[20][:, 2].min() == pytest.approx(0.1, abs=1e-3)
    for frame in plain:
        np.testing.assert_array_equal(mapped[frame], plain[frame])


def test_a_recovery_map_painted_on_a_strip_lets_the_rest_recover(scene):
    """Time to rest 0.5 s; a strip through the dent painted 0.25 recovers at a quarter of the
    speed (2 s); the rest recovers (unpainted vertices once froze: the dent never left)."""
    scene, grid, ball = scene
    xy = rest(grid)
    strip = np.abs(xy[:, 1]) < 0.1
    paint(grid, "Strip", strip, 0.25)
    enable(grid, absorption=[0.0, 0.5], time_to_rest=[0.5])
    grid.collision_response.time_to_rest_group = "Strip"
    shapes = play(scene, grid, ball, range(1, 81))
    depth = -shapes[21][:, 2].min()
    assert depth == pytest.approx(0.1, abs=1e-3)
    far = np.abs(xy[:, 1]) > 0.5  # more than a level-2 cell from the strip
    left = {f: np.abs(shapes[f][:, 2]) for f in shapes}  # how far from rest, per vertex
    assert left[34][far].max() < 0.02 * depth  # 0.5 s after release the rest is (all but) back
    assert left[46][strip].max() == pytest.approx(0.1 * depth, rel=0.2)  # 1 s of its 2 s: 10 % left
    assert left[70][strip].max() < 0.01 * depth  # 2 s after release: 99 % back
    assert left[80].max() < 0.005 * depth


def test_a_damping_map_never_lets_the_ball_through(scene):
    """A strip through the press painted 0 (its coarse levels never give way) and one at
    0.5: the ball never gets in (``play`` checks every vertex every frame) and the contact
    reaches the ball's depth at once."""
    scene, grid, ball = scene
    xy = rest(grid)
    paint(grid, "Slow", np.abs(xy[:, 0]) < 0.15, 0.0)
    grid.vertex_groups["Slow"].add([int(i) for i in np.flatnonzero(np.abs(xy[:, 1]) < 0.15)], 0.5, "REPLACE")
    enable(grid, absorption=[0.0, 0.5], response_time=[0.5, 0.5])
    grid.collision_response.response_time_group = "Slow"
    shapes = play(scene, grid, ball, range(1, 26))
    for frame in (12, 16, 20):
        scene.frame_set(frame)
        bottom = ball.location.z - RADIUS
        assert bottom < -0.01 and shapes[frame][:, 2].min() == pytest.approx(bottom, abs=1e-3)


def test_a_yield_map_gives_no_warnings_and_keeps_the_dent_where_painted(scene):
    """Yield Limit at "never", the right half painted 0 (clay): no RuntimeWarning (inf * 0
    gave one, and NaN limits); the right half keeps its dent, the left springs back."""
    scene, grid, ball = scene
    clay = rest(grid)[:, 0] > 0.0
    paint(grid, "Clay", clay, 0.0)
    enable(grid, absorption=[0.0, 0.5], time_to_rest=[0.3], yield_limit=[1.0])
    grid.collision_response.yield_limit_group = "Clay"
    shapes = play(scene, grid, ball, range(1, 81))
    assert np.isfinite(shapes[80]).all()
    assert np.abs(shapes[80][clay, 2]).max() > 0.5 * 0.1  # kept: over half the press
    np.testing.assert_array_equal(shapes[80][clay], shapes[50][clay])  # and it stays
    assert np.abs(shapes[80][~clay & (rest(grid)[:, 0] < -0.6), 2]).max() < 1e-4  # back at rest


def test_a_yield_map_on_a_level_that_never_yields_is_plastic_at_0_in_the_solver_too():
    """The solver alone: an infinite yield limit times a weight of 0 is 0, with no warning."""
    from core import LevelSettings, Surface
    from core.grid import GridHierarchy

    side = 17
    u, v = np.meshgrid(np.linspace(-1, 1, side), np.linspace(-1, 1, side))
    flat = np.stack([u, v, np.zeros_like(u)], axis=-1).reshape(-1, 3)
    surface = Surface(GridHierarchy.for_side(side), flat, LevelSettings.uniform(5, time_to_rest=0.2))
    surface.settings.maps["yield_limit"] = np.where(flat[:, 0] > 0, 0.0, 1.0)
    push = np.zeros_like(flat)
    push[np.linalg.norm(flat[:, :2], axis=1) < 0.3, 2] = -0.05
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        surface.step(push, 1 / 24)
        for _ in range(48):
            surface.step(np.zeros_like(flat), 1 / 24)
    z = surface.positions[:, 2]
    pressed = np.linalg.norm(flat[:, :2], axis=1) < 0.3
    np.testing.assert_allclose(z[pressed & (flat[:, 0] > 0)], -0.05, atol=1e-6)  # clay: kept
    assert np.abs(z[flat[:, 0] < 0]).max() < 1e-4  # elastic: back


# -- 2. words and units -------------------------------------------------------------------------


def test_every_setting_says_what_it_does_in_an_animators_words(addon):
    from bl_ext.user_default.collision_response.blender import curves

    rna = bpy.types.Object.bl_rna.properties["collision_response"].fixed_type.properties
    labels = {name: label for name, (label, *_range) in curves.CURVES.items()}
    assert labels == {
        "absorption": "Absorption",
        "response_time": "Time to Follow (s)",
        "time_to_rest": "Time to Rest (s)",
        "yield_limit": "Yield Limit (share of size)",
        "damping_ratio": "Damping Ratio",
        "overshoot_period": "Overshoot Period (s)",
    }
    assert rna["recovers"].name == "Spring Back" and "never" in rna["recovers"].description
    assert rna["response_time_group"].name == "Follow Map"
    assert rna["restriction"].name == "Spread to Coarse Levels"
    assert rna["prolongation"].name == "Shape Between Points"
    for name in curves.CURVES:  # the exact-value rows: a name, a tooltip, the curve's range
        row = rna[f"{name}_levels"]
        assert row.name == labels[name] and "coarse" in row.description and len(row.description) > 60
        assert (row.hard_min, row.hard_max) == pytest.approx(curves.CURVES[name][1:3], rel=1e-7)  # (float32)
        if name in curves.MAPPED:  # the solver's own properties take a behaviour map
            assert "weight 1 (or not in the group)" in rna[f"{name}_group"].description
    assert "bounding-box diagonal" in rna["yield_limit_levels"].description


def test_time_to_rest_at_the_top_of_its_range_is_5_s_and_never_is_spring_back_off(scene):
    scene, grid, ball = scene
    enable(grid, absorption=[0.0, 0.5], time_to_rest=[5.0])
    assert grid.collision_response.recovers
    shapes = play(scene, grid, ball, range(1, 83))
    depth = -shapes[21][:, 2].min()
    # 60 frames (2.5 s) after the ball left, half of 5 s: 0.01 ** 0.5 = 10 % is left.
    assert -shapes[82][:, 2].min() == pytest.approx(0.1 * depth, rel=0.05)
    grid.collision_response.recovers = False  # never: the dent stays as the ball left it
    scene.frame_set(1)
    kept = play(scene, grid, ball, range(1, 83))
    assert -kept[82][:, 2].min() == pytest.approx(depth, abs=1e-6)
    np.testing.assert_array_equal(kept[82], kept[40])


def test_a_file_from_before_spring_back_keeps_never_meaning_never(scene, tmp_path):
    """An old file's Time to Rest at the top (5 s) on every level meant never: on loading
    it is Spring Back off; one below the top keeps its time."""
    scene, grid, _ = scene
    enable(grid, time_to_rest=[5.0])
    plane = bpy.data.objects.new("Old", grid.data.copy())
    scene.collection.objects.link(plane)
    from bl_ext.user_default.collision_response.blender import curves

    # Curves of its own, one level below the top.
    curves.ensure_curves(plane.collision_response, 3, defaults={"time_to_rest": np.array([5.0, 5.0, 2.0])})
    for obj in (grid, plane):
        obj.collision_response.version = 0  # as saved before version 1
    path = str(tmp_path / "old.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    grid, plane = bpy.data.objects["Grid"].collision_response, bpy.data.objects["Old"].collision_response
    assert (grid.recovers, grid.version) == (False, 1)
    assert (plane.recovers, plane.version) == (True, 1)
    assert plane.profiles["time_to_rest"] == pytest.approx([5.0, 5.0, 2.0], abs=1e-5)


def test_the_exact_value_rows_are_the_curves_points(scene):
    scene, grid, ball = scene
    enable(grid, absorption=[0.0, 0.5])
    settings = grid.collision_response
    levels = len(settings.profiles["absorption"])
    assert levels == 6 and list(settings.absorption_levels[:levels]) == pytest.approx(np.linspace(0, 0.5, 6))
    before = play(scene, grid, ball, range(1, 21))[20]
    settings.absorption_levels[1] = 0.9  # typed in the row under the curve
    assert settings.profiles["absorption"][1] == pytest.approx(0.9)
    settings.absorption_levels[0] = 5.0  # the curve's range holds
    assert settings.profiles["absorption"][0] == 1.0
    scene.frame_set(1)
    after = play(scene, grid, ball, range(1, 21))[20]
    assert np.abs(after - before).max() > 0.01  # the response restarted with the new values


# -- 3. levels as sizes -------------------------------------------------------------------------


def test_each_level_is_shown_as_the_spacing_of_its_vertices(scene):
    """Blender's 33 x 33 grid, 2 m wide: levels 2 m, 1 m, 50 cm, ... 6.25 cm apart; scaled
    by 3, three times that; the 0.8 m ball shapes the levels of 50 cm and finer."""
    from bl_ext.user_default.collision_response.blender import sizes

    scene, grid, ball = scene
    enable(grid)
    np.testing.assert_allclose(sizes.level_sizes(grid), 2.0 / 2 ** np.arange(6), rtol=1e-6)
    assert sizes.length(0.5, scene) == "50 cm" and sizes.length(0.0625, scene) == "6.25 cm"
    assert sizes.collider_size(ball) == pytest.approx(0.8, rel=1e-3)
    assert sizes.first_level_reached(sizes.level_sizes(grid), 0.8) == 2
    reached = "Sphere (80 cm): its shape on levels of 50 cm and finer; coarser ones spread it"
    assert sizes.reach(grid, ball, scene) == reached
    assert sizes.object_size(grid) == pytest.approx(np.sqrt(8), rel=1e-6)
    grid.scale = (3, 3, 3)
    bpy.context.view_layer.update()
    np.testing.assert_allclose(sizes.level_sizes(grid), 6.0 / 2 ** np.arange(6), rtol=1e-6)
    assert sizes.reach(grid, ball, scene).endswith("levels of 75 cm and finer; coarser ones spread it")
    ball.scale = (0.01, 0.01, 0.01)
    bpy.context.view_layer.update()
    assert sizes.reach(grid, ball, scene) == "Sphere (8 mm): finer than every level, it moves single vertices"


def test_the_panel_says_a_collider_wider_than_the_mesh_presses_along_its_own_faces(addon):
    """A ball dropped onto a 20 m plane: once the plane is near it, its line in the panel
    says it presses along its own faces (the contact treats it as wide), not which levels a
    20 m collider shapes."""
    from bl_ext.user_default.collision_response.blender import simulation, sizes
    from test_contact_holds import enable as enable_with
    from test_contact_holds import keyed

    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    bpy.ops.mesh.primitive_plane_add(size=20.0)
    plane = bpy.context.active_object
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.5)
    ball = bpy.context.active_object
    keyed(ball, {1: (0, 0, 0.7), 6: (0, 0, 0.4)})
    scene.frame_set(1)
    enable_with(ball, [plane])
    for frame in range(2, 7):
        scene.frame_set(frame)
    wide = simulation.get(ball).query.contacts.wide
    assert wide == {plane.name}
    assert sizes.reach(ball, plane, scene, plane.name in wide) == (
        "Plane (20 m): over twice the mesh's size, it presses along its own faces"
    )
    bpy.ops.wm.read_homefile(use_empty=True)


# -- 4. feedback --------------------------------------------------------------------------------


def test_the_panel_says_what_is_cached_and_what_a_frame_costs(scene):
    from bl_ext.user_default.collision_response.blender import simulation

    scene, grid, ball = scene
    enable(grid)
    scene.frame_set(1)
    assert simulation.get(grid).status().startswith("Cached frame 1;")
    play(scene, grid, ball, range(1, 31))
    state = simulation.get(grid)
    assert (state.start, state.head, len(state.frames)) == (1, 30, 30)
    assert 0.0 < state.frame_seconds < 5.0
    assert state.status() == f"Cached frames 1-30; the last took {state.frame_seconds * 1000:.0f} ms"
    scene.frame_set(12)  # scrubbing back shows a cached frame: the cache is unchanged
    assert simulation.get(grid).status().startswith("Cached frames 1-30;")
    grid.collision_response.friction = 0.5  # a change restarts: nothing cached past the start
    scene.frame_set(5)
    assert simulation.get(grid).status().startswith("Cached frames 1-5;")


def test_the_timeline_strip_spans_the_frames_cached(scene):
    """What the Timeline's cache strip spans (drawn only where there is a window: the span is
    what it draws, from the start frame to the last simulated)."""
    from bl_ext.user_default.collision_response.blender import timeline

    scene, grid, ball = scene
    assert timeline.cached_span(grid) is None and timeline.cached_span(None) is None
    enable(grid)
    play(scene, grid, ball, range(1, 21))
    assert timeline.cached_span(grid) == (1, 20)
    scene.frame_set(8)  # scrubbing back keeps the cache
    assert timeline.cached_span(grid) == (1, 20)
    grid.collision_response.friction = 0.5  # a change restarts it
    assert timeline.cached_span(grid) is None
    scene.frame_set(9)
    assert timeline.cached_span(grid) == (1, 9)


def test_a_long_jump_simulates_every_frame_between_with_progress(scene):
    from bl_ext.user_default.collision_response.blender import simulation

    scene, grid, ball = scene
    enable(grid)
    reference = play(scene, grid, ball, range(1, 41))[40]
    grid.collision_response.friction = 0.0  # restart
    scene.frame_set(40)  # 39 frames at once, more than PROGRESS_FRAMES: with Blender's progress
    assert 40 - 1 > simulation.PROGRESS_FRAMES
    np.testing.assert_array_equal(response(grid), reference)
    assert simulation.get(grid).head == 40


def test_baking_with_no_colliders_warns_and_writes_nothing(scene, capfd):
    scene, grid, ball = scene
    enable(grid)
    grid.collision_response.colliders.clear()
    assert bpy.ops.object.collision_response_bake() == {"CANCELLED"}
    assert "'Grid' has no colliders: the bake would be 80 unchanged frames" in capfd.readouterr().out
    assert [k.name for k in grid.data.shape_keys.key_blocks] == ["Basis", "Collision Response"]
    assert grid.collision_response.enabled
    grid.collision_response.colliders.add().obj = ball  # with one, it bakes
    assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    assert "Collision Response 0080" in grid.data.shape_keys.key_blocks
