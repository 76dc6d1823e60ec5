"""Bake speed: the time each frame of a bake to shape keys costs, early and late in a long bake.

The frame benchmark's 100k-vertex grid and sinking ball (``benchmark_frame.scene_with``),
baked over ``--frames`` frames by the Bake operator (run as a script runs it: every frame at
once). A bake whose frames cost the same early and late takes time in proportion to its
length; one whose keys are added as it goes makes Blender copy every key so far at each frame
after, and grows with the square of its length.

Usage: .venv/bin/python tools/benchmark_bake.py [--frames 120] [--subdivisions 316] [--zip build.zip]
"""

import argparse
import itertools
import sys
import time
from pathlib import Path

# bpy as the frame benchmark imports it (with a temporary user folder set first)
from benchmark_frame import bpy, enabled_scene, installed_module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--subdivisions", type=int, default=316, help="of Blender's Grid (316: 100,489 vertices)")
    parser.add_argument("--zip", type=Path, help="benchmark this build of the extension (an older commit's, say)")
    args = parser.parse_args()
    _scene, grid = enabled_scene(args.subdivisions, args.frames, args.zip)
    stamps = []
    handler = lambda *_args: stamps.append(time.perf_counter())  # noqa: E731 (after the add-on's)
    bpy.app.handlers.frame_change_post.append(handler)
    start = time.perf_counter()
    assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    total = time.perf_counter() - start
    bpy.app.handlers.frame_change_post.remove(handler)
    simulation = installed_module("blender.simulation")
    assert simulation.get(grid) is None  # baked: the live response is off
    frames = [b - a for a, b in itertools.pairwise(stamps)][: args.frames - 1]
    tenth = max(1, len(frames) // 10)
    early, late = sum(frames[:tenth]) / tenth * 1e3, sum(frames[-tenth:]) / tenth * 1e3
    count = len(grid.data.vertices)
    print(f"{count:,} vertices, {args.frames} frames baked in {total:.1f} s (keys and keyframes included)")
    print(f"  a frame: first tenth {early:.1f} ms, last tenth {late:.1f} ms (x {late / early:.2f})")


if __name__ == "__main__":
    sys.exit(main())
