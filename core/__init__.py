"""Collision Response solver: pure numpy, importable without Blender.

Build a ``Surface`` from a hierarchy and rest positions, set its ``settings`` per level,
``step`` it with displacement vectors, read ``positions``.
"""

from .grid import GridHierarchy
from .hierarchy import Hierarchy
from .settings import PROPERTIES, LevelSettings
from .solver import Surface
from .timing import fraction_per_step

__all__ = ["PROPERTIES", "GridHierarchy", "Hierarchy", "LevelSettings", "Surface", "fraction_per_step"]
