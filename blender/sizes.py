"""Levels as sizes: each level of a mesh shown as the size of the feature it moves, the
spacing between that level's vertices on this mesh, in scene units; and which levels a
collider of a given size reaches."""

import bpy
import numpy as np
from mathutils import kdtree

from . import mesh_data, simulation

#: Vertices sampled per level to measure its spacing (the median is steady well below this).
SAMPLES = 2000

_spacings: dict[int, tuple[object, np.ndarray]] = {}  # by id of a hierarchy: (it, spacings)


def _spacing(points: np.ndarray) -> float:
    """The median distance from a vertex to its nearest neighbour among ``points`` (n, 3)."""
    if len(points) < 2:
        return 0.0
    tree = kdtree.KDTree(len(points))
    for index, point in enumerate(points):
        tree.insert(point, index)
    tree.balance()
    sample = points[:: max(1, len(points) // SAMPLES)]
    return float(np.median([tree.find_n(point, 2)[1][2] for point in sample]))


def level_spacings(obj) -> np.ndarray:
    """The spacing of each level's vertices in the object's own units, coarse to fine
    (measured once per hierarchy)."""
    running = simulation.get(obj)  # its hierarchy, without reading the mesh again (the panel redraws often)
    hierarchy = running.surface.hierarchy if running else simulation.hierarchy(obj)
    cached = _spacings.get(id(hierarchy))
    if cached is None or cached[0] is not hierarchy:
        rest = mesh_data.rest_positions(obj).astype(np.float64)
        levels = len(hierarchy.sizes)
        points = [hierarchy.inject(j, rest.T).T for j in range(levels - 1)] + [rest]
        cached = (hierarchy, np.array([_spacing(p) for p in points]))
        _spacings[id(hierarchy)] = cached
    return cached[1]


def scale(obj) -> float:
    """How long a unit of the object is in the scene (its mean scale)."""
    return float(np.mean(np.abs(obj.matrix_world.to_scale())))


def level_sizes(obj) -> np.ndarray:
    """The size of the feature each level moves, in scene units, coarse to fine."""
    return level_spacings(obj) * scale(obj)


def object_size(obj) -> float:
    """The object's size in scene units: its rest shape's bounding-box diagonal (what the
    Yield Limit is a share of)."""
    return float(np.linalg.norm(np.ptp(mesh_data.rest_positions(obj), axis=0))) * scale(obj)


def length(value: float, scene) -> str:
    """A length in scene units as Blender writes it ("12.5 cm", or "0.125" with no units)."""
    units = scene.unit_settings
    if units.system == "NONE":
        return f"{value:.3g}"
    return bpy.utils.units.to_string(units.system, "LENGTH", value * units.scale_length, precision=3)


def collider_size(collider) -> float:
    """How wide a collider presses: the middle of its three dimensions (a ball's diameter, a
    plate's width rather than its thickness), in scene units."""
    return float(np.median(np.asarray(collider.dimensions)))


def first_level_reached(sizes: np.ndarray, width: float) -> int:
    """The coarsest level whose features are no larger than ``width``: that level and the
    finer ones take the collider's shape, the coarser ones spread its push wider."""
    within = np.flatnonzero(sizes <= width * (1 + 1e-6))
    return int(within[0]) if within.size else len(sizes)


def reach(obj, collider, scene, wide: bool = False) -> str:
    """A line for the panel: which levels a collider of its size shapes; ``wide``: the
    contact treats it as wider than the mesh (``core.contact.Contacts.wide``)."""
    sizes = level_sizes(obj)
    width = collider_size(collider)
    first = first_level_reached(sizes, width)
    name = f"{collider.name} ({length(width, scene)})"
    if wide:  # a floor: it presses along its own faces, its size says nothing of the levels
        return f"{name}: over twice the mesh's size, it presses along its own faces"
    if first == len(sizes):
        return f"{name}: finer than every level, it moves single vertices"
    if first == 0:
        return f"{name}: as large as the coarsest level, every level takes its shape"
    return f"{name}: its shape on levels of {length(sizes[first], scene)} and finer; coarser ones spread it"
