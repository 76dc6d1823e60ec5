"""The settings of a deforming mesh, saved in the .blend: ``object.collision_response``.

Only the settings read at every frame (``animated.PER_FRAME``) can be keyframed; the others
(``options=set()``) are what the response is built with. Keyed, Blender set such a setting at
every frame change, and each set restarted the response from its start frame: a frame cost
more the later it was (15 ms to 86 ms by frame 30), and showed that frame's value held since
the start."""

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from . import curves, mesh_data, pressure, simulation
from .pressure import PRESSURE_ATTRIBUTE, PRESSURE_COLOR


def _changed(settings, context) -> None:
    """Any change of a setting restarts the response at the start frame."""

    simulation.invalidate(settings.id_data)


def _is_enabled(settings) -> bool:
    return bool(settings.get("enabled", False))  # (where Blender keeps it without get and set)


def _set_enabled(settings, value: bool) -> None:
    """Switched from on to off (Disable, a bake, a script): the response's key and pressure go
    with it, so the mesh is as it was (left by a script, the key read as the user's own, and
    Enable refused it). Only from on: Blender sets a property even to the value it has, and a
    key of that name on a mesh that never responded is the user's, unless the response marked
    it as its own (``mesh_data.OWN_MARK``): switched on, that one is taken back."""
    was = _is_enabled(settings)
    settings["enabled"] = bool(value)
    obj = settings.id_data
    if was and not value and obj.data.library is None:  # (a linked mesh's keys are the library's)
        mesh_data.remove_shape_key(obj)
        pressure.write(obj, None, False)
    elif not was and value and obj.data.library is None and mesh_data.is_own_live_key(obj):
        # Its own key left from before (a file reopened with it off, the key at 0): taken back
        # afresh, at full value.
        mesh_data.remove_shape_key(obj)


#: The most levels a row of exact values shows (a mesh has one level per halving of its
#: vertex spacing: 6 on the default grid, 9 on a million-vertex mesh).
MAX_LEVELS = 32


def _points(settings, name: str):
    tree = settings.curves
    node = tree.nodes.get(name) if tree is not None else None
    return node.mapping.curves[0].points if node is not None else []


def _per_level(name: str, description: str):
    """The exact value per level of the curve ``name``, coarse to fine: its control points'
    heights (nothing of its own is saved: the curve holds them)."""
    label, low, high, _default = curves.CURVES[name]

    def read(settings) -> list[float]:
        values = [point.location[1] for point in _points(settings, name)][:MAX_LEVELS]
        return values + [0.0] * (MAX_LEVELS - len(values))

    def write(settings, values) -> None:
        points = _points(settings, name)
        for point, value in zip(points, values, strict=False):
            if point.location[1] != value:
                point.location = (point.location[0], value)
        if len(points):
            settings.curves.nodes[name].mapping.update()

    # Not animatable: the curve's points are not keyed (README), and a key here set the row at
    # every frame change, which restarted the response each frame (the cost of a frame grew
    # with the frame number) and showed each frame with that frame's value held from the start.
    return FloatVectorProperty(
        name=label,
        description=description,
        size=MAX_LEVELS,
        min=low,
        max=high,
        get=read,
        set=write,
        update=_changed,
        options=set(),
    )


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
        name="Enabled",
        description="Respond to the colliders during playback",
        default=False,
        get=_is_enabled,
        set=_set_enabled,
        update=_changed,
        options=set(),  # not keyframed: a switch (module docstring)
    )
    collider_collection: PointerProperty(
        name="Collection", description="Every object in it is a collider", type=bpy.types.Collection, update=_changed
    )
    colliders: CollectionProperty(type=COLLISION_RESPONSE_PG_collider)
    active_collider: IntProperty(default=0)
    start_frame: IntProperty(
        name="Start Frame",
        description="The response starts from rest at this frame",
        default=1,
        update=_changed,
        options=set(),  # not keyframed (module docstring)
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
        name="Spread to Coarse Levels",
        description="How a push is handed to the coarse levels, which make the wide part of the dent",
        items=[
            ("max", "Deepest", "Each coarse point follows the deepest push near it: the widest, roundest dent"),
            ("average", "Average", "The mean of the pushes near it: a tighter dent that hugs the collider"),
            ("full_weighting", "Weighted", "A weighted mean, as deep as the deepest push: in between"),
        ],
        default="max",
        update=_changed,
    )
    prolongation: EnumProperty(
        name="Shape Between Points",
        description="How the surface runs between a coarse level's points, which finer levels follow",
        items=[
            ("linear", "Straight", "Straight between the points: quick, may show creases on coarse levels"),
            ("cubic", "Smooth", "Smooth curves between the points (grid meshes; others use Straight)"),
        ],
        default="linear",
        update=_changed,
    )
    recovers: BoolProperty(
        name="Spring Back",
        description="Each level springs back in its Time to Rest once nothing presses it; "
        "off: dents never spring back (the Time to Rest curve is not used)",
        default=True,
        update=_changed,
        options=set(),  # not keyframed (module docstring)
    )
    version: IntProperty(default=0, options={"HIDDEN"}, description="Format of these settings (for old files)")
    curves: PointerProperty(type=bpy.types.NodeTree)
    absorption_levels: _per_level(
        "absorption",
        "Share of a push this level takes, coarse (left) to fine (right); "
        "below 0 it bulges out around the press; the finest level takes what is left",
    )
    response_time_levels: _per_level(
        "response_time",
        "Seconds this level takes to follow a push, coarse to fine (0: at once); "
        "the touched vertices leave the collider at once meanwhile; the finest level's value is not used",
    )
    time_to_rest_levels: _per_level(
        "time_to_rest",
        "Seconds this level takes to spring back once nothing presses it, coarse to fine "
        "(99 % back; Spring Back off: never)",
    )
    yield_limit_levels: _per_level(
        "yield_limit",
        "Longest springy offset of this level, as a share of the object's size (bounding-box diagonal), "
        "coarse to fine: beyond it a dent stays; 0 keeps every dent (clay), 1 never (rubber)",
    )
    damping_ratio_levels: _per_level(
        "damping_ratio",
        "How soon this level stops swinging after a release or a hit, coarse to fine: 1 does not swing "
        "(the response as without overshoot), 0.5 swings back once, 0.1 jiggles for several periods",
    )
    overshoot_period_levels: _per_level(
        "overshoot_period",
        "Seconds of one swing of this level's overshoot, coarse to fine (used where its Damping Ratio is below 1)",
    )
    pressure: BoolProperty(
        name="Write Pressure",
        description=f"Write each vertex's pressure to the attribute '{PRESSURE_ATTRIBUTE}' every frame and in "
        "bakes, for shaders (Attribute node): 0 where nothing presses, 1 at the Full Pressure depth",
        default=False,
        options=set(),  # not keyframed: a switch builds or drops part of the simulation (animated.PER_FRAME)
        update=_changed,
    )
    pressure_color: BoolProperty(
        name="Colour Attribute",
        description=f"Also write the pressure as a grey colour attribute '{PRESSURE_COLOR}' (clamped to 0-1)",
        default=False,
        update=_changed,
    )
    pressure_law: EnumProperty(
        name="Law",
        description="How the springy part of a dent reads as pressure",
        items=[
            ("hooke", "Linear", "A Hookean spring: pressure grows with the depth (a very compressible surface)"),
            (
                "biphasic",
                "Biphasic",
                "Soft for a shallow press, stiff past a knee (Lee, Terzopoulos and Waters 1993): skin over flesh",
            ),
        ],
        default="hooke",
        update=_changed,
    )
    pressure_depth: FloatProperty(
        name="Full Pressure At",
        description="The depth of a springy dent whose pressure is 1",
        min=1e-4,
        default=0.1,
        subtype="DISTANCE",
        update=_changed,
    )
    pressure_knee: FloatProperty(
        name="Stiffens At",
        description="Biphasic: where the surface stiffens, as a share of the Full Pressure depth",
        min=0.0,
        max=1.0,
        default=0.5,
        subtype="FACTOR",
        update=_changed,
    )
    pressure_stiffening: FloatProperty(
        name="Stiffening",
        description="Biphasic: how many times stiffer the surface is past the knee",
        min=1.0,
        max=100.0,
        default=4.0,
        update=_changed,
    )
    volume: BoolProperty(
        name="Keep Volume",
        description="Give back the volume a press takes: the surface around the contact rises (a closed mesh keeps "
        "its enclosed volume, a sheet the volume it displaced within the Reach)",
        default=False,
        options=set(),  # not keyframed: a switch builds or drops part of the simulation (animated.PER_FRAME)
        update=_changed,
    )
    volume_reach: FloatProperty(
        name="Reach",
        description="How far from the contact the volume reappears (scene units, measured under the object's "
        "scale): a ring that rises most at half this distance and fades out at it. Can be keyframed",
        min=1e-4,
        default=0.5,
        subtype="DISTANCE",
        update=_changed,
    )
    absorption_group: StringProperty(
        name="Absorption Map",
        description="Vertex group scaling the absorption: weight 1 (or not in the group) is the curve's value, "
        "0 takes none of the push there",
        update=_changed,
    )
    response_time_group: StringProperty(
        name="Follow Map",
        description="Vertex group scaling how fast the surface follows a push: weight 1 (or not in the group) "
        "is the curve's time, 0.5 twice as long, 0 never gives way there (the collider still never gets in)",
        update=_changed,
    )
    time_to_rest_group: StringProperty(
        name="Recovery Map",
        description="Vertex group scaling how fast the surface springs back: weight 1 (or not in the group) "
        "is the curve's time, 0.5 twice as long, 0 never springs back there",
        update=_changed,
    )
    yield_limit_group: StringProperty(
        name="Yield Map",
        description="Vertex group scaling the yield limit: weight 1 (or not in the group) is the curve's value, "
        "0 keeps every dent there, like clay",
        update=_changed,
    )

    # -- what else the surface meets (issue 20): structure under it, a container, soft partners --
    interiors: CollectionProperty(type=COLLISION_RESPONSE_PG_collider)
    active_interior: IntProperty(default=0)
    container: PointerProperty(
        name="Container",
        description="A closed mesh the surface stays inside of: a vertex pushed out of it is pushed back in",
        type=bpy.types.Object,
        update=_changed,
    )
    self_contact: BoolProperty(
        name="Self-Contact",
        description="Experimental. Keep the mesh out of itself: where it presses into its own other part (the "
        "inside of a bending elbow, a fold), both sides give way, each by half, held at once every frame. Deep "
        "creases can stay partly inside, and it is slow (see the README)",
        default=False,
        update=_changed,
        options=set(),  # not keyframed: a switch (module docstring)
    )
    stiffness: FloatProperty(
        name="Stiffness",
        description="Against another responding mesh, how much less of their overlap this one takes: "
        "each takes the other's stiffness over the sum of both (equal: half each)",
        min=0.01,
        max=100.0,
        soft_min=0.1,
        soft_max=10.0,
        default=1.0,
        update=_changed,
        options=set(),  # not keyframed (module docstring)
    )


def upgrade(obj) -> None:
    """Bring the object's settings saved by an older version to this one's meaning: before
    version 1 a Time to Rest at the top of its range (5 s) on every level meant never, now
    Spring Back off (a level alone at the top now means 5 s)."""
    settings = obj.collision_response
    if settings.curves is None or settings.version >= curves.VERSION:
        return
    top = curves.CURVES["time_to_rest"][2]
    if min(settings.time_to_rest_levels[: len(_points(settings, "time_to_rest"))] or [0.0]) >= top - 1e-6:
        settings.recovers = False
    settings.version = curves.VERSION


classes = (COLLISION_RESPONSE_PG_collider, COLLISION_RESPONSE_PG_settings)
_register, _unregister = bpy.utils.register_classes_factory(classes)


def register() -> None:
    _register()
    # setattr: the type stubs cannot know of a property added at run time.
    setattr(bpy.types.Object, "collision_response", PointerProperty(type=COLLISION_RESPONSE_PG_settings))  # noqa: B010


def unregister() -> None:
    delattr(bpy.types.Object, "collision_response")
    _unregister()
