"""Two responding meshes soft against each other (issue 20), in real Blender, played as a
user plays: neither ends inside the other's evaluated surface, each takes its share of the
overlap by stiffness, and the result does not depend on which one Blender updates first."""

import bpy
import numpy as np
import pytest
from mathutils import Vector
from mathutils.bvhtree import BVHTree
from test_contact_holds import evaluated, keyed
from test_structure import select, uv_sphere

from primitives import scene_with_grid


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def depth_inside(obj, points: np.ndarray) -> np.ndarray:
    """How far each world point is inside ``obj``'s evaluated (dented) closed surface, 0 where
    outside: the distance to the nearest point of the surface, where the point lies behind
    that face."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    tree = BVHTree.FromObject(obj, depsgraph)  # the evaluated mesh, in its object space
    inverse = np.linalg.inv(np.array(obj.matrix_world))
    scale = np.linalg.norm(np.array(obj.matrix_world)[:3, :3], axis=0).max()
    local = points @ inverse[:3, :3].T + inverse[:3, 3]
    depths = np.zeros(len(points))
    for i, point in enumerate(local):
        location, normal, _index, distance = tree.find_nearest(Vector(point))
        if location is not None and (Vector(point) - location).dot(normal) < 0:
            depths[i] = distance * scale
    return depths


def two_balls(last: int, names=("Left", "Right"), first="Left"):
    """Two soft balls (UV spheres of radius 0.5) moving toward each other along x until they
    overlap by 0.3, then sliding past each other in y; ``first`` is made first (Blender's
    lists then hold it first): returns the scene and the balls by name."""
    scene, grid = scene_with_grid(last)
    bpy.data.objects.remove(grid)
    paths = {
        "Left": {1: (-0.6, 0, 0), last // 2: (-0.35, 0, 0), last: (-0.35, 0.1, 0)},
        "Right": {1: (0.6, 0, 0), last // 2: (0.35, 0, 0), last: (0.35, -0.1, 0)},
    }
    balls = {}
    for name in sorted(names, key=lambda n: n != first):
        ball = uv_sphere(0.5, segments=32, rings=16)
        ball.name = ball.data.name = name
        keyed(ball, paths[name])
        balls[name] = ball
    scene.frame_set(1)
    return scene, balls


def soft_pair(balls, active="Left") -> None:
    others = [b for name, b in balls.items() if name != active]
    select(balls[active], others)
    assert bpy.ops.object.collision_response_soft_pair() == {"FINISHED"}
    for ball in balls.values():
        assert ball.collision_response.enabled
        ball.collision_response.profiles = {"absorption": [0.0, 0.3, 0.5, 1.0]}


def play(scene, balls, last: int) -> dict[str, list[np.ndarray]]:
    """Frames 1..last; every frame, neither ball inside the other by more than 1e-3 of its
    size (radius 0.5). Returns each ball's evaluated world positions per frame."""
    frames: dict[str, list[np.ndarray]] = {name: [] for name in balls}
    for frame in range(1, last + 1):
        scene.frame_set(frame)
        for name, ball in balls.items():
            positions = evaluated(ball)
            frames[name].append(positions)
            for other_name, other in balls.items():
                if other is not ball:
                    deepest = depth_inside(other, positions).max()
                    assert deepest <= 1e-3 * 0.5, f"frame {frame}: '{name}' {deepest:.5f} inside '{other_name}'"
    return frames


def test_two_soft_balls_pressed_together_share_the_overlap_and_neither_gets_in():
    last = 24
    scene, balls = two_balls(last)
    soft_pair(balls)
    frames = play(scene, balls, last)
    # Each took half the 0.3 overlap: both meet at the plane between their centres (x = 0),
    # within a vertex's reach between the other's (their faces are not their vertices).
    left, right = frames["Left"][last // 2 - 1], frames["Right"][last // 2 - 1]
    print(f"left reaches x {left[:, 0].max():.4f}, right {right[:, 0].min():.4f}")
    assert abs(left[:, 0].max()) < 0.01 and abs(right[:, 0].min()) < 0.01


def test_the_stiffer_ball_takes_less_of_the_overlap():
    """Stiffness 3 against 1: the stiffer ball takes a quarter of the 0.3 overlap (0.075),
    the softer three quarters (0.225), and they meet there."""
    last = 24
    scene, balls = two_balls(last)
    soft_pair(balls)
    balls["Left"].collision_response.stiffness = 3.0
    frames = play(scene, balls, last)
    left, right = frames["Left"][last // 2 - 1], frames["Right"][last // 2 - 1]
    on_axis = (right[:, 1:] ** 2).sum(axis=1) < 0.05**2  # the right ball's front, facing the left's
    print(f"left reaches x {left[:, 0].max():.4f}, right {right[on_axis, 0].min():.4f}")
    meeting = -0.35 + 0.5 - 0.075  # the left ball's rest front, less its quarter
    assert abs(left[:, 0].max() - meeting) < 0.005 and abs(right[on_axis, 0].min() - meeting) < 0.005


def test_the_result_does_not_depend_on_which_ball_blender_updates_first():
    """The same scene made in either order (Blender's frame change then reaches the balls in
    that order), scrubbed back and forth: the same bits every frame."""
    last = 20
    played = []
    for first in ("Left", "Right"):
        scene, balls = two_balls(last, first=first)
        assert next(o.name for o in scene.objects) == first  # the frame change reaches it first
        soft_pair(balls, active=first)
        frames = play(scene, balls, last)
        for frame in (7, 15, 3, last):  # scrubbed: cached frames, the same bits
            scene.frame_set(frame)
            for name, ball in balls.items():
                assert np.array_equal(evaluated(ball), frames[name][frame - 1])
        played.append(frames)
        bpy.ops.wm.read_homefile(use_empty=True)
    for name in ("Left", "Right"):
        for frame in range(last):
            assert np.array_equal(played[0][name][frame], played[1][name][frame]), (name, frame + 1)
    moved = np.abs(played[0]["Left"][last // 2] - played[0]["Left"][0] - [0.25, 0, 0]).max()
    assert moved > 0.1  # dented, not merely carried


def test_a_soft_ball_bakes_what_it_played():
    """Baked to shape keys, the left ball plays what it played live with its partner."""
    last = 16
    scene, balls = two_balls(last)
    soft_pair(balls)
    live = play(scene, balls, last)
    select(balls["Left"], [])
    assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    assert not balls["Left"].collision_response.enabled
    for frame in (4, 8, last):
        scene.frame_set(frame)
        np.testing.assert_allclose(evaluated(balls["Left"]), live["Left"][frame - 1], atol=1e-6)


@pytest.mark.parametrize("partner_first", [True, False])
def test_a_partner_arriving_at_a_ball_already_pressed_by_a_cube_does_not_push_it_through(partner_first):
    """The right ball is pressed on its top by a rigid cube before the left ball reaches it,
    its partner listed before the cube or after: the partner's side is judged where it
    arrives, not from the top where the cube presses (judged there, it pushed the ball's
    front 1 m through the partner). Every frame: neither ball inside the other, the right
    one not inside the cube, beyond 1e-3 of their sizes; the cube's dent is made."""
    last = 24
    scene, balls = two_balls(last)
    bpy.ops.mesh.primitive_cube_add(size=0.4)
    cube = bpy.context.active_object
    keyed(cube, {1: (0.6, 0, 0.75), last: (0.35, 0, 0.38)})
    right = balls["Right"]
    if partner_first:
        soft_pair(balls)
        select(right, [cube])
        assert bpy.ops.object.collision_response_collider_add() == {"FINISHED"}
    else:
        select(right, [cube])
        assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
        soft_pair(balls)
    names = [item.obj.name for item in right.collision_response.colliders]
    assert names == (["Left", cube.name] if partner_first else [cube.name, "Left"])
    frames = play(scene, balls, last)  # neither ball inside the other, every frame
    for frame in range(1, last + 1):
        scene.frame_set(frame)
        points = frames["Right"][frame - 1]
        assert depth_inside(cube, points).max() <= 1e-3 * 0.35, frame
        assert np.abs(points - frames["Right"][0]).max() < 0.6, frame  # no vertex thrown across
    top = frames["Right"][0][:, 2].argmax()  # the cube came down on it: it rests under the cube
    assert frames["Right"][-1][top, 2] <= 0.38 - 0.2 + 1e-3
