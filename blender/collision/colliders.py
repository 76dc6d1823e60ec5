"""Which objects can collide with a mesh, and why the others cannot."""

from dataclasses import dataclass
from typing import cast

import bpy
import numpy as np

from ...core.contact import COLLIDER, CONTAINER
from ...core.volume import enclosed_volume
from ..posed import deformed_by_parent

#: Colliders whose object matrix is this close to singular are ignored (zero scale).
SINGULAR = 1e-12


@dataclass
class Collider:
    """A usable collider at the current frame: its object and world-space triangles' bounds."""

    obj: bpy.types.Object
    low: np.ndarray  # (3,) world bounding box
    high: np.ndarray
    centre: np.ndarray  # (3,) bounding sphere, world space
    radius: float
    #: The faces' normals point inward in world space (a mirrored object, or a mesh whose
    #: normals point in): inside and outside swap in the ray test.
    inverted: bool
    #: A plain mesh (no modifiers, shape keys or deforming parent): its shape changes only
    #: with its transform. Others (a rigged collider) are measured every frame.
    rigid: bool
    #: ``core.contact``'s COLLIDER, INTERIOR (stay outside it) or CONTAINER (stay inside it:
    #: ``inverted`` is flipped, so its outside is what the rays find inside).
    kind: int = COLLIDER
    #: Its shape in its own space: bounds, whether it is closed, and whether its normals
    #: point in (a part of it can then answer rays: ``patch``). An open collider's inside
    #: (behind its faces) reaches past its bounding box: the broad phase looks behind it as
    #: far as things moved.
    local_low: np.ndarray | None = None
    local_high: np.ndarray | None = None
    closed: bool = True
    inside_out: bool = False
    #: An open collider whose points all lie in one plane (a plane as floor): its faces' unit
    #: normal, world space, as the rays see them (``inverted`` turns it); None for any other.
    flat: np.ndarray | None = None
    matrix: np.ndarray | None = None  # (4, 4) its world matrix as evaluated


def unlinked(obj) -> bool:
    """Deleted (X) while a list still holds it: in no scene (in no collection, or only in
    collections no scene holds), kept in the file by the list's pointer alone."""
    return not obj.users_scene


def hidden(obj) -> bool:
    """Hidden in the viewport (the eye, or Disable in Viewports), or not in the view layer
    (its collection excluded)."""
    try:
        return bool(obj.hide_get() or obj.hide_viewport)
    except RuntimeError:
        return True


def usable_colliders(
    deformable: bpy.types.Object, candidates, depsgraph: bpy.types.Depsgraph, kinds=None
) -> tuple[list[Collider], list[str]]:
    """The candidates that can collide with ``deformable`` now, and a message for each other.
    ``kinds``: each candidate's kind (``core.contact``), COLLIDER for all when None; an
    object listed twice keeps its first kind.

    Skipped, with a reason: a deleted object (gone, or unlinked from every collection while
    the list still holds it), the deformable itself, a hidden object, an object with no faces
    (an empty, a camera, a curve without geometry), a zero scale, an open container (it has
    no inside to hold the surface in). Kept with a warning: an open
    (non-closed) collider, solid on the side of its faces the mesh did not come from
    (``core.contact``), or interior, whose inside is taken to be behind its faces.
    """
    usable, messages = [], []
    seen = set()
    kinds = [COLLIDER] * len(candidates) if kinds is None else kinds
    for obj, kind in zip(candidates, kinds, strict=True):
        try:
            name = obj.name  # a deleted object is None, or raises once its data is gone
        except (AttributeError, ReferenceError):
            messages.append("A collider was deleted: it is ignored")
            continue
        if obj.name_full in seen:  # (full: an asset's object and its override share a name)
            continue
        seen.add(obj.name_full)
        if unlinked(obj):
            messages.append(f"'{name}' was deleted: it is ignored (remove it from the list)")
            continue
        if obj == deformable or getattr(obj, "original", obj) == deformable:
            messages.append(f"'{name}' is the deforming mesh itself: it cannot be its own collider")
            continue
        if hidden(obj):
            messages.append(f"'{name}' is hidden: it is ignored")
            continue
        if abs(np.linalg.det(np.array(obj.matrix_world)[:3, :3])) < SINGULAR:
            messages.append(f"'{name}' has zero scale: it is ignored")
            continue
        evaluated = obj.evaluated_get(depsgraph)
        shape = _shape(evaluated)
        if shape is None:
            if obj.instance_type == "COLLECTION" and obj.instance_collection is not None:
                messages.append(
                    f"'{name}' instances the collection '{obj.instance_collection.name}', whose copies are not"
                    " collided with: list the objects themselves, or make it real (Object > Apply > Make"
                    " Instances Real)"
                )
            else:
                messages.append(f"'{name}' has no faces to collide with: it is ignored")
            continue
        matrix = np.array(evaluated.matrix_world)
        low, high = carried_box(shape.low, shape.high, matrix)
        centre = matrix[:3, :3] @ shape.centre + matrix[:3, 3]
        radius = shape.radius * float(np.linalg.norm(matrix[:3, :3], 2))
        mirrored = np.linalg.det(matrix[:3, :3]) < 0
        inverted = bool(mirrored != shape.inside_out)
        if not shape.closed and kind == CONTAINER:
            messages.append(f"'{name}' is not closed: it cannot contain the mesh (it is ignored)")
            continue
        if not shape.closed:
            if kind == COLLIDER:
                messages.append(f"'{name}' is not closed: it is solid on the side the mesh did not come from")
            else:
                messages.append(f"'{name}' is not closed: its inside is taken to be behind its faces")
        if kind == CONTAINER:  # the rays find its outside inside: a vertex out of it is pushed in
            inverted = not inverted
        flat = None
        if shape.flat is not None:  # a normal is carried by the inverse transpose
            flat = np.linalg.solve(matrix[:3, :3].T, shape.flat)
            flat *= (-1.0 if inverted else 1.0) / np.linalg.norm(flat)  # as the rays see its faces
        usable.append(
            Collider(
                obj,
                low,
                high,
                centre,
                radius,
                inverted,
                shape.rigid,
                kind,
                shape.low,
                shape.high,
                shape.closed,
                shape.inside_out,
                flat,
                matrix,
            )
        )
    return usable, messages


@dataclass
class _Shape:
    """A collider's geometry in its own object space: bounds and whether it is closed."""

    low: np.ndarray
    high: np.ndarray
    centre: np.ndarray
    radius: float
    closed: bool
    inside_out: bool  # its normals point inward (negative signed volume)
    rigid: bool = False
    flat: np.ndarray | None = None  # open, all its points in one plane: its faces' unit normal


#: Shapes of rigid colliders (plain meshes: no modifiers, no shape keys), by mesh datablock
#: and topology: measured once, not every frame. Call ``forget`` when a mesh is edited.
_RIGID: dict[tuple, _Shape | None] = {}

#: What a deforming mesh collider's topology says (whether it is closed, and inside out),
#: by mesh datablock and topology: read once. Only its bounds are measured
#: at every query (a soft partner is asked about several times a frame); a deformation is
#: taken to keep the faces' orientation.
_TOPOLOGY: dict[tuple, tuple[bool, bool]] = {}


def forget(mesh_name: str | None = None) -> None:
    """Drop the remembered shape of one mesh (or of all): it was edited."""
    for remembered in (_RIGID, _TOPOLOGY):
        for key in [k for k in remembered if mesh_name is None or k[0] == mesh_name]:
            del remembered[key]


def _shape(evaluated: bpy.types.Object) -> _Shape | None:
    """The evaluated object's shape; None when it has no faces."""
    data = evaluated.data
    key = None
    deformed = bool(evaluated.modifiers) or deformed_by_parent(evaluated)
    if isinstance(data, bpy.types.Mesh):
        # By the original mesh: each evaluation of a deforming one makes a new datablock.
        original = getattr(evaluated.original, "data", None) or data
        key = (original.name_full, original.session_uid, len(data.vertices), len(data.polygons), len(data.edges))
        if deformed or data.shape_keys:
            return _deformed_shape(evaluated, key)
    if key is not None and key in _RIGID:
        return _RIGID[key]
    try:
        mesh = evaluated.to_mesh()
    except RuntimeError:
        return None
    shape = None
    if mesh is not None and len(mesh.polygons):
        points = np.empty(len(mesh.vertices) * 3, dtype=np.float64)
        mesh.vertices.foreach_get("co", points)
        closed, inside_out = _topology(mesh, points.reshape(-1, 3))
        shape = _bounded(points.reshape(-1, 3), closed, inside_out, rigid=key is not None)
        if shape.flat is not None:  # the way its faces face: the plane's normal, not either
            normals = np.empty(len(mesh.polygons) * 3, dtype=np.float64)
            mesh.polygons.foreach_get("normal", normals)
            if float(normals.reshape(-1, 3).sum(axis=0) @ shape.flat) < 0:
                shape.flat = -shape.flat
    if mesh is not None:
        evaluated.to_mesh_clear()
    if key is not None:
        _RIGID[key] = shape
    return shape


def _deformed_shape(evaluated: bpy.types.Object, key: tuple) -> _Shape | None:
    """A deforming mesh collider's shape: its bounds now, its topology as first read."""
    mesh = cast(bpy.types.Mesh, evaluated.data)  # evaluated: modifiers, shape keys and all
    if not len(mesh.polygons):
        return None
    points = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", points)
    points = points.reshape(-1, 3)
    known = _TOPOLOGY.get(key)
    if known is None:
        known = _TOPOLOGY[key] = _topology(mesh, points.astype(np.float64))
    closed, inside_out = known
    # What _bounded gives, without every point in float64 (a soft partner is measured at
    # each of a frame's queries): the box is the float32 one, and the sphere's radius is
    # measured exactly on the points that float32 finds nearly furthest.
    # Column by column: numpy reduces an (n, 3) array along its long axis ten times slower.
    columns = [points[:, axis] for axis in range(3)]
    low = np.array([float(column.min()) for column in columns])
    high = np.array([float(column.max()) for column in columns])
    centre = (low + high) / 2
    squared = np.zeros(points.shape[0], dtype=np.float32)
    for column, middle in zip(columns, centre, strict=True):
        squared += (column - np.float32(middle)) ** 2
    furthest = float(squared.max())
    slack = 1e-5 * (np.sqrt(furthest) + float(np.abs(centre).max())) ** 2  # float32's rounding, many times over
    near_furthest = points[squared >= furthest - slack].astype(np.float64) - centre
    radius = float(np.sqrt(np.add.reduce(near_furthest * near_furthest, axis=1).max()))
    return _Shape(low, high, centre, radius, closed, inside_out, rigid=False)


def _topology(mesh: bpy.types.Mesh, points: np.ndarray) -> tuple[bool, bool]:
    """Whether a mesh is closed (every edge between two faces) and whether it is inside out
    (a closed mesh of negative signed volume)."""
    edge_of_corner = np.empty(len(mesh.loops), dtype=np.int64)
    mesh.loops.foreach_get("edge_index", edge_of_corner)
    uses = np.bincount(edge_of_corner, minlength=len(mesh.edges))
    closed = bool(len(mesh.edges)) and bool(np.all(uses == 2))
    mesh.calc_loop_triangles()
    corners = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", corners)
    centre = (points.min(axis=0) + points.max(axis=0)) / 2  # (about it: fewer digits lost)
    return closed, closed and enclosed_volume(points - centre, corners.reshape(-1, 3)) < 0


def _bounded(points: np.ndarray, closed: bool, inside_out: bool, rigid: bool) -> _Shape:
    """A shape's bounds (box and sphere) from its points (n, 3), object space, and an open
    one's plane where it is flat."""
    low, high = points.min(axis=0), points.max(axis=0)
    centre = (low + high) / 2
    radius = float(np.linalg.norm(points - centre, axis=1).max())
    return _Shape(low, high, centre, radius, closed, inside_out, rigid=rigid, flat=None if closed else _flat(points))


#: A mesh is flat when its points lie within this fraction of its size of one plane.
FLAT = 1e-5


def _flat(points: np.ndarray) -> np.ndarray | None:
    """The unit normal (3,) of the plane all ``points`` (n, 3) lie in, or None."""
    if len(points) < 3:
        return None
    centred = points - points.mean(axis=0)
    _, spread, axes = np.linalg.svd(centred.T @ centred)  # (3 x 3: cheap for any count)
    size = float(np.sqrt(spread[0]))
    return axes[2].copy() if size > 0 and np.sqrt(max(float(spread[2]), 0.0)) <= FLAT * size else None


def carried_box(low: np.ndarray, high: np.ndarray, matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The axis-aligned box around the box [low, high] carried through ``matrix`` (4 x 4):
    the bounds of its eight corners."""
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=np.float64)
    carried = (low + corners * (high - low)) @ matrix[:3, :3].T + matrix[:3, 3]
    return carried.min(axis=0), carried.max(axis=0)
