"""A mesh and the collider pressing it, carried together by a moving, turning parent (a hand
on a walking character's belly, a set dressed on a moving rig), press as if both held still.

The contact rules worked in the world: a collider's motion was its motion in the world, a
vertex's its own, and what they remembered (press axes, sides) stayed put in the world while
the pair turned under it; the broad phase's box was the collider's box in the world, larger
as the pair turned against it, and the press axis is made from what it holds. Carried
together (0.3 m and 0.3 radians a frame at most), the same press came out different: up to
29 % of the mesh's size on a monkey (with friction: dragged by the pair's motion in the
world), 1 to 8 % without friction (`tools/soak_contact.py --carried`, 12 cases). The rules
now work in the mesh's own rigid frame (``blender.collision.query``), and what is near a
collider is measured in the collider's own box.

Random meshes turned at random (a subdivided monkey, a UV sphere, a torus, Blender's
cylinder), a ball or a non-uniformly scaled, turned box pressed 10 to 25 % of the mesh's
width into its furthest point along a random direction, held, slid and taken away; random
presets, friction in a third of the cases. Played still, then carried: every frame the shape
in the mesh's own space is the still one's within 1e-5 of the mesh's size (Blender's matrices
are single precision: a carried vertex's world position is rounded to about 1e-7 of its
distance from the origin), nothing is inside the collider beyond 1e-3 of the mesh's size,
and the press did dent it. With friction, until the slide (frame 12): sliding with friction
turns on rounding (that rounding tips a vertex one way or the other at a face; carried,
seeds 0 and 12 stray 0.4 % of the size while sliding, nothing inside: README, Known
failures). The build before strayed up to 0.43 of the size with friction (seed 12, the
whole clip), up to 0.13 without (seed 8); 12 of these 16 failed.
"""

import bpy
import mathutils
import numpy as np
import pytest
from test_contact_holds import enable
from test_secondary import apply_preset

from primitives import carry, carry_by_bone, evaluated, inside_ball, inside_box, keyed, local, random_press

LAST = 30
HELD = 12  # pressed by frame 8, held to 12, then slid
PRESETS = ("Rubber", "Jelly", "Flesh", "Soft Clay", "Stiff Shell", "Belly")


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def played(
    seed: int, carried: bool, last: int = LAST, by: str = "parent"
) -> tuple[list[np.ndarray], float, float, float]:
    """Each frame's evaluated shape in the mesh's own space, to ``last``; the deepest a vertex
    was inside the collider (world), the press's depth and the mesh's size. ``by``: carried by
    a parent object ("parent") or by the bone that deforms the mesh ("bone": its armature is
    there held at rest when not ``carried``)."""
    rng = np.random.default_rng(seed)
    scene, obj, rest, width, size, out = random_press(rng, ("monkey", "uv", "torus", "cylinder")[seed % 4], LAST)
    if seed % 2:
        bpy.ops.mesh.primitive_cube_add(size=1.0)
        collider = bpy.context.active_object
        collider.scale = (*(width * rng.uniform(0.4, 1.0, 2)), width * rng.uniform(0.3, 0.6))
        x = np.cross(out, rng.normal(size=3))
        x /= np.linalg.norm(x)
        turn = np.stack([x, np.cross(-out, x), -out], axis=1)  # its thin axis along the press
        collider.rotation_euler = mathutils.Matrix(turn.tolist()).to_euler()
        half = float(collider.scale[2]) / 2
        inside = lambda points: inside_box(collider, points)  # noqa: E731
    else:
        half = float(rng.uniform(0.2, 0.5)) * width
        bpy.ops.mesh.primitive_uv_sphere_add(radius=half, segments=32, ring_count=16)
        collider = bpy.context.active_object
        inside = lambda points: inside_ball(collider, half, points)  # noqa: E731
    furthest = rest[np.argmax(rest @ out)]
    depth = float(rng.uniform(0.1, 0.25)) * width
    pressed = furthest + out * (half - depth)
    slide = rng.normal(size=3)
    slide -= (slide @ out) * out
    slide *= rng.uniform(0.0, 0.3) * width / np.linalg.norm(slide)
    away = tuple(furthest + out * (half + 0.2))
    keyed(collider, {1: away, 8: tuple(pressed), HELD: tuple(pressed), 20: tuple(pressed + slide), 27: away})
    friction = float(rng.uniform(0.1, 0.5)) if seed % 3 == 0 else 0.0
    bone = None
    if by == "bone":
        bone = carry_by_bone(obj, collider, np.random.default_rng(1000 + seed), LAST, moving=carried)
    elif carried:
        carry((obj, collider), np.random.default_rng(1000 + seed), LAST)
    scene.frame_set(1)
    enable(obj, [collider])
    apply_preset(PRESETS[seed % len(PRESETS)])
    obj.collision_response.friction = friction
    shapes, deepest = [], 0.0
    for frame in range(1, last + 1):
        scene.frame_set(frame)
        # The mesh's own space: the posed shape carried back by the bone's pose
        shapes.append(local(obj) if bone is None else _unposed(local(obj), np.array(bone.matrix)))
        deepest = max(deepest, float(inside(evaluated(obj)).max()))
    return shapes, deepest, depth, size


def _unposed(points: np.ndarray, pose: np.ndarray) -> np.ndarray:
    inverse = np.linalg.inv(pose)
    return points @ inverse[:3, :3].T + inverse[:3, 3]


# Seed 8 (a UV sphere, a ball, Stiff Shell): a vertex the push left exactly on the ball's face is
# met by its ray there in one run and missed in the other (single-precision rounding), let go,
# and springs back in. Starting rays a little behind their vertex fixed it, and broke a plane
# corner and a ball on a box's edge (`test_corner.py`, `test_plane_floor.py`): left.
ON_THE_FACE = pytest.mark.xfail(strict=True, reason="a vertex exactly on a face: met or missed by rounding")


@pytest.mark.parametrize("seed", [pytest.param(s, marks=ON_THE_FACE) if s == 8 else s for s in range(16)])
def test_a_mesh_and_its_collider_carried_together_press_as_if_held_still(seed):
    assert_carried_as_still(seed, "parent")


@pytest.mark.parametrize("seed", [pytest.param(s, marks=ON_THE_FACE) if s == 8 else s for s in range(16)])
def test_a_mesh_and_its_collider_carried_by_the_bone_that_poses_it_press_as_if_held_still(seed):
    """The mesh bound wholly to one bone, the collider parented to that bone (a hand parented
    to a character's chest bone, pressing its belly as it walks): the same, against the rig
    held at rest. The bone moves the mesh by deforming it, not by its object's matrix, so the
    rules' frame saw the mesh move and the collider with it: 11 of these 15 failed, by up to 3 %
    of the mesh's size. The frame now also follows the rig's motion of the mesh as a whole
    (``blender.collision.query._posing``). Seed 8 as above: a vertex exactly on a face."""
    assert_carried_as_still(seed, "bone")


def assert_carried_as_still(seed: int, by: str) -> None:
    checked = LAST if seed % 3 else HELD  # with friction, until the slide (see above)
    still, _, depth, size = played(seed, carried=False, last=checked, by=by)
    carried, deepest, _, _ = played(seed, carried=True, last=checked, by=by)
    rest = still[0]
    dented = max(float(np.linalg.norm(shape - rest, axis=1).max()) for shape in still)
    assert dented > 0.3 * depth, f"dented {dented:.3f} for a press {depth:.3f} deep"
    assert deepest <= 1e-3 * size, f"a vertex {deepest:.4f} inside the collider, carried"
    for frame, (a, b) in enumerate(zip(still, carried, strict=True), start=1):
        strays = float(np.abs(a - b).max())
        assert strays <= 1e-5 * size, f"frame {frame}: carried, the shape strays {strays:.2e} from the still one"


@pytest.mark.parametrize("by", ["parent", "bone"])
@pytest.mark.parametrize("kind, collider", [("grid", "ball"), ("grid", "box"), ("uv", "ball"), ("uv", "box")])
def test_a_straight_press_with_friction_carried_together_presses_as_if_held_still(kind, collider, by):
    """A collider coming straight in along the surface's normal (a ball onto a sheet, a box
    onto a sphere's pole) with friction: its motion has no part along the surface, so friction
    drags nothing. Carried, rounding gives it one, a hair long, and friction tilted the push
    toward it at full strength, whichever way rounding pointed it: the carried press parted
    from the still one by 1.3 to 2.8 cm here, 0.7 to 2 % of the mesh's size (all 8 failed; a
    new user's rig, 4.9 %). A push now tilts toward the collider's motion, never past it
    (``core.contact.push_direction``). (The box's sides lie between the grid's lines: a vertex
    exactly on a face is the case above.)"""
    shapes: dict[bool, list[np.ndarray]] = {}
    for carried in (False, True):
        bpy.ops.wm.read_homefile(use_empty=True)
        scene = bpy.context.scene
        scene.frame_start, scene.frame_end = 1, LAST
        if kind == "grid":
            bpy.ops.mesh.primitive_grid_add(x_subdivisions=24, y_subdivisions=24, size=1.0)
        else:
            bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.5)
        obj = bpy.context.active_object
        top = max(v.co.z for v in obj.data.vertices)
        if collider == "ball":
            bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.3)
        else:
            bpy.ops.mesh.primitive_cube_add(size=0.47)
        pressing = bpy.context.active_object
        half = pressing.dimensions[2] / 2
        arrive, pressed = (0.0, 0.0, top + half + 0.2), (0.0, 0.0, top + half - 0.12)
        keyed(pressing, {1: arrive, 8: pressed, 20: pressed})
        pose = None
        if by == "bone":
            pose = carry_by_bone(obj, pressing, np.random.default_rng(7), LAST, moving=carried)
        elif carried:
            carry((obj, pressing), np.random.default_rng(7), LAST)
        scene.frame_set(1)
        enable(obj, [pressing])
        apply_preset("Flesh")
        obj.collision_response.friction = 0.5
        shapes[carried] = []
        for frame in range(1, LAST + 1):
            scene.frame_set(frame)
            shapes[carried].append(local(obj) if pose is None else _unposed(local(obj), np.array(pose.matrix)))
    size = float(np.linalg.norm(np.ptp(shapes[False][0], axis=0)))
    for frame, (still, carried_shape) in enumerate(zip(shapes[False], shapes[True], strict=True), start=1):
        strays = float(np.abs(still - carried_shape).max())
        assert strays <= 1e-5 * size, f"frame {frame}: carried, the shape strays {strays:.2e} from the still one"
