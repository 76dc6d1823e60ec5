"""Secondary motion does not turn faces over.

A jelly's levels swing each with its own period: a fine level swinging past a coarse one's
dent pinched a monkey's features inside out (415 of its 3,936 triangles in one frame, and
up to 230 after the press, with nothing touching her; 7 with the swing off). What is shown
is the kinematic response plus the swing, and the kinematic response is the same with the
swing on or off (the swing is shown, never fed back). So, played with random swings and
again with none (every damping ratio 1), the faces the swing turns over are those turned
with it and not without.

Random meshes (a subdivided monkey, a UV sphere, a torus), random periods (50 ms to 0.5 s)
and damping ratios (0.02 to 0.5) on every level, a ball or a box keyed to press 5-20 cm
into the mesh's furthest point along a random direction, hold, and leave. Every frame, on the evaluated mesh: no
face turned over (against the same face at rest) that the response without the swing
does not turn over too; and the pressure (read from the kinematic response) the same bits
with the swing and without: asking the colliders about a swing changes nothing they
remember (it aimed a box by the faces the swing met, and the next frame's pushes differed).
"""

import bpy
import numpy as np
import pytest
from test_contact_holds import enable, keyed

from primitives import responding

LAST = 40


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def triangles(obj) -> np.ndarray:
    mesh = obj.data
    mesh.calc_loop_triangles()
    corners = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", corners)
    return corners.reshape(-1, 3)


def turned(rest: np.ndarray, positions: np.ndarray, tris: np.ndarray) -> set[int]:
    """The triangles whose normal points against their rest normal."""

    def normals(p):
        return np.cross(p[tris[:, 1]] - p[tris[:, 0]], p[tris[:, 2]] - p[tris[:, 0]])

    at_rest = normals(rest)
    real = np.linalg.norm(at_rest, axis=1) > 1e-12
    return set(np.flatnonzero(real & (np.einsum("ij,ij->i", at_rest, normals(positions)) < 0)).tolist())


def play(seed: int, swing: bool) -> tuple[list[set[int]], list[np.ndarray], float]:
    """The triangles turned over each frame, the pressure each frame (the kinematic
    response's: the swing is not in it), and how far any vertex moved."""
    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    obj = responding(("monkey", "uv", "monkey", "torus")[seed % 4])
    rest = np.array([v.co for v in obj.data.vertices])
    direction = rng.normal(size=3)
    direction /= np.linalg.norm(direction)
    furthest = rest[np.argmax(rest @ direction)]  # the mesh's furthest point that way: pressed there
    if seed % 2:
        bpy.ops.mesh.primitive_uv_sphere_add(radius=rng.uniform(0.15, 0.4))
        collider = bpy.context.active_object
        size = collider.dimensions[0] / 2
    else:
        bpy.ops.mesh.primitive_cube_add(size=1.0, rotation=tuple(rng.uniform(-0.5, 0.5, 3)))
        collider = bpy.context.active_object
        size = 0.5  # reaching at least half a unit: a corner reaches further, it presses harder
    depth, frames = rng.uniform(0.05, 0.2), int(rng.integers(3, 10))
    away = furthest + direction * (size + 0.3)
    pressed = furthest + direction * (size - depth)
    keyed(collider, {1: tuple(away), 1 + frames: tuple(pressed), 16: tuple(pressed), 16 + frames: tuple(away)})
    scene.frame_set(1)
    enable(obj, [collider])
    settings = obj.collision_response
    settings.pressure = True
    levels = len(settings.damping_ratio_levels)
    settings.overshoot_period_levels = rng.uniform(0.05, 0.5, levels).tolist()
    settings.damping_ratio_levels = (rng.uniform(0.02, 0.5, levels) if swing else np.ones(levels)).tolist()
    tris = triangles(obj)
    per_frame, pressures, moved = [], [], 0.0
    for frame in range(1, LAST + 1):
        scene.frame_set(frame)
        mesh = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        positions = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", positions)
        positions = positions.reshape(-1, 3).astype(np.float64)
        per_frame.append(turned(rest, positions, tris))
        pressure = np.empty(len(mesh.vertices), dtype=np.float32)
        mesh.attributes["collision_pressure"].data.foreach_get("value", pressure)
        pressures.append(pressure)
        moved = max(moved, float(np.linalg.norm(positions - rest, axis=1).max()))
    return per_frame, pressures, moved


@pytest.mark.parametrize("seed", range(12))
def test_the_swing_turns_no_face_over(seed):
    swinging, swinging_pressure, moved = play(seed, swing=True)
    still, still_pressure, _ = play(seed, swing=False)
    assert moved > 0.03, "it was pressed"
    for frame, (with_swing, without) in enumerate(zip(swinging, still, strict=True), start=1):
        # The kinematic response (read through its pressure) is the same bits: asking the
        # colliders about the swing changed nothing they remember.
        np.testing.assert_array_equal(swinging_pressure[frame - 1], still_pressure[frame - 1], err_msg=f"frame {frame}")
        extra = with_swing - without
        assert not extra, f"frame {frame}: the swing turned {len(extra)} triangles over"
