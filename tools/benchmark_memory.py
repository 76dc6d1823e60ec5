"""Memory of the frames played: what the simulation holds to show its played frames again
after a shot (the frames and pressures kept, and the states kept to simulate again from:
``Simulation.nbytes``), against a whole copy of the mesh a frame, what a frame costs while
the ball presses and while it holds, with the share of the mesh in contact, and how long a
jump back to a played frame takes.

The frame benchmark's grid and sinking ball (``benchmark_frame.scene_with``): the ball sinks
``--depth`` into the grid over frames 1-16, then holds; with ``--sinking F`` it sinks
``--further`` deeper from frame 16 to F (pressing on: every frame moves), then holds.
``--frames`` frames are played as playback plays them (a frame's cost: the growth of what is
held, as a share of a whole copy; its time: the median ``frame_set``). ``--radius 1 --depth
0.35``: about a fifth of the grid in contact. The process's resident size (Linux) after
Enable, after the press and at its peak. Then ``--scrubs`` jumps to random played frames
(``frame_set``, as scrubbing does), timed. ``--zip``: measure an older build.

``--budget MB``: the played frames' memory budget (the add-on's preference, Played Frames
Memory; its default when not given). Past it frames are let go of and simulated again when
shown: how many were, how many frames the jumps simulated again, and what a frame costs once
the budget is reached (what the cache grows by: the states kept, as a share of a copy).

Usage: .venv/bin/python tools/benchmark_memory.py [--frames 150] [--subdivisions 512]
       [--radius 0.5] [--depth 0.08] [--sinking 16] [--further 0] [--scrubs 20] [--zip Z]
       [--budget MB]
"""

import argparse
import time
from pathlib import Path

import numpy as np

# bpy as the frame benchmark imports it (with a temporary user folder set first)
from benchmark_frame import bpy, enabled_scene, installed_module

#: A vertex this near the ball's sphere (or inside it) is in contact (its faces lie up to
#: 1.2 mm inside the sphere at 45 segments).
CONTACT = 0.005


def resident_gb(field: str = "VmRSS") -> float:
    """The process's resident size (``VmHWM``: its peak), GB."""
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith(field))
    return int(line.split()[1]) / 2**20


def cache_bytes(simulation) -> int:
    """What the simulation holds to show its played frames again: the frames (and pressures)
    kept, and any states kept to simulate again from (``Simulation.nbytes``, when it has one)."""
    if hasattr(simulation, "nbytes"):
        return simulation.nbytes
    return simulation.frames.nbytes + simulation.pressures.nbytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=150)
    parser.add_argument("--subdivisions", type=int, default=512, help="of Blender's Grid (512: 263,169 vertices)")
    parser.add_argument("--radius", type=float, default=0.5, help="the ball's, m")
    parser.add_argument("--depth", type=float, default=0.08, help="how far the ball sinks into the grid, m")
    parser.add_argument("--sinking", type=int, default=16, help="the frame the ball stops sinking at")
    parser.add_argument("--further", type=float, default=0.0, help="how much deeper it sinks after frame 16, m")
    parser.add_argument("--zip", type=Path, help="measure this build of the extension (an older commit's, say)")
    parser.add_argument("--scrubs", type=int, default=20, help="jumps back to random played frames, timed")
    parser.add_argument("--budget", type=int, help="the played frames' memory budget, MB (the preference)")
    args = parser.parse_args()
    sinking = args.sinking
    scene, grid = enabled_scene(args.subdivisions, args.frames, args.zip)
    addons = bpy.context.preferences.addons
    preferences = addons[next(key for key in addons.keys() if key.endswith("collision_response"))]
    budget = getattr(preferences.preferences, "played_memory", None)
    if args.budget is not None and budget is not None:
        preferences.preferences.played_memory = budget = args.budget
    enabled = resident_gb()
    ball = next(obj for obj in scene.objects if obj.name.startswith("Sphere"))
    ball.animation_data_clear()
    ball.scale = (args.radius / 0.5,) * 3
    ball.location.z = args.radius
    ball.keyframe_insert("location", frame=1)
    ball.location.z = args.radius - args.depth
    ball.keyframe_insert("location", frame=min(16, sinking))
    if sinking > 16:
        ball.location.z -= args.further
        ball.keyframe_insert("location", frame=sinking)
    simulation = installed_module("blender.simulation")
    count = len(grid.data.vertices)
    whole = count * 12
    costs, contact, seconds, before, reached, states = [], [], [], 0, None, []
    for frame in range(1, args.frames + 1):
        started = time.perf_counter()
        scene.frame_set(frame)
        seconds.append(time.perf_counter() - started)
        played = simulation.get(grid).frames
        held = cache_bytes(simulation.get(grid))
        costs.append((held - before) / whole)
        before = held
        states.append(getattr(simulation.get(grid), "states_nbytes", 0))
        if reached is None and dropped(simulation.get(grid)):
            reached = frame  # the budget reached: frames let go of from here on
        positions = played.last @ np.array(grid.matrix_world.to_3x3()).T + np.array(grid.matrix_world.translation)
        distance = np.linalg.norm(positions - np.array(ball.matrix_world.translation), axis=1)
        contact.append(np.mean(distance < args.radius + CONTACT))
        if frame == sinking:
            pressed = resident_gb()
    print(f"{count:,} vertices, {len(played)} frames played (ball {args.radius} m, {args.depth} m deep)")
    print(f"  cache {held / 2**20:.1f} MB; a whole copy a frame: {whole * len(played) / 2**20:.1f} MB")
    state = simulation.get(grid)
    if budget is not None:
        print(
            f"  budget {budget} MB: {dropped(state)} frames let go of (first at frame {reached}), "
            f"states {states[-1] / 2**20:.1f} MB, frames and pressures {(held - states[-1]) / 2**20:.1f} MB"
        )
        if reached is not None and reached < args.frames:
            over = range(reached + 1, args.frames + 1)
            cost = np.mean([costs[f - 1] for f in over])
            share = np.mean([contact[f - 1] for f in over])
            grown = (states[-1] - states[reached - 1]) / len(over) / whole
            span = f"frames {over[0]}-{over[-1]}"
            print(
                f"  past the budget ({span}, {share:.1%} in contact): the cache grows {cost:.3f} of a whole "
                f"copy a frame, the states {grown:.3f} (the frames let go of make room for them)"
            )
    phases = [("pressing", range(2, min(16, sinking) + 1))]
    if sinking > 16:
        phases.append(("pressing on", range(17, sinking + 1)))
    phases.append(("held", range(sinking + 1, args.frames + 1)))
    for name, frames in phases:
        if len(frames):
            cost = np.mean([costs[f - 1] for f in frames])
            share = np.mean([contact[f - 1] for f in frames])
            took = [seconds[f - 1] * 1e3 for f in frames]  # (the mean counts the states kept every 8 frames)
            span = f"frames {frames[0]}-{frames[-1]}"
            print(
                f"  {name} ({span}): {cost:.3f} of a whole copy a frame, {share:.1%} in contact, "
                f"{np.median(took):.0f} ms a frame (mean {np.mean(took):.0f})"
            )
    if args.frames >= sinking:
        print(
            f"  process: {enabled:.2f} GB enabled, {pressed:.2f} GB pressed (frame {sinking}), "
            f"{resident_gb():.2f} GB at the end, {resident_gb('VmHWM'):.2f} GB at its peak"
        )
    if args.scrubs:
        rng = np.random.default_rng(0)
        times, again = [], []
        for frame in rng.integers(1, args.frames + 1, args.scrubs):
            replayed = getattr(simulation.get(grid), "replayed", 0)
            started = time.perf_counter()
            scene.frame_set(int(frame))
            times.append((time.perf_counter() - started) * 1e3)
            again.append(getattr(simulation.get(grid), "replayed", 0) - replayed)
        print(
            f"  scrubbing to {args.scrubs} random played frames: median {np.median(times):.0f} ms, "
            f"max {max(times):.0f} ms; {sum(a > 0 for a in again)} of them simulated "
            f"{sum(again)} frames again"
        )
        print(f"  process at its peak after the scrubs: {resident_gb('VmHWM'):.2f} GB")


def dropped(state) -> int:
    """How many played frames the cache let go of (0 for a build without a budget)."""
    frames = state.frames
    return frames.dropped() if hasattr(frames, "dropped") else 0


if __name__ == "__main__":
    main()
