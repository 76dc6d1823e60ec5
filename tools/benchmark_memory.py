"""Memory of the frames played: what the cache of played frames holds after a shot, against a
whole copy of the mesh a frame (what it held before it kept only the rows that changed).

The frame benchmark's grid and sinking ball (``benchmark_frame.scene_with``): the ball sinks
over frames 1-16, then holds; ``--frames`` frames are played as playback plays them.

Usage: .venv/bin/python tools/benchmark_memory.py [--frames 150] [--subdivisions 512]
"""

import argparse

# bpy as the frame benchmark imports it (with a temporary user folder set first)
from benchmark_frame import enabled_scene, installed_module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=150)
    parser.add_argument("--subdivisions", type=int, default=512, help="of Blender's Grid (512: 263,169 vertices)")
    args = parser.parse_args()
    scene, grid = enabled_scene(args.subdivisions, args.frames)
    for frame in range(1, args.frames + 1):
        scene.frame_set(frame)
    played = installed_module("blender.simulation").get(grid).frames
    whole = len(grid.data.vertices) * 12
    print(f"{len(grid.data.vertices):,} vertices, {len(played)} frames played")
    print(f"  cache {played.nbytes / 2**20:.1f} MB; a whole copy a frame: {whole * len(played) / 2**20:.1f} MB")


if __name__ == "__main__":
    main()
