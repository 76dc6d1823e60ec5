"""How much a second core can give the solver's numpy: two surfaces stepped in two threads
against the same two stepped in turn, on one thread.

numpy lets go of Python's lock (the GIL) inside an operation on a large array, so two
threads can each run one at the same time; between operations each thread needs the lock.
Two independent surfaces, each pressed by its own ball, are the most parallel work a frame
could be split into (halves of one surface would make each operation smaller still): the
ratio in turn / in threads bounds what any split of the solver's step over two cores can
gain at that size. Irregular triangle meshes (as ``benchmark_mesh.py``'s ``jittered``, the
general hierarchy the add-on builds for a Blender mesh), every extension on.

Usage: python tools/benchmark_threads.py [--sides 257 317 513 1001] [--steps 20] [--repeat 3]
(pins itself to two cores, 0 and 1).
"""

import argparse
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmark_mesh import jittered, surface_on
from benchmark_solver import press, press_centre

from core import MeshHierarchy, Surface


def play(surface: Surface, steps: int) -> float:
    """Seconds for ``steps`` steps of a ball sinking into and sliding over ``surface``
    (the pushes worked out between the timed steps, outside the clock)."""
    spent = 0.0
    for i in range(steps):
        positions = surface.positions.astype(np.float64)
        push = press(positions, press_centre(positions, i), 0.4)
        start = time.perf_counter()
        surface.step(push, 1 / 24)
        spent += time.perf_counter() - start
    return spent


def in_turn(pair: list[Surface], steps: int) -> float:
    start = time.perf_counter()
    for each in pair:
        play(each, steps)
    return time.perf_counter() - start


def in_threads(pair: list[Surface], steps: int) -> float:
    threads = [threading.Thread(target=play, args=(each, steps)) for each in pair]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", type=int, nargs="+", default=[257, 317, 513, 1001], help="side^2 vertices")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3, help="each way, in turn")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0, 1})
    print(f"Two surfaces, {args.steps} steps each: in turn on one thread, then in two threads (2 cores):")
    for side in args.sides:
        rest, triangles = jittered(side)
        hierarchy = MeshHierarchy.from_triangles(rest, triangles)
        turns, threads = [], []
        for _ in range(args.repeat):  # each way afresh (the same steps), in turn
            turns.append(in_turn([surface_on(hierarchy, rest) for _ in range(2)], args.steps))
            threads.append(in_threads([surface_on(hierarchy, rest) for _ in range(2)], args.steps))
        ratios = [a / b for a, b in zip(turns, threads, strict=True)]
        print(
            f"  {side * side:>9,} vertices: in turn {min(turns) * 1e3:7.0f} ms, in threads {min(threads) * 1e3:7.0f} ms"
            f" (minima); gain {min(ratios):.2f}-{max(ratios):.2f} x (at most 2)"
        )


if __name__ == "__main__":
    main()
