"""Settings the animator keyframes or drives: each frame's value is an input of that frame,
like a collider's position. Only an edit of the animation (or of a value that is not
animated) restarts the response; playing it does not."""

import numpy as np

from ..core import LevelSettings
from ..core.pressure import PressureSettings

#: Settings the response reads at every frame: keyframed or driven, each frame's value is an
#: input of that frame, like a collider's position, and animating them restarts nothing.
#: (Keep Volume's Reach: ``blender.volume.measure``; the pressure's law: ``pressure_settings``.)
#: The switches (Keep Volume, Write Pressure) and the per-level curves cannot be keyframed:
#: a switch builds or drops part of the simulation, and the curves are a node group's.
PER_FRAME = (
    "friction",
    "standoff",
    "substeps",
    "restriction",
    "prolongation",
    "volume_reach",
    "pressure_law",
    "pressure_depth",
    "pressure_knee",
    "pressure_stiffening",
)


def _fcurves(obj) -> list:
    """The object's F-curves (its action's, in any Blender version, and its drivers)."""
    animation = obj.animation_data
    if animation is None:
        return []
    found = list(animation.drivers)
    action = animation.action
    if action is None:
        return found
    if hasattr(action, "layers"):  # Blender 4.4 on: layered actions, one slot per user
        slot = animation.action_slot
        for layer in action.layers:
            for strip in layer.strips:
                bag = strip.channelbag(slot) if slot is not None else None
                found += list(bag.fcurves) if bag is not None else []
        return found
    return found + list(action.fcurves)


def _shape(fcurve) -> tuple:
    """What an F-curve says over time: its keys, handles, interpolation and extrapolation,
    and a driver's expression. An edit of any of them changes this; playing it does not."""
    points = fcurve.keyframe_points
    numbers = []
    for name in ("co", "handle_left", "handle_right"):
        values = np.empty(len(points) * 2)
        points.foreach_get(name, values)
        numbers.append(values)
    kinds = tuple((p.interpolation, p.easing) for p in points)
    driver = fcurve.driver.expression if fcurve.driver is not None else None
    return (np.concatenate(numbers).tobytes(), kinds, fcurve.extrapolation, len(fcurve.modifiers), fcurve.mute, driver)


def input_fingerprint(obj) -> tuple:
    """The per-frame settings as the response depends on them: the value of each that is not
    animated, and the F-curve of each that is (its value changes every frame, the curve only
    when the animator edits it: only that restarts the response)."""
    settings = obj.collision_response
    animated = {c.data_path: c for c in _fcurves(obj) if c.data_path.startswith("collision_response.")}
    return tuple(
        _shape(animated[path]) if (path := f"collision_response.{name}") in animated else getattr(settings, name)
        for name in PER_FRAME
    )


def read_per_frame(settings, coefficients: LevelSettings) -> None:
    """Give the solver this frame's values of the settings it reads at each step (the
    collision query reads friction and standoff from ``settings`` itself)."""
    coefficients.substeps = settings.substeps
    coefficients.restriction = settings.restriction
    coefficients.prolongation = settings.prolongation


def pressure_settings(settings) -> PressureSettings:
    """This frame's pressure law (its depths and stiffening may be keyframed)."""
    return PressureSettings(
        settings.pressure_law, settings.pressure_depth, settings.pressure_knee, settings.pressure_stiffening
    )
