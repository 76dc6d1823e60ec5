"""The add-on's preferences (Edit > Preferences > Add-ons > Collision Response): how much
memory the played frames may hold, a matter of the machine rather than of a shot (as
Blender's own Memory Cache Limit), so it is a preference, not saved in the .blend."""

import bpy
from bpy.props import IntProperty

#: The add-on's package (this module's parent): the preferences' key.
ADDON = __package__.rpartition(".")[0]

#: The budget when the preferences cannot be read (the add-on not enabled through them), MB.
DEFAULT_MB = 1024


def _fit_now(self, context) -> None:
    from . import simulation  # (registered before any simulation exists)

    simulation.fit_all(context.scene)


class COLLISION_RESPONSE_preferences(bpy.types.AddonPreferences):
    bl_idname = ADDON

    played_memory: IntProperty(  # type: ignore[valid-type]
        name="Played Frames Memory",
        description=(
            "Memory each responding object may hold to show its played frames again at once "
            "when scrubbing, in MB. Past it, the frames furthest from the current one are let "
            "go of and simulated again from a state kept every 8 frames when shown: the same "
            "result, a few frames' simulation later. 0 keeps only the states and the frames "
            "near the current one"
        ),
        default=DEFAULT_MB,
        min=0,
        soft_max=16384,
        subtype="UNSIGNED",
        update=_fit_now,
    )

    def draw(self, context):
        layout = self.layout
        if layout is not None:  # (always, while drawing)
            layout.prop(self, "played_memory")


def budget_bytes() -> int:
    """The played frames' memory budget of one responding object, in bytes."""
    every = bpy.context.preferences
    addon = None if every is None else every.addons.get(ADDON)
    preferences = None if addon is None else addon.preferences
    megabytes = getattr(preferences, "played_memory", DEFAULT_MB)  # (the add-on's own, when enabled)
    return int(megabytes) * 2**20


def register() -> None:
    bpy.utils.register_class(COLLISION_RESPONSE_preferences)


def unregister() -> None:
    bpy.utils.unregister_class(COLLISION_RESPONSE_preferences)
