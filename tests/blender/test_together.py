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
    outside: inside where the surface winds once around the point (its generalised winding
    number: exact for a closed mesh, where the side of the nearest face misjudges a point off a
    box's edge or corner), then the distance to the nearest point of the surface."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    tree = BVHTree.FromObject(obj, depsgraph)  # the evaluated mesh, in its object space
    mesh = obj.evaluated_get(depsgraph).data
    mesh.calc_loop_triangles()
    corners = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", corners)
    corners = corners.reshape(-1, 3)
    triangles = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", triangles)
    triangles = triangles.reshape(-1, 3)
    inverse = np.linalg.inv(np.array(obj.matrix_world))
    scale = np.linalg.norm(np.array(obj.matrix_world)[:3, :3], axis=0).max()
    local = points @ inverse[:3, :3].T + inverse[:3, 3]
    depths = np.zeros(len(points))
    boxed = ((local >= corners.min(axis=0)) & (local <= corners.max(axis=0))).all(axis=1)
    for i in boxed.nonzero()[0]:
        a, b, c = (corners[triangles[:, k]] - local[i] for k in range(3))
        la, lb, lc = (np.linalg.norm(e, axis=1) for e in (a, b, c))
        solid = 2 * np.arctan2(
            np.einsum("ij,ij->i", a, np.cross(b, c)),
            la * lb * lc
            + np.einsum("ij,ij->i", a, b) * lc
            + np.einsum("ij,ij->i", b, c) * la
            + np.einsum("ij,ij->i", c, a) * lb,
        )  # each triangle's signed solid angle seen from the point (Van Oosterom and Strackee)
        if solid.sum() > 2 * np.pi:  # winding number above a half
            depths[i] = tree.find_nearest(Vector(local[i]))[3] * scale
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


def closed_mesh(kind: str, size: float, rng: np.random.Generator) -> bpy.types.Object:
    """A closed convex mesh about ``size`` in radius: a UV sphere or an ico sphere of random
    resolution, or a cube subdivided 3-7 times (flat faces, sharp edges and corners)."""
    if kind == "uv":
        bpy.ops.mesh.primitive_uv_sphere_add(
            segments=int(rng.integers(16, 40)), ring_count=int(rng.integers(8, 20)), radius=size
        )
    elif kind == "ico":
        bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=int(rng.integers(2, 4)), radius=size)
    else:
        bpy.ops.mesh.primitive_cube_add(size=1.6 * size)
        bpy.ops.object.mode_set(mode="EDIT")
        bpy.ops.mesh.subdivide(number_cuts=int(rng.integers(3, 8)))
        bpy.ops.object.mode_set(mode="OBJECT")
    return bpy.context.active_object


def random_pair(seed: int, first: str, last: int):
    """Two random closed meshes soft against each other (random stiffness), the second
    coming at the first from a random direction until the balls inside each (their faces'
    nearest planes to the centre) overlap by 10-40 % of the smaller size, sliding along it,
    easing out and leaving, the first backing off; ``first`` made first. Returns the scene,
    the meshes by name, their rest positions and the deepest any vertex can be in the other."""
    rng = np.random.default_rng(seed)
    scene, grid = scene_with_grid(last)
    bpy.data.objects.remove(grid)
    kinds = {name: (str(rng.choice(["uv", "ico", "cube"])), float(rng.uniform(0.3, 0.6))) for name in "AB"}
    direction, side = rng.normal(size=3), rng.normal(size=3)
    direction /= np.linalg.norm(direction)
    side -= (side @ direction) * direction
    side /= np.linalg.norm(side)
    overlap, slide, back = (float(x) for x in rng.uniform(0, 1, 3))
    meshes = {}
    for name in sorted("AB", key=lambda n: n != first):
        meshes[name] = closed_mesh(*kinds[name], np.random.default_rng(seed * 7 + (name == "B")))
        meshes[name].name = meshes[name].data.name = name
    rest = {name: np.array([v.co for v in mesh.data.vertices]) for name, mesh in meshes.items()}

    def inside_radius(mesh) -> float:
        return min(abs(p.normal.dot(mesh.data.vertices[p.vertices[0]].co)) for p in mesh.data.polygons)

    smaller = min(size for _kind, size in kinds.values())
    meet = inside_radius(meshes["A"]) + inside_radius(meshes["B"]) - (0.1 + 0.3 * overlap) * smaller
    apart = sum(float(np.linalg.norm(r, axis=1).max()) for r in rest.values())
    sideways = side * 0.5 * slide * smaller
    keys = [1, int(rng.integers(8, 14)), int(rng.integers(16, 22)), int(rng.integers(24, 28)), last]
    path = [apart + 0.05, meet, meet, (meet + apart) / 2, apart + 0.05]
    keyed(
        meshes["B"],
        {k: tuple(direction * d + sideways * (i in (2, 3))) for i, (k, d) in enumerate(zip(keys, path, strict=True))},
    )
    keyed(meshes["A"], {1: (0, 0, 0), last: tuple(-direction * 0.3 * back * smaller)})
    scene.frame_set(1)
    select(meshes[first], [meshes["B" if first == "A" else "A"]])
    assert bpy.ops.object.collision_response_soft_pair() == {"FINISHED"}
    for name in "AB":  # (by name: the same draws whichever was made first)
        meshes[name].collision_response.stiffness = float(rng.uniform(0.5, 3.0))
    return scene, meshes, rest, apart - meet


@pytest.mark.parametrize("seed", range(12))
def test_random_soft_pairs_keep_out_of_each_other_whatever_blender_updates_first(seed):
    """Random closed meshes (spheres of any resolution, subdivided cubes: a corner pressed into
    a face) soft against each other on random paths: every frame neither is inside the other
    by more than 1e-3 of its size, no vertex has moved from its rest further than the deepest
    any vertex could be in the other (no runaway), and made in either order the two play the
    same bits."""
    last = 30
    played = []
    for first in "AB":
        scene, meshes, rest, deepest = random_pair(seed, first, last)
        sizes = {name: float(np.linalg.norm(r, axis=1).max()) for name, r in rest.items()}
        frames: dict[str, list[np.ndarray]] = {name: [] for name in meshes}
        moved = 0.0
        for frame in range(1, last + 1):
            scene.frame_set(frame)
            for name, mesh in meshes.items():
                positions = evaluated(mesh)
                frames[name].append(positions)
                other = "B" if name == "A" else "A"
                depth = depth_inside(meshes[other], positions).max()
                assert depth <= 1e-3 * sizes[other], f"frame {frame}: '{name}' {depth:.5f} inside '{other}'"
                matrix = np.array(mesh.matrix_world)
                local = (positions - matrix[:3, 3]) @ np.linalg.inv(matrix[:3, :3]).T
                moved = max(moved, float(np.linalg.norm(local - rest[name], axis=1).max()))
        print(f"first {first}: moved at most {moved / deepest:.2f} of the deepest overlap ({deepest:.3f})")
        assert 0 < moved <= deepest
        played.append(frames)
        bpy.ops.wm.read_homefile(use_empty=True)
    for name in "AB":
        for frame in range(last):
            assert np.array_equal(played[0][name][frame], played[1][name][frame]), (name, frame + 1)
