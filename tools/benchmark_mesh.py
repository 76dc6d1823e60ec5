"""Mesh hierarchy speed: build time, and ms per step against the grid solver on the same surface.

The same rippled sheet is solved twice side by side: as a grid (the exact grid hierarchy)
and as an arbitrary triangle mesh (its vertices shuffled, so the general hierarchy is
built), and as an irregular one (jittered points, random diagonals: valences 4 to 8).
Then build times and peak memory for larger meshes, up to about a million vertices.

Usage: python tools/benchmark_mesh.py [--steps 20] [--sides 257 513 1025] [--build-sides 317 1001]
"""

import argparse
import json
import statistics
import subprocess
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


def jittered(side: int, seed: int = 0):
    """The rippled sheet made irregular, as a modeller's triangle mesh is: each point moved
    up to 0.3 of a cell, each quad split along a random diagonal (valences 4 to 8), the
    vertices shuffled. Returns rest (n, 3) and triangles."""
    rng = np.random.default_rng(seed)
    rest = grid(side, bumpy=True)
    cell = 2.0 / (side - 1)
    rest[:, :2] += rng.uniform(-0.3, 0.3, (rest.shape[0], 2)) * cell
    row, col = np.divmod(np.arange((side - 1) ** 2), side - 1)
    first = row * side + col
    a, b, c, d = first, first + 1, first + side + 1, first + side
    flip = rng.random(a.size) < 0.5
    triangles = np.concatenate(
        [
            np.where(flip[:, None], np.stack([a, b, d], 1), np.stack([a, b, c], 1)),
            np.where(flip[:, None], np.stack([b, c, d], 1), np.stack([a, c, d], 1)),
        ]
    )
    order = rng.permutation(side * side)
    return rest[order], np.argsort(order)[triangles]


def step_times(surface: Surface, steps: int) -> float:
    timings = []
    for i in range(steps + 3):
        d = press(surface.positions.astype(np.float64), press_centre(surface.positions, i), 0.4)
        start = time.perf_counter()
        surface.step(d, 1 / 24)
        if i >= 3:
            timings.append(time.perf_counter() - start)
    return statistics.median(timings) * 1e3


MESHES = {"shuffled": lambda side: triangulated(side)[:2], "jittered": jittered}


def build_once(kind: str, side: int) -> None:
    """Build one hierarchy in this process and print its time and the memory it took: the
    process's peak resident size during the build over its size before (Linux: the peak is
    reset first, as a child process starts with its parent's)."""
    rest, triangles = MESHES[kind](side)
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM, the peak resident size
    before = _status_kb("VmRSS")
    start = time.perf_counter()
    hierarchy = MeshHierarchy.from_triangles(rest, triangles)
    seconds = time.perf_counter() - start
    peak = (_status_kb("VmHWM") - before) / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "levels": len(hierarchy.sizes)}))


def _status_kb(field: str) -> int:
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith(field))
    return int(line.split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--sides", type=int, nargs="*", default=[257, 513, 1025], help="step: side^2 vertices")
    parser.add_argument("--build-sides", type=int, nargs="*", default=[317, 1001], help="build: side^2 vertices")
    parser.add_argument("--kinds", nargs="+", choices=list(MESHES), default=list(MESHES))
    parser.add_argument("--build-once", nargs=2, metavar=("KIND", "SIDE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_once:
        build_once(args.build_once[0], int(args.build_once[1]))
        return
    print("Same rippled sheet, same settings (every extension on), one step a frame:")
    for kind in args.kinds:
        make = MESHES[kind]
        for side in args.sides:
            grid_surface = surface_with_everything_on(side, bumpy=True)
            rest, triangles = make(side)
            hierarchy = MeshHierarchy.from_triangles(rest, triangles)
            settings = LevelSettings.uniform(
                len(hierarchy.sizes), response_time=0.08, time_to_rest=0.5, yield_limit=0.03
            )
            settings.absorption[:] = np.linspace(0.1, 0.4, len(hierarchy.sizes))
            settings.absorption[2] = -0.2
            settings.maps["absorption"] = np.linspace(0.5, 1.0, side * side)
            settings.maps["time_to_rest"] = np.linspace(1.0, 2.0, side * side)
            mesh_surface = Surface(hierarchy, rest, settings)
            grid_ms, mesh_ms = step_times(grid_surface, args.steps), step_times(mesh_surface, args.steps)
            print(
                f"  {kind:8s} {side * side:>9,} vertices: grid {grid_ms:6.1f} ms, mesh {mesh_ms:6.1f} ms "
                f"per step (x {mesh_ms / grid_ms:.2f}), levels {hierarchy.sizes}"
            )
    print("Hierarchy build (each in a fresh process: time, and the memory it took at its peak):")
    for kind in args.kinds:
        for side in args.build_sides:
            command = [sys.executable, __file__, "--build-once", kind, str(side)]
            result = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
            print(
                f"  {kind:8s} {side * side:>9,} vertices: {result['seconds']:6.2f} s, "
                f"{result['peak_mb']:6.0f} MB, {result['levels']} levels"
            )


if __name__ == "__main__":
    main()
