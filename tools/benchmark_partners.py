"""Soft against soft, as playback sees it: two responding 50k-vertex balls pressed into each
other (Soft Against Each Other), against one responding 100k-vertex ball pressed by a rigid
ball of the same size on the same path, in one process.

A frame's cost is `scene.frame_set(f)` with the response on, minus the same frame with it
off (the keys it wrote left as they are, its ray-cast helpers out of the scene), as in
`benchmark_frame.py`; frame 1 is played untimed, each repeat simulates afresh from the start
frame. The balls (radius 0.5) close in until they overlap by 0.3 (frames 2-15), then slide
past each other (16-30). The issue's target: the pair costs at most 2 x the single mesh.

Usage: .venv/bin/python tools/benchmark_partners.py [--repeat 3] [--zip build.zip]
(--zip: benchmark that build of the extension, an older commit's, say; pin to cores with
`taskset -c 0` or `taskset -c 0,1`.)
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="collision_response_bench_"))

import bpy  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from benchmark_frame import installed_module  # noqa: E402
from build_extension import build  # noqa: E402

LAST = 30
PATHS = {  # frame: location
    "Left": {1: (-0.6, 0, 0), 15: (-0.35, 0, 0), LAST: (-0.35, 0.1, 0)},
    "Right": {1: (0.6, 0, 0), 15: (0.35, 0, 0), LAST: (0.35, -0.1, 0)},
}


def ball(name: str, segments: int, rings: int):
    bpy.ops.mesh.primitive_uv_sphere_add(segments=segments, ring_count=rings, radius=0.5)
    obj = bpy.context.active_object
    obj.name = obj.data.name = name
    for frame, location in PATHS[name].items():
        obj.location = location
        obj.keyframe_insert("location", frame=frame)
    return obj


def select(active, others) -> None:
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj == active or obj in others)
    bpy.context.view_layer.objects.active = active


def scene(pair: bool):
    """The pair (two 50k balls, each responding) or the single 100k ball and a rigid one:
    (scene, the responding balls)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    if pair:
        left, right = ball("Left", 256, 196), ball("Right", 256, 196)  # 49,922 vertices each
        select(left, [right])
        assert bpy.ops.object.collision_response_soft_pair() == {"FINISHED"}
        return scene, [left, right]
    left, right = ball("Left", 362, 277), ball("Right", 64, 32)  # 99,912 vertices; rigid
    select(left, [right])
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    return scene, [left]


def play(scene, responding, enabled: bool) -> list[float]:
    simulation, raycast = installed_module("blender.simulation"), installed_module("blender.collision.raycast")
    helpers = [o for o in bpy.data.objects if o.name.startswith(raycast.HELPER_NAME)]
    for obj in responding:
        simulation.invalidate(obj)
        obj.collision_response.enabled = enabled
    for helper in helpers:  # off: out of the scene, as if never made
        linked = helper.name in scene.collection.objects
        if enabled and not linked:
            scene.collection.objects.link(helper)
        elif not enabled and linked:
            scene.collection.objects.unlink(helper)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    scene.frame_set(1)
    times = []
    for frame in range(2, LAST + 1):
        start = time.perf_counter()
        scene.frame_set(frame)
        for obj in responding:
            len(obj.evaluated_get(depsgraph).data.vertices)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--zip", type=Path, help="benchmark this build of the extension (an older commit's, say)")
    args = parser.parse_args()
    zip_path = args.zip or build(Path(tempfile.mkdtemp()))
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    costs: dict[str, list[float]] = {"pair": [], "single": []}
    for _ in range(args.repeat):
        for name in costs:
            built, responding = scene(name == "pair")
            on, off = play(built, responding, True), play(built, responding, False)
            costs[name].append(1000 * statistics.mean(a - b for a, b in zip(on, off, strict=True)))
    print(f"a playback frame, frames 2-{LAST}, on minus off, ms (min, median of {args.repeat})")
    for name, label in (("pair", "two 50k balls, soft against each other"), ("single", "one 100k ball, a rigid ball")):
        print(f"  {label:42s} {min(costs[name]):6.1f} {statistics.median(costs[name]):6.1f}")
    ratio = statistics.median(costs["pair"]) / statistics.median(costs["single"])
    print(f"  pair / single (medians): {ratio:.2f} x (target at most 2)")


if __name__ == "__main__":
    main()
