"""Self-contact in Blender: a mesh that presses into itself (a bending elbow, a belly fold)
is pushed out of its own other parts, each side by half (``core.self_contact``'s rules).

The rays are cast in Blender's C++ as the colliders' are (``collision.raycast.RayCaster``,
one cast for every vertex's two rays), against a hidden copy of the mesh's faces whose
points are set to the surface asked about: the same positions the colliders are asked about
(the posed surface of a rigged mesh), never the mesh as last drawn. Setting the points is one
bulk copy; Blender builds the copy's search tree again at each cast (a few ms at 10k faces).
"""

from typing import cast

import bpy
import numpy as np

from ..core import VertexNormals
from ..core.self_contact import OFFSET, SHARE, TOUCH, pushes, rays, thickness
from .collision.raycast import HELPER_NAME, RayCaster


class SelfContact:
    """One mesh's self-contact: its rays' caster, the hidden copy of its faces they meet, and
    each vertex's thickness at rest (the deepest it can be inside another part)."""

    def __init__(self, scene, obj, rest: np.ndarray, corners: np.ndarray, sizes: np.ndarray):
        self.owner = f"{obj.name} self"
        self.caster = RayCaster(scene, self.owner)
        # Removed with the helpers before a save (their prefix); Blender keeps 63 bytes of a name.
        self.name = f"{HELPER_NAME} [{obj.name}]"[:63]
        self.scene, self.corners, self.sizes = scene, corners, sizes
        self.normals = VertexNormals(len(rest), corners, sizes)
        size = float(np.linalg.norm(np.ptp(rest, axis=0))) or 1.0
        self.offset, self.touch = OFFSET * size, TOUCH * size
        self.rest = rest
        self.edge = _edge_lengths(rest, corners, sizes)
        # The deepest a vertex is taken to be: half its thickness at rest (from the first cast).
        self.cap: np.ndarray | None = None
        self.pressed = 0  # vertices pushed out of the mesh itself at the frame's first question
        self.touching = 0
        self._asked = 0  # questions so far this frame
        self._whole_from = 0  # from this question on, each vertex takes the whole of its depth

    def new_frame(self, whole_from: int) -> None:
        """A frame starts: its first ``whole_from - 1`` questions (the step's and the first
        rounds of corrections) take half of each depth, both sides of a fold at once; later
        ones (the last round, what is shown on top) the whole of what is left, so neither
        side ends inside the other, even where only one side's rays found the overlap."""
        self._asked, self._whole_from = 0, whole_from

    def find(self, positions: np.ndarray, depsgraph, first: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The pushes (n, 3) out of the mesh's other parts and the touching flags (n,) of the
        surface at ``positions`` (n, 3, object space, as the frame shows it), along its own
        vertex normals there. ``first``: the frame's first question (what the panel reports)."""
        if self.cap is None:  # at rest no part is inside another: the rays measure thickness
            every = np.arange(len(self.rest))
            _outward, inward = self._cast(self.rest, self.normals(self.rest, every), depsgraph)
            self.cap = thickness(inward, self.offset) / 2
        normals = self.normals(positions, np.arange(len(positions)))
        outward, inward = self._cast(positions, normals, depsgraph)
        self._asked += 1
        share = 1.0 if self._asked >= self._whole_from else SHARE
        push, touching = pushes(normals, outward, inward, self.offset, self.cap, self.touch, share, self.edge)
        if first:
            self.pressed, self.touching = int(np.count_nonzero(push.any(axis=1))), int(np.count_nonzero(touching))
        return push.astype(np.float32), touching

    def status(self) -> str:
        """What the panel says of the last frame's self-contact."""
        if not self.pressed and not self.touching:
            return "Self-contact: none"
        return f"Self-contact: {self.pressed} vertices pressed into the mesh, {self.touching} touching it"

    def _cast(self, positions: np.ndarray, normals: np.ndarray, depsgraph) -> tuple[np.ndarray, np.ndarray]:
        """The signed distances (n,) each vertex's out and in rays meet on the surface at
        ``positions``."""
        surface = self._surface(positions)
        origins, directions = rays(positions.astype(np.float64), normals.astype(np.float64), self.offset)
        signed, _normals = self.caster.cast([surface], origins, directions[None], depsgraph)
        count = len(positions)
        return signed[0, :count], signed[0, count:]

    def _surface(self, positions: np.ndarray) -> bpy.types.Object:
        """The hidden copy of the mesh's faces, its points set to ``positions``; made again
        when missing (an undo, a save) or of another size."""
        obj = bpy.data.objects.get(self.name)
        count = len(positions)
        if obj is None or obj.type != "MESH" or len(cast(bpy.types.Mesh, obj.data).vertices) != count:
            if obj is not None:
                bpy.data.objects.remove(obj)
            obj = bpy.data.objects.new(self.name, self._faces(count))
            obj.hide_viewport = obj.hide_render = obj.hide_select = True
        if obj.name not in self.scene.collection.objects:
            self.scene.collection.objects.link(obj)
        mesh = cast(bpy.types.Mesh, obj.data)
        # Through the vertices, not the position attribute: only this drops the search tree
        # Blender keeps for the mesh (set as an attribute, the rays met the last points).
        mesh.vertices.foreach_set("co", np.ascontiguousarray(positions, dtype=np.float32).ravel())
        mesh.update()
        return obj

    def _faces(self, count: int) -> bpy.types.Mesh:
        """A mesh of ``count`` points and the faces (by their corners) of the owner's mesh."""
        mesh = bpy.data.meshes.new(self.name)
        mesh.vertices.add(count)
        mesh.loops.add(len(self.corners))
        mesh.polygons.add(len(self.sizes))
        starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int32)
        mesh.polygons.foreach_set("loop_start", starts)
        mesh.loops.foreach_set("vertex_index", self.corners.astype(np.int32))
        mesh.update()
        return mesh


def _edge_lengths(rest: np.ndarray, corners: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Each vertex's mean edge length at rest (n,), over the faces' sides around it."""
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    following = np.arange(len(corners)) + 1
    following[np.cumsum(sizes) - 1] = starts[np.cumsum(sizes) - 1]  # a face's last corner: its first
    length = np.linalg.norm(rest[corners] - rest[corners[following]], axis=1)
    total = np.bincount(corners, length, len(rest)) + np.bincount(corners[following], length, len(rest))
    count = np.bincount(corners, minlength=len(rest)) * 2
    return total / np.maximum(count, 1)
