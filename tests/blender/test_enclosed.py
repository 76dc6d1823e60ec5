"""A collider more than twice the mesh's size that holds the whole mesh inside it at the
start (a ball keyed inside a 10 m box) pushes nothing, and says so; one the mesh moves
wholly into in a frame pushes it back out.

Every way out of such a collider is a way out of the mesh as well: before, a ball keyed to
move about inside a 10 m box was flattened onto the box's far faces, vertices 11 m from where
the ball was keyed (a tester's scene). The mesh is in a room; the Container setting is what
keeps a mesh inside one, and the message says that.

Random meshes (a subdivided monkey, a UV sphere, a torus, an icosphere) keyed along a random
path inside a box 4-10 m wide turned at random, or a UV sphere 3-6 m across, never nearer
its walls than the mesh's size; random presets. Every frame, on the evaluated mesh: the
mesh where it is keyed, to float32 rounding, and the panel's message naming the collider.
Before: all 8 moved vertices 1.5 to 6.3 m in the second frame.
"""

import sys

import bpy
import numpy as np
import pytest
from test_contact_holds import enable, evaluated, keyed
from test_secondary import apply_preset

from primitives import responding

LAST = 24


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


@pytest.mark.parametrize("seed", range(8))
def test_a_collider_around_the_whole_mesh_pushes_nothing_and_says_so(seed, addon):
    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    if seed % 2:
        bpy.ops.mesh.primitive_cube_add(size=1.0, rotation=tuple(rng.uniform(-np.pi, np.pi, 3)))
        room = bpy.context.active_object
        room.scale = tuple(rng.uniform(4.0, 10.0, 3))
        inner = float(min(room.scale)) / 2  # the largest ball about its centre inside it
    else:
        radius = rng.uniform(1.5, 3.0)
        bpy.ops.mesh.primitive_uv_sphere_add(radius=radius, segments=48, ring_count=24)
        room = bpy.context.active_object
        inner = radius * np.cos(np.pi / 24)  # inside its faces
    room.name = "Room"
    obj = responding(("monkey", "uv", "torus", "ico")[seed % 4])
    rest = np.array([v.co for v in obj.data.vertices])
    size = float(np.linalg.norm(rest, axis=1).max())
    free = inner - 2.0 * size  # its centre stays this near the room's: a size from the walls
    assert free > 0
    stops = rng.normal(size=(4, 3))
    stops *= (free * rng.uniform(0.2, 1.0, 4) / np.linalg.norm(stops, axis=1))[:, None]
    keyed(obj, {1: tuple(stops[0]), 8: tuple(stops[1]), 16: tuple(stops[2]), LAST: tuple(stops[3])})
    scene.frame_set(1)
    enable(obj, [room])
    apply_preset(("Rubber", "Flesh", "Jelly", "Soft Clay")[seed % 4])
    simulation = sys.modules[addon.__name__ + ".blender.simulation"]
    for frame in range(1, LAST + 1):
        scene.frame_set(frame)
        world = evaluated(obj)
        matrix = np.array(obj.matrix_world)
        keyed_here = rest @ matrix[:3, :3].T + matrix[:3, 3]
        moved = np.abs(world - keyed_here).max()
        assert moved <= 1e-5, f"frame {frame}: a vertex moved {moved:.4f} from where it is keyed"
        messages = simulation.get(obj).messages
        assert any(message.startswith("'Room' encloses the whole mesh") for message in messages), messages


@pytest.mark.parametrize("seed", range(6))
def test_a_sheet_falling_wholly_into_a_floor_in_one_frame_is_pushed_back_out(seed):
    """Wholly inside the frame it meets the collider, but having moved: it came in the way
    it moved, not from a room (a sheet falling 3 cm a frame onto a 4 m floor box was left
    inside it, 21 cm deep, while the first rule took every collider the whole mesh was in
    for a room)."""
    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    floor = bpy.context.active_object
    floor.scale = (rng.uniform(3.0, 6.0), rng.uniform(3.0, 6.0), rng.uniform(0.3, 1.0))
    floor.location = (0.0, 0.0, -floor.scale[2] / 2)  # its top at 0
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=24, y_subdivisions=24, size=1.0)
    sheet = bpy.context.active_object
    # Falling 1-7 cm a frame to 60 % of the floor's thickness into it: a flat sheet is
    # wholly above the top one frame and wholly inside the next.
    start, end = rng.uniform(0.05, 0.4), -0.6 * floor.scale[2]
    keyed(sheet, {1: (0.0, 0.0, start), LAST: (0.0, 0.0, end)})
    scene.frame_set(1)
    enable(sheet, [floor])
    apply_preset(("Rubber", "Flesh", "Soft Clay")[seed % 3])
    for frame in range(2, LAST + 1):
        scene.frame_set(frame)
        lowest = evaluated(sheet)[:, 2].min()
        assert lowest >= -1e-3, f"frame {frame}: {-lowest:.4f} inside the floor"
