"""A box about as large as the mesh (not wide: aimed by the normals near it) pressed deep
into it, sliding, and leaving: the mesh goes no further than the box pushed it.

Pressed deep, a box has the mesh's normals all round its centre, so no press axis comes
from them: it is aimed by its own faces where the vertices inside it leave it. Before, that
axis was found again every frame: when the box stopped rising and slid, every vertex was on
its top (touching, none inside) but a few just inside, which left through far faces; no
axis came of them, and those few were pushed along their own normals through the box and
out at its far side. A 1.2 m box risen 33 cm into a subdivided monkey's chin and sliding 10
cm threw vertices 1.2 m and turned 582 of her 3,936 triangles over (a new user's scene).

Random meshes (a subdivided monkey in half the cases, a UV sphere, a torus), a box 0.8 to
1.4 times the mesh's width and half to 0.8 of it thick, turned at random, keyed to press
along its thin axis 15 to 30 cm (of about a metre) into the mesh's furthest point that way,
slide 5 to 15 cm along its face, and leave; random presets and friction. Every frame, on
the evaluated mesh: nothing inside the box beyond 1e-3 of the mesh's size, and no vertex
further from its rest than the press and friction's drag allow (its depth times one and the
friction, with a quarter to spare for the spread) plus the slide (what is ahead of a sliding
collider is pushed on by up to as far as it slides), the preset's standoff and bulge. 14 of
24 failed before (0.8 to 1.4 m, against 0.3 to 0.5 allowed). The same with a ball 0.4 to 0.75
times the mesh's width pressed from any direction (48 cases): 3 threw vertices 0.84-1.24 m
before (the ball's side was judged from the mean normal of an ear it swallowed, mostly facing
away from it; or a push went through the ball's middle, 2 cm from a way out).
"""

import bpy
import numpy as np
import pytest
from test_contact_holds import enable
from test_secondary import apply_preset

from primitives import evaluated, inside_ball, inside_box, keyed, responding

LAST = 30


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


CASES = [(seed, "box") for seed in range(24)] + [(seed, "ball") for seed in range(48)]


@pytest.mark.parametrize("seed, collider", CASES)
def test_a_collider_pressed_deep_and_sliding_moves_the_mesh_no_further_than_it_pushes(seed, collider):
    press_deep_and_slide(seed, collider, ("monkey", "uv", "monkey", "torus")[seed % 4])


@pytest.mark.parametrize("seed", range(24))
def test_a_ball_as_wide_as_the_mesh_pressed_deep_and_sliding_moves_it_no_further_than_it_pushes(seed):
    """The same with a ball 0.75-1 times the mesh's width. Meeting a monkey's ear, such a
    ball swallowed 90 of her vertices at once, most of them the ear's back: weighed by
    nearness to its centre as the square of it, the few nearest, all facing the ball, were
    outvoted, it was judged to press from inside her, and at a held frame a vertex 4 mm inside
    it was pushed 1.6 m through it along the last axis, and the whole monkey after it, 2.7 m
    (one of `tools/soak_contact.py`'s 260 scenes). The side is now the nearest vertices' (the
    fourth power), and a push through a closed collider's middle takes the shorter way out
    from either side. These 24 passed before as well: over 200 such seeds the build before
    failed 3, by 3 cm at most (sliding); the scene that threw her stays in the soak."""
    press_deep_and_slide(seed, "big ball", ("monkey", "uv", "monkey", "torus")[seed % 4])


@pytest.mark.parametrize("seed", range(16))
def test_blenders_cylinder_pressed_deep_and_sliding_moves_no_further_than_it_pushes(seed):
    """The same with Blender's cylinder (32 sides, a 32-gon at each end: 64 vertices). Its rim
    vertices hung from the far end of their 1 m side edges (coarse levels of 15 and 6), and a
    press there turned those frames up to 90 degrees: a rim vertex swung round (8 of these 16
    failed, 0.41-0.96 m against 0.35-0.64 allowed) until such a vertex was kept on the coarser
    level (``core.mesh.STRANDED``: levels of 10 and 35)."""
    press_deep_and_slide(seed, ("box", "ball")[seed % 2], "cylinder")


def press_deep_and_slide(seed: int, collider: str, kind: str) -> None:
    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    obj = responding(kind)
    rest = np.array([v.co for v in obj.data.vertices])
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    width = float(np.ptp(rest, axis=0).max())
    if collider == "box":
        bpy.ops.mesh.primitive_cube_add(size=1.0, rotation=tuple(rng.uniform(-0.4, 0.4, 3)))
        box = bpy.context.active_object
        box.scale = (*(width * rng.uniform(0.8, 1.4, 2)), width * rng.uniform(0.5, 0.8))
        bpy.context.view_layer.update()
        out = -np.array(box.matrix_world)[:3, 2] / np.linalg.norm(np.array(box.matrix_world)[:3, 2])
        half = box.dimensions[2] / 2
    else:  # a ball 0.4-0.75 times the mesh's width (a big one: 0.75-1), from any direction
        out = rng.normal(size=3)
        out /= np.linalg.norm(out)
        half = rng.uniform(*((0.75, 1.0) if collider == "big ball" else (0.4, 0.75))) * width
        bpy.ops.mesh.primitive_uv_sphere_add(radius=half, segments=32, ring_count=16)
        box = bpy.context.active_object
    furthest = rest[np.argmax(rest @ out)]  # the mesh's furthest point toward the box: pressed there
    depth = rng.uniform(0.15, 0.3)
    away = furthest + out * (half + 0.2)
    pressed = furthest + out * (half - depth)
    slide = rng.normal(size=3)
    slide -= (slide @ out) * out  # along its face
    slide *= rng.uniform(0.05, 0.15) / np.linalg.norm(slide)
    keyed(box, {1: tuple(away), 8: tuple(pressed), 12: tuple(pressed), 18: tuple(pressed + slide), 26: tuple(away)})
    scene.frame_set(1)
    enable(obj, [box])
    apply_preset(("Rubber", "Jelly", "Flesh", "Soft Clay", "Stiff Shell")[seed % 5])
    settings = obj.collision_response
    settings.friction = rng.uniform(0.0, 0.5)
    bulge = max(0.0, -min(settings.absorption_levels)) * depth
    allowed = 1.25 * depth * (1.0 + settings.friction) + float(np.linalg.norm(slide)) + settings.standoff + bulge
    pressed_in = 0.0
    for frame in range(1, LAST + 1):
        scene.frame_set(frame)
        world = evaluated(obj)
        inside = (inside_box(box, world) if collider == "box" else inside_ball(box, half, world)).max()
        assert inside <= 1e-3 * size, f"frame {frame}: a vertex {inside:.4f} inside the {collider}"
        moved = np.linalg.norm(world - rest, axis=1).max()
        assert moved <= allowed, f"frame {frame}: a vertex moved {moved:.3f} (allowed {allowed:.3f}, depth {depth:.3f})"
        pressed_in = max(pressed_in, moved)
    assert pressed_in > 0.5 * depth, f"pressed {pressed_in:.3f} (asked {depth:.3f})"
