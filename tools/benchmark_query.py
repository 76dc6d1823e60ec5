"""Collision query speed against Blender's Shrinkwrap modifier, side by side in one process.

A 100k-vertex grid (317 x 317) and a 2k-triangle UV sphere whose silhouette covers about a
fifth of the grid, sinking in, then held. The query (broad phase, ray casts, vectors) is
timed frame by frame against Shrinkwrap (Project, both directions) on the same grid and sphere.

Usage (needs the bpy module): .venv/bin/python tools/benchmark_query.py [--repeat 30] [--frames 15]
"""

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import os

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp())
import bpy
import numpy as np
from build_extension import build


def timed(function, repeat: int) -> float:
    function()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--frames", type=int, default=15, help="frames sinking, then as many held")
    args = parser.parse_args()
    # The add-on as a user installs it: its modules import each other within the package.
    zip_path = build(Path(tempfile.mkdtemp()))
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    collision = importlib.import_module("bl_ext.user_default.collision_response.blender.collision")
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=316, y_subdivisions=316, size=2)
    grid = bpy.context.active_object
    # Silhouette radius 0.5: pi 0.25 / 4 = a fifth of the 2 x 2 grid; 5 cm deep.
    bpy.ops.mesh.primitive_uv_sphere_add(segments=45, ring_count=23, radius=0.5, location=(0, 0, 0.45))
    ball = bpy.context.active_object
    triangles = sum(len(p.vertices) - 2 for p in ball.data.polygons)
    positions = np.empty(len(grid.data.vertices) * 3, dtype=np.float32)
    grid.data.vertices.foreach_get("co", positions)
    positions = positions.reshape(-1, 3)
    normals = np.tile(np.float32([0, 0, 1]), (len(positions), 1))
    query = collision.CollisionQuery(bpy.context.scene)
    # Playback: the ball sinks 2 mm a frame, then holds; the surface follows fully compliant
    # (every contact vertex moved to its goal, as the solver's finest level does), so held
    # vertices rest on the ball and are measured from behind.
    surface, pressing, holding, queried, inside, resting = positions.copy(), [], [], 0, 0, 0
    for frame in range(2 * args.frames):
        ball.location.z = 0.45 - 0.002 * min(frame, args.frames)
        bpy.context.view_layer.update()
        start = time.perf_counter()
        contact = query.displacements(grid, surface, normals, [ball])
        (pressing if frame < args.frames else holding).append(time.perf_counter() - start)
        surface += contact.displacement
        queried, inside = contact.queried, int((np.linalg.norm(contact.displacement, axis=1) > 0).sum())
        resting = int(contact.touching.sum())
    press_ms = statistics.median(pressing[2:]) * 1e3
    hold_ms = statistics.median(holding) * 1e3
    query.caster.remove()
    shrinkwrap = grid.modifiers.new("Shrinkwrap", "SHRINKWRAP")
    shrinkwrap.wrap_method, shrinkwrap.target = "PROJECT", ball
    shrinkwrap.use_negative_direction = shrinkwrap.use_positive_direction = True
    depsgraph = bpy.context.evaluated_depsgraph_get()

    def evaluate_shrinkwrap():
        grid.data.update()  # tag the grid so the modifier runs again
        depsgraph.update()
        grid.evaluated_get(depsgraph)

    shrinkwrap_ms = timed(evaluate_shrinkwrap, args.repeat)
    print(f"grid {len(positions):,} vertices, sphere {triangles:,} triangles; medians")
    print(f"  Shrinkwrap           {shrinkwrap_ms:6.2f} ms   (Project, both directions)")
    print(f"  query, ball sinking  {press_ms:6.2f} ms  {press_ms / shrinkwrap_ms:5.2f} x Shrinkwrap")
    print(
        f"  query, ball held     {hold_ms:6.2f} ms  {hold_ms / shrinkwrap_ms:5.2f} x Shrinkwrap"
        f"   (last frame: {queried:,} cast for, {inside:,} inside, {resting:,} resting on it)"
    )


if __name__ == "__main__":
    main()
