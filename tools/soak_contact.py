"""Random presses, slides and lifts, every frame checked: a contact change's measure.

Each case: a mesh about a metre across, turned at random (a subdivided monkey in a third of
the cases, a UV sphere, an icosphere, a torus, Blender's cylinder with its n-gon caps); a ball
(0.15-0.75 times the mesh's width) or a box (0.3-1.2 times it, 0.3-0.8 thick, its thin axis
along the press) keyed to press into the mesh's furthest point along a random direction, 5 to
30 % of its width deep by frame 8, hold to 12, slide up to 40 % of its width along the face by
20 and leave by 27; a random preset, and random friction in a third of the cases. Every frame
(1-30, through `scene.frame_set`, the evaluated mesh): the triangles turned over against their
rest direction, how far a vertex is inside the collider, and how far a vertex is from rest.

Usage: .venv/bin/python tools/soak_contact.py [--cases 260] [--first 0] [--json out.jsonl]
       [--zip build.zip] [--carried [--bone]] [--turning] [--tracking]
Prints each case's figures and the sums: the most triangles turned over in a frame, summed
over the cases; the cases where a vertex went further than twice the press (or the deepest
the collider reached into the rest shape, if deeper) plus the slide; the deepest inside (a
fraction of the mesh's size).

``--carried``: each case played again with the mesh and the collider carried together by a
moving, turning parent, its figures, and how far its shape (in the mesh's own space) strays
from the still one's; with ``--bone``, by the one bone the mesh is bound to (the collider
parented to it), against the rig held at rest. ``--turning``: the colliders also turn while
they press, about a random axis through their centre. ``--tracking``: instead of sliding
straight, the collider travels along the mesh's surface at its depth (a finger traced over a
belly): from frame 12 to 20 the direction it presses along turns up to 1.2 radians toward
the slide, keyed every frame as deep past the mesh's furthest extent along it (a path that
turns smoothly round the mesh), a box turned to face it.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="collision_response_soak_"))

import bpy  # noqa: E402
import mathutils  # noqa: E402
import numpy as np  # noqa: E402

sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "tests" / "blender"), str(ROOT)]
from build_extension import build  # noqa: E402

from primitives import carry, carry_by_bone, evaluated, inside_ball, inside_box, keyed, local, responding  # noqa: E402

LAST = 30
KINDS = ("monkey", "uv", "ico", "torus", "monkey", "cylinder")
PRESETS = ("Rubber", "Jelly", "Flesh", "Soft Clay", "Stiff Shell", "Belly")


def triangles(obj) -> np.ndarray:
    polygons = [list(p.vertices) for p in obj.data.polygons]
    return np.array([[p[0], p[i], p[i + 1]] for p in polygons for i in range(1, len(p) - 1)])


def normals(points: np.ndarray, tris: np.ndarray) -> np.ndarray:
    a, b, c = (points[tris[:, i]] for i in range(3))
    return np.cross(b - a, c - a)


def facing(z: np.ndarray, across: np.ndarray) -> mathutils.Euler:
    """The rotation whose z axis is ``z``, its x as near ``across`` as it can be."""
    x = across - (across @ z) * z
    x /= np.linalg.norm(x)
    return mathutils.Matrix(np.stack([x, np.cross(z, x), z], 1).tolist()).to_euler()


def case(seed: int, carried: bool = False, turning: bool = False, tracking: bool = False, bone: bool = False) -> dict:
    rng = np.random.default_rng(1000 + seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    kind = KINDS[seed % len(KINDS)]
    obj = responding(kind, turned=tuple(rng.uniform(-1, 1, 3)))
    bpy.context.view_layer.update()
    matrix = np.array(obj.matrix_world)
    rest = np.array([v.co for v in obj.data.vertices]) @ matrix[:3, :3].T + matrix[:3, 3]
    width = float(np.ptp(rest, axis=0).max())
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    collider_kind = ("ball", "box")[(seed // 6) % 2]
    out = rng.normal(size=3)
    out /= np.linalg.norm(out)
    if collider_kind == "box":
        bpy.ops.mesh.primitive_cube_add(size=1.0)
        collider = bpy.context.active_object
        collider.scale = (*(width * rng.uniform(0.3, 1.2, 2)), width * rng.uniform(0.3, 0.8))
        across = np.cross(-out, rng.normal(size=3))
        collider.rotation_euler = facing(-out, across)
        bpy.context.view_layer.update()
        half = collider.dimensions[2] / 2
    else:
        half = rng.uniform(0.15, 0.75) * width
        bpy.ops.mesh.primitive_uv_sphere_add(radius=half, segments=32, ring_count=16)
        collider = bpy.context.active_object
    furthest = rest[np.argmax(rest @ out)]
    depth = rng.uniform(0.05, 0.3) * width
    pressed = furthest + out * (half - depth)
    slide = rng.normal(size=3)
    slide -= (slide @ out) * out
    slide *= rng.uniform(0.0, 0.4) * width / np.linalg.norm(slide)
    away = tuple(furthest + out * (half + 0.2))
    if tracking:  # along the surface at its depth, turning toward the slide, keyed every frame
        turn = np.random.default_rng(9000 + seed).uniform(0.3, 1.2)
        base = furthest - out * (furthest @ out)  # (from it along ``out``: the press)
        track = {}
        for frame in range(12, 21):
            angle = turn * (frame - 12) / 8
            along = np.cos(angle) * out + np.sin(angle) * slide / np.linalg.norm(slide)
            # On the line through ``base`` along it, as deep past the mesh's furthest extent
            # along it (which turns smoothly: the furthest point itself jumps on a monkey)
            extent = float((rest @ along).max() - base @ along)
            track[frame] = tuple(base + along * (extent + half - depth))
            if collider_kind == "box":
                collider.rotation_euler = facing(-along, across)
                collider.keyframe_insert("rotation_euler", frame=frame)
        last = np.array(track[20])
        slide = last - pressed
        keyed(collider, {1: away, 8: tuple(pressed), **track, 27: tuple(last + along * (depth + 0.2))})
    else:
        keyed(collider, {1: away, 8: tuple(pressed), 12: tuple(pressed), 20: tuple(pressed + slide), 27: away})
    if turning:  # about a random axis through its centre, up to 0.3 radians a frame
        spin = np.random.default_rng(7000 + seed)  # its own: the case is otherwise as without
        axis, rate = mathutils.Vector(spin.normal(size=3)).normalized(), float(spin.uniform(0.05, 0.3))
        placed = collider.rotation_euler.to_matrix()
        for frame in range(1, LAST + 1):
            turn = mathutils.Matrix.Rotation(rate * (frame - 1), 3, axis)
            collider.rotation_euler = (turn @ placed).to_euler()
            collider.keyframe_insert("rotation_euler", frame=frame)
    pose = None
    if bone:  # (held at rest unless carried)
        pose = carry_by_bone(obj, collider, np.random.default_rng(5000 + seed), LAST, moving=carried)
    elif carried:
        carry((obj, collider), np.random.default_rng(5000 + seed), LAST)
    scene.frame_set(1)
    bpy.ops.object.select_all(action="DESELECT")
    collider.select_set(True)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.collision_response_enable()
    preset = PRESETS[seed % 6 if seed % 5 else 0]
    bpy.ops.script.execute_preset(
        filepath=bpy.utils.preset_find(preset, "collision_response"), menu_idname="COLLISION_RESPONSE_MT_presets"
    )
    settings = obj.collision_response
    settings.friction = 0.0 if seed % 3 else float(rng.uniform(0.0, 0.5))
    tris = triangles(obj)
    rest_normals = normals(rest, tris)
    turned, deepest, moved, reach, shapes = [], 0.0, 0.0, 0.0, []
    for frame in range(1, LAST + 1):
        scene.frame_set(frame)
        world = evaluated(obj)
        matrix = np.array(obj.matrix_world) @ (np.eye(4) if pose is None else np.array(pose.matrix))
        resting = rest @ matrix[:3, :3].T + matrix[:3, 3]  # (the mesh's rest, where it is now)
        within, into = (
            (inside_ball(collider, half, world), inside_ball(collider, half, resting))
            if collider_kind == "ball"
            else (inside_box(collider, world), inside_box(collider, resting))
        )
        deepest = max(deepest, float(within.max()) / size)
        reach = max(reach, float(into.max()))
        shape = local(obj)  # the mesh's own space: the world of the still case
        if pose is not None:  # posed by the bone: carried back by its pose
            unpose = np.linalg.inv(np.array(pose.matrix))
            shape = shape @ unpose[:3, :3].T + unpose[:3, 3]
        shapes.append(shape)
        turned.append(int(((normals(shape, tris) * rest_normals).sum(axis=1) <= 0).sum()))
        moved = max(moved, float(np.linalg.norm(shape - rest, axis=1).max()))
    return dict(
        seed=seed,
        kind=kind,
        collider=collider_kind,
        preset=preset,
        friction=settings.friction,
        depth=depth,
        reach=reach,
        slide=float(np.linalg.norm(slide)),
        triangles=len(tris),
        turned_most=max(turned),
        turned_frames=turned,
        inside=deepest,
        moved=moved,
        shapes=np.array(shapes),
    )


def beyond(result: dict) -> bool:
    """A vertex went further from rest than twice the deepest the collider reached into the
    mesh's rest shape (or the press, if deeper) plus the slide: a turning box sweeps its
    corners deeper than the press."""
    return result["moved"] > 2 * max(result["depth"], result["reach"]) + result["slide"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=260)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--zip", type=Path, help="soak this build of the extension (an older commit's, say)")
    parser.add_argument(
        "--carried",
        action="store_true",
        help="play each case again with the mesh and the collider carried together by a moving, turning "
        "parent, and say how far its shape strays from the still case's (a fraction of the mesh's size)",
    )
    parser.add_argument(
        "--bone",
        action="store_true",
        help="the mesh bound to one bone of an armature and the collider parented to it: with --carried, the "
        "bone carries them (against the rig at rest)",
    )
    parser.add_argument(
        "--turning", action="store_true", help="the colliders also turn about a random axis, 0.05-0.3 radians a frame"
    )
    parser.add_argument(
        "--tracking",
        action="store_true",
        help="the collider travels along the surface at its depth from frame 12 to 20, turning up to 1.2 radians",
    )
    args = parser.parse_args()
    zip_path = args.zip or build(Path(tempfile.mkdtemp()))
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    found = []
    for seed in range(args.first, args.first + args.cases):
        variant = dict(turning=args.turning, tracking=args.tracking, bone=args.bone)
        result = case(seed, **variant)
        if args.carried:
            still, result = result, case(seed, carried=True, **variant)
            size = float(np.linalg.norm(np.ptp(still["shapes"][0], axis=0)))
            result["strays"] = float(np.abs(result["shapes"] - still["shapes"]).max()) / size
        del result["shapes"]
        found.append(result)
        far = beyond(result)
        print(
            f"{seed:4d} {result['kind']:8s} {result['collider']:4s} {result['preset']:11s} "
            f"depth {result['depth']:.2f} slide {result['slide']:.2f} friction {result['friction']:.2f}: "
            f"turned {result['turned_most']:4d}, inside {result['inside']:.1e}, moved {result['moved']:.3f} "
            f"(reach {result['reach']:.2f})"
            + (f", strays {result['strays']:.1e}" if args.carried else "")
            + ("  (beyond twice the deepest reach plus the slide)" if far else ""),
            flush=True,
        )
        if args.json:
            with args.json.open("a") as stream:
                stream.write(json.dumps(result) + "\n")
    far = [r["seed"] for r in found if beyond(r)]
    print(
        f"{len(found)} cases: most triangles turned over in a frame, summed: {sum(r['turned_most'] for r in found)}; "
        f"beyond twice the deepest reach plus the slide: {len(far)} {far}; "
        f"deepest inside: {max(r['inside'] for r in found):.1e} of the mesh's size"
        + (f"; strays from the still case: {max(r['strays'] for r in found):.1e}" if args.carried else "")
    )


if __name__ == "__main__":
    main()
