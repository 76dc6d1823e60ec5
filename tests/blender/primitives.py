"""Blender's own primitive meshes as arrays, for the solver's tests on arbitrary topology."""

import bpy
import mathutils
import numpy as np

from core.topology import in_own_order


def local(obj) -> np.ndarray:
    """The evaluated mesh's vertices in its own space, (n, 3)."""
    mesh = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    positions = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", positions)
    return positions.reshape(-1, 3).astype(np.float64)


def evaluated(obj) -> np.ndarray:
    """The evaluated mesh's vertices in world space, (n, 3)."""
    matrix = np.array(obj.matrix_world)
    return local(obj) @ matrix[:3, :3].T + matrix[:3, 3]


def carry(objects, rng: np.random.Generator, last: int) -> bpy.types.Object:
    """Parent ``objects`` to a new empty that moves up to 0.3 m and turns up to 0.3 radians a
    frame, on a random path to frame ``last``: what each sees of the others does not change
    (a hand on a walking character's belly, a tracking shot). Their local transforms are
    kept as they were (the identity parent inverse). The empty."""
    carrier = bpy.data.objects.new("carrier", None)
    bpy.context.scene.collection.objects.link(carrier)
    location, rotation = np.zeros(3), np.zeros(3)
    for frame in range(1, last + 1, 3):
        carrier.location, carrier.rotation_euler = tuple(location), tuple(rotation)
        carrier.keyframe_insert("location", frame=frame)
        carrier.keyframe_insert("rotation_euler", frame=frame)
        location = location + rng.uniform(-0.9, 0.9, 3)
        rotation = rotation + rng.uniform(-0.9, 0.9, 3)
    for obj in objects:
        obj.parent = carrier
    return carrier


def carry_by_bone(mesh, collider, rng: np.random.Generator, last: int, moving: bool = True) -> bpy.types.PoseBone:
    """Bind ``mesh`` wholly to the one bone of a new armature (an Armature modifier) and parent
    ``collider`` to that bone, where it stays as it was placed and keyed; the bone moves and
    turns as ``carry``'s empty does (held at rest unless ``moving``): a hand parented to the
    bone of a character's chest, pressing its belly as it walks. The pose bone: its matrix
    carries the mesh's own space (its unposed shape) to the posed one."""
    rig = bpy.data.objects.new("carrier", bpy.data.armatures.new("carrier"))
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bone = rig.data.edit_bones.new("carrier")
    bone.head, bone.tail = (0.0, 0.0, 0.0), (0.0, 1.0, 0.0)  # along y: its rest matrix is the identity
    bpy.ops.object.mode_set(mode="OBJECT")
    mesh.parent = rig
    mesh.vertex_groups.new(name="carrier").add(list(range(len(mesh.data.vertices))), 1.0, "REPLACE")
    mesh.modifiers.new("Armature", "ARMATURE").object = rig
    collider.parent, collider.parent_type, collider.parent_bone = rig, "BONE", "carrier"
    collider.matrix_parent_inverse = mathutils.Matrix.Translation((0.0, -1.0, 0.0))  # (a child sits at the tail)
    pose = rig.pose.bones["carrier"]
    pose.rotation_mode = "XYZ"
    location, rotation = np.zeros(3), np.zeros(3)
    for frame in range(1, last + 1, 3):
        pose.location, pose.rotation_euler = tuple(location), tuple(rotation)
        pose.keyframe_insert("location", frame=frame)
        pose.keyframe_insert("rotation_euler", frame=frame)
        if moving:
            location = location + rng.uniform(-0.9, 0.9, 3)
            rotation = rotation + rng.uniform(-0.9, 0.9, 3)
    return pose


def random_press(rng: np.random.Generator, kind: str, last: int):
    """A new empty scene playing frames 1 to ``last`` with ``responding(kind)`` turned at
    random, and a random direction to press it from: (scene, the mesh, its rest positions,
    its width, its size (the diagonal of its box), the unit direction (3,))."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, last
    obj = responding(kind, turned=tuple(rng.uniform(-1, 1, 3)))
    rest = np.array([v.co for v in obj.data.vertices])
    width, size = float(np.ptp(rest, axis=0).max()), float(np.linalg.norm(np.ptp(rest, axis=0)))
    out = rng.normal(size=3)
    return scene, obj, rest, width, size, out / np.linalg.norm(out)


def keyed(obj, path: dict[int, tuple]) -> None:
    """Key ``obj``'s location at the given frames, linearly between them."""
    edit = bpy.context.preferences.edit
    interpolation, edit.keyframe_new_interpolation_type = edit.keyframe_new_interpolation_type, "LINEAR"
    try:
        for frame, location in path.items():
            obj.location = location
            obj.keyframe_insert("location", frame=frame)
    finally:
        edit.keyframe_new_interpolation_type = interpolation


def inside_box(box, points: np.ndarray) -> np.ndarray:
    """How far each world point is inside the (scaled, turned) unit cube ``box``: its
    distance to the nearest face, 0 outside."""
    matrix = np.array(box.matrix_world)
    axes = matrix[:3, :3]
    half = np.linalg.norm(axes, axis=0) / 2  # the box's half extents along its own axes
    local = (points - matrix[:3, 3]) @ (axes / np.linalg.norm(axes, axis=0))  # along its unit axes
    room = half - np.abs(local)
    return np.where((room > 0).all(axis=1), room.min(axis=1), 0.0)


def inside_ball(ball, radius: float, points: np.ndarray) -> np.ndarray:
    """How far each world point is inside a UV sphere of ``radius``: inside its faces (its
    vertices on the sphere, its flat faces up to 1 % of the radius within it)."""
    return np.maximum(0.99 * radius - np.linalg.norm(points - np.array(ball.matrix_world)[:3, 3], axis=1), 0.0)


def mesh_arrays(obj) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rest positions (n, 3), polygon corners, polygon sizes and edges of a mesh object (the
    topology read as the add-on reads it, ``blender.mesh_data.topology``)."""
    mesh = obj.data
    rest = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", rest)
    corners = np.empty(len(mesh.loops), dtype=np.int64)
    mesh.loops.foreach_get("vertex_index", corners)
    sizes = np.empty(len(mesh.polygons), dtype=np.int64)
    mesh.polygons.foreach_get("loop_total", sizes)
    edges = np.empty(len(mesh.edges) * 2, dtype=np.int64)
    mesh.edges.foreach_get("vertices", edges)
    return rest.reshape(-1, 3), *in_own_order(corners, sizes, edges)


def _add(operator, **options):
    operator(**options)
    obj = bpy.context.active_object
    arrays = mesh_arrays(obj)
    bpy.data.objects.remove(obj)
    return arrays


def _two_islands():
    rest, corners, sizes, edges = _add(bpy.ops.mesh.primitive_ico_sphere_add, subdivisions=3, radius=0.6)
    count = rest.shape[0]
    shifted = rest + np.array([1.5, 0.0, 0.0])
    return np.concatenate([rest, shifted]), np.concatenate([corners, corners + count]), np.tile(sizes, 2), edges


def _ngons():
    # A cylinder capped with two 32-gons, its side split once: n-gons, quads and triangles.
    rest, corners, sizes, edges = _add(
        bpy.ops.mesh.primitive_cylinder_add, vertices=32, radius=1.0, depth=1.0, end_fill_type="NGON"
    )
    return rest, corners, sizes, edges


def primitives() -> dict:
    """Name -> (rest, corners, sizes, edges), each about a unit in size, centred at the origin."""
    return {
        "uv sphere": _add(bpy.ops.mesh.primitive_uv_sphere_add, segments=48, ring_count=24, radius=1.0),
        "icosphere": _add(bpy.ops.mesh.primitive_ico_sphere_add, subdivisions=4, radius=1.0),
        "monkey": _subdivided_monkey(),
        "torus": _add(bpy.ops.mesh.primitive_torus_add, major_segments=64, minor_segments=24),
        "two islands": _two_islands(),
        "n-gons": _ngons(),
        "open cylinder": _add(
            bpy.ops.mesh.primitive_cylinder_add, vertices=48, radius=1.0, depth=2.0, end_fill_type="NOTHING"
        ),
    }


def _subdivided_monkey():
    bpy.ops.mesh.primitive_monkey_add(size=2.0)
    obj = bpy.context.active_object
    modifier = obj.modifiers.new("subdivide", "SUBSURF")
    modifier.levels = 1
    bpy.ops.object.modifier_apply(modifier=modifier.name)
    arrays = mesh_arrays(obj)
    bpy.data.objects.remove(obj)
    return arrays


def grid_and_ball(last_frame: int, heights: dict[int, float], radius: float = 0.4):
    """``scene_with_grid``'s grid and a ball of ``radius`` above its centre, keyed at the
    heights given by frame, the scene at frame 1, both selected and the grid active (what
    Enable takes): returns the scene, the grid and the ball."""
    scene, grid = scene_with_grid(last_frame)
    bpy.ops.mesh.primitive_uv_sphere_add(radius=radius, location=(0, 0, 0.5))
    ball = bpy.context.active_object
    for frame, z in heights.items():
        ball.location.z = z
        ball.keyframe_insert("location", frame=frame)
    scene.frame_set(1)
    ball.select_set(True)
    grid.select_set(True)
    bpy.context.view_layer.objects.active = grid
    return scene, grid, ball


def scene_with_grid(last_frame: int):
    """A new empty scene playing frames 1 to ``last_frame``, holding Blender's 33 x 33 Grid
    (2 m wide, at the origin): returns the scene and the grid."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, last_frame
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=32, y_subdivisions=32, size=2)
    return scene, bpy.context.active_object


def weight_two_bones(obj, blend: float) -> None:
    """Vertex groups "upper" and "lower" on ``obj``: each vertex by its height z, all "upper"
    below -``blend``, all "lower" above ``blend``, blended linearly between (an elbow)."""
    z = np.array([v.co.z for v in obj.data.vertices])
    lower = np.clip((z + blend) / (2 * blend), 0.0, 1.0)
    for name, weights in (("upper", 1 - lower), ("lower", lower)):
        group = obj.vertex_groups.new(name=name)
        for value in np.unique(weights[weights > 0]):
            group.add(np.flatnonzero(weights == value).tolist(), float(value), "REPLACE")


def responding(kind: str, turned=(0.0, 0.0, 0.0), subdivided: int = 0) -> bpy.types.Object:
    """A mesh to respond, about a metre across at the origin, as the active object: "monkey"
    (subdivided once), "uv" (a 32 x 16 UV sphere), "ico" (an icosphere), "torus" or
    "cylinder" (32 sides, a 32-gon each end); turned by ``turned`` (radians) and subdivided
    ``subdivided`` times more, both applied."""
    add = {
        "monkey": lambda: bpy.ops.mesh.primitive_monkey_add(size=1.0),
        "uv": lambda: bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.5),
        "ico": lambda: bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.5),
        "torus": lambda: bpy.ops.mesh.primitive_torus_add(major_radius=0.4, minor_radius=0.15),
        "cylinder": lambda: bpy.ops.mesh.primitive_cylinder_add(vertices=32, radius=0.4, depth=1.0),
    }
    add[kind]()
    obj = bpy.context.active_object
    levels = subdivided + (kind == "monkey")
    if levels:
        obj.modifiers.new("subdivided", "SUBSURF").levels = levels
        bpy.ops.object.modifier_apply(modifier="subdivided")
    obj.rotation_euler = turned
    bpy.ops.object.transform_apply(rotation=True)
    return obj
