"""A press held still comes to rest, in real Blender: a ball keyed to press into a UV sphere
(as added, or subdivided once), an icosphere, a monkey or a torus from any side and stay
there, each preset, with friction or without, played with ``scene.frame_set``.

Every frame, on the evaluated mesh: nothing inside the ball by more than 1e-3 of the
mesh's size. Over the last half second of a two-second hold, no vertex travels (frame to
frame, summed) further than 1e-3 of the mesh's size. Before, where relaxing the offsets
out of contact turned faces over, the fold guard straightened them and the next frame
relaxed them back: 14 of these 40 kept moving with nothing moving in the scene, a vertex
travelling 1-80 cm in the last half second (every kind of mesh, every preset; a new user's
UV sphere pressed 40 cm by a 0.3 m ball moved 72 vertices 6 cm every other frame).
"""

import bpy
import numpy as np
import pytest
from test_contact_holds import enable
from test_secondary import apply_preset

from primitives import evaluated, inside_ball, keyed, responding

KINDS = ["uv", "uv-fine", "ico", "monkey", "torus"]
PRESETS = ["Stiff Shell", "Rubber", "Jelly", "Flesh", "Belly"]
#: 24 fps: the ball arrives at frame 13 and stays; the shot ends at frame 73.
ARRIVE, LAST = 13, 73


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def pressed(seed: int):
    """The scene at frame 1: a mesh and a ball keyed to press 10-50 % of the mesh's height
    into it from a random side by frame ``ARRIVE`` and stay. Returns the mesh, the ball,
    its radius and the mesh's size."""
    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    kind = KINDS[seed % len(KINDS)]
    mesh = responding(kind.removesuffix("-fine"), tuple(rng.uniform(-np.pi, np.pi, 3)), int(kind.endswith("-fine")))
    rest = np.array([v.co for v in mesh.data.vertices])
    size = float(np.linalg.norm(np.ptp(rest, axis=0)))
    way = rng.normal(size=3)
    way /= np.linalg.norm(way)
    heights = rest @ way
    radius = rng.uniform(0.2, 0.5)
    depth = rng.uniform(0.1, 0.5) * float(np.ptp(heights))
    across = np.linalg.norm(rest - np.outer(heights, way), axis=1)
    top = float(heights[np.argsort(across)[:8]].max())  # the mesh's top under the ball
    bpy.ops.mesh.primitive_uv_sphere_add(radius=radius)
    ball = bpy.context.active_object
    keyed(ball, {1: tuple(way * (heights.max() + radius + 0.5)), ARRIVE: tuple(way * (top + radius - depth))})
    scene.frame_set(1)
    enable(mesh, [ball])
    apply_preset(PRESETS[seed % len(PRESETS)])
    mesh.collision_response.friction = 0.0 if rng.random() < 0.5 else float(rng.uniform(0.1, 1.0))
    return mesh, ball, radius, size


def played(mesh, each=None) -> list[np.ndarray]:
    """The evaluated mesh (world space) at each frame 1 to ``LAST``, played with ``frame_set``;
    ``each(positions)`` is called at each frame, while the scene is at it."""
    shapes = []
    for frame in range(1, LAST + 1):
        bpy.context.scene.frame_set(frame)
        shapes.append(evaluated(mesh))
        if each is not None:
            each(shapes[-1])
    return shapes


def travelled(shapes: list[np.ndarray]) -> float:
    """The furthest any vertex travels, frame to frame, over the last half second (12 frames)."""
    return float(np.linalg.norm(np.diff(np.array(shapes[-13:]), axis=0), axis=2).sum(axis=0).max())


@pytest.mark.parametrize("seed", range(40))
def test_a_press_held_still_comes_to_rest(seed):
    mesh, ball, radius, size = pressed(seed)
    rest = evaluated(mesh)
    inside: list[float] = []  # (each frame, the ball where that frame has it)
    shapes = played(mesh, lambda positions: inside.append(float(inside_ball(ball, radius, positions).max())))
    deepest = max(float(np.linalg.norm(positions - rest, axis=1).max()) for positions in shapes)
    preset, moved = PRESETS[seed % len(PRESETS)], travelled(shapes)
    assert deepest > 0.02 * size, f"{preset}: the ball pressed {deepest:.3f} m"
    assert max(inside) < 1e-3 * size, f"{preset}: {max(inside):.4f} m inside the ball"
    assert moved < 1e-3 * size, f"{preset}: held still, a vertex travelled {moved:.4f} m in half a second"


@pytest.mark.parametrize("held", (0.3, 0.4, 0.55, 0.6))
@pytest.mark.parametrize("preset", ("Stiff Shell", "Rubber", "Flesh"))
def test_a_ball_crushing_a_sphere_onto_a_floor_and_held_comes_to_rest(held, preset):
    """A new user's scene: an icosphere (radius 1, 642 vertices) resting on a 6 m box floor,
    a 0.6 m ball keyed down to ``held`` (1.0-1.3 m into its rest shape) by frame 13 and held.
    Over the last half second of a two-second hold no vertex travels further than 1e-3 of
    the mesh's size. Before, Rubber at 0.55 and Stiff Shell at 0.6 kept moving (2.2 m and 0.13
    m travelled); a first version of this fix made Stiff Shell at 0.3-0.55 flicker 20 cm every
    other frame (taking back what relaxing folded, then carrying the surface on again); and
    Stiff Shell at 0.6 kept its bottom ring stepping on and off the floor (0.69 m) until the
    relaxing was taken back wherever it folds, not only near the contact."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=4, radius=1.0)
    mesh = bpy.context.active_object
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.0, 0.0, -1.5), scale=(6.0, 6.0, 1.0))
    floor = bpy.context.active_object
    bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.6)
    ball = bpy.context.active_object
    keyed(ball, {1: (0.0, 0.0, 2.6), ARRIVE: (0.0, 0.0, held)})
    scene.frame_set(1)
    enable(mesh, [floor, ball])
    apply_preset(preset)
    size = float(np.linalg.norm(np.ptp(evaluated(mesh), axis=0)))
    moved = travelled(played(mesh))
    assert moved < 1e-3 * size, f"held still, a vertex travelled {moved:.4f} m in half a second"
