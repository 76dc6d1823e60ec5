"""The same mesh with its faces listed in another order responds with the same bits.

Blender's UV sphere, made again in the same session, listed its faces in another order in
5 of 8 builds (its vertices the same). Sums over a vertex's faces rounded by that order, and
a ball sliding off a box's edge, rebuilt, ended 6.5 cm from where it ended the first time.

Each case: two copies of one mesh side by side in a scene, one with its faces as Blender
made them, the other with the same faces (each its own corners in its own winding) listed
in a random order, edges too; each its own box, keyed alike relative to it, pressing in
and sliding so that the mesh slides off the box's edge and the box's side passes inside
it; random meshes (UV sphere, ico sphere, subdivided monkey, cylinder with n-gon caps),
presets, friction, Keep Volume. Every frame: the two evaluated meshes, each less its own
offset, are the same bits.
"""

import bpy
import numpy as np
import pytest
from test_contact_holds import enable, keyed
from test_secondary import apply_preset

from primitives import responding

APART = 10.0  # m between the two copies: neither box reaches the other mesh
LAST = 44


@pytest.fixture(autouse=True)
def empty(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def shuffled_copy(obj, rng) -> bpy.types.Object:
    """The same vertices and faces (each with its own corners, in its own winding), the
    faces listed in a random order, as a new object APART along y."""
    faces = [tuple(polygon.vertices) for polygon in obj.data.polygons]
    mesh = bpy.data.meshes.new(obj.name + " shuffled")
    mesh.from_pydata([v.co for v in obj.data.vertices], [], [faces[i] for i in rng.permutation(len(faces))])
    mesh.update()
    copy = bpy.data.objects.new(mesh.name, mesh)
    bpy.context.collection.objects.link(copy)
    copy.location = (0.0, APART, 0.0)
    return copy


def box_under(location, rng) -> bpy.types.Object:
    """A 4 m box pressing 5-15 cm up into a mesh at ``location`` (its top under the mesh's
    lowest point at frame 1), sliding so the mesh passes over its edge and its side
    passes inside the mesh, then dropping away."""
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    box = bpy.context.active_object
    box.scale = (4.0, 4.0, 1.0)
    x, y, z = location
    depth, past = rng.uniform(0.05, 0.15), rng.uniform(0.1, 0.4)
    top = z - 0.5 - 0.05  # the meshes reach 0.5 below their centres
    keyed(
        box,
        {
            1: (x, y, top - 0.5),
            6: (x, y, top - 0.5 + 0.05 + depth),
            26: (x - 2.0 - past, y, top - 0.5 + 0.05 + depth),
            40: (x - 2.0 - past, y, top - 2.0),
        },
    )
    return box


@pytest.mark.parametrize("seed", range(12))
def test_the_same_mesh_with_its_faces_in_another_order_responds_with_the_same_bits(seed):
    rng = np.random.default_rng(seed)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    kind = ("uv", "ico", "monkey", "cylinder")[seed % 4]
    preset = ("Rubber", "Jelly", "Flesh", "Soft Clay", "Rubber", "Stiff Shell")[seed % 6]
    friction = float(rng.choice([0.0, 0.5]))
    keep_volume = bool(seed % 2)
    original = responding(kind)
    copy = shuffled_copy(original, rng)
    assert [tuple(p.vertices) for p in copy.data.polygons] != [tuple(p.vertices) for p in original.data.polygons]
    pairs = []
    for obj in (original, copy):
        box = box_under(tuple(obj.location), np.random.default_rng(seed + 100))
        scene.frame_set(1)
        enable(obj, [box], friction=friction)
        apply_preset(preset)
        obj.collision_response.friction = friction
        obj.collision_response.volume = keep_volume
        obj.collision_response.pressure = True
        pairs.append(obj)
    moved = 0.0
    for frame in range(1, LAST + 1):
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        shapes, pressures = [], []
        for obj in pairs:
            mesh = obj.evaluated_get(depsgraph).data
            positions = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
            mesh.vertices.foreach_get("co", positions)
            shapes.append(positions.reshape(-1, 3))
            pressure = np.empty(len(mesh.vertices), dtype=np.float32)
            mesh.attributes["collision_pressure"].data.foreach_get("value", pressure)
            pressures.append(pressure)
        np.testing.assert_array_equal(shapes[0], shapes[1], err_msg=f"{kind}, frame {frame}")
        np.testing.assert_array_equal(pressures[0], pressures[1], err_msg=f"{kind}, frame {frame}: pressure")
        rest = np.array([v.co for v in original.data.vertices], dtype=np.float32)
        moved = max(moved, float(np.abs(shapes[0] - rest).max()))
    assert moved > 0.04, f"the box pressed the {kind} ({moved:.3f} m at most)"
