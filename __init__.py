"""Collision Response: kinematic collision response for Blender meshes.

The solver lives in ``core`` (pure numpy); the Blender glue in the other sub-packages,
each registering its own classes. Modules register in order and unregister in reverse.
"""

from . import operators, panels
from .blender import handlers, preferences, presets, properties, timeline

_modules = (preferences, properties, operators, presets, panels, handlers, timeline)


def register() -> None:
    for module in _modules:
        module.register()


def unregister() -> None:
    for module in reversed(_modules):
        module.unregister()
