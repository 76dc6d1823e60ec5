"""Live response: a frame-change handler updates every enabled mesh; edits invalidate."""

from collections.abc import Iterator
from contextlib import contextmanager

import bpy

from . import posed, simulation
from .collision import colliders as collider_shapes
from .collision.raycast import remove_all_helpers

_busy = False  # set while we move the scene through frames ourselves


@contextmanager
def _busy_moving_frames() -> Iterator[None]:
    """While we simulate, the frame changes and edits we cause are ours: the handlers leave
    them alone (a nested frame change would step the simulation twice)."""
    global _busy
    was, _busy = _busy, True
    try:
        yield
    finally:
        _busy = was


def update_object(obj, scene) -> list[str]:
    """Show ``obj``'s response at the scene's frame. Returns messages (empty when fine)."""
    with _busy_moving_frames():
        try:
            positions = simulation.positions_at(obj, scene, scene.frame_current)
        except simulation.Unusable as problem:
            return [str(problem)]
        simulation.write_shape_key(obj, positions)
    state = simulation.get(obj)
    return state.warnings + state.messages if state else []


def enabled_objects(scene):
    return [o for o in scene.objects if o.type == "MESH" and o.collision_response.enabled]


@bpy.app.handlers.persistent
def on_frame_change(scene, depsgraph=None) -> None:
    if _busy:
        return
    for obj in enabled_objects(scene):
        update_object(obj, scene)


@bpy.app.handlers.persistent
def on_depsgraph_update(scene, depsgraph) -> None:
    """An edit of a responding mesh, of a collider or of what deforms the mesh (its armature)
    restarts that mesh's response."""
    if _busy or simulation.is_writing():
        return

    edited_objects, edited_meshes = set(), set()
    for update in depsgraph.updates:
        datablock = update.id.original if hasattr(update.id, "original") else update.id
        if isinstance(datablock, bpy.types.Object) and (update.is_updated_transform or update.is_updated_geometry):
            edited_objects.add(datablock.name)
        elif isinstance(datablock, bpy.types.Mesh) and update.is_updated_geometry:
            edited_meshes.add(datablock.name)
            collider_shapes.forget(datablock.name_full)
    if not edited_objects and not edited_meshes:
        return
    for obj in enabled_objects(scene):
        names = {o.name for o in simulation.colliders(obj) + posed.deformers(obj) if o is not None}
        if obj.data.name in edited_meshes or names & edited_objects:
            simulation.invalidate(obj)


@bpy.app.handlers.persistent
def on_load(*_args) -> None:
    simulation.invalidate_all()


@bpy.app.handlers.persistent
def on_save(*_args) -> None:
    """The ray-cast helpers hold nothing worth saving: keep them out of the file."""
    remove_all_helpers()


def register() -> None:
    bpy.app.handlers.frame_change_post.append(on_frame_change)
    bpy.app.handlers.depsgraph_update_post.append(on_depsgraph_update)
    bpy.app.handlers.load_post.append(on_load)
    bpy.app.handlers.save_pre.append(on_save)


def unregister() -> None:
    for handlers, function in (
        (bpy.app.handlers.frame_change_post, on_frame_change),
        (bpy.app.handlers.depsgraph_update_post, on_depsgraph_update),
        (bpy.app.handlers.load_post, on_load),
        (bpy.app.handlers.save_pre, on_save),
    ):
        if function in handlers:
            handlers.remove(function)
    simulation.invalidate_all()
