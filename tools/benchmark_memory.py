"""Memory of the frames played: what the cache of played frames holds after a shot, against a
whole copy of the mesh a frame (what it held before it kept only the rows that changed), and
what a frame costs while the ball presses and while it holds, with the share of the mesh in
contact.

The frame benchmark's grid and sinking ball (``benchmark_frame.scene_with``): the ball sinks
``--depth`` into the grid over frames 1-16, then holds; ``--frames`` frames are played as
playback plays them. ``--radius 1 --depth 0.35``: about a fifth of the grid in contact.
The process's resident size (Linux) after Enable, after the press and at its peak.

Usage: .venv/bin/python tools/benchmark_memory.py [--frames 150] [--subdivisions 512]
       [--radius 0.5] [--depth 0.08]
"""

import argparse
from pathlib import Path

import numpy as np

# bpy as the frame benchmark imports it (with a temporary user folder set first)
from benchmark_frame import enabled_scene, installed_module

#: A vertex this near the ball's sphere (or inside it) is in contact (its faces lie up to
#: 1.2 mm inside the sphere at 45 segments).
CONTACT = 0.005
SINKING = 16  # the last frame the ball moves


def resident_gb(field: str = "VmRSS") -> float:
    """The process's resident size (``VmHWM``: its peak), GB."""
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith(field))
    return int(line.split()[1]) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=150)
    parser.add_argument("--subdivisions", type=int, default=512, help="of Blender's Grid (512: 263,169 vertices)")
    parser.add_argument("--radius", type=float, default=0.5, help="the ball's, m")
    parser.add_argument("--depth", type=float, default=0.08, help="how far the ball sinks into the grid, m")
    args = parser.parse_args()
    scene, grid = enabled_scene(args.subdivisions, args.frames)
    enabled = resident_gb()
    ball = next(obj for obj in scene.objects if obj.name.startswith("Sphere"))
    ball.animation_data_clear()
    ball.scale = (args.radius / 0.5,) * 3
    ball.location.z = args.radius
    ball.keyframe_insert("location", frame=1)
    ball.location.z = args.radius - args.depth
    ball.keyframe_insert("location", frame=SINKING)
    simulation = installed_module("blender.simulation")
    count = len(grid.data.vertices)
    whole = count * 12
    costs, contact, before = [], [], 0
    for frame in range(1, args.frames + 1):
        scene.frame_set(frame)
        played = simulation.get(grid).frames
        costs.append((played.nbytes - before) / whole)
        before = played.nbytes
        positions = played.last @ np.array(grid.matrix_world.to_3x3()).T + np.array(grid.matrix_world.translation)
        distance = np.linalg.norm(positions - np.array(ball.matrix_world.translation), axis=1)
        contact.append(np.mean(distance < args.radius + CONTACT))
        if frame == SINKING:
            pressed = resident_gb()
    print(f"{count:,} vertices, {len(played)} frames played (ball {args.radius} m, {args.depth} m deep)")
    print(f"  cache {played.nbytes / 2**20:.1f} MB; a whole copy a frame: {whole * len(played) / 2**20:.1f} MB")
    for name, frames in (("pressing", range(2, SINKING + 1)), ("held", range(SINKING + 1, args.frames + 1))):
        if len(frames):
            cost = np.mean([costs[f - 1] for f in frames])
            share = np.mean([contact[f - 1] for f in frames])
            span = f"frames {frames[0]}-{frames[-1]}"
            print(f"  {name} ({span}): {cost:.3f} of a whole copy a frame, {share:.1%} in contact")
    if args.frames >= SINKING:
        print(
            f"  process: {enabled:.2f} GB enabled, {pressed:.2f} GB pressed (frame {SINKING}), "
            f"{resident_gb():.2f} GB at the end, {resident_gb('VmHWM'):.2f} GB at its peak"
        )


if __name__ == "__main__":
    main()
