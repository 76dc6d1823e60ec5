"""The settings of a deforming mesh, saved in the .blend: ``object.collision_response``."""

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from . import curves, simulation


def _changed(settings, context) -> None:
    """Any change of a setting restarts the response at the start frame."""

    simulation.invalidate(settings.id_data)


class COLLISION_RESPONSE_PG_collider(bpy.types.PropertyGroup):
    obj: PointerProperty(name="Collider", type=bpy.types.Object, update=_changed)


class COLLISION_RESPONSE_PG_settings(bpy.types.PropertyGroup):
    """One per mesh object. Per-level values live in ``curves`` (see curves.py)."""

    @property
    def profiles(self) -> dict[str, list[float]]:
        """Every curve's value per level, coarse to fine (what presets save)."""
        return curves.profiles(self)

    @profiles.setter
    def profiles(self, values: dict) -> None:
        """Set curves from values per level, resampled to this mesh's number of levels."""
        curves.set_profiles(self, values)

    enabled: BoolProperty(
        name="Enabled", description="Respond to the colliders during playback", default=False, update=_changed
    )
    collider_collection: PointerProperty(
        name="Collection", description="Every object in it is a collider", type=bpy.types.Collection, update=_changed
    )
    colliders: CollectionProperty(type=COLLISION_RESPONSE_PG_collider)
    active_collider: IntProperty(default=0)
    start_frame: IntProperty(
        name="Start Frame", description="The response starts from rest at this frame", default=1, update=_changed
    )
    friction: FloatProperty(
        name="Friction",
        description="0: pushed straight out of the collider (the surface slides around it); "
        "1: along the collider's motion",
        min=0.0,
        max=1.0,
        default=0.0,
        subtype="FACTOR",
        update=_changed,
    )
    standoff: FloatProperty(
        name="Standoff",
        description="Gap the surface keeps from the colliders",
        min=0.0,
        default=0.0,
        subtype="DISTANCE",
        update=_changed,
    )
    substeps: IntProperty(
        name="Sub-steps", description="Solver steps per frame", min=1, max=16, default=1, update=_changed
    )
    restriction: EnumProperty(
        name="Spread",
        description="How a push reaches the coarse levels",
        items=[
            ("max", "Maximum", "Each coarse point takes the longest push below it: spreads fastest"),
            ("average", "Average", "The mean of the pushes below it: tighter, smoother"),
            ("full_weighting", "Weighted", "A weighted mean, as long as the longest push"),
        ],
        default="max",
        update=_changed,
    )
    prolongation: EnumProperty(
        name="Interpolation",
        description="How coarse levels carry the finer ones (cubic needs a grid mesh)",
        items=[("linear", "Linear", ""), ("cubic", "Cubic", "")],
        default="linear",
        update=_changed,
    )
    curves: PointerProperty(type=bpy.types.NodeTree)
    absorption_group: StringProperty(
        name="Absorption Map", description="Vertex group scaling the absorption", update=_changed
    )
    response_time_group: StringProperty(
        name="Damping Map", description="Vertex group scaling the speed of response", update=_changed
    )
    time_to_rest_group: StringProperty(
        name="Recovery Map", description="Vertex group scaling the speed of recovery", update=_changed
    )
    yield_limit_group: StringProperty(
        name="Yield Map", description="Vertex group scaling the yield limit", update=_changed
    )


classes = (COLLISION_RESPONSE_PG_collider, COLLISION_RESPONSE_PG_settings)
_register, _unregister = bpy.utils.register_classes_factory(classes)


def register() -> None:
    _register()
    # setattr: the type stubs cannot know of a property added at run time.
    setattr(bpy.types.Object, "collision_response", PointerProperty(type=COLLISION_RESPONSE_PG_settings))  # noqa: B010


def unregister() -> None:
    delattr(bpy.types.Object, "collision_response")
    _unregister()
