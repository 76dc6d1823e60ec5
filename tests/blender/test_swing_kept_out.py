"""Secondary Motion's swing, scaled down where it turns faces over, stays out of the colliders.

A swing is pushed out of the colliders, and scaled down toward the response where it turns
faces over (``core.frame._calmed``); what that scaling takes back into a collider is pushed out
again, a few rounds, then scaled once more without a push. Both ends of a scaled swing are out
of the collider, but the way between them need not be: a box traced over a monkey's face,
turned to face it, left a vertex of Jelly's swing 2 cm inside it (a new user's scene). What
the last scaling leaves inside now takes the response's position.

Random tracking presses (a new user's way of making them): a monkey, a UV sphere or a torus; a
box or a ball 0.1 to 0.3 of the mesh's width, pressed 10 to 25 % of the width past its
furthest point along a random direction by frame 8 and traced over it at that depth, its
direction turning up to 1.2 radians by frame 16, a box turned to face it; Jelly or Belly
(they swing), friction in half. Every frame, on the evaluated mesh: nothing inside the
collider beyond 1e-3 of the mesh's size.
"""

import bpy
import mathutils
import numpy as np
import pytest
from test_contact_holds import enable
from test_secondary import apply_preset

from primitives import evaluated, inside_ball, inside_box, keyed, random_press

LAST = 26


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def facing(z: np.ndarray, across: np.ndarray) -> mathutils.Euler:
    """The rotation whose z axis is ``z``, its x as near ``across`` as it can be."""
    x = across - (across @ z) * z
    x /= np.linalg.norm(x)
    return mathutils.Matrix(np.stack([x, np.cross(z, x), z], 1).tolist()).to_euler()


@pytest.mark.parametrize("seed", range(24))
def test_a_swing_traced_over_the_surface_never_ends_inside_the_collider(seed):
    rng = np.random.default_rng(700 + seed)
    scene, obj, rest, width, size, out = random_press(rng, ("monkey", "uv", "monkey", "torus")[seed % 4], LAST)
    along = rng.normal(size=3)
    along -= (along @ out) * out
    along /= np.linalg.norm(along)
    half = float(rng.uniform(0.05, 0.15)) * width
    depth = float(rng.uniform(0.1, 0.25)) * width
    box = seed % 2 == 0
    if box:
        bpy.ops.mesh.primitive_cube_add(size=1.0)
        collider = bpy.context.active_object
        collider.scale = (2 * half, 1.2 * half, 2 * half)
        across = np.cross(out, rng.normal(size=3))
    else:
        bpy.ops.mesh.primitive_uv_sphere_add(radius=half, segments=32, ring_count=16)
        collider = bpy.context.active_object
    furthest = rest[np.argmax(rest @ out)]
    base = furthest - out * (furthest @ out)
    turn = float(rng.uniform(0.4, 1.2))
    path = {}
    for frame in range(8, 17):  # traced at its depth past the mesh's furthest extent along each direction
        way = np.cos(turn * (frame - 8) / 8) * out + np.sin(turn * (frame - 8) / 8) * along
        path[frame] = tuple(base + way * (float((rest @ way).max() - base @ way) + half - depth))
        if box:
            collider.rotation_euler = facing(-way, across)
            collider.keyframe_insert("rotation_euler", frame=frame)
    arrive, leave = np.array(path[8]) + out * (depth + 0.3), np.array(path[16]) + way * 0.5
    keyed(collider, {1: tuple(arrive), **path, 22: tuple(leave)})
    scene.frame_set(1)
    enable(obj, [collider])
    apply_preset(("Jelly", "Belly")[seed // 2 % 2])
    obj.collision_response.friction = float(rng.uniform(0.0, 0.5)) if seed % 3 else 0.0
    for frame in range(1, LAST + 1):
        scene.frame_set(frame)
        world = evaluated(obj)
        inside = float((inside_box(collider, world) if box else inside_ball(collider, half, world)).max())
        assert inside <= 1e-3 * size, f"frame {frame}: a vertex {inside:.4f} inside the collider"
