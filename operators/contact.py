"""Operators for what else a responding mesh meets: its interior structure, and other
responding meshes it is soft against."""

import bpy

from ..blender import simulation


def _others(context) -> list:
    return [o for o in context.selected_objects if o != context.active_object]


def _active_mesh(cls, context) -> bool:
    obj = context.active_object
    if obj is None or obj.type != "MESH":
        cls.poll_message_set("Select a mesh object")
        return False
    return True


class OBJECT_OT_collision_response_interior_add(bpy.types.Operator):
    """The selected objects (other than the active mesh) become its interior structure: the
    surface stays outside of them (bones, a rib cage, muscles under the skin)"""

    bl_idname = "object.collision_response_interior_add"
    bl_label = "Add Selected as Interior"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not _active_mesh(cls, context):
            return False
        if not _others(context):
            cls.poll_message_set("Select the inner objects, then the mesh last (active)")
            return False
        return True

    def execute(self, context):
        obj = context.active_object
        settings = obj.collision_response
        present = {item.obj for item in settings.interiors}
        for other in _others(context):
            if other not in present:
                settings.interiors.add().obj = other
        simulation.invalidate(obj)
        return {"FINISHED"}


class OBJECT_OT_collision_response_interior_remove(bpy.types.Operator):
    """Remove the highlighted object from the interior structure"""

    bl_idname = "object.collision_response_interior_remove"
    bl_label = "Remove Interior"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not _active_mesh(cls, context):
            return False
        if not len(context.active_object.collision_response.interiors):
            cls.poll_message_set("The interior structure is empty")
            return False
        return True

    def execute(self, context):
        settings = context.active_object.collision_response
        settings.interiors.remove(settings.active_interior)
        settings.active_interior = max(0, min(settings.active_interior, len(settings.interiors) - 1))
        simulation.invalidate(context.active_object)
        return {"FINISHED"}


class OBJECT_OT_collision_response_soft_pair(bpy.types.Operator):
    """The selected meshes and the active one dent each other: each lists the others as
    colliders, and each responding mesh takes a share of their overlap by its Stiffness"""

    bl_idname = "object.collision_response_soft_pair"
    bl_label = "Soft Against Each Other"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not _active_mesh(cls, context):
            return False
        if not [o for o in _others(context) if o.type == "MESH"]:
            cls.poll_message_set("Select the other meshes, then one of them last (active)")
            return False
        return True

    def execute(self, context):
        meshes = [context.active_object] + [o for o in _others(context) if o.type == "MESH"]
        for obj in meshes:
            try:
                simulation.check(obj)
            except simulation.Unusable as problem:
                self.report({"ERROR"}, f"{problem}: it cannot respond to the others")
                return {"CANCELLED"}
        for obj in meshes:
            if not obj.collision_response.enabled:
                # Enabled as Enable does it, with only the others selected as its colliders.
                with context.temp_override(active_object=obj, object=obj, selected_objects=meshes):
                    enable = bpy.ops.object.collision_response_enable  # type: ignore[attr-defined]  # ours: the stub cannot know it
                    if enable() != {"FINISHED"}:
                        self.report({"ERROR"}, f"'{obj.name}' could not be enabled")
                        return {"CANCELLED"}
            settings = obj.collision_response
            present = {item.obj for item in settings.colliders}
            for other in meshes:
                if other != obj and other not in present:
                    settings.colliders.add().obj = other
            simulation.invalidate(obj)
        return {"FINISHED"}


classes = (
    OBJECT_OT_collision_response_interior_add,
    OBJECT_OT_collision_response_interior_remove,
    OBJECT_OT_collision_response_soft_pair,
)
