"""Per-level values as curves the animator draws: x from the coarsest level (left) to the
finest (right), one control point per level, so a typed value per level and the curve are
the same thing. Blender's curve widget needs an owner that Python properties cannot be, so
the curves live in Float Curve nodes of a small node group the settings point to.
"""

from typing import TYPE_CHECKING, cast

import bpy
import numpy as np

from ..core import PROPERTIES, LevelSettings
from ..core.overshoot import LOWEST_RATIO

if TYPE_CHECKING:  # properties.py imports this module
    from .properties import COLLISION_RESPONSE_PG_settings as Settings

#: name: (label in the sidebar, lowest, highest, default). Every time on the curves is a
#: time (never springing back is the "Spring Back" checkbox); a yield limit of 1 (the
#: object's size) means never: perfectly elastic.
CURVES = {
    "absorption": ("Absorption", -1.0, 1.0, 0.0),
    "response_time": ("Time to Follow (s)", 0.0, 2.0, 0.0),
    "time_to_rest": ("Time to Rest (s)", 0.0, 5.0, 1.0),
    "yield_limit": ("Yield Limit (share of size)", 0.0, 1.0, 1.0),
    # Secondary motion (core.overshoot): at the default ratio, 1, a level does not overshoot.
    "damping_ratio": ("Damping Ratio", LOWEST_RATIO, 1.0, 1.0),
    "overshoot_period": ("Overshoot Period (s)", 0.05, 5.0, 0.5),
}

#: The curves a vertex group (a behaviour map) may scale: the solver's own properties.
MAPPED = tuple(name for name in CURVES if name in PROPERTIES)

#: The curves of secondary motion, drawn in their own panel.
SECONDARY = ("damping_ratio", "overshoot_period")

#: The meaning of saved settings: 1 since never springing back is the Spring Back checkbox
#: (before, a Time to Rest at the top of its range, 5 s, meant never: properties.upgrade).
VERSION = 1
TREE_NAME = ".Collision Response Curves"


def separate_shared() -> None:
    """Give every object its own curves. A duplicate (Shift+D, Alt+D, copy and paste) shares
    the original's node group, as Blender shares any datablock a custom property points to:
    each object after the first gets a copy, so editing one never changes another, as with
    a modifier's copy. Cheap when nothing is shared (one look at each tree's user count)."""
    shared = {tree for tree in bpy.data.node_groups if tree.users > 1 and tree.name.startswith(TREE_NAME)}
    if not shared:
        return
    claimed = set()
    for obj in sorted(bpy.data.objects, key=lambda o: o.name):
        if obj.library is not None:  # a linked object's settings are not ours to change
            continue
        settings = _settings_of(obj)
        tree = settings.curves
        if tree in shared:
            if tree in claimed:
                settings.curves = tree.copy()
            claimed.add(tree)


def _settings_of(obj) -> "Settings":
    return obj.collision_response


def level_positions(levels: int) -> np.ndarray:
    return np.linspace(0.0, 1.0, levels) if levels > 1 else np.array([0.0, 1.0])


def ensure_curves(settings: "Settings", levels: int, defaults: dict | None = None) -> bpy.types.NodeTree:
    """The node group holding the curves, with one point per level (created or resampled)."""
    tree = settings.curves
    if tree is None:
        # The stubs say new() may give None; for a known tree type it never does.
        tree = cast(bpy.types.NodeTree, bpy.data.node_groups.new(TREE_NAME, "ShaderNodeTree"))
        settings.curves = tree
        settings.version = VERSION
    for name, (label, low, high, default) in CURVES.items():
        node = tree.nodes.get(name)
        if node is None:
            node = tree.nodes.new("ShaderNodeFloatCurve")
            node.name, node.label = name, label
            values = np.broadcast_to((defaults or {}).get(name, default), (levels,)).astype(float)
        else:
            values = curve_values(node, levels)
        _set_points(node, levels, values, low, high)
    return tree


def _set_points(node, levels: int, values: np.ndarray, low: float, high: float) -> None:
    mapping = node.mapping
    mapping.use_clip = True
    mapping.clip_min_x, mapping.clip_max_x = 0.0, 1.0
    mapping.clip_min_y, mapping.clip_max_y = low, high
    curve = mapping.curves[0]
    xs = level_positions(levels)
    values = np.resize(np.clip(values, low, high), xs.size)
    while len(curve.points) > xs.size:
        curve.points.remove(curve.points[-1])
    while len(curve.points) < xs.size:
        curve.points.new(1.0, 0.0)
    for point, x, y in zip(curve.points, xs, values, strict=True):
        point.location = (float(x), float(y))
        point.handle_type = "VECTOR"  # straight segments: the value between levels is a blend
    mapping.update()


def curve_values(node, levels: int) -> np.ndarray:
    """The curve evaluated at each level's position (whatever points the animator drew)."""
    mapping = node.mapping
    mapping.update()  # points set from Python reach evaluate() only after an update
    curve = mapping.curves[0]
    xs = level_positions(levels) if levels > 1 else np.array([0.0])
    points = np.array([point.location[:] for point in curve.points])
    if len(points) == len(xs) and np.allclose(points[:, 0], xs, atol=1e-6):
        return points[:, 1].astype(np.float64)  # one point a level: the exact values typed
    # evaluate() reads a table of 256 samples, which rounds a sharp corner off.
    return np.array([mapping.evaluate(curve, float(x)) for x in xs])


def level_settings(settings: "Settings", levels: int, size: float) -> LevelSettings:
    """The solver's coefficients from the curves. ``size`` scales the yield limit (a
    fraction of the object's size: 1 is never, 0 is clay); with Spring Back off nothing
    recovers (the times to rest are infinite)."""
    tree = ensure_curves(settings, levels)
    values = {name: curve_values(tree.nodes[name], levels) for name in CURVES}
    yield_fraction = values["yield_limit"]
    return LevelSettings(
        absorption=values["absorption"],
        response_time=values["response_time"],
        time_to_rest=values["time_to_rest"] if settings.recovers else np.full(levels, np.inf),
        yield_limit=np.where(yield_fraction >= 1.0, np.inf, yield_fraction * size),
        restriction=settings.restriction,
        prolongation=settings.prolongation,
        substeps=settings.substeps,
        overshoot_period=values["overshoot_period"],
        damping_ratio=values["damping_ratio"],
    )


def curve_fingerprint(settings: "Settings", levels: int) -> tuple:
    """What the curves are drawn as now, to notice a change (the widget has no update
    callback): their points, handles and extension, read every frame, so not evaluated."""
    tree = settings.curves
    if tree is None:
        return ()

    def drawn(node) -> tuple:
        mapping = node.mapping
        points = mapping.curves[0].points
        return mapping.extend, mapping.use_clip, tuple((p.location[:], p.handle_type) for p in points)

    return (levels, *(drawn(tree.nodes[n]) for n in CURVES if n in tree.nodes))


def _point_count(tree) -> int:
    """How many points (levels) the curves hold."""
    return len(tree.nodes[next(iter(CURVES))].mapping.curves[0].points)


def profiles(settings: "Settings") -> dict[str, list[float]]:
    """Every curve's value per level, coarse to fine."""
    tree = settings.curves
    if tree is None:
        return {}
    count = _point_count(tree)
    return {name: [round(float(v), 6) for v in curve_values(tree.nodes[name], count)] for name in CURVES}


def set_profiles(settings: "Settings", values: dict) -> None:
    """Set the curves from ``values`` (name -> values coarse to fine, any count): each list
    is resampled (linearly) to this mesh's number of levels. The simulation notices the new
    curves by its fingerprint and restarts."""
    tree = settings.curves
    count = max(_point_count(tree) if tree else 2, 2)
    resampled = {}
    for name, profile in values.items():
        profile = np.atleast_1d(np.asarray(profile, dtype=float))
        source = np.linspace(0.0, 1.0, profile.size) if profile.size > 1 else np.array([0.0])
        resampled[name] = np.interp(level_positions(count), source, profile) if profile.size > 1 else profile
    tree = ensure_curves(settings, count)
    for name, profile in resampled.items():
        low, high = CURVES[name][1], CURVES[name][2]
        _set_points(tree.nodes[name], count, np.broadcast_to(profile, (count,)).astype(float), low, high)
