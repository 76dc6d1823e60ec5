"""Presets with Blender's preset system: five shipped in collision_response/ beside this
file, and the animator's own (Add Preset, saved in Blender's user presets folder) listed
with them. A preset holds the settings and every per-level curve as a profile from coarse
to fine, resampled to each mesh's levels."""

import os

import bpy
from bl_operators.presets import AddPresetBase

SUBDIR = "collision_response"


#: Blender looks for presets in "presets/<subdir>" under a registered path: the folder
#: holding this package.
SEARCH_PATH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Blender 4.2.0 has no register_preset_path (later 4.2 releases do): there the menu lists
#: the shipped folder itself, after the user's presets.
REGISTERS_PATHS = hasattr(bpy.utils, "register_preset_path")


def preset_folders() -> list[str]:
    """Where the menu finds presets: the user's (and registered paths'), then the shipped ones."""
    folders = bpy.utils.preset_paths(SUBDIR)
    shipped = os.path.join(SEARCH_PATH, "presets", SUBDIR)
    return folders if REGISTERS_PATHS else [*folders, shipped]


class COLLISION_RESPONSE_MT_presets(bpy.types.Menu):
    bl_label = "Presets"
    preset_subdir = SUBDIR
    preset_operator = "script.execute_preset"

    def draw(self, context):
        if REGISTERS_PATHS:
            bpy.types.Menu.draw_preset(self, context)
            return
        self.path_menu(
            preset_folders(),
            self.preset_operator,
            filter_ext=lambda ext: ext.lower() == ".py",
            display_name=lambda name: bpy.path.display_name(name, title_case=False),
        )


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


def register() -> None:
    _register()
    if REGISTERS_PATHS:
        bpy.utils.register_preset_path(SEARCH_PATH)


def unregister() -> None:
    if REGISTERS_PATHS:
        bpy.utils.unregister_preset_path(SEARCH_PATH)
    _unregister()
