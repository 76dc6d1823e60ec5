"""Solver speed: milliseconds per step on grids from 129^2 to 1025^2 vertices.

A sphere presses a patch of the grid while every extension is on: coarse absorption with a
bulging level, damping, relaxation, yield, behaviour maps on two properties. Each step
recomputes the displacement from the current surface, as playback does; only the solver's
``step`` is timed. One core (numpy does not thread these operations).

Usage: python tools/benchmark_solver.py [--sides 129 257 513 1025] [--steps 30]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from core import GridHierarchy, LevelSettings, Surface


def grid(side: int, bumpy: bool) -> np.ndarray:
    u, v = np.meshgrid(np.linspace(-1, 1, side), np.linspace(-1, 1, side))
    z = 0.02 * np.sin(40 * u) * np.cos(40 * v) + 0.3 * (u * u + v * v) if bumpy else np.zeros_like(u)
    return np.stack([u, v, z], axis=-1).reshape(-1, 3)


def press(points: np.ndarray, centre: np.ndarray, radius: float) -> np.ndarray:
    """Push straight down out of a sphere, zero outside."""
    rel = points - centre
    inside = (rel * rel).sum(axis=1) < radius * radius
    depth = np.sqrt(np.maximum(radius**2 - rel[:, 0] ** 2 - rel[:, 1] ** 2, 0.0)) + rel[:, 2]
    return np.where(inside[:, None], [0.0, 0.0, -1.0] * depth[:, None], 0.0)


def press_centre(positions: np.ndarray, step: int) -> np.ndarray:
    """Where the pressing sphere (radius 0.4) is at a step: sliding slowly, sinking 2 mm a
    step for 20 steps, starting 5 cm deep below the highest point of the surface under it."""
    x, y = 0.2 * np.sin(step / 5), 0.1
    under = (positions[:, 0] - x) ** 2 + (positions[:, 1] - y) ** 2 < 0.4**2
    return np.array([x, y, positions[under, 2].max() + 0.35 - 0.002 * min(step, 20)])


def surface_with_everything_on(side: int, bumpy: bool) -> Surface:
    hierarchy = GridHierarchy.for_side(side)
    rest = grid(side, bumpy)
    levels = len(hierarchy.sizes)
    settings = LevelSettings.uniform(levels, response_time=0.08, time_to_rest=0.5, yield_limit=0.03)
    settings.absorption[:] = np.linspace(0.1, 0.4, levels)
    settings.absorption[2] = -0.2  # a bulging level
    settings.maps["absorption"] = np.linspace(0.5, 1.0, side * side)
    settings.maps["time_to_rest"] = np.linspace(1.0, 2.0, side * side)
    return Surface(hierarchy, rest, settings)


def time_steps(side: int, steps: int, bumpy: bool) -> tuple[float, int]:
    """Median ms per step, and the mean number of vertices in contact."""
    surface = surface_with_everything_on(side, bumpy)
    timings, contact = [], []
    for i in range(steps + 3):
        centre = press_centre(surface.positions, i)
        d = press(surface.positions.astype(np.float64), centre, 0.4)  # about 1 % of the grid
        contact.append(int((np.abs(d).sum(axis=1) > 0).sum()))
        start = time.perf_counter()
        surface.step(d, 1 / 24)
        if i >= 3:  # the first steps build caches
            timings.append(time.perf_counter() - start)
    return statistics.median(timings) * 1e3, round(statistics.mean(contact))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", type=int, nargs="+", default=[129, 257, 513, 1025])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    print(f"numpy {np.__version__}, one step a frame, median of {args.steps} steps")
    print("flat: a plane; bumpy: a curved, rippled sheet (no zero offsets anywhere)")
    columns = [("grid", 10), ("vertices", 10), ("contact", 8), ("flat ms", 9), ("bumpy ms", 9)]
    columns += [("ns/vertex", 10), ("x prev", 7)]
    print(" ".join(f"{name:>{width}}" for name, width in columns))
    previous = None
    for side in args.sides:
        flat, contact = time_steps(side, args.steps, bumpy=False)
        bumpy, _ = time_steps(side, args.steps, bumpy=True)
        ratio = f"{bumpy / previous:7.2f}" if previous else f"{'':>7}"
        print(
            f"{side:>4} x {side:<4}{side * side:>10,}{contact:>9,}{flat:>9.1f} {bumpy:>9.1f}"
            f"{bumpy * 1e6 / side**2:>10.1f} {ratio}"
        )
        previous = bumpy


if __name__ == "__main__":
    main()
