"""A mesh that starts the shot partly inside a floor box or behind a plane wider than twice
its size (the floor is "wide": pressed along its own faces) is pushed out the way to its
part outside the floor, not along its own normals.

Random meshes (a subdivided monkey in half the cases, a UV sphere, a torus, Blender's
cylinder lying at 50 degrees), floor boxes 6 to 24 m wide and 0.3 to 1 m thick, flat or
(one case in four) tilted up to 20 degrees, the mesh made 8 to 22 cm inside the box's top
(along its normal) at frame 1, held, then keyed up and away; random
presets. Every frame from the second (the start frame shows the mesh at rest), on the
evaluated mesh: no vertex inside the box by more than 1e-3 of the mesh's size, and no
vertex further from where the mesh is keyed than twice the depth it started at (plus the
preset's standoff and bulge). Before, a monkey made 15 cm into a 20 m floor box threw
vertices 12 m out through the box's side (her chin's normals point along the floor, and
nothing had moved yet to say where the box pressed from): 5 of these 24 cases threw
vertices 3.8 to 15 m. The same with a flat plane (facing up, through the origin): 8 of 18
fail before, left under it every frame (the query, finding nothing moved, looked
behind the plane no further than things moved). Tilted planes: 6 of 6 fail before, pushed
12-69 cm further under (a still turned plane's motion, its matrix times the inverse of the
same matrix, was a 1e-17 motion, so the plane was judged met from behind by the few
vertices behind it instead of from the side most of the mesh is on).
"""

import bpy
import numpy as np
import pytest
from test_contact_holds import enable
from test_secondary import apply_preset

from primitives import evaluated, inside_ball, inside_box, keyed, responding

LAST = 30
#: The torus turned, the cylinder lying at 50 degrees (one end's rim in the box), as Blender
#: makes it: 64 vertices, a 32-gon at each end. Its far rim hung from the near end's frames a
#: metre away (coarse levels of 15 and 6), and swung 0.9 m (4 of these 48 failed) until such
#: vertices were kept on the coarser level (``core.mesh.STRANDED``: levels of 35 and 10).
POSED = {"torus": ((1.2, 0.3, 0.0), 0), "cylinder": ((0.9, 0.0, 0.0), 0)}


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def under_plane(plane, points: np.ndarray) -> np.ndarray:
    """How far each world point is behind the plane, over its square; 0 elsewhere."""
    matrix = np.array(plane.matrix_world)
    axes = matrix[:3, :3] / np.linalg.norm(matrix[:3, :3], axis=0)
    local = (points - matrix[:3, 3]) @ axes
    corners = np.array([v.co for v in plane.data.vertices])
    half = np.abs(corners).max(axis=0)[:2] * np.linalg.norm(matrix[:3, :3], axis=0)[:2]  # its half sides
    over = (np.abs(local[:, :2]) <= half).all(axis=1)
    return np.where(over, np.maximum(-local[:, 2], 0.0), 0.0)


CASES = [(seed, floor) for floor in ("box", "plane") for seed in range(24)]


@pytest.mark.parametrize("seed, floor", CASES)
def test_a_mesh_made_inside_a_floor_is_pushed_out_toward_its_part_outside(seed, floor):
    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    kind = ("monkey", "uv", "monkey", "torus", "monkey", "cylinder")[seed % 6]
    preset = ("Soft Clay", "Rubber", "Flesh", "Jelly", "Stiff Shell")[seed % 5]
    width, thickness = (6.0, 12.0, 20.0)[seed % 3] * rng.uniform(1.0, 1.2), rng.uniform(0.3, 1.0)
    tilt = (rng.uniform(-0.35, 0.35), rng.uniform(-0.35, 0.35)) if seed % 4 == 3 else (0.0, 0.0)
    if floor == "box":
        bpy.ops.mesh.primitive_cube_add(size=1.0, rotation=(*tilt, 0.0))
        box = bpy.context.active_object
        box.scale = (width, width, thickness)
        bpy.context.view_layer.update()
        up = np.array(box.matrix_world)[:3, 2] / np.linalg.norm(np.array(box.matrix_world)[:3, 2])
        box.location = tuple(-up * thickness / 2)  # its top through the origin
        depth_in = lambda points: inside_box(box, points)  # noqa: E731
    else:  # a plane through the origin, facing up
        bpy.ops.mesh.primitive_plane_add(size=width, rotation=(*tilt, 0.0))
        box = bpy.context.active_object
        up = np.array(box.matrix_world)[:3, 2] / np.linalg.norm(np.array(box.matrix_world)[:3, 2])
        depth_in = lambda points: under_plane(box, points)  # noqa: E731
    obj = responding(kind, *POSED.get(kind, ((0.0, 0.0, 0.0), 0)))
    rest = np.array([v.co for v in obj.data.vertices])
    depth = rng.uniform(0.08, 0.22)
    start = -up * (depth + (rest @ up).min())  # its lowest point ``depth`` under the top
    keyed(obj, {1: tuple(start), 10: tuple(start), 25: tuple(start + up * 1.5)})
    scene.frame_set(1)
    enable(obj, [box])
    apply_preset(preset)
    settings = obj.collision_response
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    bulge = max(0.0, -min(settings.absorption_levels)) * depth
    allowed = 2.0 * depth + settings.standoff + bulge
    for frame in range(1, LAST + 1):
        scene.frame_set(frame)
        world = evaluated(obj)
        keyed_here = rest @ np.array(obj.matrix_world)[:3, :3].T + np.array(obj.matrix_world)[:3, 3]
        if frame == 1:
            started = depth_in(world).max()
            assert started > 0.9 * depth, f"made {started:.3f} inside (asked {depth:.3f})"
            continue
        inside = depth_in(world).max()
        assert inside <= 1e-3 * size, f"{kind}, {preset}, frame {frame}: a vertex {inside:.4f} inside the {floor}"
        moved = np.linalg.norm(world - keyed_here, axis=1).max()
        assert moved <= allowed, f"{kind}, {preset}, frame {frame}: a vertex moved {moved:.3f} (allowed {allowed:.3f})"


SWALLOWED = [(seed, kind) for seed in range(6) for kind in ("box", "ball")] + [(seed, "late") for seed in range(6)]


@pytest.mark.parametrize("seed, collider", SWALLOWED)
def test_a_closed_collider_already_deep_in_the_mesh_at_the_start_frame_is_left_at_the_next(seed, collider):
    """A box (turned and stretched) or a ball 0.3-0.6 of the mesh's size, its centre sunk 0.1-0.25
    of its size under a random point of a turned and stretched mesh (a monkey, a UV sphere, a
    cylinder with n-gon ends, a torus, an icosphere), holding still; "late": a box that flies
    in and stops where the shot starts (the start frame after the collider arrived). From the
    frame after the start: no vertex inside beyond 1e-3 of the mesh's size, and none moved
    further than the collider's size. Before, a vertex whose way out went through the box's
    middle, with nothing moving, was judged on its surface (its way back the way it came is
    not known, and was read as no way out): a cylinder's rim stayed 1.15 m inside a box for
    as long as the box held still (8 m mesh, a new user's scene)."""
    rng = np.random.default_rng(1000 + seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    start = 4 if collider == "late" else 1
    scene.frame_start, scene.frame_end = start, 12
    kind = ("monkey", "uv", "cylinder", "torus", "ico", "cylinder")[seed]
    obj = responding(kind, tuple(rng.uniform(-1, 1, 3)))
    obj.scale = tuple(rng.uniform(0.6, 1.6, 3))
    bpy.context.view_layer.update()
    world = evaluated(obj)
    size = float(np.linalg.norm(np.ptp(world, axis=0)))
    normals = np.array([v.normal for v in obj.data.vertices]) @ np.linalg.inv(np.array(obj.matrix_world)[:3, :3])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    at = int(rng.integers(len(world)))
    extent = size * rng.uniform(0.3, 0.6)
    centre = world[at] - normals[at] * extent * rng.uniform(0.1, 0.25)
    if collider == "ball":
        bpy.ops.mesh.primitive_uv_sphere_add(segments=48, ring_count=24, radius=extent / 2, location=tuple(centre))
        ball = bpy.context.active_object
        depth_in = lambda points: inside_ball(ball, extent / 2, points)  # noqa: E731
    else:
        bpy.ops.mesh.primitive_cube_add(size=1.0, location=tuple(centre), rotation=tuple(rng.uniform(-1, 1, 3)))
        ball = bpy.context.active_object
        ball.scale = tuple(extent * rng.uniform(0.6, 1.0, 3))
        depth_in = lambda points: inside_box(ball, points)  # noqa: E731
    if collider == "late":  # from far along a random way, there at frame 3, still from then
        away = rng.normal(size=3)
        keyed(ball, {1: tuple(centre + 5 * size * away / np.linalg.norm(away)), 3: tuple(centre), 12: tuple(centre)})
    scene.frame_set(start)
    enable(obj, [ball])
    apply_preset(("Rubber", "Flesh", "Stiff Shell", "Soft Clay", "Jelly", "Belly")[seed])
    keyed_here = evaluated(obj)
    assert depth_in(keyed_here).max() > 0.05 * extent  # deep in it at the start
    for frame in range(start + 1, 13):
        scene.frame_set(frame)
        positions = evaluated(obj)
        inside = depth_in(positions).max()
        assert inside <= 1e-3 * size, f"{kind}, frame {frame}: a vertex {inside:.4f} inside (size {size:.2f})"
        moved = np.linalg.norm(positions - keyed_here, axis=1).max()
        assert moved <= extent * np.sqrt(3), f"{kind}, frame {frame}: a vertex moved {moved:.3f}"
