"""Keep Volume in Blender: the Reach read at each frame in the scene's units (keyframed too),
measured under the object's own transform, and what the panel and the bake say when a Reach
is too short to give the volume back (``core.volume.Shortfall``).

The solver works in the object's space; the Reach is a distance in the scene. So the
distances from the contact are measured on the rest shape as the object's matrix (without
its translation) places it: under a non-uniform scale the ring reaches as far up as around.
The volume is kept in object space, and a linear transform scales every volume by the same
factor, so the share kept there is the share kept in the scene.
"""

import numpy as np

from . import sizes


def measure(obj, volume) -> None:
    """Give ``volume`` (a ``core.volume.Volume``) this frame's Reach and the object's linear
    transform (both may be animated: each frame's are that frame's input)."""
    volume.measure(obj.collision_response.volume_reach, np.array(obj.matrix_world)[:3, :3])


def record(simulation, frame: int) -> None:
    """After a frame: keep the share of the lost volume a short frame gave back, and the frame
    whose shortfall missed the most volume (the one that needs the longest Reach), forgetting
    the advice made for an earlier one."""
    volume = simulation.volume
    shortfall = None if volume is None else volume.shortfall
    if shortfall is None:
        return
    simulation.volume_kept[frame] = shortfall.kept
    worst = simulation.volume_shortfall
    if worst is None or shortfall.wanted - shortfall.given > worst[1].wanted - worst[1].given:
        simulation.volume_shortfall = (frame, shortfall)
        simulation.volume_advice = None


def warning(simulation, scene) -> list[str]:
    """What the Volume panel and the bake say when a frame played kept less than promised
    (empty when every one kept it): the worst frame, the share it gave back and the Reach
    to try. The Reach it needs is estimated once per worst frame, when first asked."""
    if simulation is None or simulation.volume is None or simulation.volume_shortfall is None:
        return []
    frame, shortfall = simulation.volume_shortfall
    if simulation.volume_advice is None:
        simulation.volume_advice = (simulation.volume.needed_reach(shortfall),)
    (needed,) = simulation.volume_advice
    said = f"Reach too short: {shortfall.kept:.0%} of the volume lost given back at frame {frame}"
    if needed is None:
        if not shortfall.pressed:  # (pressing less deep would not change a swing)
            return [said, "Nothing pressed then: the surface was springing back or swinging past its rest"]
        return [said, "Even a Reach as wide as the object cannot hold it: press less deep"]
    return [said, f"Raise the Reach to about {sizes.length(_rounded_up(needed), scene)}"]


def _rounded_up(value: float) -> float:
    """Up to two significant figures (a Reach to type in)."""
    power = 10.0 ** (np.floor(np.log10(value)) - 1)
    return float(np.ceil(value / power) * power)
