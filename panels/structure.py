"""The Colliders panel's part for what else the surface meets: itself, interior structure,
a container, and the other responding meshes it is soft against."""

import bpy

from ..blender import simulation, together


class COLLISION_RESPONSE_UL_interiors(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_property, index=0, flt_flag=0):
        layout.prop(item, "obj", text="", emboss=False, icon="BONE_DATA")


def draw_self_contact(layout, obj) -> None:
    """The mesh against itself: the option, and how much of it presses into itself now."""
    layout.prop(obj.collision_response, "self_contact")
    state = simulation.get(obj)
    if obj.collision_response.self_contact and state is not None and state.self_contact is not None:
        layout.label(text=state.self_contact.status(), icon="MOD_PHYSICS")


def draw_structure(layout, obj) -> None:
    settings = obj.collision_response
    layout.label(text="Interior (stays outside of):")
    row = layout.row()
    row.template_list("COLLISION_RESPONSE_UL_interiors", "", settings, "interiors", settings, "active_interior", rows=2)
    column = row.column(align=True)
    column.operator("object.collision_response_interior_add", text="", icon="ADD")
    column.operator("object.collision_response_interior_remove", text="", icon="REMOVE")
    layout.prop(settings, "container")
    layout.operator("object.collision_response_soft_pair", icon="MOD_PHYSICS")
    partners = together.partners(obj)
    if partners:
        layout.prop(settings, "stiffness")
    for other in partners:
        share = together.share(obj, other)
        layout.label(text=f"Soft against '{other.name}': takes {share:.0%} of the overlap", icon="LINKED")
    for message in together.problems(obj):
        layout.label(text=message, icon="ERROR")
