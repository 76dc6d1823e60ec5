"""Collision query speed against Blender's Shrinkwrap modifier, side by side in one process.

A 100k-vertex grid (317 x 317) and a 2k-triangle UV sphere whose silhouette covers about a
fifth of the grid, pressed in a few centimetres. The query (broad phase, ray casts, vectors)
is timed against Shrinkwrap (Project, both directions) evaluated on the same grid and sphere.

Usage (needs the bpy module): .venv/bin/python tools/benchmark_query.py [--repeat 30]
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import os

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp())
import bpy
import numpy as np

from collision import CollisionQuery


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
    args = parser.parse_args()
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
    query = CollisionQuery(bpy.context.scene)
    contact = query.displacements(grid, positions, normals, [ball])
    query_ms = timed(lambda: query.displacements(grid, positions, normals, [ball]), args.repeat)
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
    pushed = int((np.linalg.norm(contact.displacement, axis=1) > 0).sum())
    print(f"grid {len(positions):,} vertices, sphere {triangles:,} triangles; median of {args.repeat}")
    print(f"  broad phase kept {contact.queried:,} vertices, {pushed:,} inside")
    print(f"  query      {query_ms:6.2f} ms")
    print(f"  Shrinkwrap {shrinkwrap_ms:6.2f} ms   (Project, both directions)")
    print(f"  ratio      {query_ms / shrinkwrap_ms:6.2f} x Shrinkwrap")


if __name__ == "__main__":
    main()
