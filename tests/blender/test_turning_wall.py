"""A wall turning against the mesh it presses: a mesh made 15 % of its width into a wall and
keyed to spin in place (a tyre turning on the ground it was modelled into), or the wall keyed
to swing round the still mesh by the opposite motion. Seen from the mesh the two are one
motion, and both must stay bounded.

A wall is wider than the mesh, so its press axis comes from its faces where the mesh meets it
and is kept while it stays (``core.contact``). That axis did not turn with the wall: swung
round, the wall pushed along where its faces had been, and a monkey's vertex went 1.8 m (2.4 to
5.1 times what is allowed here, in the wall-swinging scenes, before the contact rules worked in
the mesh's frame; in the spinning ones after). The axes a collider was aimed along now turn
with it (``Contacts.turn``). A new user's scenes (0.15 to 0.5 radians a frame).

Every frame after the first (made inside, the mesh is pushed out over the first query): nothing
inside the wall beyond 1e-3 of the mesh's size, and no vertex further from where the mesh
alone puts it than twice the press and the preset's standoff.
"""

import bpy
import mathutils
import numpy as np
import pytest
from test_contact_holds import enable
from test_secondary import apply_preset

from primitives import evaluated, inside_box, local, responding

LAST = 30


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


CASES = [
    (kind, spin, turning, preset)
    for kind, preset in (("monkey", "Rubber"), ("torus", "Jelly"), ("uv", "Flesh"))
    for spin in (0.15, 0.3, 0.5)
    for turning in ("mesh", "wall")
]


@pytest.mark.parametrize("kind, spin, turning, preset", CASES)
def test_a_wall_turning_against_a_mesh_pressed_into_it_pushes_it_no_further_than_the_press(kind, spin, turning, preset):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    obj = responding(kind)
    rest = np.array([v.co for v in obj.data.vertices])
    width, size = float(np.ptp(rest, axis=0).max()), float(np.linalg.norm(np.ptp(rest, axis=0)))
    press = 0.15 * width
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(rest[:, 0].max() - press + 0.2, 0.0, 0.0))
    wall = bpy.context.active_object
    wall.scale = (0.4, 3.0, 3.0)
    bpy.context.view_layer.update()
    placed = wall.matrix_world.copy()
    for frame in range(1, LAST + 1):
        turn = mathutils.Matrix.Rotation(spin * (frame - 1), 4, "Z")
        if turning == "mesh":
            obj.rotation_euler = (0.0, 0.0, spin * (frame - 1))
            obj.keyframe_insert("rotation_euler", frame=frame)
        else:  # the opposite motion, about the mesh's centre
            wall.matrix_world = turn.inverted() @ placed
            wall.keyframe_insert("location", frame=frame)
            wall.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_set(1)
    enable(obj, [wall])
    apply_preset(preset)
    allowed = 2.0 * (press + obj.collision_response.standoff)
    for frame in range(1, LAST + 1):
        scene.frame_set(frame)
        moved = float(np.linalg.norm(local(obj) - rest, axis=1).max())
        assert moved <= allowed, f"frame {frame}: a vertex moved {moved:.3f} (allowed {allowed:.3f})"
        inside = float(inside_box(wall, evaluated(obj)).max())
        assert frame == 1 or inside <= 1e-3 * size, f"frame {frame}: a vertex {inside:.4f} inside the wall"
