"""Operators for what else a responding mesh meets: its interior structure, and other
responding meshes it is soft against."""

import bpy

from ..blender import simulation
from .lists import add_selected, keys_poll, lists_poll, others, remove_highlighted


class OBJECT_OT_collision_response_interior_add(bpy.types.Operator):
    """The selected objects (other than the active mesh) become its interior structure: the
    surface stays outside of them (bones, a rib cage, muscles under the skin)"""

    bl_idname = "object.collision_response_interior_add"
    bl_label = "Add Selected as Interior"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not lists_poll(cls, context):
            return False
        if not others(context):
            cls.poll_message_set("Select the inner objects, then the mesh last (active)")
            return False
        return True

    def execute(self, context):
        add_selected(context, "interiors")
        simulation.invalidate(context.active_object)
        return {"FINISHED"}


class OBJECT_OT_collision_response_interior_remove(bpy.types.Operator):
    """Remove the highlighted object from the interior structure"""

    bl_idname = "object.collision_response_interior_remove"
    bl_label = "Remove Interior"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not lists_poll(cls, context):
            return False
        if not len(context.active_object.collision_response.interiors):
            cls.poll_message_set("The interior structure is empty")
            return False
        return True

    def execute(self, context):
        remove_highlighted(context.active_object, "interiors", "active_interior")
        return {"FINISHED"}


class OBJECT_OT_collision_response_soft_pair(bpy.types.Operator):
    """The selected meshes and the active one dent each other: each lists the others as
    colliders, and each responding mesh takes a share of their overlap by its Stiffness"""

    bl_idname = "object.collision_response_soft_pair"
    bl_label = "Soft Against Each Other"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not keys_poll(cls, context):
            return False
        if not [o for o in others(context) if o.type == "MESH"]:
            cls.poll_message_set("Select the other meshes, then one of them last (active)")
            return False
        return True

    def execute(self, context):
        meshes = [context.active_object] + [o for o in others(context) if o.type == "MESH"]
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
