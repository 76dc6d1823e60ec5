"""Mesh hierarchy speed: build time, and ms per step against the grid solver on the same surface.

The same rippled sheet is solved twice side by side: as a grid (the exact grid hierarchy)
and as an arbitrary triangle mesh (its vertices shuffled, so the general hierarchy is
built). Then build times for larger meshes, up to about a million vertices.

Usage: python tools/benchmark_mesh.py [--steps 20]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmark_solver import grid, press, press_centre, surface_with_everything_on

from core import LevelSettings, MeshHierarchy, Surface


def triangulated(side: int, seed: int = 0):
    """The benchmark's rippled sheet as a shuffled triangle mesh: rest (n, 3), triangles."""
    rest = grid(side, bumpy=True)
    row, col = np.divmod(np.arange((side - 1) ** 2), side - 1)
    first = row * side + col
    quads = np.stack([first, first + 1, first + side + 1, first + side], axis=1)
    triangles = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
    order = np.random.default_rng(seed).permutation(side * side)
    return rest[order], np.argsort(order)[triangles], order


def step_times(surface: Surface, steps: int) -> float:
    timings = []
    for i in range(steps + 3):
        d = press(surface.positions.astype(np.float64), press_centre(surface.positions, i), 0.4)
        start = time.perf_counter()
        surface.step(d, 1 / 24)
        if i >= 3:
            timings.append(time.perf_counter() - start)
    return statistics.median(timings) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    print("Same rippled sheet, same settings (every extension on), one step a frame:")
    for side in (257, 513):
        grid_surface = surface_with_everything_on(side, bumpy=True)
        rest, triangles, _ = triangulated(side)
        start = time.perf_counter()
        hierarchy = MeshHierarchy.from_triangles(rest, triangles)
        build = time.perf_counter() - start
        settings = LevelSettings.uniform(len(hierarchy.sizes), response_time=0.08, time_to_rest=0.5, yield_limit=0.03)
        settings.absorption[:] = np.linspace(0.1, 0.4, len(hierarchy.sizes))
        settings.absorption[2] = -0.2
        settings.maps["absorption"] = np.linspace(0.5, 1.0, side * side)
        settings.maps["time_to_rest"] = np.linspace(1.0, 2.0, side * side)
        mesh_surface = Surface(hierarchy, rest, settings)
        grid_ms, mesh_ms = step_times(grid_surface, args.steps), step_times(mesh_surface, args.steps)
        print(
            f"  {side * side:>9,} vertices: grid {grid_ms:6.1f} ms, mesh {mesh_ms:6.1f} ms per step "
            f"(x {mesh_ms / grid_ms:.2f}); mesh hierarchy built in {build:.2f} s, levels {hierarchy.sizes}"
        )
    print("Hierarchy build time:")
    for side in (317, 1001):
        rest, triangles, _ = triangulated(side)
        start = time.perf_counter()
        hierarchy = MeshHierarchy.from_triangles(rest, triangles)
        print(f"  {side * side:>9,} vertices: {time.perf_counter() - start:.2f} s, {len(hierarchy.sizes)} levels")


if __name__ == "__main__":
    main()
