"""Frame-rate independence of the whole surface, not only the dent: random presses on a sheet
played at 24, 60 and 120 fps with the add-on's own contact rules and solver (``core``, rays
cast exactly against balls), compared at the same instants.

Three kinds of press, each over random balls (size, place, depth, speed), absorption
profiles, Response Times and Times to Rest:
- settled: a ball comes down and holds; the sheet at the end (1.5 s);
- pressing: the same presses, every 1/12 s while they move and settle;
- sliding: a ball wandering over the sheet at up to about 1 m/s, every 1/12 s.
Each prints, per press, the largest difference of any vertex from the 120 fps sheet, as a
share of the press's depth, at 24 and at 60 fps, and then the largest and the median.

Usage: python tools/frame_rate.py [--presses 12] [--kinds settled pressing sliding] [--seed 0]
       [--root OLD_CHECKOUT]
(--root: measure another checkout's ``core`` and test harness, an older commit's, say.)
"""

import argparse
import copy
import statistics
import sys
from pathlib import Path

import numpy as np

#: Per level, coarse to fine (interpolated over the sheet's six levels).
PROFILES = {
    "rubber": [0.2, 0.5, 0.6, 0.6],
    "flesh": [0.0, -0.35, 0.3, 0.5],
    "stiff": [0.9, 0.8, 0.4, 0.1],
    "soft": [0.0, 0.3, 0.5, 0.7],
}
RATES = (24, 60, 120)
SECONDS = {"settled": 1.5, "pressing": 1.5, "sliding": 2.0}


def press(rng: np.random.Generator, kind: str):
    """A random press: (settings, radius, path(t) -> centres (frames, 3), depth, label)."""
    from core import LevelSettings  # (imported here: ``--root`` chooses which checkout's)

    name = str(rng.choice(list(PROFILES)))
    response_time, time_to_rest = float(rng.choice([0.0, 0.04, 0.1])), float(rng.choice([0.1, 0.35, 1.0]))
    settings = LevelSettings.uniform(6, time_to_rest=time_to_rest, response_time=response_time)
    settings.absorption[:] = np.interp(np.linspace(0, 1, 6), np.linspace(0, 1, 4), PROFILES[name])
    radius = float(rng.uniform(0.1, 0.5))
    label = f"{name:6s} response {response_time:.2f} rest {time_to_rest:.2f} radius {radius:.2f}"
    if kind == "sliding":  # keys every 0.4 s, up to 0.4 m apart, 0-8 cm deep
        keys = np.linspace(0, SECONDS[kind], 6)
        places = rng.uniform(-0.2, 0.2, (6, 2))
        depths = rng.uniform(0.0, 0.08, 6)
        depths[0] = -0.05

        def path(t):
            xy = [np.interp(t, keys, places[:, k]) for k in (0, 1)]
            return np.stack([*xy, radius - np.interp(t, keys, depths)], axis=1)

        return settings, radius, path, float(depths.max()), label
    x, y = rng.uniform(-0.5, 0.5, 2)
    depth, speed = float(rng.uniform(0.02, 0.1)), float(rng.uniform(0.1, 1.0))

    def path(t):
        return np.stack([0 * t + x, 0 * t + y, np.maximum(0.02 - speed * t, -depth) + radius], axis=1)

    return settings, radius, path, depth, f"{label} depth {depth:.3f} speed {speed:.2f}"


def played(kind: str, settings, radius: float, path, fps: int) -> np.ndarray:
    """The sheet every 1/12 s (frames, n, 3), or at the end only for ``settled``."""
    from contact_scenes import Ball, Frames
    from core import GridHierarchy, Surface
    from scenes import grid_quads, grid_rest

    surface = Surface(GridHierarchy(5), grid_rest(5), copy.deepcopy(settings))
    t = np.arange(round(SECONDS[kind] * fps) + 1) / fps
    scene = Frames(surface, grid_quads(33), [Ball(path(t), radius)], fps=fps)
    kept = []
    for frame in range(t.size):
        shown = scene.play(frame)
        if kind != "settled" and frame * 12 % fps == 0:
            kept.append(shown)
    return np.array([shown] if kind == "settled" else kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presses", type=int, default=12)
    parser.add_argument("--kinds", nargs="+", default=list(SECONDS), choices=list(SECONDS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    sys.path[:0] = [str(args.root), str(args.root / "tests")]
    for kind in args.kinds:
        print(f"{kind}: the largest difference from 120 fps, share of the depth (24 fps, 60 fps)")
        worst = []
        for index in range(args.presses):
            settings, radius, path, depth, label = press(np.random.default_rng((args.seed, index)), kind)
            sheets = {fps: played(kind, settings, radius, path, fps) for fps in RATES}
            off = [float(np.abs(sheets[fps] - sheets[120]).max()) / depth for fps in RATES[:2]]
            worst.append(max(off))
            print(f"  {label}: {off[0]:7.2%} {off[1]:7.2%}", flush=True)
        print(f"  largest {max(worst):.2%}, median {statistics.median(worst):.2%}")


if __name__ == "__main__":
    main()
