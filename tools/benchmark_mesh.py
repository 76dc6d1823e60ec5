"""Mesh hierarchy speed: build time, and ms per step against the grid solver on the same surface.

The same rippled sheet is solved twice side by side: as a grid (the exact grid hierarchy)
and as an arbitrary triangle mesh (its vertices shuffled, so the general hierarchy is
built), and as an irregular one (jittered points, random diagonals: valences 4 to 8).
Then build times and peak memory for larger meshes, up to about a million vertices.

Usage: python tools/benchmark_mesh.py [--steps 20] [--sides 257 513 1025] [--build-sides 317 1001]
       [--build-repeat 3] [--against OLD_CHECKOUT]
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


def surface_on(hierarchy: MeshHierarchy, rest: np.ndarray) -> Surface:
    """A surface on a general hierarchy with every extension on, as ``benchmark_solver``'s
    grid: coarse absorption with a bulging level, damping, relaxation, yield, two maps."""
    levels = len(hierarchy.sizes)
    settings = LevelSettings.uniform(levels, response_time=0.08, time_to_rest=0.5, yield_limit=0.03)
    settings.absorption[:] = np.linspace(0.1, 0.4, levels)
    settings.absorption[2] = -0.2
    settings.maps["absorption"] = np.linspace(0.5, 1.0, rest.shape[0])
    settings.maps["time_to_rest"] = np.linspace(1.0, 2.0, rest.shape[0])
    return Surface(hierarchy, rest, settings)


def step_times(surfaces: list[Surface], steps: int) -> list[list[float]]:
    """ms per step of each surface, stepped in turn (one step of each, then the next), so a
    machine that slows down for a while slows them all alike: a list of timings each."""
    timings: list[list[float]] = [[] for _ in surfaces]
    for i in range(steps + 3):
        for surface, times in zip(surfaces, timings, strict=True):
            d = press(surface.positions.astype(np.float64), press_centre(surface.positions, i), 0.4)
            start = time.perf_counter()
            surface.step(d, 1 / 24)
            if i >= 3:
                times.append((time.perf_counter() - start) * 1e3)
    return timings


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
    parser.add_argument("--build-repeat", type=int, default=1, help="builds of each mesh (in turn with --against)")
    parser.add_argument("--against", type=Path, help="another checkout (an older commit's), its builds in turn")
    parser.add_argument("--build-once", nargs=2, metavar=("KIND", "SIDE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_once:
        build_once(args.build_once[0], int(args.build_once[1]))
        return
    median = statistics.median
    print("Same rippled sheet, same settings (every extension on), one step a frame, grid and mesh in turn:")
    for kind in args.kinds:
        make = MESHES[kind]
        for side in args.sides:
            grid_surface = surface_with_everything_on(side, bumpy=True)
            rest, triangles = make(side)
            hierarchy = MeshHierarchy.from_triangles(rest, triangles)
            mesh_surface = surface_on(hierarchy, rest)
            grid_ms, mesh_ms = step_times([grid_surface, mesh_surface], args.steps)
            ratios = [mesh / grid for grid, mesh in zip(grid_ms, mesh_ms, strict=True)]  # step by step
            # Medians, not minima: the press moves, and a step it misses is nearly free.
            print(
                f"  {kind:8s} {side * side:>9,} vertices: grid {median(grid_ms):6.1f} ms, "
                f"mesh {median(mesh_ms):6.1f} ms a step (medians), x {median(ratios):.2f} (median of the ratios); "
                f"{median(mesh_ms) * 1e6 / (side * side):.0f} ns a vertex; levels {hierarchy.sizes}"
            )
    trees = [("this tree", Path(__file__))]
    if args.against:
        trees.append((f"{args.against}", args.against / "tools" / Path(__file__).name))
    against = f" and {args.against}" if args.against else ""
    print(
        f"Hierarchy build (each in a fresh process, {args.build_repeat} of this tree{against} in turn:"
        " time min / median, and the memory it took at its peak, the largest):"
    )
    for kind in args.kinds:
        for side in args.build_sides:
            results: dict[str, list[dict]] = {name: [] for name, _script in trees}
            for _repeat in range(args.build_repeat):
                for name, script in trees:
                    command = [sys.executable, str(script), "--build-once", kind, str(side)]
                    results[name].append(
                        json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
                    )
            for name, runs in results.items():
                seconds = [run["seconds"] for run in runs]
                print(
                    f"  {kind:8s} {side * side:>9,} vertices: {min(seconds):6.2f} / {median(seconds):6.2f} s, "
                    f"{max(run['peak_mb'] for run in runs):6.0f} MB, {runs[0]['levels']} levels ({name})"
                )


if __name__ == "__main__":
    main()
