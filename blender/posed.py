"""A mesh as it is posed at the current frame, and the way back to its rest shape.

A character is deformed after the shape-key stage: by an armature (or a lattice, or other
deforming modifiers) and by its other shape keys. The solver works in rest space, on the
Basis shape, where the hierarchy and its rest offsets were built; the collision query works
on the posed surface, where the colliders are. The response key adds to the other keys
before the deformation, so:

- the posed positions of the current state are the evaluated mesh while the response key
  holds that state (``posed_positions``);
- a displacement ``d`` found on the posed surface goes back to rest space through the
  inverse of its vertex's deformation matrix (Blender's crazyspace, ``to_rest``). An
  armature moves each vertex by an affine map, so the rest-space move ``M^-1 d`` comes out
  of the armature as exactly ``d``; the response's offsets turn with the bones.

Modifiers after the last deforming one (a Subdivision Surface after the Armature) change
the vertices, so they are switched off while the posed positions are read and work on the
result as usual. A modifier *before* a deforming one that changes the vertex count cannot
be followed: the object is reported unusable (apply that modifier or move it down).
"""

from collections.abc import Iterator
from contextlib import contextmanager

import bpy
import numpy as np

from .mesh_data import is_own_key

#: Modifiers that only move vertices (Blender's "deform-only" type). Others generate.
DEFORMING = frozenset(
    {
        "ARMATURE",
        "CAST",
        "CORRECTIVE_SMOOTH",
        "CURVE",
        "DISPLACE",
        "HOOK",
        "LAPLACIANDEFORM",
        "LAPLACIANSMOOTH",
        "LATTICE",
        "MESH_CACHE",
        "MESH_DEFORM",
        "SHRINKWRAP",
        "SIMPLE_DEFORM",
        "SMOOTH",
        "SURFACE_DEFORM",
        "WARP",
        "WAVE",
    }
)


#: Parent types that deform an object like a modifier (Blender adds a virtual one).
DEFORMING_PARENTS = frozenset({"ARMATURE", "LATTICE"})


def deformed_by_parent(obj) -> bool:
    """An armature or lattice parent deforms like a modifier, without being listed as one."""
    return obj.parent is not None and obj.parent_type in DEFORMING_PARENTS


class Unfollowable(Exception):
    """The posed mesh's vertices do not match the mesh's own; the message says why."""


def _active_modifiers(obj) -> list:
    return [m for m in obj.modifiers if m.show_viewport]


def _deforming_index(obj) -> int:
    """Index of the last active deforming modifier, -1 when there is none."""
    last = -1
    for i, modifier in enumerate(_active_modifiers(obj)):
        if modifier.type in DEFORMING:
            last = i
    return last


def _has_deformer(obj) -> bool:
    return _deforming_index(obj) >= 0 or deformed_by_parent(obj)


def is_posed(obj) -> bool:
    """Whether ``obj`` is shown other than as Basis plus the response: deforming modifiers,
    a deforming parent, or shape keys of its own (not ours, live or baked)."""
    keys = obj.data.shape_keys
    if keys is not None and any(k != keys.reference_key and not is_own_key(k.name) for k in keys.key_blocks):
        return True
    return _has_deformer(obj)


def deformers(obj) -> list:
    """The objects that deform ``obj`` (armatures, lattices, hooks' targets...): an edit of
    one changes the posed surface."""
    found = [getattr(m, "object", None) for m in obj.modifiers]
    if deformed_by_parent(obj):
        found.append(obj.parent)
    return [o for o in found if isinstance(o, bpy.types.Object)]


def moves_affinely(obj) -> bool:
    """Whether each vertex is deformed by an affine map of its own: shape keys, and Armature
    modifiers weighted by vertex groups (linear or dual quaternion). A move carried through
    the vertex's deformation matrix (``Deformation.to_posed``) is then exactly its move on
    the posed surface (to rounding; B-Bones' segments bend it to second order). Envelopes
    weigh a vertex by where it is, and other deformers (a lattice) are not affine."""
    if deformed_by_parent(obj):
        return False
    deforming = _active_modifiers(obj)[: _deforming_index(obj) + 1]
    return all(m.type == "ARMATURE" and not m.use_bone_envelopes for m in deforming)


def stretch_bound(obj) -> float | None:
    """How much longer, at most, the deformation makes a move, for a mesh that moves
    affinely (``moves_affinely``) by bones that are not B-Bones: each Armature modifier
    blends its bones' deformations (linear or dual quaternion skinning, the weights summing
    to 1), so it stretches a move no more than its most scaled bone does, times how far its
    armature's space is skewed against the mesh's. None where that is not known."""
    bound = 1.0
    for modifier in _active_modifiers(obj)[: _deforming_index(obj) + 1]:
        rig = modifier.object
        if rig is None or rig.type != "ARMATURE" or any(b.bbone_segments > 1 for b in rig.data.bones):
            return None
        bones = rig.pose.bones
        if len(bones):
            deform = np.array([np.array(b.matrix) @ np.linalg.inv(np.array(b.bone.matrix_local)) for b in bones])
            bound *= float(np.linalg.norm(deform[:, :3, :3], 2, axis=(1, 2)).max())
        space = np.linalg.inv(np.array(rig.matrix_world)) @ np.array(obj.matrix_world)
        bound *= float(np.linalg.cond(space[:3, :3], 2))
    return bound


@contextmanager
def _cage_only(obj) -> Iterator[None]:
    """Switch off, while reading, the active modifiers after the last deforming one."""
    active = _active_modifiers(obj)
    trailing = active[_deforming_index(obj) + 1 :]
    for modifier in trailing:
        modifier.show_viewport = False
    try:
        yield
    finally:
        for modifier in trailing:
            modifier.show_viewport = True


def posed_positions(obj, depsgraph: bpy.types.Depsgraph) -> np.ndarray:
    """Object-space positions of ``obj``'s vertices after its shape keys and deforming
    modifiers, at the depsgraph's frame, (n, 3) float32."""
    count = len(obj.data.vertices)
    with _cage_only(obj):
        depsgraph.update()
        mesh = obj.evaluated_get(depsgraph).data
        if len(mesh.vertices) != count:
            names = ", ".join(m.name for m in _active_modifiers(obj)[: _deforming_index(obj) + 1])
            raise Unfollowable(
                f"'{obj.name}': a modifier before its deformation changes its vertices ({names}): "
                "apply it or move it below the deforming modifiers"
            )
        positions = np.empty(count * 3, dtype=np.float32)
        mesh.attributes["position"].data.foreach_get("vector", positions)
    return positions.reshape(-1, 3)


class Deformation:
    """The posed mesh's deformation at the current frame, vertex by vertex: vectors carried
    between rest space and the posed surface through each vertex's deformation matrix
    (Blender's crazyspace), for the few vertices near a collider. Use it as a context around
    a frame's queries: the matrices are made when first needed (once a frame: they cost a
    pass of the deformers over the whole mesh) and freed on exit. They are the deformers'
    at the frame, whatever the response key holds (Blender makes them from the mesh without
    its shape keys). Shape keys alone move vertices by translations: without a deforming
    modifier or parent, vectors pass unchanged."""

    def __init__(self, obj, depsgraph, scene):
        self.obj, self.depsgraph, self.scene = obj, depsgraph, scene
        self.active = _has_deformer(obj)
        self._made = False
        # Rest normals carried so far this frame (both queries ask about most of the same
        # vertices), and which vertices they hold.
        self._normals: np.ndarray | None = None
        self._carried = np.zeros(0, dtype=bool)

    def __enter__(self) -> "Deformation":
        return self

    def __exit__(self, *_exception) -> None:
        if self._made:
            self.obj.crazyspace_eval_clear()
            self._made = False

    def to_rest(self, vectors: np.ndarray, index: np.ndarray) -> np.ndarray:
        """``vectors`` (m, 3) of vertices ``index`` (m,), found on the posed surface, carried
        back to rest space."""
        return self._carry(vectors, index, self.obj.crazyspace_displacement_to_original)

    def to_posed(self, vectors: np.ndarray, index: np.ndarray) -> np.ndarray:
        """``vectors`` (m, 3) of vertices ``index`` (m,), in rest space, carried onto the
        posed surface."""
        return self._carry(vectors, index, self.obj.crazyspace_displacement_to_deformed)

    def normals_to_posed(self, normals: np.ndarray, index: np.ndarray) -> np.ndarray:
        """The rest normals (n, 3) of vertices ``index`` (m,) carried onto the posed surface,
        each vertex's once a frame: ``to_posed(normals[index], index)``."""
        if not self.active:
            return normals[index]
        if self._normals is None:
            self._normals, self._carried = np.empty_like(normals), np.zeros(normals.shape[0], dtype=bool)
        new = index[~self._carried[index]]
        if new.size:
            self._normals[new] = self.to_posed(normals[new], new)
            self._carried[new] = True
        return self._normals[index]

    def _carry(self, vectors: np.ndarray, index: np.ndarray, through) -> np.ndarray:
        if not self.active:
            return vectors
        if not self._made:
            self.obj.crazyspace_eval(self.depsgraph, self.scene)
            self._made = True
        # Blender has no bulk reader for these matrices: one call per vertex (about 1 us),
        # only for those near a collider, never the whole mesh. Plain lists in and out: a
        # third faster than numpy rows.
        carried = [
            through(vertex_index=i, displacement=vector)[:]
            for i, vector in zip(index.tolist(), vectors.tolist(), strict=True)
        ]
        return np.array(carried, dtype=vectors.dtype).reshape(vectors.shape)
