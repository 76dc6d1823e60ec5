"""The animator's controls: per-level coefficients and the solver's operator choices."""

from dataclasses import dataclass, field

import numpy as np

from .grid import Prolongation, Restriction

#: Names of the per-level properties; a behaviour map may scale each of them.
PROPERTIES = ("absorption", "response_time", "time_to_rest", "yield_limit")


@dataclass
class LevelSettings:
    """Per-level coefficients, index 0 the coarsest level, the last the finest.

    absorption : fraction of the displacement a level takes (negative bulges); the finest
        level always absorbs what is left, so its value is not used.
    response_time : seconds for a level to give way 99 % to a push (0 = at once): damping.
        The finest level always takes what is left at once (nothing stays inside a
        collider), so its value is not used.
    time_to_rest : seconds for elastic offsets out of contact to recover 99 % (inf = never).
    yield_limit : longest elastic offset in object units; the excess stays as a plastic
        (permanent) offset. inf = perfectly elastic, 0 = perfectly plastic.
    """

    absorption: np.ndarray
    response_time: np.ndarray
    time_to_rest: np.ndarray
    yield_limit: np.ndarray
    restriction: Restriction = "max"
    prolongation: Prolongation = "linear"
    substeps: int = 1
    #: Behaviour maps: property name -> (n,) per-vertex multiplier on the finest level.
    #: For the two times the map scales the speed (0 freezes that region). Assign a new
    #: array to change a map: a surface reads a map when it first sees that array.
    maps: dict[str, np.ndarray] = field(default_factory=dict)
    #: Secondary motion (``core.overshoot``), per level: the period of the overshoot in
    #: seconds and its damping ratio (1: none, the response as without it). None: no level
    #: overshoots. Read when a simulation is built, not by ``Surface.step``.
    overshoot_period: np.ndarray | None = None
    damping_ratio: np.ndarray | None = None

    @classmethod
    def uniform(
        cls,
        levels: int,
        absorption: float = 0.0,
        response_time: float = 0.0,
        time_to_rest: float = 1.0,
        yield_limit: float = np.inf,
    ) -> "LevelSettings":
        """The same values on every level: by default local, instant and elastic."""
        full = lambda value: np.full(levels, value, dtype=np.float64)  # noqa: E731
        return cls(full(absorption), full(response_time), full(time_to_rest), full(yield_limit))

    def check(self, levels: int, vertices: int) -> None:
        """Raise ValueError with a clear message if the settings do not fit the surface."""
        for name in PROPERTIES:
            values = np.asarray(getattr(self, name), dtype=np.float64)
            if values.shape != (levels,):
                raise ValueError(f"{name} needs one value per level ({levels}), got shape {values.shape}")
            if np.isnan(values).any():
                raise ValueError(f"{name} has NaN values")
            if name != "absorption" and (values < 0).any():
                raise ValueError(f"{name} cannot be negative")
        for name, weights in self.maps.items():
            if name not in PROPERTIES:
                raise ValueError(f"unknown behaviour map {name!r}; expected one of {PROPERTIES}")
            if np.shape(weights) != (vertices,):
                raise ValueError(f"behaviour map {name!r} needs one value per vertex ({vertices})")
        if self.substeps < 1:
            raise ValueError("substeps must be at least 1")
