"""The sidebar (N-panel) tab "Collision Response" in the 3D viewport."""

from typing import cast

import bpy

from ..blender import curves, handlers, mesh_data, point_cache, pressure, simulation, sizes, together
from ..blender import volume as keep_volume
from ..blender.presets import COLLISION_RESPONSE_MT_presets
from ..blender.properties import MAX_LEVELS
from .structure import COLLISION_RESPONSE_UL_interiors, draw_self_contact, draw_structure


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
            if mesh_data.is_own_live_key(obj):  # (a file saved while it played, reopened without it)
                layout.label(text=handlers.orphaned_key_message(obj), icon="INFO")
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
        if state is not None:
            layout.label(text=state.status(), icon="TIME")
            if state.head >= state.start:  # (the budget: Preferences > Add-ons > Collision Response)
                layout.label(text=state.memory(), icon="MEMORY")
        if not simulation.present_colliders(obj)[0] and not settings.self_contact:
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
        draw_self_contact(layout, context.active_object)
        draw_structure(layout, context.active_object)


class VIEW3D_PT_collision_response_levels(SidebarPanel):
    bl_label = "Response per Level"
    bl_parent_id = "VIEW3D_PT_collision_response"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        if obj is None or obj.type != "MESH" or obj.collision_response.curves is None:
            return False
        try:
            simulation.check(obj)  # the sizes of its levels need a mesh that can respond
        except simulation.Unusable:
            return False
        return True

    def draw(self, context):
        layout = self.ui
        obj = context.active_object
        settings = obj.collision_response
        row = layout.row(align=True)
        row.menu("COLLISION_RESPONSE_MT_presets", text=COLLISION_RESPONSE_MT_presets.bl_label)
        row.operator("object.collision_response_preset_add", text="", icon="ADD")
        remove = row.operator("object.collision_response_preset_add", text="", icon="REMOVE")
        remove.remove_active = True  # type: ignore[union-attr]  # the stub cannot know an operator's own properties
        spans = sizes.level_sizes(obj)
        scene = context.scene

        def length(value: float) -> str:
            return sizes.length(value, scene)

        layout.label(text=f"Left: coarse, {length(spans[0])} (stiff).  Right: fine, {length(spans[-1])} (soft).")
        state = simulation.get(obj)
        wide = set() if state is None else state.query.contacts.wide  # known once it has met the mesh
        for collider in simulation.colliders(obj)[:3]:
            if collider is not None:
                line = sizes.reach(obj, collider, scene, collider.name in wide)
                layout.label(text=line, icon="OBJECT_DATA")
        for name in curves.MAPPED:
            box = self.draw_curve(layout, settings, name, [length(span) for span in spans])
            if box is None:
                continue
            if name == "yield_limit":
                diagonal = sizes.object_size(obj)
                box.label(text=f"1: never.  0.1 of this object: {length(0.1 * diagonal)}")
            box.prop_search(settings, f"{name}_group", obj, "vertex_groups", text="Map")

    @classmethod
    def draw_curve(cls, layout, settings, name: str, spans: list[str]):
        """A box with the curve ``name`` and its exact values per level (None: no curve)."""
        node = settings.curves.nodes.get(name)
        if node is None:
            return None
        box = layout.box()
        header = box.row()
        header.label(text=curves.CURVES[name][0])
        body = box.column()
        if name == "time_to_rest":
            header.prop(settings, "recovers")
            body.active = settings.recovers
        body.template_curve_mapping(node, "mapping")
        cls.draw_levels(body, settings, name, spans)
        return box

    @staticmethod
    def draw_levels(layout, settings, name: str, spans: list[str]) -> None:
        """One exact value per level, coarse to fine, under the size of what the level moves."""
        count = min(len(spans), len(settings.curves.nodes[name].mapping.curves[0].points), MAX_LEVELS)
        row = layout.row(align=True)
        for level in range(count):
            column = row.column(align=True)
            column.label(text=spans[level])
            column.prop(settings, f"{name}_levels", index=level, text="")


class VIEW3D_PT_collision_response_secondary(EnabledPanel):
    bl_label = "Secondary Motion"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context):
        return super().poll(context) and context.active_object.collision_response.curves is not None

    def draw(self, context):
        layout = self.ui
        obj = context.active_object
        settings = obj.collision_response
        spans = [sizes.length(span, context.scene) for span in sizes.level_sizes(obj)]
        layout.label(text="Damping Ratio 1: no overshoot. Lower: the level swings past and back.")
        for name in curves.SECONDARY:
            VIEW3D_PT_collision_response_levels.draw_curve(layout, settings, name, spans)


class VIEW3D_PT_collision_response_pressure(EnabledPanel):
    bl_label = "Pressure"
    bl_options = {"DEFAULT_CLOSED"}

    def draw_header(self, context):
        self.ui.prop(context.active_object.collision_response, "pressure", text="")

    def draw(self, context):
        layout = self.ui
        settings = context.active_object.collision_response
        layout.use_property_split = True
        layout.active = settings.pressure
        layout.label(text=f"Attribute: {pressure.PRESSURE_ATTRIBUTE} (0 at rest, 1 at Full Pressure)")
        layout.prop(settings, "pressure_law")
        layout.prop(settings, "pressure_depth")
        biphasic = layout.column()
        biphasic.active = settings.pressure_law == "biphasic"
        biphasic.prop(settings, "pressure_knee")
        biphasic.prop(settings, "pressure_stiffening")
        layout.prop(settings, "pressure_color")


class VIEW3D_PT_collision_response_volume(EnabledPanel):
    bl_label = "Volume"
    bl_options = {"DEFAULT_CLOSED"}

    def draw_header(self, context):
        self.ui.prop(context.active_object.collision_response, "volume", text="")

    def draw(self, context):
        layout = self.ui
        obj = context.active_object
        settings = obj.collision_response
        layout.use_property_split = True
        layout.active = settings.volume
        layout.prop(settings, "volume_reach")
        state = simulation.get(obj)
        if together.partners(obj):  # a group's frame is solved together, without it
            layout.label(text="Not kept while soft against other meshes", icon="INFO")
        elif state is not None and state.volume is not None:  # what it keeps depends on the mesh
            kept = "its enclosed volume (closed)" if state.volume.closed else "the volume displaced within Reach (open)"
            layout.label(text=f"Keeps {kept}")
            for line in keep_volume.warning(state, context.scene):  # a Reach too short, and what to do
                layout.label(text=line, icon="ERROR")
        else:
            layout.label(text="A closed mesh keeps its enclosed volume, an open one what it displaced")


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
    COLLISION_RESPONSE_UL_interiors,
    VIEW3D_PT_collision_response,
    VIEW3D_PT_collision_response_colliders,
    VIEW3D_PT_collision_response_levels,
    VIEW3D_PT_collision_response_secondary,
    VIEW3D_PT_collision_response_pressure,
    VIEW3D_PT_collision_response_volume,
    VIEW3D_PT_collision_response_solver,
)

register, unregister = bpy.utils.register_classes_factory(classes)
