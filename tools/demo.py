"""The demo: three presses, simulated, baked, saved and rendered, headless.

A ball pressed into a cushion (elastic: Rubber), a foot stepping into snow (plastic:
Soft Clay), two fingers squeezing a soft ball (bulging: Flesh). Writes out/demo.blend
and out/demo.png (frame 34 pressed, frame 70 released, side by side).

Usage: bash tools/demo.sh   (or .venv/bin/python tools/demo.py [--output out] [--samples 16])
"""

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="collision_response_demo_"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from build_extension import build  # noqa: E402

PRESSED, RELEASED = 34, 70


def material(name: str, colour) -> bpy.types.Material:
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    mat.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (*colour, 1.0)
    return mat


def keyed(obj, keys: dict[int, tuple]) -> None:
    """Keyframe the object's location; constant-speed moves between the keys."""
    for frame, location in keys.items():
        obj.location = location
        obj.keyframe_insert("location", frame=frame)


def add(operator, colour, **options) -> bpy.types.Object:
    operator(**options)
    obj = bpy.context.active_object
    obj.data.materials.append(material(obj.name, colour))
    bpy.ops.object.shade_smooth()
    return obj


def respond(mesh, colliders, preset: str) -> None:
    """Enable the response as an animator would, with a shipped preset."""
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in colliders or obj == mesh)
    bpy.context.view_layer.objects.active = mesh
    bpy.context.scene.frame_set(1)
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    path = bpy.utils.preset_find(preset, "collision_response")
    bpy.ops.script.execute_preset(filepath=path, menu_idname="COLLISION_RESPONSE_MT_presets")


def build_scene() -> list[bpy.types.Object]:
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, RELEASED
    scene.render.fps = 24
    # A cushion (subdivided box) and a ball pressing into it, then lifting off.
    cushion = add(bpy.ops.mesh.primitive_cube_add, (0.75, 0.2, 0.2), size=1, location=(-2.6, 0, 0.3))
    cushion.scale = (1.6, 1.6, 0.6)
    bpy.ops.object.transform_apply(scale=True)
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.subdivide(number_cuts=24)
    bpy.ops.object.mode_set(mode="OBJECT")
    ball = add(bpy.ops.mesh.primitive_uv_sphere_add, (0.9, 0.8, 0.2), radius=0.45, location=(-2.6, 0, 1.5))
    keyed(ball, {1: (-2.6, 0, 1.6), 30: (-2.6, 0, 0.72), 38: (-2.6, 0, 0.72), 50: (-2.6, 0, 1.7)})
    # Snow (a fine grid) and a foot stepping in, then away: the footprint stays.
    snow = add(bpy.ops.mesh.primitive_grid_add, (0.92, 0.94, 0.97), x_subdivisions=96, y_subdivisions=96, size=2)
    foot = add(bpy.ops.mesh.primitive_uv_sphere_add, (0.25, 0.2, 0.15), radius=1.0, location=(0, 0, 1.0))
    foot.scale = (0.28, 0.55, 0.22)
    keyed(foot, {1: (0, 0, 0.8), 28: (0, 0, 0.08), 38: (0, 0, 0.08), 50: (0.3, 0, 0.9)})
    # A soft ball squeezed between two fingertips: it bulges around them.
    soft = add(bpy.ops.mesh.primitive_uv_sphere_add, (0.3, 0.55, 0.85), segments=64, ring_count=32, radius=0.7)
    soft.location = (2.6, 0, 0.75)
    fingers = []
    for side in (-1, 1):
        finger = add(bpy.ops.mesh.primitive_uv_sphere_add, (0.95, 0.75, 0.65), radius=1.0)
        finger.scale = (0.55, 0.16, 0.16)
        pressed = (2.6 + side * 0.95, 0, 0.8)
        keyed(finger, {1: (2.6 + side * 1.5, 0, 0.8), 30: pressed, 38: pressed, 50: (2.6 + side * 1.6, 0, 0.8)})
        fingers.append(finger)
    respond(cushion, [ball], "Rubber")
    respond(snow, [foot], "Soft Clay")
    respond(soft, fingers, "Flesh")
    # Camera, light and a floor for the picture.
    bpy.ops.mesh.primitive_plane_add(size=30, location=(0, 0, -0.01))
    bpy.context.active_object.data.materials.append(material("Floor", (0.35, 0.37, 0.4)))
    bpy.ops.object.camera_add(location=(0, -9.0, 3.6), rotation=(math.radians(72), 0, 0))
    scene.camera = bpy.context.active_object
    scene.camera.data.lens = 30
    bpy.ops.object.light_add(type="SUN", rotation=(math.radians(40), math.radians(15), math.radians(30)))
    bpy.context.active_object.data.energy = 4.0
    scene.world = bpy.data.worlds.new("World")
    scene.world.color = (0.6, 0.65, 0.7)
    return [cushion, snow, soft]


def render(path: Path, samples: int) -> None:
    """Frames PRESSED and RELEASED side by side, with Cycles on the CPU."""
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_denoising = False
    scene.render.resolution_x, scene.render.resolution_y = 960, 440
    halves = []
    for frame in (PRESSED, RELEASED):
        scene.frame_set(frame)
        scene.render.filepath = str(path.with_name(f"frame_{frame}.png"))
        bpy.ops.render.render(write_still=True)
        image = bpy.data.images.load(scene.render.filepath)
        pixels = np.empty(image.size[0] * image.size[1] * 4, dtype=np.float32)
        image.pixels.foreach_get(pixels)
        halves.append(pixels.reshape(image.size[1], image.size[0], 4))
    both = np.concatenate(halves, axis=1)
    out = bpy.data.images.new("demo", both.shape[1], both.shape[0], alpha=True)
    out.pixels.foreach_set(both.ravel())
    out.filepath_raw, out.file_format = str(path), "PNG"
    out.save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=ROOT / "out")
    parser.add_argument("--samples", type=int, default=16)
    options = parser.parse_args()
    options.output.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    zip_path = build(Path(tempfile.mkdtemp()))
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    meshes = build_scene()
    scene = bpy.context.scene
    for frame in range(scene.frame_start, scene.frame_end + 1):  # play it once, live
        scene.frame_set(frame)
    print(f"demo: simulated {scene.frame_end} frames of {len(meshes)} meshes in {time.perf_counter() - start:.1f} s")
    for mesh in meshes:
        for obj in bpy.context.view_layer.objects:
            obj.select_set(obj == mesh)
        bpy.context.view_layer.objects.active = mesh
        assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    blend = options.output / "demo.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    print(f"demo: baked and saved {blend}")
    picture = options.output / "demo.png"
    render(picture, options.samples)
    print(f"demo: rendered {picture} in {time.perf_counter() - start:.1f} s in all")


if __name__ == "__main__":
    main()
