"""Timing in seconds, converted to per-step fractions (Young 2007).

A fraction applied once per step depends on the step length; an exponential decay in
seconds does not. With a step ``dt`` and a time ``T`` by which 99 % is done, the fraction
done per step is ``1 - 0.01 ** (dt / T)``: the same curve at any frame rate or sub-step count.
"""

import numpy as np

from .constants import SETTLED_FRACTION


def fraction_per_step(seconds: np.ndarray | float, dt: float, speed: np.ndarray | float = 1.0) -> np.ndarray:
    """Fraction of the outstanding change to take in one step of ``dt`` seconds.

    Parameters
    ----------
    seconds : float or (n,) float
        Time by which 99 % of a change is done. 0 means at once (fraction 1);
        ``inf`` means never (fraction 0).
    dt : float
        Step length in seconds.
    speed : float or (n,) float
        Multiplier of the rate (a behaviour map): 0 freezes, 2 is twice as fast.
    """
    seconds = np.asarray(seconds, dtype=np.float64)
    speed = np.asarray(speed, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.where(speed > 0, speed * dt / seconds, 0.0)
    return 1.0 - SETTLED_FRACTION ** np.nan_to_num(exponent, nan=0.0, posinf=np.inf)
