"""Interior structure and a container (issue 20), in real Blender, played as a user plays:
a skin pressed by a ball onto an animated bone under it stays outside both, every frame; a
mesh pushed outward inside a container stays in it, every frame."""

import bpy
import numpy as np
import pytest
from test_contact_holds import evaluated, inside_depth, keyed

from primitives import scene_with_grid

#: The bone's size as the tolerance measures it: half its longest side.
BONE_SIZE = 0.6


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def uv_sphere(radius: float, location=(0, 0, 0), segments=32, rings=16) -> bpy.types.Object:
    bpy.ops.mesh.primitive_uv_sphere_add(segments=segments, ring_count=rings, radius=radius, location=location)
    return bpy.context.active_object


def select(active, others) -> None:
    bpy.ops.object.select_all(action="DESELECT")
    for obj in others:
        obj.select_set(True)
    active.select_set(True)
    bpy.context.view_layer.objects.active = active


def skin_ball_and_bone(last: int, gap: float = 0.05):
    """A skin (a UV sphere of radius 1) over a bone (a box 1.2 long, 0.4 thick) sliding 0.5
    along its length, so its end pushes 0.1 past the skin's rest shape, and a ball (radius
    0.4) pressing the skin onto the bone's side from +y until ``gap`` from it, then sliding
    along it: the skin is squeezed between them, and carried over the bone's end."""
    scene, grid = scene_with_grid(last)
    bpy.data.objects.remove(grid)
    skin = uv_sphere(1.0, segments=48, rings=24)
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    bone = bpy.context.active_object
    bone.scale = (1.2, 0.4, 0.4)
    keyed(bone, {1: (0, 0, 0), last: (0.5, 0, 0)})
    ball = uv_sphere(0.4, segments=48, rings=24)
    low = 0.2 + gap + 0.4  # the ball's centre height where it is ``gap`` from the bone's top face
    keyed(ball, {1: (0, 1.6, 0), last // 2: (0, low, 0), last: (0.3, low, 0)})
    scene.frame_set(1)
    return scene, skin, bone, ball


def play(scene, skin, last: int, check) -> list[np.ndarray]:
    frames = []
    for frame in range(1, last + 1):
        scene.frame_set(frame)
        positions = evaluated(skin)
        check(frame, positions)
        frames.append(positions)
    return frames


def test_a_skin_pressed_onto_a_moving_bone_stays_outside_the_bone_and_the_ball():
    last = 30
    scene, skin, bone, ball = skin_ball_and_bone(last)
    select(skin, [ball])
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    select(skin, [bone])
    assert bpy.ops.object.collision_response_interior_add() == {"FINISHED"}
    assert [item.obj for item in skin.collision_response.interiors] == [bone]
    skin.collision_response.profiles = {"absorption": [0.3, 0.3, 0.3, 0.5, 0.5, 1.0]}  # coarse levels spread
    deepest = {"bone": 0.0, "ball": 0.0}

    def check(frame, positions):
        in_bone = inside_depth(bone, positions).max()
        in_ball = inside_depth(ball, positions).max()
        deepest["bone"], deepest["ball"] = max(deepest["bone"], in_bone), max(deepest["ball"], in_ball)
        assert in_bone <= 1e-3 * BONE_SIZE, f"frame {frame}: {in_bone:.5f} inside the bone"
        assert in_ball <= 1e-3 * 0.4, f"frame {frame}: {in_ball:.5f} inside the ball"

    frames = play(scene, skin, last, check)
    # The ball pressed the skin from y = 0.76 under its last place down onto its bottom, 0.05
    # over the bone: the skin lies on the ball...
    centre = np.array(ball.matrix_world.translation)
    assert 0.39 <= np.linalg.norm(frames[-1] - centre, axis=1).min() <= 0.4 + 0.01  # (its faces lie within 0.4)
    # ... and the bone's end carried it 0.1 past its rest shape (r = 1).
    assert max(np.linalg.norm(f, axis=1).max() for f in frames) > 1.1 - 1e-3
    print(f"deepest inside: bone {deepest['bone']:.2e}, ball {deepest['ball']:.2e}")


@pytest.mark.parametrize("role", ["collider", "interior"])
def test_where_the_ball_presses_into_the_bone_the_bone_holds_the_skin(role):
    """The ball pressed 0.1 into the bone's side: the skin cannot be out of both. Listed as a
    collider, the bone does not hold it: the longest push wins, the ball's, and the skin
    ends inside the bone (about the overlap). As interior structure, the bone holds it: the
    skin stays on the bone, inside the ball by no more than their overlap."""
    last = 30
    scene, skin, bone, ball = skin_ball_and_bone(last, gap=-0.1)
    select(skin, [ball, bone] if role == "collider" else [ball])
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    if role == "interior":
        select(skin, [bone])
        assert bpy.ops.object.collision_response_interior_add() == {"FINISHED"}
    depths = []
    play(scene, skin, last, lambda frame, p: depths.append((inside_depth(bone, p).max(), inside_depth(ball, p).max())))
    in_bone, in_ball = np.array(depths).max(axis=0)
    if role == "collider":
        assert in_bone > 0.05, in_bone
    else:
        assert in_bone <= 1e-3 * BONE_SIZE, in_bone
        assert 0.05 < in_ball <= 0.1 + 1e-3 * 0.4, in_ball


@pytest.mark.parametrize("box_moves", [0.0, -0.1])
def test_a_mesh_pushed_out_of_its_container_stays_inside(box_moves):
    """A ball inside a skin pushes it outward, past a container (a cube) around it, still or
    moving toward the push: the skin stays inside the container, every frame, where the
    ball would take it out (a vertex resting on the wall stays on it: the ball's push did
    take it through a wall coming at it, 0.35 out)."""
    last = 30
    scene, grid = scene_with_grid(last)
    bpy.data.objects.remove(grid)
    skin = uv_sphere(0.6)
    bpy.ops.mesh.primitive_cube_add(size=1.6)  # faces at 0.8
    box = bpy.context.active_object
    box.display_type = "WIRE"
    keyed(box, {1: (0, 0, 0), last: (box_moves, 0, 0)})
    ball = uv_sphere(0.3, segments=48, rings=24)
    keyed(ball, {1: (0, 0, 0), last // 2: (0.75, 0, 0), last: (0.75, 0.2, 0.1)})  # 0.25 past the wall
    scene.frame_set(1)
    select(skin, [ball])
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    skin.collision_response.container = box
    skin.collision_response.profiles = {"absorption": [0.3, 0.3, 0.3, 0.5, 0.5, 1.0]}
    outside = []

    def check(frame, positions):
        out = -inside_depth(box, positions)  # how far outside the box
        outside.append(out.max())
        assert out.max() <= 1e-3 * 0.8, f"frame {frame}: {out.max():.5f} out of the container"

    frames = play(scene, skin, last, check)
    # The ball pressed the skin out to the wall: the skin is flat against it.
    assert max(f[:, 0].max() for f in frames) > 0.8 + box_moves - 1e-3
    print(f"furthest out of the container: {max(outside):.2e}")


@pytest.mark.parametrize("rise", [0.0, 0.001, 0.05])
def test_a_ball_pressing_the_skin_onto_a_rising_bone_leaves_it_on_the_bone(rise):
    """A ball comes down on the skin over a bone (a cylinder under the skin's top) and goes
    0.15 into the bone, while the bone rises a little: the skin stays on the bone every frame
    (a vertex resting exactly on a moving bone took the ball's push into it: 0.14 inside)."""
    last = 30
    scene, grid = scene_with_grid(last)
    bpy.data.objects.remove(grid)
    skin = uv_sphere(1.0, segments=48, rings=24)
    bpy.ops.mesh.primitive_cylinder_add(radius=0.25, depth=0.8, rotation=(0, np.pi / 2, 0))
    bone = bpy.context.active_object
    keyed(bone, {1: (0, 0, 0.5), 20: (0, 0, 0.5 + rise), last: (0, 0, 0.5 + rise)})
    ball = uv_sphere(0.4, segments=48, rings=24)
    keyed(ball, {1: (0, 0, 1.6), 20: (0, 0, 1.0), last: (0, 0, 1.0)})  # its bottom 0.15 into the bone
    scene.frame_set(1)
    select(skin, [ball])
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    select(skin, [bone])
    assert bpy.ops.object.collision_response_interior_add() == {"FINISHED"}
    size = 0.8  # the bone's length

    def check(frame, positions):
        in_bone = inside_depth(bone, positions).max()
        assert in_bone <= 1e-3 * size, f"frame {frame}: {in_bone:.5f} inside the bone"

    frames = play(scene, skin, last, check)
    top = frames[0][:, 2].argmax()
    assert frames[-1][top, 2] == pytest.approx(0.75 + rise, abs=2e-3)  # pressed down onto the bone


@pytest.mark.parametrize("seed", range(6))
def test_a_mesh_keyed_past_its_containers_wall_stays_inside(seed):
    """A mesh (a UV sphere, an icosphere, a monkey) keyed from the middle of a container (a
    turned box, or a ball) toward and past its wall, its centre up to a fifth of its size past
    it: squashed against the wall, never out of it, every frame. Before, once the centre
    passed the wall, vertices whose normals ran along it had no way back in (87 of a sphere's
    266 out, up to 8.5 cm of a 1 m box)."""
    rng = np.random.default_rng(seed)
    last = 24
    scene, grid = scene_with_grid(last)
    bpy.data.objects.remove(grid)
    kind = ("uv", "ico", "monkey")[seed % 3]
    if kind == "uv":
        mesh = uv_sphere(0.25, segments=24, rings=12)
    elif kind == "ico":
        bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.25)
        mesh = bpy.context.active_object
    else:
        bpy.ops.mesh.primitive_monkey_add(size=0.5)
        mesh = bpy.context.active_object
    way = rng.normal(size=3)
    way /= np.linalg.norm(way)
    if seed < 3:  # a turned box: its wall is where the way leaves it
        bpy.ops.mesh.primitive_cube_add(size=1.0, rotation=tuple(rng.uniform(-0.5, 0.5, 3)))
        box = bpy.context.active_object
        wall = 0.5 / np.abs(np.array(box.matrix_world)[:3, :3].T @ way).max()
    else:
        box = uv_sphere(0.6, segments=64, rings=32)
        wall = 0.6 * np.cos(np.pi / 64)  # its faces' nearest distance from the centre, about
    box.display_type = "WIRE"
    bpy.context.view_layer.update()

    def out_of(points):  # how far out of the (convex) container's faces
        return -inside_depth(box, points)

    past = wall + rng.uniform(0.0, 0.2) * 0.5
    keyed(mesh, {1: (0, 0, 0), last // 2: tuple(way * (wall - 0.3)), last: tuple(way * past)})
    scene.frame_set(1)
    select(mesh, [])
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    mesh.collision_response.container = box

    def check(frame, positions):
        out = out_of(positions).max()
        assert out <= 1e-3 * 0.5, f"{kind}, frame {frame}: {out:.5f} out of the container"

    frames = play(scene, mesh, last, check)
    assert max(out_of(f).max() for f in frames) > -1e-3  # pressed against the wall
