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

Between frames x is taken as a straight line (its speed constant), or, where the level only
sprang back over the frame (x shrank by exactly its relaxation's factor), as the decaying
exponential the solver's relaxation is (its rate from the level's Time to Rest): a short
Time to Rest springs back within part of a frame, and a straight line would spread that
kick over the whole frame, so 24 and 60 fps would ring differently. Either way the follower
is integrated exactly: a kick of the change of x's speed at each frame, then the damped
oscillation over the frame (a rotation and a decay, plus the exponential's own forced part:
stable for any period, ratio and frame length). A press sampled at 24 or 60 fps gives the
same ringing, but for what the level itself holds differently at the two rates (the
kinematic response splits a dent among its levels a little differently; their sum, the
surface, agrees): the README gives the bound measured.
"""

import numpy as np

from .constants import NEGLIGIBLE, SETTLED_FRACTION
from .folds import FoldGuard
from .solver import Surface

#: A level's offsets count as only springing back over a frame when they are their
#: relaxation's factor of the frame before's to this relative rounding (float32 steps).
RELAXED = 1e-5
#: The fastest relaxation followed as an exponential, in decays per frame (faster is at once).
FASTEST = 60.0

#: Below this ratio a level would ring for ever; the controls stop here.
LOWEST_RATIO = 0.02


class Overshoot:
    """The followers of the levels whose damping ratio is below 1, for one surface.

    Parameters
    ----------
    surface : Surface
    period : (levels,) float, seconds of one oscillation (> 0)
    ratio : (levels,) float, damping ratio within [LOWEST_RATIO, 1]; 1: not followed
    guard : FoldGuard of the surface's mesh, or None: the swing shown may turn faces over
    """

    def __init__(self, surface: Surface, period: np.ndarray, ratio: np.ndarray, guard: FoldGuard | None = None):
        period = np.asarray(period, dtype=np.float64)
        ratio = np.asarray(ratio, dtype=np.float64)
        count = surface.level_count
        if period.shape != (count,) or ratio.shape != (count,):
            raise ValueError(f"period and ratio need one value per level ({count})")
        if not (period > 0).all() or np.isnan(ratio).any():
            raise ValueError("periods must be positive")
        self.surface = surface
        self.guard = guard  # keeps the swing from turning faces over (``FoldGuard.calmed``)
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
        self._slope = {j: zeros(j) for j in self.levels}  # x's speed at the end of the last frame
        self._rates: tuple | None = None  # (what they were made of, each followed level's rates)
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

    def _relaxation_rates(self, dt: float) -> dict[int, np.ndarray]:
        """Each followed level's relaxation rate (1/s) per vertex, (n_j,): its offsets out of
        contact shrink as exp(-rate t) (``core.timing``; a Time to Rest map scales it)."""
        s = self.surface.settings
        weights = s.maps.get("time_to_rest")
        key = (dt, np.asarray(s.time_to_rest, dtype=np.float64).tobytes(), id(weights))
        if self._rates is None or self._rates[0] != key:
            rates = {}
            for j in self.levels:
                weight = 1.0 if weights is None else self.surface.hierarchy.inject(j, np.asarray(weights, np.float64))
                seconds = float(s.time_to_rest[j])
                with np.errstate(divide="ignore", invalid="ignore"):
                    rate = np.where(np.asarray(weight) > 0, -np.log(SETTLED_FRACTION) * weight / seconds, 0.0)
                rate = np.minimum(np.nan_to_num(rate, nan=0.0, posinf=np.inf), FASTEST / dt)
                rates[j] = np.broadcast_to(rate, (self.surface.hierarchy.sizes[j],)).copy()
            self._rates = (key, rates)
        return self._rates[1]

    def step(self, dt: float) -> np.ndarray | None:
        """Follow the surface's levels over a frame of ``dt`` seconds (the surface has just
        stepped). Returns what the followers add to the finest level, (n, 3) float64 object
        space in the mesh's vertex order, or None when they add nothing."""
        surface, method = self.surface, self.surface.settings.prolongation
        rates = self._relaxation_rates(dt) if self.levels else {}
        total: np.ndarray | None = None
        for j in range(surface.level_count):
            if total is not None:
                total = surface.hierarchy.prolong(j, total, method)
            if j not in self._lag:
                continue
            x = surface.elastic_offsets(j).astype(np.float64)
            last = self._last[j]
            slope = (x - last) / dt
            end = slope  # x's speed at the end of the frame
            lag, speed = self._lag[j], self._speed[j]
            forced = self._relaxing(x, last, rates[j], dt)
            a, b, c, d = self._transition(j, dt)
            if forced is None:
                speed -= slope - self._slope[j]  # the follower's mass keeps its speed: a kick
                lag[:], speed[:] = a * lag + b * speed, c * lag + d * speed
            else:  # x(t) = last exp(-k t) where it springs back: forced by -x'' = -k^2 x
                index, k = forced
                start, end = slope.copy(), slope.copy()
                start[:, index], end[:, index] = -k * last[:, index], -k * x[:, index]
                speed -= start - self._slope[j]
                amplitude = self._forced(j, k, last[:, index])  # e_p = A exp(-k t)
                lag[:, index] -= amplitude  # the free part: what is left of e and e'
                speed[:, index] += k * amplitude
                lag[:], speed[:] = a * lag + b * speed, c * lag + d * speed
                decayed = amplitude * np.exp(-k * dt)
                lag[:, index] += decayed
                speed[:, index] -= k * decayed
            # Settled below float32 resolution at the object's size: exactly at rest.
            still = (np.abs(lag) < self._negligible) & (np.abs(speed) * dt < self._negligible)
            lag[still], speed[still] = 0.0, 0.0
            self._last[j], self._slope[j] = x, end
            if lag.any():
                added = (1.0 - self.ratio[j]) * lag
                total = added if total is None else total + added
        return None if total is None else np.ascontiguousarray(surface.in_mesh_order(total).T)

    def _relaxing(self, x: np.ndarray, last: np.ndarray, rate: np.ndarray, dt: float):
        """The vertices whose offsets only sprang back over the frame: ``x`` (3, m) is
        ``last`` times exp(-rate dt) to rounding (and something was there to shrink).
        Returns (their indices, their rates), or None when there are none."""
        moving = (rate > 0) & last.any(axis=0)
        if not moving.any():
            return None
        index = np.flatnonzero(moving)
        k = rate[index]
        before, now = last[:, index], x[:, index]
        error = np.abs(now - before * np.exp(-k * dt)).max(axis=0)
        fits = error <= RELAXED * np.abs(before).max(axis=0) + self._negligible
        if not fits.any():
            return None
        return index[fits], k[fits]

    def _forced(self, level: int, k: np.ndarray, start: np.ndarray) -> np.ndarray:
        """The amplitude A (3, m) of the lag's forced part A exp(-k t) while the offsets
        spring back from ``start`` (3, m) at rates ``k`` (m,): from A (k^2 - 2 zeta w k + w^2)
        = -k^2 start, never 0 below a ratio of 1."""
        zeta = self.ratio[level]
        natural = 2.0 * np.pi / self.period[level] / np.sqrt(1.0 - zeta * zeta)
        return -k * k * start / (k * k - 2.0 * zeta * natural * k + natural * natural)
