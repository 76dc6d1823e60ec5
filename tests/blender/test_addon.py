"""The add-on as an animator uses it: enable, play, scrub, change settings, bake, save."""

import sys

import bpy
import numpy as np
import pytest
from benchmark_frame import scene_with as benchmark_scene

from primitives import grid_and_ball, scene_with_grid


@pytest.fixture
def scene(addon):
    """A 33 x 33 grid and a ball keyed to sink 10 cm into it over frames 1-20."""
    yield grid_and_ball(30, {1: 0.5, 20: 0.3})
    bpy.ops.wm.read_homefile(use_empty=True)


def response(grid) -> np.ndarray:
    key = grid.data.shape_keys.key_blocks["Collision Response"]
    positions = np.empty(len(key.data) * 3, dtype=np.float32)
    key.data.foreach_get("co", positions)
    return positions.reshape(-1, 3)


def evaluated(grid) -> np.ndarray:
    mesh = grid.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    positions = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", positions)
    return positions.reshape(-1, 3)


def play(scene, frames) -> dict[int, np.ndarray]:
    shapes = {}
    for frame in frames:
        scene.frame_set(frame)
        shapes[frame] = response(bpy.data.objects["Grid"]).copy()
    return shapes


def test_enable_then_play_dents_the_grid_where_the_ball_is(scene):
    scene, grid, ball = scene
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    settings = grid.collision_response
    assert settings.enabled and [c.obj for c in settings.colliders] == [ball]
    shapes = play(scene, range(1, 31))
    assert np.abs(shapes[1][:, 2]).max() == 0.0  # the start frame is the rest shape
    # Every vertex is out of the ball (within its tessellation), and the dent reaches at
    # least the ball's bottom, 10 cm down (coarse levels may give way a little further).
    distance = np.linalg.norm(shapes[30] - np.array(ball.location), axis=1)
    assert distance.min() > 0.4 * 0.985
    assert shapes[30][:, 2].min() < 0.3 - 0.4 + 1e-3
    assert (np.abs(shapes[30][:, 2]) > 1e-3).mean() > 0.2  # coarse levels spread it widely


def test_the_shape_at_a_frame_is_the_same_whatever_the_scrubbing_path(scene):
    scene, grid, _ = scene
    bpy.ops.object.collision_response_enable()
    reference = play(scene, range(1, 31))
    rng = np.random.default_rng(3)
    for frame in rng.integers(1, 31, 25):  # back and forth
        scene.frame_set(int(frame))
        np.testing.assert_array_equal(response(grid), reference[int(frame)])
    grid.collision_response.friction = 0.0  # a "change" to the same value still restarts
    scene.frame_set(25)  # a jump past the cache simulates forward from the start
    np.testing.assert_array_equal(response(grid), reference[25])


def test_a_long_shot_scrubs_exactly_and_keeps_only_what_moved(addon):
    """100 frames (past several checkpoints of the played-frames cache): a ball sinks, slides
    and holds. Scrubbed at random, every frame shows exactly what it showed when played, and
    the cache holds what moved, not a copy of the mesh a frame (issue 17)."""
    scene, grid = scene_with_grid(100)
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.4, location=(0, 0, 0.5))
    ball = bpy.context.active_object
    for frame, location in ((1, (0, 0, 0.5)), (20, (0, 0, 0.3)), (45, (0.3, 0, 0.3))):
        ball.location = location
        ball.keyframe_insert("location", frame=frame)
    ball.select_set(True)
    grid.select_set(True)
    bpy.context.view_layer.objects.active = grid
    bpy.ops.object.collision_response_enable()
    reference = play(scene, range(1, 101))
    rng = np.random.default_rng(5)
    for frame in [100, *rng.integers(1, 101, 40), 33, 34, 35, 64, 65, 97]:
        scene.frame_set(int(frame))
        np.testing.assert_array_equal(response(grid), reference[int(frame)])
    played = sys.modules[addon.__name__ + ".blender.simulation"].get(grid).frames
    whole = reference[1].nbytes
    assert len(played) == 100
    # Each frame costs the rows that changed since the frame before (16 bytes: index and
    # position), or a whole copy where that is less, and every 32nd frame is whole.
    bound = 0
    for frame in range(1, 101):
        changed = np.count_nonzero((reference[frame] != reference.get(frame - 1, np.nan)).any(axis=1))
        bound += whole if (frame - 1) % 32 == 0 else min(whole, 16 * changed)
    assert played.nbytes <= bound
    held = sum(not (reference[f] != reference[f - 1]).any() for f in range(2, 101))
    assert held >= 10  # frames where nothing moved cost nothing:
    assert played.nbytes <= (100 - held + 4) * whole  # a whole copy a frame before
    bpy.ops.wm.read_homefile(use_empty=True)


def test_enable_builds_the_simulation_once(scene, addon):
    """Enable builds the simulation and shows the frame; the frames played next step it, they
    do not build it again (its own key, written by Enable, read as an edit of the mesh: 1.1 s
    at a million vertices, thrown away)."""
    scene, grid, _ = scene
    simulation = sys.modules[addon.__name__ + ".blender.simulation"]
    bpy.ops.object.collision_response_enable()
    built = simulation.get(grid)
    assert built is not None and built.head == 1
    for frame in range(2, 6):
        scene.frame_set(frame)
        assert simulation.get(grid) is built and built.head == frame


def test_changing_a_setting_restarts_the_response(scene):
    scene, grid, _ = scene
    bpy.ops.object.collision_response_enable()
    before = play(scene, range(1, 31))[30]
    tree = grid.collision_response.curves
    for point in tree.nodes["absorption"].mapping.curves[0].points:
        point.location = (point.location[0], 0.0)  # all on the finest level: local response
    scene.frame_set(1)
    after = play(scene, range(1, 31))[30]
    assert (np.abs(after[:, 2]) > 1e-3).mean() < 0.5 * (np.abs(before[:, 2]) > 1e-3).mean()


@pytest.mark.parametrize("edit", ["moved", "turned"])
def test_moving_the_mesh_by_hand_restarts_the_response(scene, edit):
    """Played, then the grid moved up 5 cm or turned (by hand, not keyed): played again, the
    response is the one of a grid edited so before it was enabled, bit for bit. Before, the
    played frames showed the old response on the moved grid (a vertex 10 cm inside the ball)."""

    def edited(grid):
        if edit == "moved":
            grid.location.z += 0.05
        else:
            grid.rotation_euler.x += 0.1
        bpy.context.view_layer.update()  # as the interface does after an edit

    scene, grid, _ = scene
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    play(scene, range(1, 31))
    scene.frame_set(1)
    edited(grid)
    replayed = play(scene, range(1, 31))
    scene, grid, _ = grid_and_ball(30, {1: 0.5, 20: 0.3})  # the same scene made afresh
    edited(grid)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    fresh = play(scene, range(1, 31))
    for frame in (15, 20, 30):
        assert np.array_equal(replayed[frame], fresh[frame]), frame


def test_a_linked_copy_of_the_scene_plays_the_same_response(scene):
    """Scene > New > Linked Copy right after Enable shares the grid and the ball: played
    there, the ball dents the grid 10 cm, and back in the first scene every frame is the same,
    bit for bit. Before, each frame of the copy raised a traceback in the frame handler (its
    collision helper was linked into the first scene only), the grid stayed flat and the ball
    stopped where it was."""
    scene, grid, _ = scene
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    assert bpy.ops.scene.new(type="LINK_COPY") == {"FINISHED"}
    copy = bpy.context.window.scene
    assert copy != scene and grid.name in copy.objects
    copied = play(copy, range(1, 21))
    assert copied[20][:, 2].min() < -0.09
    bpy.context.window.scene = scene
    for frame, shape in play(scene, range(1, 21)).items():
        assert np.array_equal(shape, copied[frame]), frame


def test_bake_plays_without_the_add_on_and_free_bake_returns_to_live(scene):
    scene, grid, _ = scene
    bpy.ops.object.collision_response_enable()
    live = play(scene, range(1, 31))
    counts = []  # keys on the mesh at each frame of the bake
    counter = lambda *_args: counts.append(len(grid.data.shape_keys.key_blocks))  # noqa: E731
    bpy.app.handlers.frame_change_post.append(counter)
    try:
        assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    finally:
        bpy.app.handlers.frame_change_post.remove(counter)
    # The keys are made at the end: a key added each frame would make Blender copy every key
    # so far at each frame after (a bake's time grew with the square of its length).
    assert len(counts) >= 30 and max(counts[:30]) == 2  # the Basis and the live key, frames 1-30
    keys = grid.data.shape_keys.key_blocks
    assert "Collision Response" not in keys and "Collision Response 0017" in keys
    assert not grid.collision_response.enabled
    for frame in (5, 17, 30):
        scene.frame_set(frame)
        np.testing.assert_allclose(evaluated(grid), live[frame], atol=1e-6)
    assert bpy.ops.object.collision_response_free_bake() == {"FINISHED"}
    assert [k.name for k in grid.data.shape_keys.key_blocks] == ["Basis", "Collision Response"]
    scene.frame_set(30)
    np.testing.assert_array_equal(response(grid), live[30])


def test_basis_and_the_users_shape_keys_are_never_touched(scene):
    scene, grid, _ = scene
    grid.shape_key_add(name="Basis")
    smile = grid.shape_key_add(name="Smile")
    smile.data[5].co.z = 0.25
    saved = {k.name: np.array([v.co[:] for v in k.data]) for k in grid.data.shape_keys.key_blocks}
    bpy.ops.object.collision_response_enable()
    play(scene, range(1, 31))
    bpy.ops.object.collision_response_bake()
    bpy.ops.object.collision_response_free_bake()
    bpy.ops.object.collision_response_disable()
    keys = grid.data.shape_keys.key_blocks
    assert [k.name for k in keys] == ["Basis", "Smile"]
    for key in keys:
        np.testing.assert_array_equal(np.array([v.co[:] for v in key.data]), saved[key.name])


def test_settings_survive_save_and_reload(scene, tmp_path):
    scene, grid, _ = scene
    bpy.ops.object.collision_response_enable()
    grid.collision_response.friction = 0.25
    first = play(scene, range(1, 31))[30]
    path = str(tmp_path / "saved.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    grid = bpy.data.objects["Grid"]
    settings = grid.collision_response
    assert settings.enabled and settings.friction == pytest.approx(0.25)
    assert [c.obj.name for c in settings.colliders] == ["Sphere"]
    assert settings.curves is not None and "absorption" in settings.curves.nodes
    bpy.context.scene.frame_set(1)
    again = play(bpy.context.scene, range(1, 31))[30]
    np.testing.assert_array_equal(again, first)


def test_bad_input_gives_messages_not_tracebacks(scene):
    scene, grid, ball = scene
    bpy.context.view_layer.objects.active = ball
    ball.select_set(False)
    bpy.ops.object.empty_add()
    empty = bpy.context.active_object
    assert not bpy.ops.object.collision_response_enable.poll()  # not a mesh
    bpy.ops.mesh.primitive_plane_add()
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.delete(type="ONLY_FACE")
    bpy.ops.object.mode_set(mode="OBJECT")
    with pytest.raises(RuntimeError, match="no faces"):
        bpy.ops.object.collision_response_enable()  # reported as an error, the operator cancels
    # A deleted collider, and a mesh edited while cached: reported or restarted, never raised.
    bpy.context.view_layer.objects.active = grid
    grid.select_set(True)
    bpy.ops.object.collision_response_enable()
    play(scene, range(1, 10))
    bpy.data.objects.remove(ball)
    scene.frame_set(10)
    bpy.data.objects.remove(empty)
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.subdivide()
    bpy.ops.object.mode_set(mode="OBJECT")
    scene.frame_set(11)
    assert len(response(grid)) == len(grid.data.vertices)


PRESETS = ["Rubber", "Soft Clay", "Stiff Shell", "Slime", "Flesh"]


def run_preset(scene, grid, ball, preset) -> dict[int, np.ndarray]:
    """Apply a shipped preset as the menu does, press 20 frames, lift the ball, 40 more."""
    bpy.context.view_layer.objects.active = grid
    bpy.ops.object.collision_response_enable()
    path = bpy.utils.preset_find(preset, "collision_response")
    assert path, f"preset {preset!r} not found"
    bpy.ops.script.execute_preset(filepath=path, menu_idname="COLLISION_RESPONSE_MT_presets")
    ball.keyframe_insert("location", frame=21)
    ball.location.z = 1.5  # gone at frame 22
    ball.keyframe_insert("location", frame=22)
    return play(scene, range(1, 61))


@pytest.fixture
def responses(scene):
    scene, grid, ball = scene
    return {preset: run_preset(scene, grid, ball, preset) for preset in PRESETS}


def test_each_preset_gives_a_different_response(responses):
    for a in PRESETS:
        for b in PRESETS:
            if a < b:
                difference = max(np.abs(responses[a][f] - responses[b][f]).max() for f in (10, 20, 30, 60))
                assert difference > 0.01, (a, b, difference)


def test_presets_do_what_their_names_say(responses):
    depth = {p: -responses[p][20][:, 2].min() for p in PRESETS}  # deepest point while pressed
    kept = {p: -responses[p][60][:, 2].min() for p in PRESETS}  # 1.6 s after the ball left
    # How evenly the whole grid moves: mean displacement over the deepest (1: all of it as one).
    spread = {p: np.abs(responses[p][20][:, 2]).mean() / depth[p] for p in PRESETS}
    assert kept["Soft Clay"] > 0.8 * depth["Soft Clay"]  # plastic: the dent stays
    assert kept["Slime"] > 0.5 * depth["Slime"]
    assert kept["Rubber"] < 0.02 * depth["Rubber"] and kept["Stiff Shell"] < 0.02 * depth["Stiff Shell"]
    assert spread["Stiff Shell"] > spread["Rubber"] > spread["Soft Clay"]  # global to local
    assert responses["Flesh"][20][:, 2].max() > 0.005  # it bulges up around the press
    # The ball reaches the sheet at frame 10: four frames later, slime has followed less.
    assert -responses["Slime"][14][:, 2].min() < 0.7 * -responses["Rubber"][14][:, 2].min()


def test_the_headless_bake_command_bakes_a_saved_file(scene, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    scene, grid, _ = scene
    bpy.ops.object.collision_response_enable()
    live = play(scene, range(1, 31))
    source, output = tmp_path / "shot.blend", tmp_path / "baked.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source))
    tool = Path(__file__).resolve().parents[2] / "tools" / "bake.py"
    command = [sys.executable, str(tool), str(source), "--object", "Grid", "--frames", "1-30", "--output", str(output)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    bpy.ops.wm.open_mainfile(filepath=str(output))
    grid = bpy.data.objects["Grid"]
    assert "Collision Response 0030" in grid.data.shape_keys.key_blocks
    for frame in (12, 30):
        bpy.context.scene.frame_set(frame)
        np.testing.assert_allclose(evaluated(grid), live[frame], atol=1e-6)
    bad = subprocess.run([*command[:4], "Nothing", *command[5:]], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and "no mesh object named 'Nothing'" in bad.stderr


def test_a_behaviour_map_freezes_the_half_painted_0_but_never_lets_the_ball_through(scene):
    """A damping map with the left half painted 0 (speed 0): the left half's coarse levels
    never give way, so only the vertices the ball reaches move there, each onto the ball's
    surface; the unpainted half (weight 1) gives way around the ball too."""
    scene, grid, ball = scene
    left_half = grid.vertex_groups.new(name="Left")
    left_half.add([v.index for v in grid.data.vertices if v.co.x <= 0], 0.0, "REPLACE")
    bpy.ops.object.collision_response_enable()
    settings = grid.collision_response
    # No absorption on level 0 (the four corners): its cells would carry the right half's
    # give into the left; every finer level's cells stop at the middle line.
    settings.profiles = {"absorption": [0.0, 0.5], "response_time": [0.1, 0.1]}
    settings.response_time_group = "Left"
    facets = 0.4 * (1 - np.cos(np.pi / 32) ** 2)  # how far the 32 x 16 UV sphere lies inside the true one
    for frame in range(1, 31):  # every frame: nothing inside the ball
        scene.frame_set(frame)
        centre = np.array(ball.matrix_world.translation)
        assert (np.linalg.norm(response(grid) - centre, axis=1) > 0.4 - facets).all()
    shapes = {30: response(grid)}
    rest = np.array([v.co for v in grid.data.vertices])
    moved = np.abs(shapes[30][:, 2] - rest[:, 2]) > 1e-6
    footprint = np.linalg.norm(rest[:, :2] - centre[:2], axis=1) < np.sqrt(0.4**2 - 0.3**2) + 0.01
    left, painted = rest[:, 0] < -0.02, rest[:, 0] > 0.02
    assert moved[left].any() and not (moved & left & ~footprint).any()  # only what the ball reaches
    assert (moved & painted & ~footprint).sum() > 50  # the painted half gave way around it


def render_animation(scene, first: int, last: int, remember, folder) -> None:
    """Render frames ``first`` to ``last`` as an animation (Cycles, one sample, 32 x 32, from
    a new camera), with ``remember(scene)`` called after each frame is rendered."""
    bpy.ops.object.camera_add(location=(0, -4, 3), rotation=(0.9, 0, 0))
    scene.camera = bpy.context.active_object
    bpy.app.handlers.render_post.append(remember)
    try:
        scene.render.engine = "CYCLES"
        scene.cycles.samples = 1
        scene.render.resolution_x, scene.render.resolution_y = 32, 32
        scene.frame_start, scene.frame_end = first, last
        scene.render.filepath = str(folder / "frame_")
        bpy.ops.render.render(animation=True)
    finally:
        bpy.app.handlers.render_post.remove(remember)


def test_an_animation_render_shows_what_playback_shows(scene, tmp_path):
    scene, grid, _ = scene
    bpy.ops.object.collision_response_enable()
    live = play(scene, range(1, 31))
    seen = {}

    def remember(render_scene, *_):  # what the renderer evaluated at each frame
        mesh = grid.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        positions = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", positions)
        seen[render_scene.frame_current] = positions.reshape(-1, 3)

    render_animation(scene, 14, 17, remember, tmp_path)
    assert sorted(seen) == [14, 15, 16, 17]
    for frame, positions in seen.items():
        np.testing.assert_allclose(positions, live[frame], atol=1e-6)


def test_a_render_of_frames_never_played_simulates_them_as_playback_does(scene, tmp_path):
    """The render hands the frame-change handler a depsgraph of its own: the frames it reaches
    first are still simulated (in the view layer's), to the same shapes as playback."""
    scene, grid, _ = scene
    bpy.ops.object.collision_response_enable()
    seen = {}

    def remember(render_scene, *_):
        seen[render_scene.frame_current] = response(grid).copy()

    render_animation(scene, 14, 16, remember, tmp_path)
    grid.collision_response.friction = 0.0  # restarts: playback simulates afresh
    scene.frame_set(1)
    live = play(scene, range(1, 17))
    assert sorted(seen) == [14, 15, 16] and live[16][:, 2].min() < -0.05
    for frame, positions in seen.items():
        np.testing.assert_array_equal(positions, live[frame])


def test_a_linked_mesh_is_reported_not_written(scene, tmp_path):
    library = str(tmp_path / "library.blend")
    bpy.ops.wm.save_as_mainfile(filepath=library)
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(library, link=True) as (_, target):
        target.objects = ["Grid"]
    linked = target.objects[0]
    bpy.context.scene.collection.objects.link(linked)
    bpy.context.view_layer.objects.active = linked
    with pytest.raises(RuntimeError, match="linked from another file"):
        bpy.ops.object.collision_response_enable()


def test_a_deep_press_into_a_fine_grid_keeps_the_surface_unfolded(addon):
    """The whole-frame benchmark's scene with the default settings: a ball sinks 8 cm over 15
    frames into a 2 m grid of 257 x 257 vertices (7.8 mm apart). The dent must stay a dent:
    every normal facing up, nothing sliding sideways further than the ball's contact allows."""
    scene, grid, _ = benchmark_scene(256)
    grid.select_set(True)  # with the ball
    bpy.context.view_layer.objects.active = grid
    bpy.ops.object.collision_response_enable()
    for frame in range(1, 17):
        scene.frame_set(frame)
    rest = np.empty(len(grid.data.vertices) * 3, dtype=np.float32)
    grid.data.vertices.foreach_get("co", rest)
    dent = response(grid)
    sideways = np.linalg.norm((dent - rest.reshape(-1, 3))[:, :2], axis=1)
    mesh = grid.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    normals = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertex_normals.foreach_get("vector", normals)
    assert dent[:, 2].min() == pytest.approx(-0.08, abs=0.01)  # as deep as the ball goes
    assert normals.reshape(-1, 3)[:, 2].min() > 0.5  # no fold (it was -1.0, upside down)
    assert sideways.max() < 0.05  # it was 2.8 m


def test_a_deep_press_into_a_fine_grid_sliding_under_the_ball_keeps_the_surface_unfolded(addon):
    """The benchmark's rigged scene: the same press, while an armature sways the grid 4 cm
    sideways under the ball over 30 frames (the posed path)."""
    scene, grid, _ = benchmark_scene(256, rigged=True)
    grid.select_set(True)
    bpy.context.view_layer.objects.active = grid
    bpy.ops.object.collision_response_enable()
    for frame in range(1, 31):
        scene.frame_set(frame)
    mesh = grid.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    normals = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertex_normals.foreach_get("vector", normals)
    assert normals.reshape(-1, 3)[:, 2].min() > 0.5  # today: -1.0
