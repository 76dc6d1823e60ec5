"""Presets with Blender's preset system: five shipped in collision_response/ beside this
file, and the animator's own (Add Preset, saved in Blender's user presets folder) listed
with them. A preset holds the settings and every per-level curve as a profile from coarse
to fine, resampled to each mesh's levels."""

import os

import bpy
from bl_operators.presets import AddPresetBase

SUBDIR = "collision_response"


class COLLISION_RESPONSE_MT_presets(bpy.types.Menu):
    bl_label = "Presets"
    preset_subdir = SUBDIR
    preset_operator = "script.execute_preset"
    draw = bpy.types.Menu.draw_preset


class OBJECT_OT_collision_response_preset_add(AddPresetBase, bpy.types.Operator):
    """Save the active mesh's response as a preset, or remove the chosen one"""

    bl_idname = "object.collision_response_preset_add"
    bl_label = "Add Collision Response Preset"
    preset_menu = "COLLISION_RESPONSE_MT_presets"
    preset_subdir = SUBDIR
    preset_defines = ["settings = bpy.context.object.collision_response"]
    preset_values = ["settings.friction", "settings.standoff", "settings.recovers", "settings.profiles"]

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        if obj is None or obj.type != "MESH" or obj.collision_response.curves is None:
            cls.poll_message_set("Enable the response on a mesh first")
            return False
        return True


classes = (COLLISION_RESPONSE_MT_presets, OBJECT_OT_collision_response_preset_add)
_register, _unregister = bpy.utils.register_classes_factory(classes)


#: Blender looks for presets in "presets/<subdir>" under a registered path: the folder
#: holding this package.
SEARCH_PATH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def register() -> None:
    _register()
    bpy.utils.register_preset_path(SEARCH_PATH)


def unregister() -> None:
    bpy.utils.unregister_preset_path(SEARCH_PATH)
    _unregister()
