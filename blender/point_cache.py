"""Bake to a point cache file that Blender's own Mesh Cache modifier plays: PC2, one frame of
float32 positions after another, written as it is baked (a long shot never sits in memory
or in the .blend: 12 bytes a vertex a frame, in a file beside it).

The cache holds the mesh as the response shows it after its deformation (its armature,
lattice, shape keys: the posed cage), so the Mesh Cache modifier goes right after the last
deforming modifier and overwrites what comes to it; modifiers after it (a Subdivision
Surface) work on the result as before. Like an Alembic cache, it plays the rig as it was
baked: a later change of the animation needs a new bake. The mesh itself is not written,
so this works where shape keys cannot be: a library override's linked mesh.
"""

import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager

import bpy
import numpy as np

from . import mesh_data, posed

MODIFIER = "Collision Response Cache"
HEADER = struct.Struct("<12siiffi")  # "POINTCACHE2\0", version 1, vertices, start, sampling, frames


class Writer:
    """A PC2 file of ``frames`` frames of ``vertices`` positions from frame ``first``,
    filled frame by frame; ``discard`` removes it (a cancelled bake)."""

    def __init__(self, path: str, vertices: int, first: int, frames: int):
        self.path, self.vertices, self.frames, self.written = path, vertices, frames, 0
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        self.file = open(path, "wb")  # closed by close or discard
        self.file.write(HEADER.pack(b"POINTCACHE2\0", 1, vertices, float(first), 1.0, frames))

    def add(self, positions: np.ndarray) -> None:
        self.file.write(np.ascontiguousarray(positions, dtype="<f4").reshape(self.vertices, 3).tobytes())
        self.written += 1

    def close(self) -> None:
        self.file.close()
        if self.written != self.frames:
            raise ValueError(f"{self.path}: {self.written} frames written of {self.frames}")

    def discard(self) -> None:
        self.file.close()
        os.remove(self.path)


def read(path: str) -> tuple[float, np.ndarray]:
    """The first frame and the positions (frames, vertices, 3) of a PC2 file."""
    with open(path, "rb") as file:
        magic, _version, vertices, start, _sampling, frames = HEADER.unpack(file.read(HEADER.size))
        if magic != b"POINTCACHE2\0":
            raise ValueError(f"{path} is not a PC2 file")
        positions = np.fromfile(file, dtype="<f4", count=frames * vertices * 3)
    return start, positions.reshape(frames, vertices, 3)


def shown_positions(obj, response: np.ndarray, depsgraph: bpy.types.Depsgraph) -> np.ndarray:
    """What the cache holds for the frame shown: the response itself for a mesh nothing else
    moves, else the posed cage (the response key holds ``response`` already)."""
    return posed.posed_positions(obj, depsgraph) if posed.is_posed(obj) else response


def default_path(obj) -> str:
    """Beside the .blend (relative to it), named after the object."""
    return f"//{bpy.path.clean_name(obj.name)}.pc2"


def unsaved_problem(path: str) -> str | None:
    """Why ``path`` cannot be written now (None: it can): relative to a .blend never saved, it
    would land in the working directory, and be lost to the file once saved elsewhere (as
    Blender's own disk caches, save first)."""
    if bpy.data.filepath or (os.path.isabs(path) and not path.startswith("//")):
        return None
    return (
        f"Save the .blend first: the point cache goes beside it ('{path}'), "
        "or give the bake an absolute file path. Nothing was baked"
    )


def modifier(obj):
    """The Mesh Cache modifier a point-cache bake added, or None."""
    found = obj.modifiers.get(MODIFIER)
    return found if found is not None and found.type == "MESH_CACHE" else None


#: Modifiers that keep the mesh's vertices and leave their positions alone (normals, UVs,
#: weights): the cache may go after them.
KEEPS_VERTICES = frozenset(
    {
        "NORMAL_EDIT",
        "UV_PROJECT",
        "UV_WARP",
        "VERTEX_WEIGHT_EDIT",
        "VERTEX_WEIGHT_MIX",
        "VERTEX_WEIGHT_PROXIMITY",
        "WEIGHTED_NORMAL",
    }
)


def _after_deforming(modifiers) -> int:
    """The index right after the last deforming modifier of ``modifiers``."""
    return max((i for i, m in enumerate(modifiers) if m.type in posed.DEFORMING), default=-1) + 1


def _linked_count(obj) -> int:
    """How many of an override's modifiers are the asset's (they come first; 0 for others)."""
    if obj.override_library is None:
        return 0
    return sum(1 for m in obj.modifiers if m.is_override_data)


def placement_problem(obj) -> str | None:
    """Why the cache cannot play on ``obj``, said before anything is baked (None: it can). A
    library override takes a modifier of its own only after the asset's (Blender's rule: the
    move raised a traceback and left the cache after a Subdivision Surface, the vertex count
    mismatched and no dent showed), so an asset's modifier after the last deforming one that
    makes other vertices would hand the cache a mesh it does not fit."""
    modifiers = list(obj.modifiers)
    blocking = [
        m.name
        for m in modifiers[_after_deforming(modifiers) : _linked_count(obj)]
        if (m.show_viewport or m.show_render) and m.type not in KEEPS_VERTICES
    ]
    if not blocking:
        return None
    names = ", ".join(f"'{name}'" for name in blocking)
    return (
        f"'{obj.name}' is a library override whose linked {names} comes after its last deforming modifier, "
        "and an override's own modifier (the cache) can only go after the linked ones, where the vertices "
        f"are not the mesh's. Turn {names} off on the override (viewport and render), bake, and add one of "
        "your own after the cache; or make its mesh local (Object Data properties) and bake to shape keys"
    )


def add_modifier(obj, path: str, first: int) -> bpy.types.Modifier:
    """A Mesh Cache modifier playing ``path`` (PC2, from frame ``first``), right after the
    last deforming modifier, replacing what comes to it (on an override, after the asset's
    modifiers too: ``placement_problem`` says when that cannot work)."""
    cache = obj.modifiers.new(MODIFIER, "MESH_CACHE")
    cache.cache_format = "PC2"
    cache.filepath = path
    cache.deform_mode = "OVERWRITE"
    cache.time_mode, cache.play_mode = "FRAME", "SCENE"
    cache.frame_start, cache.frame_scale = float(first), 1.0
    cache.forward_axis, cache.up_axis = "POS_Y", "POS_Z"  # object space as written: no turn
    cache.interpolation = "NONE"
    modifiers = list(obj.modifiers)
    after = max(_after_deforming(modifiers[:-1]), _linked_count(obj))
    if after < len(modifiers) - 1:
        with bpy.context.temp_override(object=obj):
            bpy.ops.object.modifier_move_to_index(modifier=cache.name, index=after)
    return cache


def remove_modifier(obj) -> None:
    found = modifier(obj)
    if found is not None:
        obj.modifiers.remove(found)


def baked_to(obj) -> str | None:
    """How ``obj``'s response is baked ("shape keys" or "a point cache"), None when live."""
    if mesh_data.is_baked(obj):
        return "shape keys"
    return "a point cache" if modifier(obj) is not None else None


def attach(obj, path: str) -> str | None:
    """Play a point cache baked elsewhere (a farm task) on ``obj``: its Mesh Cache modifier,
    the live response off, as a bake leaves it. A message when the file does not fit."""
    try:
        with open(bpy.path.abspath(path), "rb") as file:
            magic, _version, vertices, start, _sampling, _frames = HEADER.unpack(file.read(HEADER.size))
    except (OSError, struct.error) as problem:
        return f"cannot read the point cache {path}: {problem}"
    if magic != b"POINTCACHE2\0" or vertices != len(obj.data.vertices):
        return (
            f"{path} is not a point cache of '{obj.name}' ({vertices} vertices, the mesh has {len(obj.data.vertices)})"
        )
    placement = placement_problem(obj)
    if placement is not None:
        return placement
    remove_modifier(obj)
    add_modifier(obj, path, int(start))
    obj.collision_response.enabled = False  # (a response on: its key goes, ``properties``)
    return None


@contextmanager
def editable_mesh(obj) -> Iterator[None]:
    """For the length of a bake, a library override whose mesh is linked shows a local copy of
    it (an override may point its object at other data), so the response can be simulated
    and shown; then the linked mesh is put back and the copy removed: the override keeps its
    link to the asset, and only the Mesh Cache modifier is added to it."""
    linked = obj.data
    if obj.override_library is None or linked.library is None:
        yield
        return
    copy = linked.copy()
    obj.data = copy
    try:
        yield
    finally:
        obj.data = linked
        bpy.data.meshes.remove(copy)
