"""Bake Collision Response headless: one command per object and frame range, for render farms
(Flamenco, Deadline: see docs/farm.md).

    .venv/bin/python tools/bake.py shot.blend --object Cube --frames 1-70 --output baked.blend
    blender -b shot.blend --python tools/bake.py -- --object Cube --frames 1-70 --output baked.blend
    .venv/bin/python tools/bake.py shot.blend --object Cube --to point-cache --cache //cache/Cube.pc2 \\
        --output shot.blend

The object is baked over the frames (default: the scene's range) to shape keys, or to a PC2
point cache file played by a Mesh Cache modifier (``--to point-cache``; ``--cache`` is its
path, relative to the .blend with ``//``). The scene's frame range is left as it is. The
response at a frame depends on every frame before it, so each command simulates from the
object's start frame: split a farm job by object, not by frames. An object baked already is
refused unless ``--rebake`` frees the old bake first. ``--attach`` bakes nothing: it gives the
object the Mesh Cache modifier playing a ``--cache`` file an earlier command baked and saves
``--output`` (a farm bakes objects in parallel to their own files, then attaches them in turn).

With the bpy module, the add-on is built from this repository and installed in a temporary
user folder unless it is already enabled. Progress goes to stdout, one line a frame
("bake: Cube frame 12 (12/70)"); problems to stderr. Exit status:

    0  baked (and saved)
    1  the object cannot be baked: not found, not a mesh, not enabled, baked already
    2  bad arguments
    3  the bake failed (the message says why; nothing was saved)
    4  a file could not be opened or saved
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BAKED, UNBAKEABLE, FAILED, FILE_ERROR = 0, 1, 3, 4


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bake.py", description="Bake Collision Response of one object.")
    parser.add_argument("blend", nargs="?", help="the .blend to open (omit inside blender -b file.blend)")
    parser.add_argument("--object", required=True, help="the mesh object to bake")
    parser.add_argument("--frames", help="first-last, e.g. 1-120 (default: the scene's range)")
    parser.add_argument("--to", choices=("shape-keys", "point-cache"), default="shape-keys")
    parser.add_argument("--cache", help="the PC2 file for --to point-cache (default: //<object>.pc2)")
    parser.add_argument("--rebake", action="store_true", help="free an existing bake of the object first")
    parser.add_argument(
        "--attach", action="store_true", help="bake nothing: play the --cache file baked by an earlier command"
    )
    parser.add_argument("--output", help="where to save the baked .blend (required for shape keys)")
    options = parser.parse_args(argv)
    if options.attach and not (options.cache and options.output):
        parser.error("--attach needs the --cache file to play and the --output to save")
    if options.to == "shape-keys" and not options.output and not options.attach:
        parser.error("--output is required to bake to shape keys (they are saved in the .blend)")
    if options.frames:
        first, _, last = options.frames.partition("-")
        if not (first.lstrip("-").isdigit() and (last or first).lstrip("-").isdigit()):
            parser.error(f"--frames: expected first-last, e.g. 1-120, not {options.frames!r}")
        options.range = (int(first), int(last or first))
    else:
        options.range = None
    return options


def ensure_addon() -> None:
    """Enable the add-on, installing it from this repository if Blender does not have it."""
    import bpy

    enabled = bpy.context.preferences.addons.keys()
    if any(name.split(".")[-1] == "collision_response" for name in enabled):
        return
    sys.path.insert(0, str(ROOT / "tools"))
    from build_extension import build

    zip_path = build(Path(tempfile.mkdtemp()))
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)


def problem(message: str, status: int) -> int:
    print(f"bake: {message}", file=sys.stderr)
    return status


def _progress(name: str, first: int, last: int):
    """A frame-change handler printing one line a frame baked (once: reaching the first frame
    simulates the frames before it, which may visit it twice)."""
    done = [first - 1]

    def report(scene, *_args) -> None:
        frame = scene.frame_current
        if done[0] < frame <= last:
            done[0] = frame
            print(f"bake: {name} frame {frame} ({frame - first + 1}/{last - first + 1})", flush=True)

    return report


def save(path: str) -> int:
    import bpy

    try:
        bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(path))
    except RuntimeError as error:
        return problem(f"cannot save {path}: {error}", FILE_ERROR)
    print(f"bake: saved {path}", flush=True)
    return BAKED


def attach(obj, cache: str, output: str) -> int:
    """Give ``obj`` the Mesh Cache modifier playing ``cache`` and save ``output``."""
    addon = next(m for n, m in sys.modules.items() if n.endswith(".collision_response") and hasattr(m, "blender"))
    message = addon.blender.point_cache.attach(obj, cache)
    if message is not None:
        return problem(message, UNBAKEABLE)
    print(f"bake: {obj.name} plays {cache}", flush=True)
    return save(output)


def bake(options: argparse.Namespace) -> int:
    import bpy

    if options.blend:
        try:
            bpy.ops.wm.open_mainfile(filepath=os.path.abspath(options.blend))
        except RuntimeError as error:
            return problem(f"cannot open {options.blend}: {error}", FILE_ERROR)
    ensure_addon()
    scene = bpy.context.scene
    name = options.object
    obj = bpy.data.objects.get(name)
    if obj is None or obj.type != "MESH":
        return problem(f"no mesh object named {name!r}", UNBAKEABLE)
    for other in bpy.context.view_layer.objects:
        other.select_set(other == obj)
    bpy.context.view_layer.objects.active = obj
    if options.attach:
        return attach(obj, options.cache, options.output)
    if bpy.ops.object.collision_response_free_bake.poll():
        if not options.rebake:
            return problem(f"{name!r} is baked already: free its bake in Blender, or pass --rebake", UNBAKEABLE)
        bpy.ops.object.collision_response_free_bake()
        print(f"bake: {name}: the old bake freed", flush=True)
    if not obj.collision_response.enabled:
        return problem(f"{name!r} has no Collision Response enabled (enable it in the sidebar first)", UNBAKEABLE)
    first, last = options.range or (scene.frame_start, scene.frame_end)
    settings: dict = {"frame_start": first, "frame_end": last}
    if options.to == "point-cache":
        settings.update(to="POINT_CACHE", filepath=options.cache or "")
    report = _progress(name, first, last)
    bpy.app.handlers.frame_change_post.append(report)
    try:
        result = bpy.ops.object.collision_response_bake(**settings)
    except RuntimeError as error:  # the operator reported an error
        return problem(f"baking {name!r} failed: {str(error).strip()}", FAILED)
    finally:
        bpy.app.handlers.frame_change_post.remove(report)
    if result != {"FINISHED"}:
        return problem(f"baking {name!r} did not finish: {result}", FAILED)
    print(f"bake: {name} frames {first}-{last} baked to {options.to}", flush=True)
    return save(options.output) if options.output else BAKED


if __name__ == "__main__":
    inside_blender = "--" in sys.argv and Path(sys.argv[0]).name.startswith("blender")
    argv = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]
    if not inside_blender:
        os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="collision_response_"))
    sys.exit(bake(arguments(argv)))
