"""Rays cast against the part of a deforming partner near them (``blender.collision.patch``):
what they give is what casts against its whole surface give, or all a query needs of it."""

import importlib

import bpy
import numpy as np
import pytest
from conftest import MODULE


@pytest.fixture(autouse=True)
def empty_scene(addon):
    bpy.ops.wm.read_homefile(use_empty=True)
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def dented_ball(scale=(1.0, 1.0, 1.0), inside_out=False):
    """A UV sphere of radius 0.5 with a shape key denting its front (a deforming mesh, as a
    soft partner is), turned and scaled."""
    bpy.ops.mesh.primitive_uv_sphere_add(segments=64, ring_count=32, radius=0.5, location=(0.2, -0.1, 0.3))
    ball = bpy.context.active_object
    ball.rotation_euler = (0.3, -0.2, 0.5)
    ball.scale = scale
    if inside_out:
        ball.data.flip_normals()
    ball.shape_key_add(name="Basis")
    key = ball.shape_key_add(name="Dent")
    key.value = 1.0
    points = np.empty(len(key.points) * 3, dtype=np.float32)
    key.points.foreach_get("co", points)
    points = points.reshape(-1, 3)
    points[:, 0] -= 0.15 * np.clip(points[:, 0] + 0.2, 0.0, None)  # the front (+x) pushed in
    key.points.foreach_set("co", points.ravel())
    ball.data.update()
    return ball


def rays_from_points_near(ball, count=3000, seed=0):
    """Points within 0.2 of the ball's dented front (in and out), each with a ray and its
    reverse (as a query casts ahead and behind): origins (2m, 3), directions (1, 2m, 3),
    world space. Their box holds a part of the ball: rays through it leave that part."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=(count, 3)) + [3.0, 0.0, 0.0]
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    radius = 0.45 + rng.uniform(-0.2, 0.2, count)
    points = direction * radius[:, None]
    matrix = np.array(ball.matrix_world)
    world = points @ matrix[:3, :3].T + matrix[:3, 3]
    rays = rng.normal(size=(count, 3))
    rays /= np.linalg.norm(rays, axis=1, keepdims=True)
    return np.concatenate([world, world]), np.concatenate([rays, -rays])[None]


@pytest.mark.parametrize(
    "scale, inside_out", [((1.0, 1.0, 1.0), False), ((1.3, 0.8, 1.0), False), ((-1.0, 1.0, 1.0), False), (None, True)]
)
def test_rays_cast_in_part_answer_as_the_whole_surface(scale, inside_out):
    """Every ray's answer is the whole surface's, or, where its first face lies beyond the
    part: a lower bound of the way out from inside (same sign, no longer), or a miss from
    outside (where the whole surface is further than the margin, or missed too). Most rays
    are answered exactly."""
    collision = importlib.import_module(MODULE + ".blender.collision")
    raycast = importlib.import_module(MODULE + ".blender.collision.raycast")
    patch_module = importlib.import_module(MODULE + ".blender.collision.patch")
    ball = dented_ball(scale or (1.0, 1.0, 1.0), inside_out)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    (collider,), _messages = collision.colliders.usable_colliders(None, [ball], depsgraph)
    assert not collider.rigid and collider.closed and collider.inside_out == inside_out
    caster = raycast.RayCaster(bpy.context.scene, "test")
    origins, directions = rays_from_points_near(ball)
    whole, whole_normals = caster.cast([ball], origins, directions, depsgraph)
    patch = patch_module.Patch.around(collider.local_low, collider.local_high, collider.inside_out)
    in_part, part_normals = caster.cast([ball], origins, directions, depsgraph, [patch])
    whole, in_part = whole[0].astype(np.float64), in_part[0].astype(np.float64)
    same = (whole == in_part) | (np.isnan(whole) & np.isnan(in_part))
    margin = patch.margin * float(np.abs(np.linalg.svd(np.array(ball.matrix_world)[:3, :3])[1]).min())
    bound = ~same & ~np.isnan(in_part)
    missed = ~same & np.isnan(in_part)
    print(f"exact {same.mean():.3f}, lower bounds {bound.sum()}, missed beyond the part {missed.sum()}")
    assert same.mean() > 0.8
    np.testing.assert_array_equal(np.sign(in_part[bound]), np.sign(whole[bound]))
    assert np.all(np.abs(in_part[bound]) <= np.abs(whole[bound]) + 1e-6)
    assert np.all(np.abs(in_part[bound]) >= 0.99 * margin)
    assert np.all(np.isnan(whole[missed]) | (np.abs(whole[missed]) > 0.99 * margin))
    exact = same & ~np.isnan(whole)
    np.testing.assert_array_equal(part_normals[0][exact], whole_normals[0][exact])
