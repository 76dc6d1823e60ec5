"""A closed tube bound to two bones and bent at its middle so its inner side presses into
itself, and a measure of how far a mesh is inside itself that shares nothing with the add-on:
generalized winding numbers (solid angles) of the evaluated mesh."""

import math

import bpy
import numpy as np

from primitives import weight_two_bones

RADIUS, HALF = 0.3, 1.0  # the tube: radius 0.3 from z = -1 to 1
RINGS, AROUND = 31, 24
BLEND = 0.3  # the two bones' weights blend over z in [-BLEND, BLEND]


def tube(name: str = "Tube") -> bpy.types.Object:
    """A closed tube along z (its caps one n-gon each), normals out."""
    angle = np.linspace(0, 2 * math.pi, AROUND, endpoint=False)
    z = np.linspace(-HALF, HALF, RINGS)
    points = [(RADIUS * math.cos(a), RADIUS * math.sin(a), h) for h in z for a in angle]
    faces = [
        (r * AROUND + i, r * AROUND + (i + 1) % AROUND, (r + 1) * AROUND + (i + 1) % AROUND, (r + 1) * AROUND + i)
        for r in range(RINGS - 1)
        for i in range(AROUND)
    ]
    faces.append(tuple(reversed(range(AROUND))))  # the bottom cap, facing down
    faces.append(tuple((RINGS - 1) * AROUND + i for i in range(AROUND)))
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(points, [], faces)
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def rigged_tube(bends: list[tuple[int, float]], name: str = "Tube") -> tuple[bpy.types.Object, bpy.types.Object]:
    """The tube bound to bones "upper" (z -1 to 0) and "lower" (0 to 1), the lower bone keyed
    to ``bends``: (frame, degrees about x)."""
    obj = tube(name)
    data = bpy.data.armatures.new("Rig")
    rig = bpy.data.objects.new("Rig", data)
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    upper = data.edit_bones.new("upper")
    upper.head, upper.tail = (0, 0, -HALF), (0, 0, 0)
    lower = data.edit_bones.new("lower")
    lower.head, lower.tail = (0, 0, 0), (0, 0, HALF)
    lower.parent, lower.use_connect = upper, True
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.parent = rig
    obj.modifiers.new("Armature", "ARMATURE").object = rig
    weight_two_bones(obj, BLEND)
    pose = rig.pose.bones["lower"]
    pose.rotation_mode = "XYZ"
    for frame, degrees in bends:
        pose.rotation_euler.x = math.radians(degrees)
        pose.keyframe_insert("rotation_euler", frame=frame)
    return obj, rig


def shown(obj) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The evaluated mesh, object space: positions (n, 3), vertex normals (n, 3) and
    triangles (t, 3), as Blender makes them."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    mesh = obj.evaluated_get(depsgraph).data
    count = len(mesh.vertices)
    positions = np.empty(count * 3)
    mesh.attributes["position"].data.foreach_get("vector", positions)
    normals = np.empty(count * 3)
    mesh.vertex_normals.foreach_get("vector", normals)
    mesh.calc_loop_triangles()
    triangles = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", triangles)
    return positions.reshape(-1, 3), normals.reshape(-1, 3), triangles.reshape(-1, 3)


def winding(points: np.ndarray, positions: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """The generalized winding number (m,) of a closed mesh at ``points`` (m, 3): the sum of
    its triangles' signed solid angles over 4 pi (Van Oosterom and Strackee 1983). 1 inside,
    0 outside, 2 inside two overlapping parts of it."""
    total = np.zeros(len(points))
    for start in range(0, len(points), 64):
        a, b, c = (positions[triangles[:, k]][None] - points[start : start + 64, None] for k in range(3))
        la, lb, lc = (np.linalg.norm(v, axis=2) for v in (a, b, c))
        det = np.einsum("mti,mti->mt", a, np.cross(b, c))
        dot = lambda u, v: np.einsum("mti,mti->mt", u, v)  # noqa: E731
        divisor = la * lb * lc + dot(a, b) * lc + dot(b, c) * la + dot(c, a) * lb
        total[start : start + 64] = 2 * np.arctan2(det, divisor).sum(axis=1)
    return total / (4 * math.pi)


def inside_itself(obj, tolerance: float) -> np.ndarray:
    """Which vertices of the evaluated mesh are inside another part of it by more than
    ``tolerance`` (see ``depth_inside_itself``)."""
    return depth_inside_itself(obj) > tolerance


def depth_inside_itself(obj) -> np.ndarray:
    """How deep each vertex of the evaluated mesh is inside another part of it (n,), 0 where
    it is not: where the mesh's winding number at the vertex is above 1 (a vertex on a
    surface that does not overlap itself sees at most the whole of it around itself, 1;
    inside another part, one more), the distance to the nearest face not its own (a vertex
    in a fold's crease has the fold's other side beside it). Normals play no part: a
    crease's are not to be trusted."""
    positions, _normals, triangles = shown(obj)
    depth = np.zeros(len(positions))
    for vertex in np.flatnonzero(winding(positions, positions, triangles) > 1.0):
        others = triangles[~(triangles == vertex).any(axis=1)]
        depth[vertex] = distance_to_triangles(positions[vertex], positions[others]).min()
    return depth


def distance_to_triangles(point: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The distance (t,) from ``point`` (3,) to each triangle (t, 3, 3): to its plane where
    the point projects inside it, else to the nearest of its edges."""
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    normal = np.cross(b - a, c - a)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    height = np.einsum("ij,ij->i", point - a, normal)
    projected = point - height[:, None] * normal
    within = np.ones(len(a), dtype=bool)
    for start, end in ((a, b), (b, c), (c, a)):
        within &= np.einsum("ij,ij->i", np.cross(end - start, projected - start), normal) >= 0
    edges = []
    for start, end in ((a, b), (b, c), (c, a)):
        along = end - start
        t = np.clip(np.einsum("ij,ij->i", point - start, along) / np.einsum("ij,ij->i", along, along), 0, 1)
        edges.append(np.linalg.norm(point - (start + t[:, None] * along), axis=1))
    return np.where(within, np.abs(height), np.min(edges, axis=0))


def turned_over(obj, reference: np.ndarray) -> np.ndarray:
    """Which triangles of the evaluated mesh face away (past 90 degrees) from the same
    triangles' normals in ``reference`` (t, 3)."""
    return np.einsum("ij,ij->i", triangle_normals(obj), reference) < 0


def triangle_normals(obj) -> np.ndarray:
    positions, _normals, triangles = shown(obj)
    a, b, c = (positions[triangles[:, k]] for k in range(3))
    return np.cross(b - a, c - a)
