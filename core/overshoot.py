"""Secondary motion: a level's response seen through a damped spring, so it overshoots.

The solver's timing is first order (Young 2007): each level moves toward where it is pushed,
or springs back, along a decaying exponential, and never past it. Overshoot adds, per level,
a second-order follower: a mass on a spring of period ``T`` and damping ratio ``zeta``
tracking that level's elastic offsets ``x(t)``. Its lag ``e = y - x`` obeys

    e'' + 2 zeta w e' + w^2 e = -x''        (w = 2 pi / (T sqrt(1 - zeta^2)))

so after a release or a hit (a sudden change of x's speed) it rings with the damped period
``T`` and shrinks by ``exp(-2 pi zeta / sqrt(1 - zeta^2))`` a period. What is added to the
surface is ``(1 - zeta) e``: at a ratio of 1 nothing (today's response, bit for bit: the
level is not even followed), continuously more lag and jiggle as the ratio falls.

Between frames x is taken as a straight line (its speed constant), so the follower is
integrated exactly: a kick of the change of x's speed at each frame, then the free damped
oscillation over the frame (a rotation and a decay: stable for any period, ratio and frame
length). A press sampled at 24 or 60 fps gives the same ringing.
"""

import numpy as np

from .constants import NEGLIGIBLE
from .solver import Surface

#: Below this ratio a level would ring for ever; the controls stop here.
LOWEST_RATIO = 0.02


class Overshoot:
    """The followers of the levels whose damping ratio is below 1, for one surface.

    Parameters
    ----------
    surface : Surface
    period : (levels,) float, seconds of one oscillation (> 0)
    ratio : (levels,) float, damping ratio within [LOWEST_RATIO, 1]; 1: not followed
    """

    def __init__(self, surface: Surface, period: np.ndarray, ratio: np.ndarray):
        period = np.asarray(period, dtype=np.float64)
        ratio = np.asarray(ratio, dtype=np.float64)
        count = surface.level_count
        if period.shape != (count,) or ratio.shape != (count,):
            raise ValueError(f"period and ratio need one value per level ({count})")
        if not (period > 0).all() or np.isnan(ratio).any():
            raise ValueError("periods must be positive")
        self.surface = surface
        self.period = period
        self.ratio = np.clip(ratio, LOWEST_RATIO, 1.0)
        self.levels = [j for j in range(count) if self.ratio[j] < 1.0]
        # Below float32 resolution at the object's size, as the solver's own offsets.
        self._negligible = NEGLIGIBLE * float(np.linalg.norm(np.ptp(surface.positions, axis=0)) or 1.0)
        self.reset()

    @staticmethod
    def wanted(ratio: np.ndarray | None) -> bool:
        """Whether settings with these damping ratios need a follower at all."""
        return ratio is not None and bool((np.asarray(ratio) < 1.0).any())

    def reset(self) -> None:
        """At rest: no lag, nothing moving."""
        sizes = self.surface.hierarchy.sizes
        zeros = lambda j: np.zeros((3, sizes[j]))  # noqa: E731
        self._lag = {j: zeros(j) for j in self.levels}  # e
        self._speed = {j: zeros(j) for j in self.levels}  # e'
        self._last = {j: zeros(j) for j in self.levels}  # x at the last frame
        self._slope = {j: zeros(j) for j in self.levels}  # x's speed over the last frame
        self.shown: np.ndarray | None = None  # the positions shown at the last frame (None: the surface's)
        self.ringing = False  # whether the followers added anything at the last frame

    def _transition(self, level: int, dt: float) -> tuple[float, float, float, float]:
        """The free oscillation over ``dt``: (e, e') -> (a e + b e', c e + d e')."""
        zeta = self.ratio[level]
        damped = 2.0 * np.pi / self.period[level]  # w_d
        natural = damped / np.sqrt(1.0 - zeta * zeta)  # w
        decay = np.exp(-zeta * natural * dt)
        cos, sin = np.cos(damped * dt), np.sin(damped * dt)
        lean = zeta * natural / damped
        return (
            decay * (cos + lean * sin),
            decay * sin / damped,
            -decay * natural * natural * sin / damped,
            decay * (cos - lean * sin),
        )

    def step(self, dt: float) -> np.ndarray | None:
        """Follow the surface's levels over a frame of ``dt`` seconds (the surface has just
        stepped). Returns what the followers add to the finest level, (n, 3) float64 object
        space, or None when they add nothing."""
        surface, method = self.surface, self.surface.settings.prolongation
        total: np.ndarray | None = None
        for j in range(surface.level_count):
            if total is not None:
                total = surface.hierarchy.prolong(j, total, method)
            if j not in self._lag:
                continue
            x = surface.elastic_offsets(j).astype(np.float64)
            slope = (x - self._last[j]) / dt
            lag, speed = self._lag[j], self._speed[j]
            speed -= slope - self._slope[j]  # the follower's mass keeps its speed: a kick
            a, b, c, d = self._transition(j, dt)
            lag[:], speed[:] = a * lag + b * speed, c * lag + d * speed
            # Settled below float32 resolution at the object's size: exactly at rest.
            still = (np.abs(lag) < self._negligible) & (np.abs(speed) * dt < self._negligible)
            lag[still], speed[still] = 0.0, 0.0
            self._last[j], self._slope[j] = x, slope
            if lag.any():
                added = (1.0 - self.ratio[j]) * lag
                total = added if total is None else total + added
        return None if total is None else np.ascontiguousarray(total.T)
