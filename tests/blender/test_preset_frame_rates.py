"""24 and 60 fps agree (issue 21), in Blender, with every shipped preset: a 2 m grid (48 x 48)
pressed 10 cm by a ball of radius 40 cm over half a second, held half a second and lifted in a
quarter (Blender's keys, eased), the same motion in seconds at both rates; the evaluated
mesh compared every 1/12 s, every vertex of the sheet, over the dent's depth.

Before the coarse levels followed how far the colliders reach into the rest shape, the two
rates differed by 72 % of the dent (Rubber: its far corner), 61 % (Jelly), 37 % (Slime),
23 % (Stiff Shell), 3.9 % (Soft Clay), 1.9 % (Flesh), 1.5 % (Belly): which vertices the ball
caught depended on the frame rate, and one rim vertex caught or not moved a whole region of a
coarse level. Measured now, press and hold (to 1 s): at most 1.1 % (Jelly); the whole clip:
Rubber 3.95 %, Jelly 2.8 %, Stiff Shell 2.5 %, the others within 0.8 %.

What is left is at the release, at the dent's centre, and is the frame rate's own: the ball
eases out of the hold, and for its first 20 ms it rises slower than the sheet springs back,
so the sheet follows it up, held by it (60 fps sees part of this, as 240 fps does), while at
24 fps the first frame after the hold has the ball 9 cm up, clear of the sheet. The response
without the contact from rest had the same 3.95 % at the centre there.
"""

import bpy
import numpy as np
import pytest
from test_contact_holds import keyed
from test_secondary import apply_preset

PRESETS = ["Rubber", "Jelly", "Slime", "Stiff Shell", "Soft Clay", "Flesh", "Belly"]
SUBDIVISIONS = 48
DEPTH = 0.1
RADIUS = 0.4
SECONDS = 3.0


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def shot(fps: int, preset: str) -> dict[int, np.ndarray]:
    """The evaluated sheet (n, 3) at every 1/12 s (keyed by the twelfth) of the clip at
    ``fps``."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = fps, 1.0
    last = 1 + round(SECONDS * fps)
    scene.frame_start, scene.frame_end = 1, last
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=SUBDIVISIONS, y_subdivisions=SUBDIVISIONS, size=2)
    grid = bpy.context.active_object
    bpy.ops.mesh.primitive_uv_sphere_add(segments=48, ring_count=24, radius=RADIUS, location=(0, 0, 0.5))
    ball = bpy.context.active_object
    heights = ((0.0, 0.5), (0.5, RADIUS - DEPTH), (1.0, RADIUS - DEPTH), (1.25, 1.5))
    keyed(ball, {1 + round(t * fps): (0.0, 0.0, z) for t, z in heights})
    scene.frame_set(1)
    bpy.ops.object.select_all(action="DESELECT")
    ball.select_set(True)
    grid.select_set(True)
    bpy.context.view_layer.objects.active = grid
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    apply_preset(preset)
    seen = {}
    for frame in range(1, last + 1):
        scene.frame_set(frame)
        t = (frame - 1) / fps
        twelfth = round(t * 12)
        if abs(twelfth / 12 - t) < 1e-9:
            mesh = grid.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
            positions = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
            mesh.vertices.foreach_get("co", positions)
            seen[twelfth] = positions.reshape(-1, 3).astype(np.float64)
    return seen


@pytest.mark.parametrize("preset", PRESETS)
def test_24_and_60_fps_agree_over_the_whole_sheet(preset):
    """Press and hold: every vertex within 2 % of the dent (measured at most 1.1 %); the
    whole clip, with the release: within 4.5 % (measured: Rubber 3.95 %, Jelly 2.8 %, Stiff
    Shell 2.5 %, at the centre just after the release: see above)."""
    a, b = shot(24, preset), shot(60, preset)
    times = sorted(set(a) & set(b))
    assert len(times) == 12 * SECONDS + 1
    dent = max(-a[t][:, 2].min() for t in times)
    assert dent > 0.09  # pressed (10 cm, more where a plastic dent sinks on)
    apart = {t: float(np.linalg.norm(a[t] - b[t], axis=1).max()) / dent for t in times}
    pressed = max(apart[t] for t in times if t <= 12)
    assert pressed < 0.02, f"{preset}: {pressed:.2%} of the dent while pressed and held"
    assert max(apart.values()) < 0.045, f"{preset}: {max(apart.values()):.2%} of the dent"
