"""Blender's callbacks: a frame change shows every enabled mesh's response there; an edit of
what a response depends on restarts it, and a duplicate gets its own curves; loading a file
forgets every response; saving leaves the ray-cast helpers out of the file."""

import bpy

from . import curves, guard, mesh_data, posed, properties, simulation
from .collision import colliders as collider_shapes
from .collision.raycast import remove_all_helpers


def enabled_objects(scene):
    return [o for o in scene.objects if o.type == "MESH" and o.collision_response.enabled]


@bpy.app.handlers.persistent
def on_frame_change(scene, depsgraph) -> None:
    if guard.is_busy():
        return
    if depsgraph.mode != "VIEWPORT":
        # A render hands its own depsgraph, which does not evaluate the ray-cast helpers
        # (hidden from render): frames not yet played are simulated in the view layer's
        # depsgraph, as in playback.
        depsgraph = bpy.context.evaluated_depsgraph_get()
    for obj in enabled_objects(scene):
        simulation.update_object(obj, scene, depsgraph)


@bpy.app.handlers.persistent
def on_depsgraph_update(scene, depsgraph) -> None:
    """An edit of a responding mesh (its data or its transform), of a collider or of what
    deforms the mesh (its armature) restarts that mesh's response."""
    if guard.is_busy():
        return
    curves.separate_shared()  # a duplicate made since the last update gets its own curves

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
        # Its own transform too: moved or turned by hand, it meets its colliders elsewhere (the
        # played frames showed it 10 cm inside a ball).
        names = {obj.name} | {o.name for o in simulation.colliders(obj) + posed.deformers(obj) if o is not None}
        if obj.data.name in edited_meshes or names & edited_objects:
            simulation.invalidate(obj)


@bpy.app.handlers.persistent
def on_load(*_args) -> None:
    simulation.invalidate_all()
    for obj in bpy.data.objects:  # settings saved by an older version, in today's meaning
        if obj.type == "MESH":
            properties.upgrade(obj)
            rest_if_orphaned(obj)
    curves.separate_shared()  # files saved before duplicates got their own curves


def rest_if_orphaned(obj) -> None:
    """A mesh saved while it responded, opened with the response off, showed the key's dent
    in every frame: set to 0, and said on the console (and the panel)."""
    if not obj.collision_response.enabled and mesh_data.rest_orphaned_key(obj):
        print(f"Collision Response: {orphaned_key_message(obj)}")


def orphaned_key_message(obj) -> str:
    """What the console and the panel say of a response key left on a mesh not responding."""
    why = " (its settings were not kept: a library override keeps none)" if obj.override_library else ""
    return (
        f"'{obj.name}' holds the response's key '{mesh_data.SHAPE_KEY}' but does not respond{why}: "
        "the key is set to 0. Enable takes it back"
    )


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
