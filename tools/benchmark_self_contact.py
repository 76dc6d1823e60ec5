"""Self-contact's cost as playback sees it: `scene.frame_set` of a rigged tube bent into
itself with a ball pressing its elbow's outside, with Self-Contact on against off (each the
add-on on minus the add-on off, as tools/benchmark_frame.py times a frame).

The tube: closed, radius 0.3, 2 m long, 64 around x 61 rings (3,906 vertices), bound to two
bones, bent 105 degrees over frames 1-15 and held to 30 (its inner side passes into itself
from frame 12); a 0.25 m ball comes to the outside of the elbow and presses 6 cm in. Each
repeat plays frames 2..30 three ways, interleaved, each simulated afresh from frame 1:
  self-contact on:  the response enabled, Self-Contact on;
  self-contact off: the response enabled, Self-Contact off (the ball alone);
  add-on off:       the response disabled.
A frame's cost is on minus add-on off, averaged over frames 2-30; medians and minimums over
the repeats; the ratio is self-contact on over off (issue 20 asks for at most 1.5).

Usage: .venv/bin/python tools/benchmark_self_contact.py [--repeat 5] [--zip build.zip]
"""

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="collision_response_bench_"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(ROOT))  # (the tests' helpers read the add-on's own modules)
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "blender"))
import bent_tube  # noqa: E402
from build_extension import build  # noqa: E402

LAST, BENT, ANGLE = 30, 15, 105.0


def scene():
    """The bent tube and the ball, the response enabled on the tube: (scene, tube)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    bent_tube.RINGS, bent_tube.AROUND = 61, 64
    tube, _rig = bent_tube.rigged_tube([(1, 0.0), (BENT, ANGLE)])
    current = bpy.context.scene
    current.frame_start, current.frame_end = 1, LAST
    bend = math.radians(ANGLE)
    outside = -(np.array([0.0, 0.0, -1.0]) + np.array([0.0, -math.sin(bend), math.cos(bend)]))
    outside /= np.linalg.norm(outside)
    bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.25)
    ball = bpy.context.active_object
    for frame, depth in ((1, -0.4), (BENT + 5, 0.06), (LAST, 0.06)):
        ball.location = outside * (bent_tube.RADIUS * math.cos(bend / 2) + 0.25 - depth)
        ball.keyframe_insert("location", frame=frame)
    current.frame_set(1)
    bpy.ops.object.select_all(action="DESELECT")
    ball.select_set(True)
    tube.select_set(True)
    bpy.context.view_layer.objects.active = tube
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    return current, tube


def played(current, tube, simulation, way: str) -> float:
    """Mean seconds of `frame_set` over frames 2..LAST, played ``way``, simulated afresh."""
    settings = tube.collision_response
    settings.enabled = way != "add-on off"
    settings.self_contact = way == "self-contact on"
    simulation.invalidate_all()
    current.frame_set(1)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    seconds = []
    for frame in range(2, LAST + 1):
        started = time.perf_counter()
        current.frame_set(frame)
        tube.evaluated_get(depsgraph).data.vertices[0].co  # noqa: B018  (the shown mesh, read)
        seconds.append(time.perf_counter() - started)
    return sum(seconds) / len(seconds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--zip", type=Path)
    options = parser.parse_args()
    path = options.zip or build(Path(tempfile.mkdtemp()))
    bpy.ops.extensions.package_install_files(filepath=str(path), repo="user_default", enable_on_install=True)
    import importlib

    simulation = importlib.import_module("bl_ext.user_default.collision_response.blender.simulation")
    current, tube = scene()
    print(f"tube: {len(tube.data.vertices):,} vertices; load average {os.getloadavg()[0]:.2f}", flush=True)
    ways = ("self-contact on", "self-contact off", "add-on off")
    times: dict[str, list[float]] = {way: [] for way in ways}
    for _ in range(options.repeat):
        for way in ways:
            times[way].append(played(current, tube, simulation, way))
    costs = {way: [on - off for on, off in zip(times[way], times["add-on off"], strict=True)] for way in ways[:2]}
    for way in ways:
        print(f"{way:>17}: frame_set median {statistics.median(times[way]) * 1000:6.1f} ms")
    for way in ways[:2]:
        median, low = statistics.median(costs[way]), min(costs[way])
        print(f"{way:>17}: the add-on's cost a frame, median {median * 1000:6.1f} ms, min {low * 1000:6.1f} ms")
    ratio = statistics.median(costs["self-contact on"]) / statistics.median(costs["self-contact off"])
    print(f"ratio self-contact on / off (medians): {ratio:.2f}; load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
