"""Collision Response solver: pure numpy, importable without Blender.

Build a hierarchy for a mesh (``build_hierarchy``: the exact grid hierarchy for a
(2^m + 1)^2 grid, the general one otherwise), a ``Surface`` from it and the rest positions,
set its ``settings`` per level, ``step`` it with displacement vectors, read ``positions``.
"""

from .grid import GridHierarchy
from .hierarchy import Hierarchy
from .mesh import MeshHierarchy
from .normals import VertexNormals
from .settings import PROPERTIES, LevelSettings
from .solver import Surface
from .timing import fraction_per_step
from .topology import HierarchyCache, build_hierarchy

__all__ = [
    "PROPERTIES",
    "GridHierarchy",
    "Hierarchy",
    "HierarchyCache",
    "LevelSettings",
    "MeshHierarchy",
    "Surface",
    "VertexNormals",
    "build_hierarchy",
    "fraction_per_step",
]
