"""Whole-frame speed: collider query + solver + shape-key write, against Shrinkwrap.

Blender's Grid with 316 subdivisions (100,489 vertices, not a 2^m + 1 grid, so the general
mesh hierarchy) and with 256 (66,049 vertices, the exact grid hierarchy); a 2k-triangle ball
whose silhouette covers a fifth of the grid sinks in over 15 frames, then holds. The
add-on's frame update (what playback runs each frame) is timed against Shrinkwrap (Project,
both directions) evaluated on the same grid and ball, in one process. The 66k grid runs again
bound to an armature (one bone, swaying): the posed path, which reads the evaluated mesh and
maps pushes back through the armature. Then a press held until it settles (the Soft Clay
preset, frames 46-60: vertices rest on the ball), and the same grid with the ball kept
away: a frame without contact. The 100k grid runs again rippled (1 cm waves): a vertex on a
flat region has no rest offset and needs no frame, so a curved mesh costs more.

Usage: .venv/bin/python tools/benchmark_frame.py
"""

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="collision_response_bench_"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from build_extension import build  # noqa: E402


def scene_with(subdivisions: int, rigged: bool = False, away: bool = False, rippled: bool = False):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 30
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=subdivisions, y_subdivisions=subdivisions, size=2)
    grid = bpy.context.active_object
    if rippled:  # no flat region: every vertex has a rest offset, so every placement needs a frame
        co = np.empty(len(grid.data.vertices) * 3)
        grid.data.vertices.foreach_get("co", co)
        x, y = co[0::3], co[1::3]
        co[2::3] = 0.01 * np.sin(12 * x) * np.cos(12 * y)
        grid.data.vertices.foreach_set("co", co)
        grid.data.update()
    bpy.ops.mesh.primitive_uv_sphere_add(segments=45, ring_count=23, radius=0.5, location=(0, 0, 0.5))
    ball = bpy.context.active_object
    ball.keyframe_insert("location", frame=1)
    ball.location.z = 0.42
    ball.keyframe_insert("location", frame=16)
    if away:  # the ball never comes near: a frame without contact
        ball.animation_data_clear()
        ball.location.z = 3.0
    if rigged:
        rig = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
        scene.collection.objects.link(rig)
        bpy.context.view_layer.objects.active = rig
        bpy.ops.object.mode_set(mode="EDIT")
        bone = rig.data.edit_bones.new("sway")
        bone.head, bone.tail = (0, 0, -1), (0, 0, 0)
        bpy.ops.object.mode_set(mode="OBJECT")
        grid.vertex_groups.new(name="sway").add(list(range(len(grid.data.vertices))), 1.0, "REPLACE")
        grid.modifiers.new("Armature", "ARMATURE").object = rig
        pose = rig.pose.bones["sway"]
        pose.keyframe_insert("rotation_quaternion", frame=1)
        pose.rotation_quaternion = (0.9998, 0.02, 0, 0)  # a slight sway
        pose.keyframe_insert("rotation_quaternion", frame=30)
    return scene, grid, ball


def frame_times(
    subdivisions: int, rigged: bool = False, away: bool = False, preset: str = "", last: int = 30, rippled=False
) -> tuple[list[float], int, list[int]]:
    from importlib import import_module

    scene, grid, _ = scene_with(subdivisions, rigged, away, rippled)
    addon = next(name for name in bpy.context.preferences.addons.keys() if name.endswith("collision_response"))
    guard, simulation = import_module(addon + ".blender.guard"), import_module(addon + ".blender.simulation")
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj.type == "MESH")  # the grid and the ball (not the rig)
    bpy.context.view_layer.objects.active = grid
    bpy.ops.object.collision_response_enable()
    if preset:
        path = bpy.utils.preset_find(preset, "collision_response")
        bpy.ops.script.execute_preset(filepath=path, menu_idname="COLLISION_RESPONSE_MT_presets")
    timings = []
    for frame in range(2, last + 1):
        with guard.busy():  # the handler stays out: the ball moves, nothing else
            scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        start = time.perf_counter()
        simulation.update_object(grid, scene, depsgraph)  # one step, from the frame before
        timings.append(time.perf_counter() - start)
        assert simulation.get(grid).head == frame
    return timings, len(grid.data.vertices), simulation.get(grid).surface.hierarchy.sizes


def shrinkwrap_time(subdivisions: int, away: bool = False, rippled: bool = False) -> float:
    scene, grid, ball = scene_with(subdivisions, away=away, rippled=rippled)
    scene.frame_set(16)
    modifier = grid.modifiers.new("Shrinkwrap", "SHRINKWRAP")
    modifier.wrap_method, modifier.target = "PROJECT", ball
    modifier.use_negative_direction = modifier.use_positive_direction = True
    depsgraph = bpy.context.evaluated_depsgraph_get()
    samples = []
    for _ in range(30):
        start = time.perf_counter()
        grid.data.update()
        depsgraph.update()
        grid.evaluated_get(depsgraph)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples[3:])


def main() -> None:
    zip_path = build(Path(tempfile.mkdtemp()))
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    print("whole frame = collider query + solver step + shape-key write (the playback update)")
    for subdivisions in (256, 316):
        timings, vertices, sizes = frame_times(subdivisions)
        sinking, holding = statistics.median(timings[2:14]) * 1e3, statistics.median(timings[16:]) * 1e3
        shrinkwrap = shrinkwrap_time(subdivisions) * 1e3
        kind = "grid" if len(sizes) and sizes[0] == 4 else "mesh"
        print(f"  {vertices:,} vertices ({kind} hierarchy, {len(sizes)} levels): Shrinkwrap {shrinkwrap:.1f} ms")
        print(f"    ball sinking {sinking:6.1f} ms  {sinking / shrinkwrap:5.2f} x Shrinkwrap")
        print(f"    ball held    {holding:6.1f} ms  {holding / shrinkwrap:5.2f} x Shrinkwrap")
        timings, _, _ = frame_times(subdivisions, preset="Soft Clay", last=60)
        settled = statistics.median(timings[-15:]) * 1e3  # frames 46-60: the press has settled
        print(f"    held, settled (Soft Clay) {settled:6.1f} ms  {settled / shrinkwrap:5.2f} x Shrinkwrap")
        timings, _, _ = frame_times(subdivisions, away=True)
        idle, shrinkwrap_idle = statistics.median(timings) * 1e3, shrinkwrap_time(subdivisions, away=True) * 1e3
        print(f"    ball away    {idle:6.1f} ms  {idle / shrinkwrap_idle:5.2f} x Shrinkwrap ({shrinkwrap_idle:.1f} ms)")
        if subdivisions == 316:
            timings, _, _ = frame_times(subdivisions, rippled=True)
            sinking, shrinkwrap = statistics.median(timings[2:14]) * 1e3, shrinkwrap_time(316, rippled=True) * 1e3
            print(f"    rippled, no flat region: Shrinkwrap {shrinkwrap:.1f} ms")
            print(f"      ball sinking {sinking:6.1f} ms  {sinking / shrinkwrap:5.2f} x Shrinkwrap")
        if subdivisions == 256:
            timings, _, _ = frame_times(subdivisions, rigged=True)
            sinking, holding = statistics.median(timings[2:14]) * 1e3, statistics.median(timings[16:]) * 1e3
            print(f"    rigged (armature, posed path): sinking {sinking:6.1f} ms, held {holding:6.1f} ms")


if __name__ == "__main__":
    main()
