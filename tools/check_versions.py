"""Run one press-and-bake scene on the oldest and the newest Blender the manifest claims.

    python3 tools/check_versions.py            # bpy 4.2.0 (blender_version_min) and 5.0.1
    python3 tools/check_versions.py 4.2.0 4.5.3

Each version's ``bpy`` wheel is installed into its own virtual environment under
``build/bpy-<version>/`` (Python 3.11; about 400 MB each, made once). In each, the extension
is built from this repository with that Blender's own builder, installed and enabled as a
user would; a ball presses into a grid over 30 frames (the frame benchmark's scene), with a
shipped preset from the menu's folders; the response is played, baked to shape keys and to
a point cache; the numbers are printed and compared across versions. Exit status 0 when every version gives the same
numbers. Not run by CI (it downloads Blender once per version): run it before changing
``blender_version_min``, and put its result in the README.
"""

import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEWEST = "5.0.1"  # the newest bpy tested (requirements-dev.txt)


def claimed_oldest() -> str:
    with open(ROOT / "blender_manifest.toml", "rb") as file:
        return tomllib.load(file)["blender_version_min"]


def environment(version: str) -> Path:
    """build/bpy-<version>/bin/python, with that bpy installed (made once)."""
    folder = ROOT / "build" / f"bpy-{version}"
    python = folder / "bin" / "python"
    if not (folder / ".installed").exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"bpy=={version}"], check=True)
        (folder / ".installed").touch()
    return python


def scene() -> dict:
    """Inside one version's bpy: the scene, played and baked; its numbers."""
    os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="collision_response_versions_"))
    import bpy
    import numpy as np

    sys.path.insert(0, str(ROOT / "tools"))
    from benchmark_frame import scene_with
    from build_extension import build

    zip_path = build(Path(tempfile.mkdtemp()))
    assert bpy.ops.extensions.package_install_files(
        filepath=str(zip_path), repo="user_default", enable_on_install=True
    ) == {"FINISHED"}
    addon = sys.modules["bl_ext.user_default.collision_response"]
    scene, grid, _ = scene_with(32)  # the frame benchmark's: a ball sinks 8 cm into a grid
    scene.frame_set(1)
    grid.select_set(True)
    bpy.context.view_layer.objects.active = grid
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    folders = addon.blender.presets.preset_folders()
    rubber = next(Path(f) / "Rubber.py" for f in folders if (Path(f) / "Rubber.py").exists())
    bpy.ops.script.execute_preset(filepath=str(rubber), menu_idname="COLLISION_RESPONSE_MT_presets")

    def shown() -> np.ndarray:
        mesh = grid.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        positions = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", positions)
        return positions.reshape(-1, 3)

    live = {}
    for frame in range(1, 31):
        scene.frame_set(frame)
        live[frame] = shown()
    assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    scene.frame_set(30)
    keyed = float(np.abs(shown() - live[30]).max())
    assert bpy.ops.object.collision_response_free_bake() == {"FINISHED"}
    cache = str(Path(tempfile.mkdtemp()) / "grid.pc2")
    assert bpy.ops.object.collision_response_bake(to="POINT_CACHE", filepath=cache) == {"FINISHED"}
    scene.frame_set(30)
    cached = float(np.abs(shown() - live[30]).max())
    return {
        "blender": bpy.app.version_string,
        "dent at frame 20 (m)": round(float(-live[20][:, 2].min()), 6),
        "dent at frame 30 (m)": round(float(-live[30][:, 2].min()), 6),
        "checksum of frame 30": round(float(np.abs(live[30]).sum()), 4),
        "shape-key bake vs live": keyed,
        "point-cache bake vs live": cached,
    }


def main(versions: list[str]) -> int:
    results = {}
    for version in versions:
        python = environment(version)
        done = subprocess.run([str(python), __file__, "--scene"], capture_output=True, text=True)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or not lines:
            print(f"bpy {version}: FAILED\n{done.stderr[-3000:]}")
            results[version] = None
            continue
        results[version] = json.loads(lines[-1])
        print(f"bpy {version}: {results[version]}")
    numbers = [{k: v for k, v in r.items() if k != "blender"} for r in results.values() if r]
    same = len(numbers) == len(versions) and all(n == numbers[0] for n in numbers)
    print("same numbers on every version" if same else "versions differ or failed")
    return 0 if same else 1


if __name__ == "__main__":
    if sys.argv[1:] == ["--scene"]:
        print(json.dumps(scene()), flush=True)
        os._exit(0)  # bpy 4.2.0 crashes while Python shuts down, after the work is done
    sys.exit(main(sys.argv[1:] or [claimed_oldest(), NEWEST]))
