"""The mesh's own data: what the response reads of it (the Basis shape, the topology, vertex
group weights) and the shape keys it writes. The only module that writes shape keys: the
live "Collision Response" key and the baked "Collision Response 0012" keys.

Basis and every other shape key are left as they are.
"""

import bpy
import numpy as np

from ..core.topology import in_own_order
from . import guard

SHAPE_KEY = "Collision Response"
BAKED_PREFIX = "Collision Response "  # baked keys: "Collision Response 0012"

#: A custom property on the mesh's shape keys (the Key datablock: a single key takes none)
#: saying that its key named SHAPE_KEY was written by the response, not by the user: a
#: file reopened with the response off (an override loses its settings) still knows it.
OWN_MARK = "collision_response_key"

# By the object's session id, as the simulations are: the positions its response key holds.
_written: dict[int, np.ndarray] = {}


def is_baked_key(name: str) -> bool:
    return name.startswith(BAKED_PREFIX) and name[len(BAKED_PREFIX) :].isdigit()


def is_own_key(name: str) -> bool:
    """The live response key, or a baked one."""
    return name == SHAPE_KEY or is_baked_key(name)


# -- reading ------------------------------------------------------------------------------------


def rest_positions(obj) -> np.ndarray:
    """The Basis shape (the mesh itself when it has no shape keys), (n, 3) float32."""
    mesh = obj.data
    positions = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    keys = mesh.shape_keys
    if keys is not None and keys.reference_key is not None:
        keys.reference_key.points.foreach_get("co", positions)
    else:
        mesh.vertices.foreach_get("co", positions)
    return positions.reshape(-1, 3)


def topology(mesh) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each face's vertices in winding order (Blender's loops), the corners per face and the
    edges (e, 2), faces and edges in an order of their own (``core.topology``: the same mesh
    made again may list them in another order)."""
    corners = np.empty(len(mesh.loops), dtype=np.int64)
    mesh.loops.foreach_get("vertex_index", corners)
    sizes = np.empty(len(mesh.polygons), dtype=np.int64)
    mesh.polygons.foreach_get("loop_total", sizes)
    edges = np.empty(len(mesh.edges) * 2, dtype=np.int64)
    mesh.edges.foreach_get("vertices", edges)
    return in_own_order(corners, sizes, edges.reshape(-1, 2))


def group_weights(obj, group) -> np.ndarray:
    """Each vertex's weight in the vertex group ``group``, (n,). A behaviour map scales its
    property from the level's own value, so a vertex not in the group weighs 1 (that value):
    painting part of a mesh changes that part only."""
    mesh = obj.data
    weights = np.ones(len(mesh.vertices))
    for vertex in mesh.vertices:  # only at set-up: vertex groups have no bulk reader
        for element in vertex.groups:
            if element.group == group.index:
                weights[vertex.index] = element.weight
    return weights


# -- the live response key ----------------------------------------------------------------------


def holds(obj, positions: np.ndarray) -> bool:
    """Whether the response key holds ``positions`` (this very array) already."""
    return _written.get(obj.session_uid) is positions


def forget_written() -> None:
    """Forget what every response key holds (a file was loaded, the add-on stops)."""
    _written.clear()


def write_shape_key(obj, positions: np.ndarray) -> None:
    """Put ``positions`` in the "Collision Response" shape key (relative to Basis, value 1).
    Basis and every other shape key are left as they are."""
    mesh = obj.data
    with guard.busy():
        if mesh.shape_keys is None:
            obj.shape_key_add(name="Basis", from_mix=False)
        key = live_key(obj)
        if key is None:
            key = obj.shape_key_add(name=SHAPE_KEY, from_mix=False)
            key.value = 1.0
        if not mesh.shape_keys.get(OWN_MARK):  # (files from before the mark: marked when written)
            mesh.shape_keys[OWN_MARK] = True
        # ShapeKey.points: the bulk accessor (the per-point "data" costs 100 x more).
        key.points.foreach_set("co", np.ascontiguousarray(positions, dtype=np.float32).ravel())
        mesh.update()
        _written[obj.session_uid] = positions


def live_key(obj) -> bpy.types.ShapeKey | None:
    """The mesh's key named "Collision Response", if it has one."""
    keys = obj.data.shape_keys
    return None if keys is None else keys.key_blocks.get(SHAPE_KEY)


def is_own_live_key(obj) -> bool:
    """Whether the mesh's key named "Collision Response" is one the response wrote."""
    return live_key(obj) is not None and bool(obj.data.shape_keys.get(OWN_MARK))


def rest_orphaned_key(obj) -> bool:
    """Set the response's own key to 0 on a mesh that no longer responds (a file saved while it
    played, reopened with the response off: an override keeps none of the add-on's settings),
    where it showed the frame it was saved at in every frame. Basis and the other keys are left
    as they are; Enable takes the key back. Whether it was set."""
    key = live_key(obj) if obj.data.library is None else None
    if key is None or not is_own_live_key(obj) or key.value == 0.0:
        return False
    key.value = 0.0
    return True


def saved_dent(mesh) -> bool:
    """Whether a mesh linked from another file holds the response's key away from its Basis:
    that file was saved with a live response past its start frame, and the key, which nothing
    here can write, shows that frame's dent in every frame (a linked mesh's data cannot change
    in this session: the answer is kept)."""
    found = _saved_dents.get(mesh.session_uid)
    if found is None:
        keys = mesh.shape_keys
        key = None if keys is None else keys.key_blocks.get(SHAPE_KEY)
        found = False
        if key is not None and key.value != 0 and not key.mute and key.relative_key != key:
            ours, basis = (np.empty(len(mesh.vertices) * 3, dtype=np.float32) for _ in range(2))
            key.points.foreach_get("co", ours)
            key.relative_key.points.foreach_get("co", basis)
            found = not np.array_equal(ours, basis)
        _saved_dents[mesh.session_uid] = found
    return found


# By a linked mesh's session id: whether it holds a saved dent (``saved_dent``).
_saved_dents: dict[int, bool] = {}


def remove_shape_key(obj) -> None:
    """Remove the "Collision Response" shape key: the mesh is as it was."""
    _written.pop(obj.session_uid, None)
    key = live_key(obj)
    if key is None:
        return
    with guard.busy():
        obj.shape_key_remove(key)
        keys = obj.data.shape_keys
        if keys is not None and OWN_MARK in keys:
            del keys[OWN_MARK]


# -- baked keys ---------------------------------------------------------------------------------


def baked_keys(obj) -> list:
    keys = obj.data.shape_keys
    if keys is None:
        return []
    return [k for k in keys.key_blocks if is_baked_key(k.name)]


def is_baked(obj) -> bool:
    return bool(baked_keys(obj))


def add_baked_key(obj, frame: int, positions: np.ndarray) -> bpy.types.ShapeKey:
    """A baked key holding ``positions`` for ``frame`` (not keyed yet: see ``key_baked``)."""
    key = obj.shape_key_add(name=f"{BAKED_PREFIX}{frame:04d}", from_mix=False)
    key.points.foreach_set("co", positions.ravel())
    # Off until keyed: a new key may come at full value, and on a posed mesh the frames baked
    # so far would then add up in the surface the next frame's colliders are asked about.
    key.value = 0.0
    return key


def key_baked(baked: list[tuple[int, bpy.types.ShapeKey]], edit: bpy.types.PreferencesEdit) -> None:
    """Key each baked key full on its frame only: constant keys at frame - 1, frame, + 1
    (``edit``: the preferences whose new-keyframe interpolation is borrowed meanwhile)."""
    interpolation = edit.keyframe_new_interpolation_type
    edit.keyframe_new_interpolation_type = "CONSTANT"
    try:
        for frame, key in baked:
            for at, value in ((frame - 1, 0.0), (frame, 1.0), (frame + 1, 0.0)):
                key.value = value
                key.keyframe_insert("value", frame=at)
    finally:
        edit.keyframe_new_interpolation_type = interpolation


def free_baked_keys(obj) -> None:
    """Remove every baked key and its keyframes."""
    for key in baked_keys(obj):
        frame = int(key.name[len(BAKED_PREFIX) :])
        for at in (frame - 1, frame, frame + 1):
            try:
                key.keyframe_delete("value", frame=at)
            except RuntimeError:  # already gone (edited by hand)
                pass
        obj.shape_key_remove(key)
