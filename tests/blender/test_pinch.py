"""A mesh pinched by one collider of two parts (tongs, a pincer, two fingers of one hand, an
arm bent at the elbow), and squeezed between two colliders. A collider whose centre (the
middle of its bounds) lies outside its own body can have it inside the mesh it pinches, so
its side is judged where its body is at the vertices it reaches (``core.contact.
_reached_side``): judged from the centre, both parts pressed from inside the mesh and pushed
it out through themselves (a new user's ball thrown 0.44 m through a pincer's jaws at their
first touch, 0.67 m through an arm bending to 100 degrees). A vertex pushed out of one
collider into another stops between them where the other's way out is longer than the push
(``core.contact._no_room``). Squeezed with no room left at all, the mesh goes no further
than the jaws drive it where they are two objects; one object (one press axis) still
throws it."""

import math

import bpy
import numpy as np
import pytest
from bent_tube import rigged_tube
from mathutils import Matrix, Vector
from mathutils.bvhtree import BVHTree
from test_contact_holds import evaluated
from test_secondary import apply_preset
from test_structure import select
from test_together import closed_mesh, depth_inside

from primitives import keyed, responding, scene_with_grid

PRESETS = ("Rubber", "Jelly", "Flesh", "Soft Clay", "Stiff Shell", "Belly")


@pytest.fixture(autouse=True)
def installed(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def pincer(rng: np.random.Generator, axis: np.ndarray, open_at: float, closed_at: float, last: int, joined=True):
    """Two jaws (boxes or balls) facing each other across the origin along ``axis``, their
    inner sides ``open_at`` from the middle, closed to ``closed_at`` (past each other where
    negative) by a shape key keyed from 0 to 1 and back: one object (``joined``) or two."""
    ball = bool(rng.integers(2))
    closed_by = 1 + int(rng.choice([4, 10, 16]))
    thick, tall = float(rng.uniform(0.15, 0.3)), float(rng.uniform(0.5, 1.0))
    jaws = []
    for sign in (-1, 1):
        if ball:
            bpy.ops.mesh.primitive_uv_sphere_add(radius=thick, location=(sign * (open_at + thick), 0, 0))
        else:
            bpy.ops.mesh.primitive_cube_add(size=1, location=(sign * (open_at + thick / 2), 0, 0))
            bpy.context.active_object.scale = (thick, tall, tall)
        bpy.ops.object.transform_apply(location=True, scale=True)  # (the origin at the middle)
        jaws.append(bpy.context.active_object)
    if joined:
        select(jaws[0], jaws[1:])
        bpy.ops.object.join()
        jaws = [bpy.context.active_object]
    # The jaws along ``axis``: their x turned onto it, and about it at random.
    z = np.cross(axis, rng.normal(size=3))
    z /= np.linalg.norm(z)
    turn = Matrix([[*row, 0.0] for row in np.stack([axis, np.cross(z, axis), z], axis=1)] + [[0.0, 0.0, 0.0, 1.0]])
    for obj in jaws:
        obj.matrix_world = turn
        obj.shape_key_add(name="Basis")
        closed = obj.shape_key_add(name="Closed", from_mix=False)
        for point in closed.data:
            point.co.x -= math.copysign(open_at - closed_at, point.co.x)
        for frame, value in ((1, 0.0), (closed_by, 1.0), (22, 1.0), (last, 0.0)):
            closed.value = value
            closed.keyframe_insert("value", frame=frame)
    return jaws


def pinched(seed: int, closed_share: tuple[float, float], joined: bool, last: int = 30):
    """A random closed mesh (a UV or ico sphere, a subdivided cube) between ``pincer``'s jaws,
    along a random axis, off its centre by up to a fifth of its half width, closing in 3 to 15
    frames to a random share of its half width in ``closed_share``, held, opened, with a
    random preset; enabled against the jaws. Returns the scene, the mesh, the jaws, the mesh's
    rest positions (it stands at the origin), its size and the preset's name."""
    rng = np.random.default_rng(seed)
    scene, grid = scene_with_grid(last)
    bpy.data.objects.remove(grid)
    mesh = closed_mesh(str(rng.choice(["uv", "ico", "cube"])), float(rng.uniform(0.3, 0.5)), rng)
    mesh.name = "Pinched"
    rest = np.array([v.co for v in mesh.data.vertices])
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    half = float(np.abs(rest @ axis).max())  # the mesh's half width along the jaws
    jaws = pincer(rng, axis, 1.15 * half + 0.03, float(rng.uniform(*closed_share)) * half, last, joined)
    offset = rng.normal(size=3)
    offset -= (offset @ axis) * axis
    offset *= rng.uniform(0.0, 0.2) * half / np.linalg.norm(offset)
    offset += axis * rng.uniform(-0.1, 0.1) * half
    for jaw in jaws:
        jaw.location = tuple(offset)
    scene.frame_set(1)
    select(mesh, jaws)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    preset = str(rng.choice(PRESETS))
    apply_preset(preset)
    return scene, mesh, jaws, rest, float(np.linalg.norm(np.ptp(rest, axis=0))) / 2, preset


def deepest_in(jaws, rest: np.ndarray) -> float:
    """How deep the jaws are in the mesh's rest shape."""
    return max(float(depth_inside(jaw, rest).max()) for jaw in jaws)


def play_pinched(scene, mesh, jaws, rest, last: int = 30, reached=deepest_in):
    """Every frame: how deep the mesh is in the jaws, how far it moved from rest against how
    far the jaws have ``reached`` into its rest shape so far (``deepest_in`` by default; with
    the standoff), and how far its edges stretch. Returns the deepest inside, the reach, the
    furthest moved, the largest share of the reach so far moved, the largest stretch."""
    edges = np.array([e.vertices[:] for e in mesh.data.edges])
    rest_lengths = np.linalg.norm(rest[edges[:, 0]] - rest[edges[:, 1]], axis=1)
    size = float(np.linalg.norm(np.ptp(rest, axis=0))) / 2
    inside = reach = moved = share = stretch = 0.0
    for frame in range(1, last + 1):
        scene.frame_set(frame)
        reach = max(reach, reached(jaws, rest))
        positions = evaluated(mesh)
        assert np.isfinite(positions).all()
        inside = max(inside, *(float(depth_inside(jaw, positions).max()) for jaw in jaws))
        moved = max(moved, float(np.linalg.norm(positions - rest, axis=1).max()))
        share = max(share, moved / (reach + mesh.collision_response.standoff + 1e-3 * size))
        lengths = np.linalg.norm(positions[edges[:, 0]] - positions[edges[:, 1]], axis=1)
        stretch = max(stretch, float((lengths / rest_lengths).max()))
    return inside, reach, moved, share, stretch


@pytest.mark.parametrize("seed", range(10))
def test_a_mesh_pinched_by_one_collider_of_two_parts_stays_out_of_both_and_is_not_thrown(seed):
    """A random closed mesh pinched by one object made of two jaws (``pinched``), closing to
    40-75 % of its width: every frame no vertex is inside the jaws by more than 1e-3 of the
    mesh's size, no vertex has moved from rest further than 3.5 times as far as the jaws have
    reached into its rest shape so far (with the standoff: twice the reach and the bulge of
    Flesh, Belly), and no edge is stretched past 4 times its length. Measured: at most 3.07
    times and 3.40 (Belly, bulging: 1.50 and 1.57 with the same jaws as two objects, whose
    press axes point along the squeeze where the one object's points all round), else up to
    2.42 (Flesh). Before, the first touch threw vertices 0.35-0.45 m for a reach of 1 mm."""
    scene, mesh, jaws, rest, size, preset = pinched(seed, (0.4, 0.75), joined=True)
    inside, reach, moved, share, stretch = play_pinched(scene, mesh, jaws, rest)
    print(f"{preset}: reach {reach:.3f}, moved {moved:.3f}, {share:.2f} of the reach so far; stretched {stretch:.2f}")
    assert inside <= 1e-3 * size
    assert reach > 0.1 * size and share <= 3.5 and stretch <= 4.0


def test_a_cushion_pinched_by_two_balls_past_each_other_is_not_thrown_through_either():
    """A cushion 15 cm thick pinched from above and below by two balls (radius 0.2, two
    colliders) whose tips end 1 cm past each other: no room, but a vertex the one ball pushes
    into the other stops in the middle of their overlap (``core.contact._no_room``). Before,
    its way out of the other went through the other's far side: the top's middle ended 0.39 m
    under the cushion, 0.47 m moved for a reach of 8.4 cm (edges stretched 5.4 times)."""
    last = 40
    scene, grid = scene_with_grid(last)
    bpy.data.objects.remove(grid)
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    cushion = bpy.context.active_object
    cushion.scale = (1.2, 1.2, 0.15)
    bpy.ops.object.transform_apply(scale=True)
    subdivision = cushion.modifiers.new("Subdivision", "SUBSURF")
    subdivision.subdivision_type, subdivision.levels = "SIMPLE", 4
    bpy.ops.object.modifier_apply(modifier="Subdivision")
    balls = []
    for sign in (1, -1):
        bpy.ops.mesh.primitive_uv_sphere_add(segments=24, ring_count=12, radius=0.2)
        ball = bpy.context.active_object
        for frame, z in ((1, 0.4), (21, 0.19)):  # its tip from 5 cm off the cushion to 1 mm past its middle
            ball.location.z = sign * z
            ball.keyframe_insert("location", frame=frame)
        balls.append(ball)
    rest = np.array([v.co for v in cushion.data.vertices])
    scene.frame_set(1)
    select(cushion, balls)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    inside, reach, moved, share, stretch = play_pinched(scene, cushion, balls, rest, last)
    print(
        f"inside {inside:.4f}, reach {reach:.3f}, moved {moved:.3f} ({share:.2f} of the reach); stretched {stretch:.2f}"
    )
    assert inside < 0.02 and share <= 1.2 and stretch <= 2.0


BULGING = ("Flesh", "Belly")  # negative absorption: the surface beside the jaws rises


def sweep(jaws, rest: np.ndarray) -> float:
    """How far the jaws' inner faces have come past the mesh's rest surface along their axis
    (each jaw's innermost point against the rest's outermost on its side): how far they
    drive the mesh before them. A jaw's depth into the rest shape cannot say that: a slab
    0.2 m thick sweeping half a metre through a ball reaches only 0.1 m deep anywhere."""
    axis = np.array(jaws[0].matrix_world.col[0][:3])
    axis /= np.linalg.norm(axis)
    along = rest @ axis
    depsgraph = bpy.context.evaluated_depsgraph_get()
    furthest = 0.0
    for jaw in jaws:
        matrix = np.array(jaw.matrix_world)
        corners = np.array([v.co for v in jaw.evaluated_get(depsgraph).data.vertices])
        corners = (corners @ matrix[:3, :3].T + matrix[:3, 3]) @ axis
        basis = np.array([point.co.x for point in jaw.data.shape_keys.key_blocks["Basis"].data])
        for came_from in (1.0, -1.0):  # the jaw on each side, measured along the way it closes
            part = came_from * basis > 0
            if part.any():
                furthest = max(furthest, float((came_from * along).max() - (came_from * corners[part]).min()))
    return furthest


def squeezed(seed: int, joined: bool):
    """``pinched`` with the jaws closing past each other, by up to a fifth of the mesh's half
    width: no room is left between them, played (``play_pinched``) against how far the jaws
    have swept into it (``sweep``). Returns the preset, the largest share of the sweep moved,
    the largest stretch and the deepest inside."""
    scene, mesh, jaws, rest, _size, preset = pinched(seed, (-0.2, 0.0), joined)
    inside, swept, moved, share, stretch = play_pinched(scene, mesh, jaws, rest, reached=sweep)
    print(f"{preset}: swept {swept:.3f}, moved {moved:.3f} ({share:.2f}); stretched {stretch:.2f}; inside {inside:.3f}")
    return preset, share, stretch, inside


@pytest.mark.parametrize("seed", range(16))
def test_a_mesh_squeezed_with_no_room_left_between_two_colliders_goes_no_further_than_they_drive_it(seed):
    """Two jaws (two objects) closing on a random closed mesh past each other (``squeezed``):
    it cannot be out of both, but no vertex moves from rest further than 1.25 times as far as
    the jaws have swept into it, nor an edge stretches past 10 times, on a preset without a
    bulge (3 and 16 times with Flesh's and Belly's). Measured at most 1.17 and 8.92 (2.62 and
    14.8 bulging, as before). Before, a jaw's press axis (the mean of the normals near its
    centre) was weighed on what the other jaw had pushed to it once they passed the mesh's
    middle, and turned round in one frame (``core.contact._squeezed``): both pushed the mesh
    the same way; 4 of the 16 failed, up to 3.11 times the sweep (1.24 m), edges 22.6 times.
    (Carrying the surface beside folds with friction too stretched seed 10's, Belly's, 16.98
    times: with friction nothing is carried.)"""
    preset, share, stretch, _inside = squeezed(seed, joined=False)
    bulging = preset in BULGING
    assert share <= (3.0 if bulging else 1.25)
    assert stretch <= (16.0 if bulging else 10.0)


@pytest.mark.xfail(strict=True, reason="one object has one press axis (section 'Contact', README)")
@pytest.mark.parametrize("seed", [0, 6, 7])
def test_one_object_squeezing_with_no_room_left_drives_the_mesh_no_further(seed):
    """The same jaws as one object: one press axis for both, from normals that point all
    round between them (``squeezed``): Rubber and Stiff Shell meshes go 2.21, 1.56 and 2.31
    times as far as the jaws swept (edges 13.3 times in the first)."""
    preset, share, stretch, _inside = squeezed(seed, joined=True)
    assert share <= (3.0 if preset in BULGING else 1.25) and stretch <= 10.0


def test_three_balls_pressing_a_monkey_each_its_own_part_do_not_squeeze_her():
    """Three balls (radius 0.2, three objects) press a monkey subdivided twice 15 cm into her
    from both sides and the back of her head, along lines through her middle, at 60 fps,
    Rubber, and leave. Their bounds stay apart (``core.contact.SQUEEZE_REACH``): each one's
    axis follows the normals near it as it would alone, and no vertex moves further than
    1.25 times the press and the standoff (measured 0.215 m of 0.25, as before the squeeze
    rule). Held to 25 degrees a frame whenever two colliders pressed her, a ball ploughed
    her: 0.41 m (a new user's scene; this test failed at frame 11)."""
    depth, last = 0.15, 55
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.frame_start, scene.frame_end = 60, 1, last
    monkey = responding("monkey", subdivided=1)
    rest = np.array([v.co for v in monkey.data.vertices])
    tree = BVHTree.FromPolygons(rest.tolist(), [p.vertices[:] for p in monkey.data.polygons])
    balls = []
    for way in ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0)):
        way = np.array(way)
        hit = tree.ray_cast(Vector(way * 3.0), Vector(-way))[0]  # where the line through her middle leaves her
        surface = float(np.array(hit) @ way)
        bpy.ops.mesh.primitive_uv_sphere_add(segments=24, ring_count=12, radius=0.2)
        ball = bpy.context.active_object
        away, pressed = tuple(way * (surface + 0.28)), tuple(way * (surface + 0.2 - depth))
        keyed(ball, {1: away, 16: pressed, last - 15: pressed, last - 3: away})
        balls.append(ball)
    scene.frame_set(1)
    select(monkey, balls)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    apply_preset("Rubber")
    allowed = 1.25 * (depth + monkey.collision_response.standoff)
    moved = 0.0
    for frame in range(1, last + 1):
        scene.frame_set(frame)
        moved = max(moved, float(np.linalg.norm(evaluated(monkey) - rest, axis=1).max()))
        assert moved <= allowed, f"frame {frame}: moved {moved:.3f} (allowed {allowed:.3f})"
    print(f"moved {moved:.3f} of {allowed:.3f} allowed")
    assert moved > 0.5 * depth


@pytest.mark.parametrize(("degrees", "soft"), [(100, False), (110, False), (100, True), (120, True)])
def test_a_ball_in_the_crook_of_an_arm_bending_round_it_stays_out_of_the_arm(degrees, soft):
    """A ball (radius 0.25) beside a rigged tube's upper half (radius 0.3), its lower half
    bending round it to ``degrees`` (at 120 it reaches past the ball's centre, and only a
    soft arm leaves room), the tube a plain collider or soft against the ball: every frame no
    vertex of the ball is inside the tube by more than 1e-3 of its size, and none has moved
    from rest further than the tube's rig has reached into the ball's rest shape so far (the
    arm without the response: soft, it gives way too). Before, the bent tube's centre lay
    inside the ball, and ball vertices were thrown 0.3-0.7 m through the arm."""
    last = 40
    scene, grid = scene_with_grid(last)
    bpy.data.objects.remove(grid)
    arm, _rig = rigged_tube([(1, 0.0), (30, float(degrees)), (last, float(degrees))], name="Arm")
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.25, location=(0, -0.57, -0.5))
    ball = bpy.context.active_object
    rest = np.array([v.co for v in ball.data.vertices]) + np.array(ball.location)
    reach = {}  # by frame, how deep the rig puts the arm into the ball's rest shape
    for frame in range(1, last + 1):
        scene.frame_set(frame)
        reach[frame] = max(reach.get(frame - 1, 0.0), float(depth_inside(arm, rest).max()))
    scene.frame_set(1)
    select(ball, [arm])
    if soft:
        assert bpy.ops.object.collision_response_soft_pair() == {"FINISHED"}
    else:
        assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    moved = 0.0
    for frame in range(1, last + 1):
        scene.frame_set(frame)
        positions = evaluated(ball)
        inside = float(depth_inside(arm, positions).max())
        assert inside <= 1e-3 * 0.25, f"frame {frame}: {inside:.5f} inside the arm"
        moved = max(moved, float(np.linalg.norm(positions - rest, axis=1).max()))
        assert moved <= 1.05 * reach[frame] + 1e-3, f"frame {frame}: moved {moved:.4f}, reached {reach[frame]:.4f}"
    print(f"reached {reach[last]:.3f}, moved {moved:.3f}")
    assert moved > 0.1
