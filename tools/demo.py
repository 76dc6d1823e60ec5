"""The demo: three presses, simulated, baked, saved and rendered, headless.

A ball pressed into a cushion (elastic, wobbling: Jelly, coloured by its pressure), a foot
stepping into snow (plastic: Soft Clay), two fingers squeezing a soft ball (bulging: Flesh keeping its volume,
paler by its pressure where the fingers press, out of this camera's view). Writes out/demo.blend (live,
before the bake), out/demo_baked.blend, out/demo.png (each effect by its own camera, pressed
above, released below, labelled, denoised) and out/demo.mp4 (the presses and the spring-back).

Usage: bash tools/demo.sh   (or .venv/bin/python tools/demo.py [--output out] [--samples 8]
[--no-animation])
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
from mathutils import Vector  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from build_extension import build  # noqa: E402

PRESSED, RELEASED = 34, 70


def material(name: str, colour) -> bpy.types.Material:
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    mat.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (*colour, 1.0)
    return mat


def pressure_colour(mesh, pressed, full_depth: float) -> None:
    """Write the mesh's pressure (the attribute "collision_pressure") and colour it by it:
    its own colour unpressed, ``pressed`` at full pressure (an Attribute node, clamped, mixing
    the two), as a shader would use it."""
    settings = mesh.collision_response
    settings.pressure, settings.pressure_depth = True, full_depth
    tree = mesh.active_material.node_tree
    nodes, links = tree.nodes, tree.links
    shader = nodes["Principled BSDF"]
    read = nodes.new("ShaderNodeAttribute")
    read.attribute_name = "collision_pressure"
    clamp = nodes.new("ShaderNodeClamp")
    mix = nodes.new("ShaderNodeMix")
    mix.data_type = "RGBA"
    mix.inputs["A"].default_value = shader.inputs["Base Color"].default_value[:]
    mix.inputs["B"].default_value = (*pressed, 1.0)
    links.new(read.outputs["Fac"], clamp.inputs["Value"])
    links.new(clamp.outputs["Result"], mix.inputs["Factor"])
    links.new(mix.outputs["Result"], shader.inputs["Base Color"])


def keyed(obj, keys: dict[int, tuple]) -> None:
    """Keyframe the object's location; constant-speed moves between the keys."""
    for frame, location in keys.items():
        obj.location = location
        obj.keyframe_insert("location", frame=frame)


def add(operator, name: str, colour, **options) -> bpy.types.Object:
    operator(**options)
    obj = bpy.context.active_object
    obj.name = name
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


def build_scene() -> tuple[list[bpy.types.Object], list[bpy.types.Object]]:
    """The three meshes, responding, and their colliders."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, RELEASED
    scene.render.fps = 24
    # A cushion (subdivided box) and a ball pressing into it, then lifting off.
    cushion = add(bpy.ops.mesh.primitive_cube_add, "Cushion", (0.75, 0.2, 0.2), size=1, location=(-2.6, 0, 0.3))
    cushion.scale = (1.6, 1.6, 0.6)
    bpy.ops.object.transform_apply(scale=True)
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.subdivide(number_cuts=24)
    bpy.ops.object.mode_set(mode="OBJECT")
    ball = add(bpy.ops.mesh.primitive_uv_sphere_add, "Ball", (0.9, 0.8, 0.2), radius=0.45, location=(-2.6, 0, 1.5))
    keyed(ball, {1: (-2.6, 0, 1.6), 30: (-2.6, 0, 0.72), 38: (-2.6, 0, 0.72), 50: (-2.6, 0, 1.7)})
    # Snow (a fine grid) and a foot stepping in, then away: the footprint stays.
    # Raised off the floor: a print deeper than the floor would show the floor through it.
    snow = add(
        bpy.ops.mesh.primitive_grid_add,
        "Snow",
        (0.92, 0.94, 0.97),
        x_subdivisions=96,
        y_subdivisions=96,
        size=2,
        location=(0, 0, 0.3),
    )
    foot = add(bpy.ops.mesh.primitive_uv_sphere_add, "Foot", (0.25, 0.2, 0.15), radius=1.0, location=(0, 0, 1.0))
    foot.scale = (0.28, 0.55, 0.22)
    keyed(foot, {1: (0, 0, 1.1), 28: (0, 0, 0.38), 38: (0, 0, 0.38), 50: (0.3, 0, 1.2)})
    # A soft ball squeezed between two fingertips: it bulges around them.
    soft = add(
        bpy.ops.mesh.primitive_uv_sphere_add, "Soft Ball", (0.3, 0.55, 0.85), segments=64, ring_count=32, radius=0.7
    )
    soft.location = (2.6, 0, 0.75)
    fingers = []
    for side in (-1, 1):
        finger = add(bpy.ops.mesh.primitive_uv_sphere_add, f"Finger {side:+d}", (0.95, 0.75, 0.65), radius=1.0)
        finger.scale = (0.55, 0.16, 0.16)
        pressed = (2.6 + side * 0.95, 0, 0.8)
        keyed(finger, {1: (2.6 + side * 1.5, 0, 0.8), 30: pressed, 38: pressed, 50: (2.6 + side * 1.6, 0, 0.8)})
        fingers.append(finger)
    respond(cushion, [ball], "Jelly")
    respond(snow, [foot], "Soft Clay")
    respond(soft, fingers, "Flesh")
    # Flesh keeping its volume: what the fingers press in comes out around them, within 60 cm.
    soft.collision_response.volume = True
    soft.collision_response.volume_reach = 0.6
    rest_ring(soft)
    rest_line(cushion)
    # Pressure for shaders: the jelly goes deep red where the ball presses, the skin blanches
    # under the fingers.
    pressure_colour(cushion, (0.35, 0.0, 0.02), full_depth=0.25)
    pressure_colour(soft, (0.95, 0.9, 0.88), full_depth=0.15)
    # Light, a floor and a sky for the pictures; cameras come per shot (``camera``).
    bpy.ops.mesh.primitive_plane_add(size=30, location=(0, 0, -0.01))
    bpy.context.active_object.data.materials.append(material("Floor", (0.35, 0.37, 0.4)))
    # A low sun from the side: the footprint's walls catch light on one side, shade on the other.
    bpy.ops.object.light_add(type="SUN", rotation=(math.radians(62), 0, math.radians(-50)))
    bpy.context.active_object.data.energy = 4.0
    scene.world = bpy.data.worlds.new("World")
    scene.world.color = (0.6, 0.65, 0.7)
    return [cushion, snow, soft], [ball, foot, *fingers]


#: Per effect: its labels pressed and released, where its camera stands and what it
#: looks at (close enough that the effect fills the frame).
SHOTS = {
    "cushion": (
        "Jelly: pressed, red by its pressure",
        "Jelly: released, swinging {swing:.1f} cm up past rest",
        (-2.6, -2.6, 2.3),
        (-2.6, 0, 0.45),
    ),
    "snow": ("Soft Clay snow: pressed", "Soft Clay: the footprint stays", (0.0, -1.9, 2.9), (0, 0.05, 0.3)),
    # The ring is the ball's outline at rest: the bulge around the fingers crosses it.
    "soft_ball": (
        "Flesh keeping its volume: bulges around the fingers",
        "Flesh: released, round again",
        (2.6, -3.6, 0.95),
        (2.6, 0, 0.75),
    ),
}


def rest_ring(mesh) -> None:
    """A thin dark ring just outside the mesh's rest outline seen from the front (not a
    collider): where the surface crosses it, it bulged."""
    bpy.ops.mesh.primitive_torus_add(
        major_radius=0.715,
        minor_radius=0.01,
        location=mesh.location,
        rotation=(math.radians(90), 0, 0),
        major_segments=96,
        minor_segments=8,
    )
    bpy.context.active_object.data.materials.append(material("Ring", (0.02, 0.02, 0.02)))


def rest_line(mesh) -> None:
    """A thin dark rod along the back of the mesh's top at rest (not a collider): where the
    top rises above it, it swung past its rest shape."""
    top = max((mesh.matrix_world @ v.co).z for v in mesh.data.vertices)
    back = max((mesh.matrix_world @ v.co).y for v in mesh.data.vertices)
    width = mesh.dimensions.x
    bpy.ops.mesh.primitive_cylinder_add(
        radius=0.015, depth=width + 0.3, location=(mesh.location.x, back + 0.02, top), rotation=(0, math.radians(90), 0)
    )
    bpy.context.active_object.data.materials.append(material("Rest Line", (0.02, 0.02, 0.02)))


def highest_swing(mesh, first: int, last: int) -> tuple[int, float]:
    """The frame from ``first`` to ``last`` where the mesh's top is highest (played already),
    and how far above its top at rest."""
    scene = bpy.context.scene
    heights = {}
    for frame in range(first, last + 1):
        scene.frame_set(frame)
        evaluated = mesh.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        heights[frame] = max(v.co.z for v in evaluated.vertices)
    highest = max(heights, key=heights.get)
    return highest, heights[highest] - max(v.co.z for v in mesh.data.vertices)


def camera(location, target, lens: float = 50) -> bpy.types.Object:
    """A camera at ``location`` looking at ``target``."""
    bpy.ops.object.camera_add(location=location)
    cam = bpy.context.active_object
    direction = Vector(target) - Vector(location)
    cam.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
    cam.data.lens = lens
    return cam


def render_settings(samples: int, width: int, height: int) -> None:
    """Cycles on the CPU, few bounces, denoised (OpenImageDenoise), the scene kept between
    renders, labels stamped on each image."""
    scene = bpy.context.scene
    render = scene.render
    render.engine = "CYCLES"
    render.use_persistent_data = True
    cycles = scene.cycles
    cycles.device, cycles.samples = "CPU", samples
    cycles.max_bounces, cycles.diffuse_bounces, cycles.glossy_bounces = 4, 2, 2
    cycles.use_denoising, cycles.denoiser, cycles.denoising_prefilter = True, "OPENIMAGEDENOISE", "FAST"
    render.resolution_x, render.resolution_y, render.resolution_percentage = width, height, 100
    render.use_stamp = True
    for field in ("date", "time", "render_time", "frame", "frame_range", "memory", "hostname", "camera", "lens"):
        setattr(render, f"use_stamp_{field}", False)
    render.use_stamp_scene = render.use_stamp_filename = render.use_stamp_marker = False
    render.use_stamp_note = True
    render.stamp_font_size = 15


def render(path: Path, samples: int, colliders: list[bpy.types.Object], swing: tuple[int, float]) -> None:
    """Each effect by its own camera, pressed (top) and released (bottom; the colliders are
    hidden, so no shadow of theirs reads as a dent), side by side. The jelly cushion's
    released tile is its highest swing after the release, ``swing``: (frame, height)."""
    scene = bpy.context.scene
    render_settings(samples, 400, 300)
    columns = []
    for name, (pressed, released, location, target) in SHOTS.items():
        scene.camera = camera(location, target)
        tiles = []
        after = swing[0] if name == "cushion" else RELEASED
        released = released.format(swing=100 * swing[1])
        for frame, label in ((PRESSED, pressed), (after, released)):
            scene.frame_set(frame)
            for collider in colliders:
                collider.hide_render = frame != PRESSED
            scene.render.stamp_note_text = f"{label} (frame {frame})"
            scene.render.filepath = str(path.with_name(f"{name}_{frame}.png"))
            bpy.ops.render.render(write_still=True)
            image = bpy.data.images.load(scene.render.filepath)
            pixels = np.empty(image.size[0] * image.size[1] * 4, dtype=np.float32)
            image.pixels.foreach_get(pixels)
            tiles.append(pixels.reshape(image.size[1], image.size[0], 4))
        columns.append(np.concatenate(tiles[::-1], axis=0))  # image rows run bottom to top
    whole = np.concatenate(columns, axis=1)
    out = bpy.data.images.new("demo", whole.shape[1], whole.shape[0], alpha=True)
    out.pixels.foreach_set(whole.ravel())
    out.filepath_raw, out.file_format = str(path), "PNG"
    out.save()
    for collider in colliders:
        collider.hide_render = False


def render_animation(path: Path, samples: int) -> None:
    """The three presses, the release and the spring-back (frames 14-64, every second one,
    12 a second: real time), as an H.264 MP4 through Blender's FFmpeg."""
    scene = bpy.context.scene
    render_settings(samples, 480, 180)
    scene.camera = camera((0.0, -8.5, 2.6), (0.0, 0.0, 0.55), lens=40)
    scene.render.stamp_note_text = "Jelly reddens, wobbles back | Soft Clay keeps the print | Flesh keeps its volume"
    scene.render.stamp_font_size = 12
    scene.frame_start, scene.frame_end, scene.frame_step, scene.render.fps = 14, 64, 2, 12
    scene.render.image_settings.media_type = "VIDEO"
    scene.render.image_settings.file_format = "FFMPEG"
    scene.render.ffmpeg.format, scene.render.ffmpeg.codec = "MPEG4", "H264"
    scene.render.ffmpeg.constant_rate_factor = "HIGH"
    scene.render.filepath = str(path)
    scene.render.use_file_extension = False
    bpy.ops.render.render(animation=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=ROOT / "out")
    parser.add_argument("--samples", type=int, default=8, help="per pixel, before denoising")
    parser.add_argument("--no-animation", action="store_true", help="the picture only")
    options = parser.parse_args()
    options.output.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    def say(what: str) -> None:
        print(f"demo: {what} ({time.perf_counter() - start:.1f} s)", flush=True)

    zip_path = build(Path(tempfile.mkdtemp()))
    bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default", enable_on_install=True)
    bpy.context.preferences.filepaths.save_version = 0  # saving again leaves no demo.blend1
    meshes, colliders = build_scene()
    scene = bpy.context.scene
    for frame in range(scene.frame_start, scene.frame_end + 1):  # play it once, live
        scene.frame_set(frame)
    swing = highest_swing(meshes[0], 42, RELEASED)  # the ball lifts from frame 38, off the jelly by 42
    say(f"simulated {scene.frame_end} frames of {len(meshes)} meshes; the jelly swings up {swing[1]:.3f} at {swing[0]}")
    live = options.output / "demo.blend"  # live: open it and press play, or bake it headless
    bpy.ops.wm.save_as_mainfile(filepath=str(live), copy=True)
    for mesh in meshes:
        for obj in bpy.context.view_layer.objects:
            obj.select_set(obj == mesh)
        bpy.context.view_layer.objects.active = mesh
        assert bpy.ops.object.collision_response_bake() == {"FINISHED"}
    baked = options.output / "demo_baked.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(baked))
    say(f"saved {live}, baked and saved {baked}")
    picture = options.output / "demo.png"
    render(picture, options.samples, colliders, swing)
    say(f"rendered {picture}")
    if not options.no_animation:
        movie = options.output / "demo.mp4"
        render_animation(movie, max(4, options.samples // 2))
        say(f"rendered {movie}")


if __name__ == "__main__":
    main()
