"""Blender operators of Collision Response (filled in by the add-on work; see README)."""

import bpy

classes: tuple[type, ...] = ()

register, unregister = bpy.utils.register_classes_factory(classes)
