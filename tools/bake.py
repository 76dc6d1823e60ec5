"""Bake Collision Response headless, for render farms.

    .venv/bin/python tools/bake.py file.blend --object Cushion --frames 1-120 --output out.blend
    blender -b file.blend --python tools/bake.py -- --object Cushion --frames 1-120 --output out.blend

Each object named (repeat --object) is baked over the frames to shape keys that play and
render without the add-on. With the bpy module, the add-on is built from this repository
and installed in a temporary user folder unless it is already enabled. Exit status 0 on
success, 1 with a message otherwise.
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bake.py", description="Bake Collision Response to shape keys.")
    parser.add_argument("blend", nargs="?", help="the .blend to open (omit inside blender -b file.blend)")
    parser.add_argument("--object", action="append", required=True, help="a mesh to bake (repeatable)")
    parser.add_argument("--frames", help="first-last, e.g. 1-120 (default: the scene's range)")
    parser.add_argument("--output", required=True, help="where to save the baked .blend")
    return parser.parse_args(argv)


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


def bake(options: argparse.Namespace) -> int:
    import bpy

    if options.blend:
        bpy.ops.wm.open_mainfile(filepath=os.path.abspath(options.blend))
    ensure_addon()
    scene = bpy.context.scene
    if options.frames:
        first, _, last = options.frames.partition("-")
        scene.frame_start, scene.frame_end = int(first), int(last or first)
        scene.use_preview_range = False
    for name in options.object:
        obj = bpy.data.objects.get(name)
        if obj is None or obj.type != "MESH":
            print(f"bake: no mesh object named {name!r}", file=sys.stderr)
            return 1
        for other in bpy.context.view_layer.objects:
            other.select_set(other == obj)
        bpy.context.view_layer.objects.active = obj
        if not obj.collision_response.enabled:
            print(f"bake: {name!r} has no Collision Response enabled", file=sys.stderr)
            return 1
        result = bpy.ops.object.collision_response_bake()
        if result != {"FINISHED"}:
            print(f"bake: baking {name!r} did not finish: {result}", file=sys.stderr)
            return 1
        print(f"bake: {name} frames {scene.frame_start}-{scene.frame_end}")
    bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(options.output))
    print(f"bake: saved {options.output}")
    return 0


if __name__ == "__main__":
    inside_blender = "--" in sys.argv and Path(sys.argv[0]).name.startswith("blender")
    argv = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]
    if not inside_blender:
        os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="collision_response_"))
    sys.exit(bake(arguments(argv)))
