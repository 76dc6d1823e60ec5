"""Self-contact in Blender: a mesh that presses into itself (a bending elbow, a belly fold)
is kept out of its own other parts, each side by half (``core.self_contact``'s rules).

It is what a frame shows on top of the response, as the volume given back is: the solver's
state stays the response to the colliders, and the moves out of the mesh itself are made
afresh each frame from the posed surface of that state alone (``core.self_contact.keep_out``),
so a held pose shows the same bits every frame, and nothing of them is fed back into the
next frame's relaxation or damping.

The rays are cast in Blender's C++ as the colliders' are (``collision.raycast.RayCaster``,
the out rays of a round in one cast, then the in rays of the vertices found inside), against
a hidden copy of the mesh's faces whose points are set to the surface asked about. Setting
the points is one bulk copy; Blender builds the copy's search tree again at each round (about
2 ms at 4k faces) and keeps it for the round's second cast. A surface the same as the last
frame's (a held pose, nothing relaxing) is not cast again: its moves are the last ones.
"""

from typing import cast

import bpy
import numpy as np

from ..core import VertexNormals
from ..core.self_contact import OFFSET, STEP, TOUCH, Faces, Kept, keep_out, rays, thickness
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
        self.faces = Faces(len(rest), corners, sizes)
        size = float(np.linalg.norm(np.ptp(rest, axis=0))) or 1.0
        self.offset, self.touch = OFFSET * size, TOUCH * size
        self.rest = rest
        self.edge = _edge_lengths(rest, corners, sizes)
        # The deepest a vertex is taken to be: half its thickness at rest (from the first cast).
        self.cap: np.ndarray | None = None
        self.pressed = 0  # vertices found inside the mesh itself by the last frame's first round
        self.touching = 0
        self._last: tuple[np.ndarray, Kept] | None = None  # the last surface asked about, and its answer
        self._depsgraph: bpy.types.Depsgraph | None = None  # the evaluated one, while ``keep_out`` casts

    def keep_out(self, positions: np.ndarray, depsgraph) -> np.ndarray:
        """The moves (n, 3) that keep the surface at ``positions`` (n, 3, object space, the
        posed surface of the response) out of itself (``core.self_contact.keep_out``)."""
        if self._last is not None and np.array_equal(self._last[0], positions):
            return self._last[1].moves.astype(np.float32)
        self._depsgraph = depsgraph
        if self.cap is None:  # at rest no part is inside another: the in rays measure thickness
            every = np.arange(len(self.rest))
            normals = self.normals(self.rest, every).astype(np.float64)
            origins, directions = rays(self.rest.astype(np.float64), normals, self.offset)
            inward = self._signed(self._surface(self.rest), origins[every.size :], directions[every.size :])
            self.cap = thickness(inward, self.offset) / 2
        normals = self.normals(positions, np.arange(len(positions))).astype(np.float64)
        step = STEP * self.edge
        kept = keep_out(positions, normals, self._cast, self.offset, self.cap, step, self.touch, self.faces)
        self.pressed, self.touching = kept.pressed, kept.touching
        self._last = (positions.copy(), kept)
        return kept.moves.astype(np.float32)

    def status(self) -> str:
        """What the panel says of the last frame's self-contact."""
        if not self.pressed and not self.touching:
            return "Self-contact: none"
        return f"Self-contact: {self.pressed} vertices pressed into the mesh, {self.touching} touching it"

    def _cast(self, positions: np.ndarray, normals: np.ndarray, among: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The signed distances (m,) the out and in rays of the vertices ``among`` (m,) meet
        on the surface at ``positions`` (n, 3), along ``normals`` (n, 3). An in ray tells only
        how deep a vertex inside another part is: it is cast only where the out ray found
        the vertex inside (nan elsewhere), in a second cast on the same surface, whose search
        tree Blender keeps (the in rays cross the mesh to its far wall: they cost nearly twice
        an out ray, and most vertices are inside nothing)."""
        surface = self._surface(positions)
        origins, directions = rays(positions[among].astype(np.float64), normals[among].astype(np.float64), self.offset)
        count = among.size
        outward = self._signed(surface, origins[:count], directions[:count])
        inward = np.full(count, np.nan, dtype=outward.dtype)
        inside = (outward > 0).nonzero()[0]  # (nan, a miss, compares False)
        if inside.size:
            inward[inside] = self._signed(surface, origins[count + inside], directions[count + inside])
        return outward, inward

    def _signed(self, surface: bpy.types.Object, origins: np.ndarray, directions: np.ndarray) -> np.ndarray:
        """The signed distances (m,) the rays meet on ``surface`` (``RayCaster.cast``)."""
        assert self._depsgraph is not None
        signed, _normals = self.caster.cast([surface], origins, directions[None], self._depsgraph)
        return signed[0]

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
