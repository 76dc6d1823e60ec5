"""The sidebar (N-panel) tab "Collision Response" in the 3D viewport."""

from typing import cast

import bpy

from ..blender import curves, point_cache, simulation
from ..blender.presets import COLLISION_RESPONSE_MT_presets


class SidebarPanel(bpy.types.Panel):
    """Base of the tab's panels (not registered itself: it has no label)."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Collision Response"

    @property
    def ui(self) -> bpy.types.UILayout:
        """The panel's layout, which Blender always provides while drawing."""
        return cast(bpy.types.UILayout, self.layout)


class EnabledPanel(SidebarPanel):
    """A sub-panel shown while the active mesh responds."""

    bl_parent_id = "VIEW3D_PT_collision_response"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and obj.collision_response.enabled


class COLLISION_RESPONSE_UL_colliders(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_property, index=0, flt_flag=0):
        layout.prop(item, "obj", text="", emboss=False, icon="OBJECT_DATA")


class VIEW3D_PT_collision_response(SidebarPanel):
    bl_label = "Collision Response"

    def draw(self, context):
        layout = self.ui
        obj = context.active_object
        if obj is None or obj.type != "MESH":
            layout.label(text="Select a mesh object", icon="INFO")
            return
        settings = obj.collision_response
        try:
            simulation.check(obj)
        except simulation.LinkedMesh as problem:  # an override: it bakes to a point cache
            layout.label(text=str(problem), icon="INFO")
        except simulation.Unusable as problem:
            layout.label(text=str(problem), icon="ERROR")
            return
        baked = point_cache.baked_to(obj)
        if baked is not None:
            layout.label(text=f"Baked to {baked}", icon="CHECKMARK")
            layout.operator("object.collision_response_free_bake")
            return
        if not settings.enabled:
            layout.operator("object.collision_response_enable", icon="PLAY")
            return
        row = layout.row(align=True)
        row.operator("object.collision_response_bake", icon="REC")
        cache = row.operator("object.collision_response_bake", text="", icon="FILE_CACHE")
        if cache is not None:  # always, while drawing
            cache.to = "POINT_CACHE"  # a PC2 file beside the .blend, played by a Mesh Cache modifier
        row.operator("object.collision_response_disable", text="", icon="X")
        state = simulation.get(obj)
        for message in state.warnings + state.messages if state else []:
            layout.label(text=message, icon="ERROR")
        if not simulation.colliders(obj):
            layout.label(text="No colliders: add some below", icon="ERROR")


class VIEW3D_PT_collision_response_colliders(EnabledPanel):
    bl_label = "Colliders"

    def draw(self, context):
        layout = self.ui
        settings = context.active_object.collision_response
        layout.prop(settings, "collider_collection")
        row = layout.row()
        row.template_list(
            "COLLISION_RESPONSE_UL_colliders", "", settings, "colliders", settings, "active_collider", rows=3
        )
        column = row.column(align=True)
        column.operator("object.collision_response_collider_add", text="", icon="ADD")
        column.operator("object.collision_response_collider_remove", text="", icon="REMOVE")
        layout.prop(settings, "friction")
        layout.prop(settings, "standoff")


class VIEW3D_PT_collision_response_levels(SidebarPanel):
    bl_label = "Response per Level"
    bl_parent_id = "VIEW3D_PT_collision_response"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == "MESH" and obj.collision_response.curves is not None

    def draw(self, context):
        layout = self.ui
        obj = context.active_object
        settings = obj.collision_response
        tree = settings.curves
        row = layout.row(align=True)
        row.menu("COLLISION_RESPONSE_MT_presets", text=COLLISION_RESPONSE_MT_presets.bl_label)
        row.operator("object.collision_response_preset_add", text="", icon="ADD")
        remove = row.operator("object.collision_response_preset_add", text="", icon="REMOVE")
        remove.remove_active = True  # type: ignore[union-attr]  # the stub cannot know an operator's own properties
        layout.label(text="Left: coarse, global.  Right: fine, local.")
        for name, (label, _low, _high, _default) in curves.CURVES.items():
            node = tree.nodes.get(name)
            if node is None:
                continue
            box = layout.box()
            box.label(text=label)
            box.template_curve_mapping(node, "mapping")
            points = node.mapping.curves[0].points
            row = box.row(align=True)
            for point in points:  # one exact value per level, coarse to fine
                row.prop(point, "location", index=1, text="")
            box.prop_search(settings, f"{name}_group", obj, "vertex_groups", text="Map")


class VIEW3D_PT_collision_response_solver(EnabledPanel):
    bl_label = "Timing and Solver"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.ui
        settings = context.active_object.collision_response
        layout.use_property_split = True
        layout.prop(settings, "start_frame")
        layout.prop(settings, "substeps")
        layout.prop(settings, "restriction")
        layout.prop(settings, "prolongation")


classes = (
    COLLISION_RESPONSE_UL_colliders,
    VIEW3D_PT_collision_response,
    VIEW3D_PT_collision_response_colliders,
    VIEW3D_PT_collision_response_levels,
    VIEW3D_PT_collision_response_solver,
)

register, unregister = bpy.utils.register_classes_factory(classes)
