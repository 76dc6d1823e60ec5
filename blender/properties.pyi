# What the property groups hold, as plain types: Blender turns each annotation of
# properties.py (a bpy.props call) into a value of this type on every instance.
import bpy

from ..core.grid import Prolongation, Restriction
from ..core.pressure import Law

class COLLISION_RESPONSE_PG_collider(bpy.types.PropertyGroup):
    obj: bpy.types.Object | None

class COLLISION_RESPONSE_PG_settings(bpy.types.PropertyGroup):
    @property
    def profiles(self) -> dict[str, list[float]]: ...
    @profiles.setter
    def profiles(self, values: dict) -> None: ...
    enabled: bool
    collider_collection: bpy.types.Collection | None
    colliders: bpy.types.bpy_prop_collection_idprop[COLLISION_RESPONSE_PG_collider]
    active_collider: int
    start_frame: int
    friction: float
    standoff: float
    substeps: int
    restriction: Restriction  # the enum's identifiers are the solver's names
    prolongation: Prolongation
    recovers: bool
    version: int
    curves: bpy.types.NodeTree | None
    absorption_levels: list[float]  # read from and written to the curves' points
    response_time_levels: list[float]
    time_to_rest_levels: list[float]
    yield_limit_levels: list[float]
    damping_ratio_levels: list[float]
    overshoot_period_levels: list[float]
    pressure: bool
    pressure_color: bool
    pressure_law: Law
    pressure_depth: float
    pressure_knee: float
    pressure_stiffening: float
    volume: bool
    volume_reach: float
    absorption_group: str
    response_time_group: str
    time_to_rest_group: str
    yield_limit_group: str
    interiors: bpy.types.bpy_prop_collection_idprop[COLLISION_RESPONSE_PG_collider]
    active_interior: int
    container: bpy.types.Object | None
    self_contact: bool
    stiffness: float

MAX_LEVELS: int

def upgrade(obj: bpy.types.Object) -> None: ...

classes: tuple[type[bpy.types.PropertyGroup], ...]

def register() -> None: ...
def unregister() -> None: ...
