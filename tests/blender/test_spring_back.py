"""A mesh crushed onto a floor, a wall or a ceiling springs back when the press leaves, in
real Blender: a UV sphere, an icosphere, a monkey or a torus resting on (or up to 2 cm off,
past the preset's standoff) a box or a plane turned any way, crushed onto it by a ball from
the other side, held and let go, each elastic preset, played with ``scene.frame_set``; the
last 8 bound to an armature's bone (asked about as posed, their ways out carried to rest).

Every frame, on the evaluated mesh: nothing through the support's face by more than 1e-3 of
the mesh's size. Two seconds after the ball has gone (over three of the preset's times to
rest), every vertex back within 1 % of the mesh's size of its rest. Before, a vertex resting
on the support held every offset above it both ways, and what the coarse levels took of the
crush stayed for good (a sphere crushed 0.65 m with Stiff Shell stayed 0.648 m crushed).
"""

import bpy
import numpy as np
import pytest
from test_contact_holds import enable
from test_secondary import apply_preset

from primitives import carry_by_bone, evaluated, inside_box, keyed, responding

KINDS = ["uv", "ico", "monkey", "torus"]
PRESETS = ["Stiff Shell", "Rubber", "Jelly", "Flesh", "Belly"]
#: The presets' standoffs (checked once applied): the mesh rests that far off the support,
#: or the support would push it off to there, and that, not the rest, is where it settles.
STANDOFF = {"Rubber": 0.05}
#: 24 fps: the ball arrives at frame 13, holds to 25, is gone by 33; the shot ends at 81.
ARRIVE, LEAVE, GONE, LAST = 13, 25, 33, 81
#: Seeds from this one on bind the mesh to an armature's bone.
RIGGED = 40


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def crushed(seed: int):
    """The scene at frame 1: a mesh resting on a support (a 6 m box or plane facing ``up``,
    its face through the origin), a ball keyed to crush it 30-85 % of its height and leave.
    Returns the mesh, the support, ``up``, whether the support is a box, the mesh's size."""
    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    turn = rng.uniform(-np.pi, np.pi, 3)  # a floor, a wall, a ceiling, or between
    box = bool(seed % 2)
    if box:
        bpy.ops.mesh.primitive_cube_add(size=1.0, rotation=tuple(turn))
        support = bpy.context.active_object
        support.scale = (6.0, 6.0, 1.0)
    else:
        bpy.ops.mesh.primitive_plane_add(size=6.0, rotation=tuple(turn))
        support = bpy.context.active_object
    matrix = np.array(support.matrix_world)
    up = matrix[:3, 2] / np.linalg.norm(matrix[:3, 2])
    if box:
        support.location = tuple(-0.5 * up)  # its top face through the origin
    mesh = responding(KINDS[seed % len(KINDS)], turned=tuple(rng.uniform(-np.pi, np.pi, 3)))
    rest = np.array([v.co for v in mesh.data.vertices])
    heights = rest @ up
    preset = PRESETS[seed % len(PRESETS)]
    mesh.location = tuple(up * (STANDOFF.get(preset, 0.0) + rng.uniform(0.0, 0.02) - heights.min()))
    rest = rest + np.array(mesh.location)
    heights = rest @ up
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    radius = rng.uniform(0.2, 0.5)
    side = rng.normal(size=3) * 0.1
    side -= (side @ up) * up
    across = np.linalg.norm(rest - np.outer(heights, up) - side, axis=1)
    top = float(heights[np.argsort(across)[:8]].max())  # the mesh's top under the ball
    depth = rng.uniform(0.3, 0.85) * float(np.ptp(heights))
    # (Its lowest point stays a tenth of the mesh's height off the support: keyed into the
    # support, the ball would leave the mesh no room.)
    low = radius + 0.1 * float(np.ptp(heights))
    away, press = side + up * (heights.max() + radius + 0.5), side + up * max(top + radius - depth, low)
    bpy.ops.mesh.primitive_uv_sphere_add(radius=radius)
    ball = bpy.context.active_object
    keyed(ball, {1: tuple(away), ARRIVE: tuple(press), LEAVE: tuple(press), GONE: tuple(away)})
    if seed >= RIGGED:  # bound to a bone at rest: asked about as posed, its ways out carried to rest
        carry_by_bone(mesh, ball, rng, LAST, moving=False)
    scene.frame_set(1)
    enable(mesh, [ball, support])
    apply_preset(preset)
    assert mesh.collision_response.standoff == pytest.approx(STANDOFF.get(preset, 0.0))
    return mesh, support, up, box, size


def behind(support, up: np.ndarray, box: bool, points: np.ndarray) -> np.ndarray:
    """How far each world point is behind the support's face (a box: inside it; a plane:
    behind it over its square), 0 elsewhere."""
    if box:
        return inside_box(support, points)
    matrix = np.array(support.matrix_world)
    local = (points - matrix[:3, 3]) @ (matrix[:3, :3] / np.linalg.norm(matrix[:3, :3], axis=0))
    over = (np.abs(local[:, :2]) <= 3.0).all(axis=1)
    return np.where(over, np.maximum(-(points - matrix[:3, 3]) @ up, 0.0), 0.0)


#: Seeds that fail on this version for another reason than springing back (README, "Known
#: failures"): the ball, leaving, carries off the monkey its press took round its side.
KNOWN = {18: "a monkey taken round the ball is carried off as it leaves (1.29 m)"}


@pytest.mark.parametrize(
    "seed",
    [pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=KNOWN[s])) if s in KNOWN else s for s in range(48)],
)
def test_a_mesh_crushed_onto_a_floor_wall_or_ceiling_springs_back_once_the_ball_has_gone(seed):
    """Before, 15 of these 48 stayed crushed for good (3 of the 8 bound to a bone), by 7-61 cm
    (Jelly, Rubber, Belly) and 9-48 cm (Stiff Shell)."""
    mesh, support, up, box, size = crushed(seed)
    scene = bpy.context.scene
    matrix = np.array(mesh.matrix_world)
    rest = np.array([v.co for v in mesh.data.vertices]) @ matrix[:3, :3].T + matrix[:3, 3]
    deepest = through = 0.0
    for frame in range(1, LAST + 1):
        scene.frame_set(frame)
        positions = evaluated(mesh)
        deepest = max(deepest, float(np.linalg.norm(positions - rest, axis=1).max()))
        through = max(through, float(behind(support, up, box, positions).max()))
    left = float(np.linalg.norm(positions - rest, axis=1).max())
    preset = PRESETS[seed % len(PRESETS)]
    assert deepest > 0.1 * size, f"{preset}: the ball pressed {deepest:.3f} m"
    assert through < 1e-3 * size, f"{preset}: {through:.4f} m through the support"
    assert left < 0.01 * size, f"{preset}: {left:.4f} m left of {deepest:.3f} m"
