"""Pressure for shaders: the reaction of the elastic offsets under a spring law.

Harrison (1994, section 5.6) turns the elastic offsets into reaction forces with a spring
model, prolongated from the coarse levels up to the finest for a per-area reaction (a
pressure): an ideal Hookean spring, F(x) = k x, for a very compressible surface, or the
biphasic law of Lee, Terzopoulos and Waters (1993) for one over a nearly incompressible
volume: soft (k_small) for offsets up to a knee x_c, stiff (k_large > k_small) beyond it.

Here each level's elastic offsets are carried up the hierarchy (prolongated and added, as
the surface itself is placed), and the law is applied to how far the sum pushes each vertex
in, against its rest normal: 0 where no springy offset is left (outside the dent, at rest,
where a dent was kept as a plastic one) and where the surface bulges out (that is pulled,
not pressed), growing with the depth of the press. The scale is set by a depth: the
pressure is 1 there (``full_depth``), so a shader reads 0 .. 1 for the presses it is set
for, and more for deeper ones.
"""

from dataclasses import dataclass
from typing import Literal

import numpy as np

from .solver import Surface

Law = Literal["hooke", "biphasic"]


@dataclass
class PressureSettings:
    """How the elastic offsets read as a pressure.

    law : "hooke" (linear) or "biphasic" (soft, then stiff past the knee).
    full_depth : the elastic offset (object units) whose pressure is 1.
    knee : where the biphasic law stiffens, as a share of ``full_depth``.
    stiffening : k_large / k_small of the biphasic law (1: Hooke's).
    """

    law: Law = "hooke"
    full_depth: float = 0.1
    knee: float = 0.5
    stiffening: float = 4.0

    def check(self) -> None:
        if not self.full_depth > 0:
            raise ValueError(f"full_depth must be positive, got {self.full_depth}")
        if not 0 <= self.knee <= 1:
            raise ValueError(f"knee must be within 0 and 1, got {self.knee}")
        if not self.stiffening >= 1:
            raise ValueError(f"stiffening must be at least 1, got {self.stiffening}")
        if self.law not in ("hooke", "biphasic"):
            raise ValueError(f"unknown law {self.law!r}; expected 'hooke' or 'biphasic'")


def spring(x: np.ndarray, settings: PressureSettings) -> np.ndarray:
    """The law at offsets ``x`` (>= 0), scaled so that ``spring(full_depth) == 1``: strictly
    increasing, 0 at 0, continuous (the biphasic law's force is continuous at the knee)."""
    depth = settings.full_depth
    if settings.law == "hooke":
        return x / depth
    knee, stiff = settings.knee * depth, settings.stiffening

    def force(length):
        return np.where(length <= knee, length, knee + stiff * (length - knee))

    return force(x) / force(np.float64(depth))


def elastic_displacement(surface: Surface) -> np.ndarray:
    """Each vertex's elastic offsets of every level, carried to the finest level and added,
    (3, n) object space, in the mesh's vertex order: what would spring back if nothing
    pressed."""
    hierarchy, method = surface.hierarchy, surface.settings.prolongation
    total: np.ndarray | None = None
    for level in range(surface.level_count):
        elastic = surface.elastic_offsets(level)  # (3, n_j), read only
        if total is not None:
            total = hierarchy.prolong(level, total, method)
        if elastic.any():
            total = elastic.astype(np.float64) if total is None else total + elastic
    return np.zeros((3, surface.vertex_count)) if total is None else surface.in_mesh_order(total)


def pressure(surface: Surface, settings: PressureSettings, normals: np.ndarray) -> np.ndarray:
    """The pressure at each vertex, (n,) float32: the law of how deep the elastic offsets push
    it in against its rest normal (``normals``, (n, 3) unit, pointing out of the side that is
    pressed); 0 where nothing springy is left or the surface bulges out."""
    settings.check()
    total = elastic_displacement(surface)
    normals = np.asarray(normals, dtype=np.float64)
    inward = -(total[0] * normals[:, 0] + total[1] * normals[:, 1] + total[2] * normals[:, 2])
    return spring(np.maximum(inward, 0.0), settings).astype(np.float32)
