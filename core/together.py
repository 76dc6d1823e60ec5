"""One frame of several surfaces that press into each other, solved jointly (Harrison 1994,
section 5.6): each takes its share of their overlap, weighted by relative stiffness, and
the algorithm is applied again on the finest levels until what they must absorb is minimal.

Every surface is asked about the same state (all of them as they are at the start of the
frame, then as each round leaves them), and each steps with its own answer: no surface
sees another's step of the same round, so the result does not depend on the order they
are stepped in.

1. Each surface is pushed out of its colliders, and out of each partner by its share of
   the overlap (the asker scales those pushes), and takes one full step: its coarse levels
   spread its share of the press, as a collider's press spreads.
2. Both moved: what is left of the overlap (and whatever the step put back into a
   collider) is asked again and taken on the finest level alone, each its share again,
   until nothing is left or the rounds run out.
3. In the last round each takes the whole of what is left of its overlap with the other,
   out of the other's surface as it was: both retreat from each other, so each ends out of
   the other's new surface too (a gap no wider than what the shared rounds left). A shared
   round that pushes no surface further than ``close`` allows (an overlap that small may be
   left as a gap) makes the next round the last: it asks no more rounds than that needs.
"""

from collections.abc import Callable

import numpy as np

from .frame import Found
from .solver import Surface
from .vectors import nonzero_rows

#: Rounds of shared corrections after the step; the last one takes whole pushes.
ROUNDS = 4

#: ``ask(positions, whole)``: for each surface, the pushes out of its colliders and its
#: partners and those resting on one (``core.frame.Found``), asked about every surface at
#: ``positions`` (a list, one (n, 3) array each). ``whole`` is None for the frame's first question (the
#: colliders' motion is read), else whether the pushes out of partners are whole (True, the
#: last round) or each surface's share (False).
Ask = Callable[[list[np.ndarray], bool | None], list[Found]]


def advance_together(
    surfaces: list[Surface], ask: Ask, dt: float, rounds: int = ROUNDS, close: list[float] | None = None
) -> list[bool]:
    """Respond for one frame of ``dt`` seconds, every surface at once. Returns, per surface,
    whether it changed. ``close``: per surface, the longest push (its own space) after which
    what is left may be taken whole at once (None: every shared round is run)."""
    found = ask([surface.positions for surface in surfaces], None)
    changed = [
        surface.step(each.push, dt, each.touching, each.away, each.gap, each.room)
        for surface, each in zip(surfaces, found, strict=True)
    ]
    whole = False
    for attempt in range(rounds):
        last = whole or attempt == rounds - 1
        found = ask([surface.positions for surface in surfaces], last)
        pushed = [nonzero_rows(each.push).any() for each in found]
        if not any(pushed):
            break
        for index, (surface, each) in enumerate(zip(surfaces, found, strict=True)):
            if pushed[index]:
                surface.correct(each.push)
                changed[index] = True
        if last:
            break
        whole = close is not None and all(
            _longest(each.push) <= limit for each, limit in zip(found, close, strict=True)
        )
    return changed


def _longest(push: np.ndarray) -> float:
    """The length of the longest row of ``push`` (n, 3)."""
    rows = push[nonzero_rows(push)]
    return float(np.sqrt(np.einsum("ij,ij->i", rows, rows).max())) if rows.size else 0.0
