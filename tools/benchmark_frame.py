"""Whole-frame speed as playback sees it: `scene.frame_set` with the add-on on, minus off,
against Shrinkwrap's modifier on, minus off, in one process.

Scenes: Blender's Grid with 256 subdivisions (66,049 vertices, the exact grid hierarchy) and
with 316 (100,489 vertices, not a 2^m + 1 grid, so the general mesh hierarchy); a 2k-triangle
ball whose silhouette covers a fifth of the grid sinks 8 cm in over 15 frames, then holds.
Cases: the default settings (frames 4-15 sinking, 18-30 held); a press held until it settles
(the Soft Clay preset, frames 46-60: vertices rest on the ball); the ball away (moving as
before, 2 m to the side: a frame without contact); the 66k grid bound to an armature (one
bone, swaying: the posed path); the 100k grid rippled (1 cm waves: a vertex on a flat
region has no rest offset and needs no frame, so a curved mesh costs more); the 100k mesh
with three colliders (the ball, a smaller ball sinking into one corner, a box sliding across
another; Shrinkwrap gets a modifier for each); the 100k mesh and a 32k-face ball (a dense
collider, as a sculpted hand is); Suzanne subdivided to 126k vertices with a
torus sliding across her face (a dense curved mesh, contact moving every frame).

Every figure is a frame as playback runs it, timed around `scene.frame_set(f)` and the
evaluated mesh read after it (the frame-change handler runs the add-on's step and writes its
shape key; Blender evaluates the mesh with the new key inside the same `frame_set`). Each
repeat plays frames 2..last four times, interleaved:
  add-on on:      the response enabled and simulated afresh from the start frame (frame 1 is
                  played untimed), so frame f is always the step from f - 1, never a cached frame;
  add-on off:     the same scene and frames, the response disabled (its key left as it is,
                  its ray-cast helper unlinked from the scene);
  Shrinkwrap on:  a plain copy of the mesh (no shape key) with a Shrinkwrap modifier (Project,
                  both directions) onto the same ball;
  Shrinkwrap off: the same copy without the modifier.
A frame's cost is on minus off, averaged over the frames of a phase (sinking, held, ...);
min and median are over the repeats, and the ratio add-on / Shrinkwrap compares the figures
of the same run.

Usage: .venv/bin/python tools/benchmark_frame.py [--repeat 7] [--quick] [--cases 100k,100k-away] [--zip build.zip]
       .venv/bin/python tools/benchmark_frame.py --cores 1,2   # pinned to core 0, then cores 0-1
--cores runs the benchmark once per count under `taskset -c 0..n-1`, prints each table, and
how each side scales (the 1-core time over the n-core time).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="collision_response_bench_"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from build_extension import build  # noqa: E402


def scene_with(
    subdivisions: int, rigged: bool = False, away: bool = False, rippled: bool = False, monkey=False, dense=False
):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 30
    if monkey:
        return (scene, *monkey_and_torus(subdivisions))
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=subdivisions, y_subdivisions=subdivisions, size=2)
    grid = bpy.context.active_object
    if rippled:  # no flat region: every vertex has a rest offset, so every placement needs a frame
        co = np.empty(len(grid.data.vertices) * 3)
        grid.data.vertices.foreach_get("co", co)
        x, y = co[0::3], co[1::3]
        co[2::3] = 0.01 * np.sin(12 * x) * np.cos(12 * y)
        grid.data.vertices.foreach_set("co", co)
        grid.data.update()
    # Away: the same motion 2 m to the side of the grid (its edge is at x = 1), so a frame
    # still moves the ball (Shrinkwrap evaluates again) but nothing touches, nor lies along
    # the grid's normals (Shrinkwrap's projection misses).
    x = 3.0 if away else 0.0
    segments, rings = (256, 128) if dense else (45, 23)  # 32k faces, a sculpted hand's count
    bpy.ops.mesh.primitive_uv_sphere_add(segments=segments, ring_count=rings, radius=0.5, location=(x, 0, 0.5))
    ball = bpy.context.active_object
    ball.keyframe_insert("location", frame=1)
    ball.location.z = 0.42
    ball.keyframe_insert("location", frame=16)
    if rigged:
        rig = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
        scene.collection.objects.link(rig)
        bpy.context.view_layer.objects.active = rig
        bpy.ops.object.mode_set(mode="EDIT")
        bone = rig.data.edit_bones.new("sway")
        bone.head, bone.tail = (0, 0, -1), (0, 0, 0)
        bpy.ops.object.mode_set(mode="OBJECT")
        grid.vertex_groups.new(name="sway").add(list(range(len(grid.data.vertices))), 1.0, "REPLACE")
        grid.modifiers.new("Armature", "ARMATURE").object = rig
        pose = rig.pose.bones["sway"]
        pose.keyframe_insert("rotation_quaternion", frame=1)
        pose.rotation_quaternion = (0.9998, 0.02, 0, 0)  # a slight sway
        pose.keyframe_insert("rotation_quaternion", frame=30)
    return scene, grid, ball


def monkey_and_torus(subdivisions: int):
    """Suzanne (2 m) subdivided ``subdivisions`` times, applied (4: 126,290 vertices, the
    general mesh hierarchy), and a torus (25 cm ring, 8 cm tube) facing her, sliding across
    her brow and eyes from ear to ear over 30 frames, its near side up to 10 cm deep."""
    bpy.ops.mesh.primitive_monkey_add(size=2)
    head = bpy.context.active_object
    head.modifiers.new("Subdivision", "SUBSURF").levels = subdivisions
    bpy.ops.object.modifier_apply(modifier="Subdivision")
    bpy.ops.mesh.primitive_torus_add(
        major_radius=0.25, minor_radius=0.08, rotation=(1.5708, 0, 0), location=(-0.7, -0.8, 0.25)
    )
    torus = bpy.context.active_object
    torus.keyframe_insert("location", frame=1)
    torus.location.x = 0.7
    torus.keyframe_insert("location", frame=30)
    return head, torus


def floor_plane() -> list:
    """A 20 m plane 30 cm under the grid, touching nothing: what an open collider (a floor)
    costs the frame when it only has to be watched."""
    bpy.ops.mesh.primitive_plane_add(size=20.0, location=(0, 0, -0.3))
    return [bpy.context.active_object]


def two_more_colliders() -> list:
    """A smaller ball sinking into the grid's far corner and a box sliding 4 cm deep across
    the near one: with ``scene_with``'s ball, three colliders, each pressing its own part."""
    bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.2, location=(-0.75, 0.75, 0.2))
    small = bpy.context.active_object
    small.keyframe_insert("location", frame=1)
    small.location.z = 0.14
    small.keyframe_insert("location", frame=16)
    bpy.ops.mesh.primitive_cube_add(size=0.3, location=(0.55, -0.7, 0.11))
    box = bpy.context.active_object
    box.keyframe_insert("location", frame=1)
    box.location.x = 0.8
    box.keyframe_insert("location", frame=30)
    return [small, box]


def enabled_scene(subdivisions: int, frames: int, zip_path: Path | None = None):
    """The extension installed (``zip_path``, or built from here) and ``scene_with``'s grid
    and sinking ball over ``frames`` frames, the response enabled on the grid: (scene, grid)."""
    zip_path = zip_path or build(Path(tempfile.mkdtemp()))
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    scene, grid, ball = scene_with(subdivisions)
    scene.frame_start, scene.frame_end = 1, frames
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in (grid, ball))
    bpy.context.view_layer.objects.active = grid
    bpy.ops.object.collision_response_enable()
    return scene, grid


@dataclass
class Case:
    name: str  # for --cases
    label: str
    subdivisions: int
    phases: dict[str, tuple[int, int]]  # name: (first, last) frame, inclusive
    rigged: bool = False
    away: bool = False
    rippled: bool = False
    three: bool = False  # three colliders (``two_more_colliders``), Shrinkwrap three modifiers
    monkey: bool = False  # ``monkey_and_torus``: ``subdivisions`` are the head's
    dense: bool = False  # a ball of 32k faces
    preset: str = ""
    last: int = 30
    pressure: bool = False  # the pressure attribute written every frame
    still: bool = False  # every damping ratio 1 after the preset: no overshoot
    volume: float = 0.0  # Keep Volume on with this reach (0: off)
    floor: bool = False  # a plane under the grid as well (``floor_plane``), Shrinkwrap two modifiers


SINKING, HELD, SETTLED = (4, 15), (18, 30), (46, 60)
CLAY = {"preset": "Soft Clay", "last": 60}
CASES = [
    Case("66k", "66k grid", 256, {"sinking": SINKING, "held": HELD}),
    Case("66k-clay", "66k grid, Soft Clay", 256, {"sinking": SINKING, "settled": SETTLED}, **CLAY),
    Case("66k-away", "66k grid, ball away", 256, {"away": (2, 30)}, away=True),
    Case("66k-rigged", "66k grid, rigged", 256, {"sinking": SINKING, "held": HELD}, rigged=True),
    Case("100k", "100k mesh", 316, {"sinking": SINKING, "held": HELD}),
    Case("100k-clay", "100k mesh, Soft Clay", 316, {"sinking": SINKING, "settled": SETTLED}, **CLAY),
    Case("100k-away", "100k mesh, ball away", 316, {"away": (2, 30)}, away=True),
    Case("100k-rippled", "100k mesh, rippled", 316, {"sinking": SINKING, "held": HELD}, rippled=True),
    Case("100k-dense", "100k mesh, 32k-face ball", 316, {"sinking": SINKING, "held": HELD}, dense=True),
    Case("100k-three", "100k mesh, 3 colliders", 316, {"sinking": SINKING, "held": HELD}, three=True),
    Case("monkey", "126k monkey, torus sliding", 4, {"sliding": (4, 30)}, monkey=True),
    # Issue 21's features on: overshoot (the Jelly preset, and the same with every damping
    # ratio 1, to compare) and the pressure attribute (against 100k).
    Case(
        "100k-still", "100k mesh, Jelly at ratio 1", 316, {"sinking": SINKING, "held": HELD}, preset="Jelly", still=True
    ),
    Case("100k-jelly", "100k mesh, Jelly (overshoot)", 316, {"sinking": SINKING, "held": HELD}, preset="Jelly"),
    Case("100k-pressure", "100k mesh, pressure written", 316, {"sinking": SINKING, "held": HELD}, pressure=True),
    # Keep Volume (reach 50 cm, the default) against 100k.
    Case("100k-volume", "100k mesh, Keep Volume", 316, {"sinking": SINKING, "held": HELD}, volume=0.5),
    # An open collider watched every frame (a plane as floor, touching nothing) against 100k.
    Case("100k-floor", "100k mesh, a plane under it", 316, {"sinking": SINKING, "held": HELD}, floor=True),
]
QUICK_CASES = ["66k", "100k"]
PASSES = ("on", "off", "shrinkwrap on", "shrinkwrap off")


def installed_module(name: str):
    """A module of the installed add-on (``blender.simulation``...); for a build from before
    the glue moved into ``blender/`` (``--zip``), the module of that name at the top."""
    from importlib import import_module

    addon = next(key for key in bpy.context.preferences.addons.keys() if key.endswith("collision_response"))
    try:
        return import_module(f"{addon}.{name}")
    except ModuleNotFoundError:
        return import_module(f"{addon}.{name.removeprefix('blender.')}")


@dataclass
class Bench:
    """One case's scene: the responding grid, a plain copy for Shrinkwrap, the ball."""

    case: Case
    times: dict[str, list[list[float]]] = field(default_factory=lambda: {name: [] for name in PASSES})

    def __post_init__(self) -> None:
        case = self.case
        self.simulation = installed_module("blender.simulation")
        self.raycast = installed_module("blender.collision.raycast")
        self.scene, self.grid, ball = scene_with(
            case.subdivisions, case.rigged, case.away, case.rippled, case.monkey, case.dense
        )
        self.colliders = [ball, *(two_more_colliders() if case.three else []), *(floor_plane() if case.floor else [])]
        self.scene.frame_end = case.last
        # Shrinkwrap's mesh: the same vertices, modifiers (the armature) and vertex groups,
        # no shape key, never a responding mesh.
        self.plain = self.grid.copy()
        self.plain.data = self.grid.data.copy()
        self.plain.name = "Grid (Shrinkwrap)"
        self.scene.collection.objects.link(self.plain)
        for obj in bpy.context.view_layer.objects:
            obj.select_set(obj == self.grid or obj in self.colliders)
        bpy.context.view_layer.objects.active = self.grid
        bpy.ops.object.collision_response_enable()
        if case.preset:
            path = bpy.utils.preset_find(case.preset, "collision_response")
            bpy.ops.script.execute_preset(filepath=path, menu_idname="COLLISION_RESPONSE_MT_presets")
        if case.pressure:
            self.grid.collision_response.pressure = True
        if case.still:
            self.grid.collision_response.profiles = {"damping_ratio": [1.0]}
        if case.volume:
            self.grid.collision_response.volume = True
            self.grid.collision_response.volume_reach = case.volume
        self.helpers: list = []  # the add-on's ray-cast helpers, once it made them

    def _play(self, obj, check=None) -> list[float]:
        """Time frames 2..last, each ``frame_set`` and the evaluated mesh of ``obj`` read after
        it, from frame 1 (played untimed: it builds what the first frame builds)."""
        scene, depsgraph = self.scene, bpy.context.evaluated_depsgraph_get()
        scene.frame_set(1)
        depsgraph.update()
        times = []
        for frame in range(2, self.case.last + 1):
            if check:
                check(frame, before=True)
            start = time.perf_counter()
            scene.frame_set(frame)
            depsgraph.update()  # evaluates whatever the handler tagged (frame_set already does)
            len(obj.evaluated_get(depsgraph).data.vertices)
            times.append(time.perf_counter() - start)
            if check:
                check(frame, before=False)
        return times

    def _link_helpers(self, linked: bool) -> None:
        """The ray-cast helpers stay in the scene when the response is disabled (the ball's
        motion evaluates them every frame): off, they leave the scene, as if never made."""
        prefix = self.raycast.HELPER_NAME
        self.helpers = [o for o in bpy.data.objects if o.name.startswith(prefix)] or self.helpers
        objects = self.scene.collection.objects
        for helper in self.helpers:
            if linked and helper.name not in objects:
                objects.link(helper)
            elif not linked and helper.name in objects:
                objects.unlink(helper)

    def addon_on(self) -> list[float]:
        simulation, grid = self.simulation, self.grid
        self._link_helpers(True)
        simulation.invalidate(grid)  # simulated afresh from the start frame
        grid.collision_response.enabled = True
        state = None

        def check(frame: int, before: bool) -> None:
            nonlocal state
            if before:
                state = simulation.get(grid)
                assert state is not None and state.head == frame - 1 and frame not in state.frames, "not a step"
            else:
                assert simulation.get(grid) is state and state.head == frame, "the simulation restarted"

        return self._play(grid, check)

    def addon_off(self) -> list[float]:
        self.grid.collision_response.enabled = False
        self._link_helpers(False)
        return self._play(self.grid)

    def shrinkwrap_on(self) -> list[float]:
        modifiers = []
        for collider in self.colliders:  # one modifier a collider
            modifier = self.plain.modifiers.new("Shrinkwrap", "SHRINKWRAP")
            modifier.wrap_method, modifier.target = "PROJECT", collider
            modifier.use_negative_direction = modifier.use_positive_direction = True
            modifiers.append(modifier)
        try:
            return self._play(self.plain)
        finally:
            for modifier in modifiers:
                self.plain.modifiers.remove(modifier)

    def shrinkwrap_off(self) -> list[float]:
        return self._play(self.plain)

    def repeat(self) -> None:
        for name, run in zip(
            PASSES, (self.addon_on, self.addon_off, self.shrinkwrap_on, self.shrinkwrap_off), strict=True
        ):
            self.times[name].append(run())


def phase_costs(times: dict[str, list[list[float]]], first: int, last: int) -> tuple[list[float], list[float]]:
    """Per repeat, the mean cost of a frame from ``first`` to ``last`` in ms: add-on on minus
    off, Shrinkwrap on minus off (frame by frame in the same repeat)."""
    span = slice(first - 2, last - 1)  # the times start at frame 2

    def cost(on: list[float], off: list[float]) -> float:
        return float(np.mean(np.subtract(on[span], off[span]))) * 1e3

    addon = [cost(on, off) for on, off in zip(times["on"], times["off"], strict=True)]
    shrinkwrap = [cost(on, off) for on, off in zip(times["shrinkwrap on"], times["shrinkwrap off"], strict=True)]
    return addon, shrinkwrap


def rows(results: dict) -> list[dict]:
    """One row per case and phase: min and median over repeats of each side, and their ratios."""
    found = []
    for case in CASES:
        if case.name not in results:
            continue
        for phase, (first, last) in case.phases.items():
            addon, shrinkwrap = phase_costs(results[case.name], first, last)
            found.append(
                {
                    "case": case.label,
                    "phase": f"{phase} {first}-{last}",
                    "addon": (min(addon), statistics.median(addon)),
                    "shrinkwrap": (min(shrinkwrap), statistics.median(shrinkwrap)),
                }
            )
    return found


def table(found: list[dict], title: str) -> str:
    lines = [
        title,
        f"  {'case':22} {'frames':13} {'add-on ms':>15} {'Shrinkwrap ms':>15} {'x Shrinkwrap':>13}",
        f"  {'':22} {'':13} {'min':>7} {'median':>7} {'min':>7} {'median':>7} {'min':>6} {'median':>6}",
    ]
    for row in found:
        (a_min, a_med), (s_min, s_med) = row["addon"], row["shrinkwrap"]
        lines.append(
            f"  {row['case']:22} {row['phase']:13} {a_min:7.1f} {a_med:7.1f} {s_min:7.1f} {s_med:7.1f}"
            f" {a_min / s_min:6.2f} {a_med / s_med:6.2f}"
        )
    return "\n".join(lines)


def scaling(tables: dict[int, list[dict]]) -> str:
    """How each side speeds up from one core to n: the 1-core time over the n-core time."""
    counts = sorted(tables)
    base = tables[counts[0]]
    header = "".join(f"  {f'add-on {counts[0]}/{n}':>13} {f'Shrinkwrap {counts[0]}/{n}':>15}" for n in counts[1:])
    lines = [f"speed-up with cores (median / median), {' and '.join(map(str, counts))} cores", f"  {'':36}{header}"]
    for i, row in enumerate(base):
        cells = ""
        for n in counts[1:]:
            addon, shrinkwrap = (row[side][1] / tables[n][i][side][1] for side in ("addon", "shrinkwrap"))
            cells += f"  {addon:13.2f} {shrinkwrap:15.2f}"
        lines.append(f"  {row['case']:22} {row['phase']:13}{cells}")
    return "\n".join(lines)


def run(names: list[str], repeat: int, zip_path: Path | None = None) -> dict:
    zip_path = zip_path or build(Path(tempfile.mkdtemp()))
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    results = {}
    for case in CASES:
        if case.name not in names:
            continue
        started = time.perf_counter()
        bench = Bench(case)
        for _ in range(repeat):
            bench.repeat()
        results[case.name] = bench.times
        print(f"  {case.label}: {repeat} repeats in {time.perf_counter() - started:.0f} s", flush=True)
    return results


def pinned(counts: list[int], forwarded: list[str]) -> None:
    """Run the benchmark once per core count, pinned with taskset, then compare."""
    available = sorted(os.sched_getaffinity(0))
    tables = {}
    for count in counts:
        if count > len(available):
            sys.exit(f"--cores {count}: only {len(available)} cores here")
        cpus = ",".join(map(str, available[:count]))
        with tempfile.NamedTemporaryFile(suffix=".json") as output:
            command = ["taskset", "-c", cpus, sys.executable, __file__, *forwarded, "--json", output.name]
            print(f"$ {' '.join(command)}", flush=True)
            subprocess.run(command, check=True)
            tables[count] = json.loads(Path(output.name).read_text())["rows"]
    for count in counts:
        print(table(tables[count], f"pinned to {count} core{'s' if count > 1 else ''} (taskset)"))
    if len(counts) > 1:
        print(scaling(tables))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, help="interleaved repeats of each case (default 7, quick 2)")
    parser.add_argument("--quick", action="store_true", help=f"2 repeats of {' and '.join(QUICK_CASES)} only")
    parser.add_argument("--cases", help=f"comma-separated, of: {', '.join(c.name for c in CASES)} (default all)")
    parser.add_argument("--cores", help="comma-separated core counts, each run pinned with taskset (e.g. 1,2)")
    parser.add_argument("--json", help="also write the rows and the raw frame times here")
    parser.add_argument("--zip", type=Path, help="benchmark this build of the extension (an older commit's, say)")
    args = parser.parse_args()
    if args.cores:
        forwarded = (["--quick"] if args.quick else []) + (["--repeat", str(args.repeat)] if args.repeat else [])
        forwarded += ["--cases", args.cases] if args.cases else []
        forwarded += ["--zip", str(args.zip)] if args.zip else []
        pinned([int(n) for n in args.cores.split(",")], forwarded)
        return
    names = args.cases.split(",") if args.cases else QUICK_CASES if args.quick else [c.name for c in CASES]
    unknown = set(names) - {c.name for c in CASES}
    if unknown:
        parser.error(f"unknown cases: {', '.join(sorted(unknown))}")
    repeat = args.repeat or (2 if args.quick else 7)
    cores = len(os.sched_getaffinity(0))
    print(f"a playback frame: frame_set on minus off, {repeat} interleaved repeats, {cores} core(s)", flush=True)
    results = run(names, repeat, args.zip)
    found = rows(results)
    print(table(found, f"frame cost in ms (min and median of {repeat} repeats), {cores} core(s)"))
    if args.json:
        Path(args.json).write_text(json.dumps({"cores": cores, "repeat": repeat, "rows": found, "times": results}))


if __name__ == "__main__":
    main()
