"""One frame of the response: push out of the colliders, step, then mend what the step did.

A step moves more than the pushed vertices: coarse levels spread a push, bulging levels
lift the surface around it, damping holds part of it back, relaxation lets offsets spring
back, and friction drags the surface along. Any of these can put a vertex back inside a
collider, and any of them can fold faces. So after the step, on the vertices it moved:
1. while nothing pushes further than a hair (a press held still), what relaxing the finest
   offsets alone turned over is taken back, just enough; the folds left are straightened
   (``FoldGuard``), then
2. they are asked of the colliders again, and those inside are pushed out on the finest
   level alone (``Surface.correct``): nothing else moves, so one pass is enough;
3. without friction, the surface beside what is still folded is carried along
   (``FoldGuard.carry``), and what that takes into a collider pushed out in turn.
This is the thesis's answer for what a step leaves (section 5.6: apply the algorithm again
until what the finest level must absorb is minimal), and why nothing ends inside a
collider after relaxation, damping or bulging. What is shown on top of the response,
secondary motion (``core.overshoot``) and the volume given back (``core.volume``), is asked
of the colliders the same way, on the shown positions only.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from copy import copy
from typing import NamedTuple, Protocol

import numpy as np

from .contact import Contacts
from .folds import FoldGuard
from .overshoot import Overshoot
from .solver import Surface
from .vectors import nonzero_rows, rows_differ
from .volume import Volume

#: Rounds of scaling a swing down where it turns faces over and pushing out what that takes
#: into a collider (``_show_overshoot``).
CALMING_ROUNDS = 4
#: Rounds of carrying the surface beside what the frame folds and pushing out what that
#: takes into a collider (``_mend``).
CARRYING_ROUNDS = 3
#: A press is held still (``_mend``: what relaxing folds is taken back) while no push is
#: longer than this share of the mesh's size: a collider keyed still, or spinning in place
#: (its faces swing under the vertices it holds by up to 1 % of its size), or trembling.
HELD_STILL = 0.01


class Found(NamedTuple):
    """What a ``Find`` found, in the solver's space."""

    push: np.ndarray  # (n, 3): out of the colliders
    touching: np.ndarray  # (n,) bool: resting on one
    #: (n, 3): the unit way each touching vertex's collider would push it out, 0 elsewhere
    #: (``Surface.step``'s ``away``); None: not known (a resting vertex is held both ways).
    away: np.ndarray | None = None
    #: (n,): how far behind each touching vertex, along ``away``, the face it rests on lies
    #: (the touching tolerance, a standoff; ``Surface.step``'s ``gap``).
    gap: np.ndarray | None = None
    #: (n,): how much nearer it may come to the face (the gap less the standoff: ``room``).
    room: np.ndarray | None = None


class Find(Protocol):
    """``find(positions (n, 3), among, within, shown=False)``: the pushes out of the colliders
    of the vertices ``among`` (indices; every vertex when None) and those resting on one
    (``Found``), in the solver's space. ``within``: how far any vertex of ``among`` moved
    since the frame's first ``find`` (its broad phase may test only those that were that
    near a collider then). ``shown``: the positions are shown ones (a swing, the volume
    given back), not the solver's: the query must leave its contact memory as it was
    (``unchanged``), or what is shown would be fed back into the next frame's contact (a
    swing away from a collider would make a held vertex let go, at one frame rate and not
    at another)."""

    def __call__(
        self, positions: np.ndarray, among: np.ndarray | None, within: float, shown: bool = False
    ) -> Found: ...


@contextmanager
def unchanged(contacts: Contacts) -> Iterator[None]:
    """Leave all ``contacts`` remembers as it was before the block (which vertices were
    held, from which side, each collider's side, press axis and reach): for a query of
    shown positions (see ``Find``). Its press axes too: a jelly's swing asked of a box aimed
    the box by the faces the swing met, and the next frame's pushes differed from the same
    press without the swing."""
    # Its arrays change in place, its dicts and sets by item: copies of each are enough.
    saved = {name: copy(value) for name, value in vars(contacts).items()}
    contacts.showing = True
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(contacts, name, value)


def advance(
    surface: Surface,
    find: Find,
    dt: float,
    guard: FoldGuard | None = None,
    overshoot: Overshoot | None = None,
    structure: bool = False,
    volume: Volume | None = None,
    friction: bool = True,
) -> bool:
    """Respond for one frame of ``dt`` seconds. Returns False when nothing changed.

    With ``overshoot`` (secondary motion), the positions to show are ``overshoot.shown``
    (None: the surface's own): the surface's plus what the levels' followers add, kept out
    of the colliders. With ``volume`` (volume preservation), they are ``shown(surface,
    overshoot, volume)``: those with the volume the response removed given back around the
    contact (``core.volume``), kept out of the colliders. ``structure``: the surface also
    meets an interior or a container (``core.contact``), which hold it against a collider's
    push: the pushed vertices are asked again too, since a push out of a collider can end
    inside a bone under the skin, or out of the container. ``friction``: whether the colliders
    drag the surface along, so that the step can fold faces anywhere it moved them; without,
    ``guard`` looks only where the colliders push or hold the surface."""
    before = surface.positions
    found = find(before, None, np.inf)
    push, touching = found.push, found.touching
    contact = None if volume is None else nonzero_rows(push) | touching  # (before _mend changes push)
    stepped = surface.step(push, dt, touching, found.away, found.gap, found.room)
    if stepped:
        holding = nonzero_rows(push) | touching if contact is None else contact  # (the same: step leaves push)
        again, held = _mend(surface, find, guard, before, push, structure, holding, friction)
        if contact is not None:  # what the step put back in touches them too (a dent relaxing up into a ball)
            contact |= held | nonzero_rows(again)
    if overshoot is None and volume is None:  # (the default: nothing below runs, the frame is as it was)
        return stepped
    changed = stepped
    if overshoot is not None:
        changed = _show_overshoot(surface, overshoot, find, dt, before) or changed
    if volume is not None and contact is not None:
        changed = _give_back_volume(surface, volume, find, before, overshoot, contact) or changed
    return changed


def shown(surface: Surface, overshoot: Overshoot | None, volume: Volume | None) -> np.ndarray | None:
    """The positions a frame shows beyond the surface's own (None: the surface's)."""
    if volume is not None and volume.shown is not None:
        return volume.shown
    return None if overshoot is None else overshoot.shown


def _give_back_volume(
    surface: Surface, volume: Volume, find: Find, before: np.ndarray, overshoot: Overshoot | None, contact: np.ndarray
) -> bool:
    """The shown positions with the volume given back (``Volume.give_back``), on the shown
    positions only, as overshoot: the solver's state stays the kinematic response, so what is
    given back is the deficit now, never accumulated. Returns whether the shown positions can
    differ from the last frame's: whenever volume is given back (a collider may have moved
    into the bulge while the surface held still), and once more when it stops."""
    was_given = volume.shown is not None
    base = shown(surface, overshoot, None)
    base = surface.positions if base is None else base

    def push_out(positions: np.ndarray, among: np.ndarray) -> np.ndarray:
        return find(positions, among, _furthest_among(positions, before, among), shown=True).push

    volume.shown = volume.give_back(base, contact, push_out)
    if volume.reused:  # a held press: the same positions as the last frame's
        return False
    return volume.shown is not None or was_given


def _mend(
    surface: Surface,
    find: Find,
    guard: FoldGuard | None,
    before: np.ndarray,
    push: np.ndarray,
    structure: bool,
    held: np.ndarray,
    friction: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """After a step: while nothing pushes further than ``HELD_STILL``, take back what relaxing
    the finest offsets alone folded (``FoldGuard.held_back``, ``Surface.relaxed_alone``);
    straighten the folds left, then push out what the step put back inside. Returns the
    pushes out (n, 3) and which vertices the colliders hold then, (n,) bool. ``held``
    (n,) bool: the vertices the colliders pushed or held before the step; without
    ``friction`` folds are straightened only near them (``FoldGuard.straighten``), and then,
    anywhere, the surface beside what is still folded is carried along (``FoldGuard.carry``)
    and pushed out in turn."""
    after = surface.positions
    moved = rows_differ(after, before)
    if structure and not friction:
        # An interior or a container holds the surface against a collider's push: what the
        # guard moves there, pushed out again, the two part (a skin pressed onto a bone by a
        # ball ended 10 cm inside the bone). There it keeps to friction's drag, as before.
        guard = None
    near = None if guard is None or friction else guard.near_contact(held)
    kept = None
    if guard is not None and _held_still(push, guard.size):
        # (A press held still: nothing pushes further than a hair. Only what relaxing the
        # finest offsets alone moved: a surface springing back moves with its coarse levels,
        # and taken back it stayed crushed; a squeeze closing on stretched further. Anywhere
        # on the mesh: what relaxing folds far from the contact, carried along, relaxed back
        # the next frame, a three-frame cycle moving a Stiff Shell 0.76 m.)
        alone = np.zeros(held.shape, dtype=bool)
        alone[surface.relaxed_alone()] = True
        kept = guard.held_back(before, after, alone & ~held)
    if kept is not None and surface.correct(kept):
        after = surface.positions
        moved = rows_differ(after, before)
    unfold = None if guard is None else guard.straighten(after, moved.nonzero()[0], near)
    if unfold is not None and surface.correct(unfold):
        after = surface.positions
        unfolded = nonzero_rows(unfold)
        moved |= unfolded
        push[unfolded] = 0  # moved after their push: asked again
    # A pushed vertex ends at its goal, out of the collider, and a resting one stays put:
    # only the others the step moved can have gone in.
    pushed = nonzero_rows(push)
    if structure:
        pushed[:] = False
    moved &= ~pushed
    found = find(after, moved.nonzero()[0], _furthest(after - before, pushed))
    again, touching = found.push, found.touching
    if again.any():
        surface.correct(again)
    if guard is not None and not friction and kept is None:
        # (Not after a held press's relaxing is taken back: back where the last frame left
        # it, carried again it went on, and the next frame took it back, every other frame.
        # Nor with friction: its drag, carried, kept a squeeze held still shaking, 29 % of
        # the mesh's size in half a second, and a held frame cost 3.3 times as much.)
        _carry_along(surface, find, guard, held, before, again, touching)
    return again, touching


def _held_still(push: np.ndarray, size: float) -> bool:
    """Whether no push (n, 3) is longer than ``HELD_STILL`` of ``size``."""
    pushing = push[nonzero_rows(push)]
    return not pushing.size or float(np.einsum("ij,ij->i", pushing, pushing).max()) <= (HELD_STILL * size) ** 2


def _carry_along(surface, find: Find, guard: FoldGuard, held, before, again, touching) -> None:
    """The surface beside what the frame folded carried along (``FoldGuard.carry``); what that
    carries into a collider pushed out in turn (added to ``again`` (n, 3), and what touches
    then to ``touching`` (n,) bool), which can fold again: a few rounds, while they undo all."""
    for _ in range(CARRYING_ROUNDS):
        carry, complete = guard.carry(surface.positions, held | nonzero_rows(again) | touching, before)
        if carry is None or not surface.correct(carry):
            return
        carried = nonzero_rows(carry).nonzero()[0]
        found = find(surface.positions, carried, _furthest_among(surface.positions, before, carried))
        out, also = found.push, found.touching
        touching |= also
        # (In the carried rows alone: a fold's few hundred of a mesh's hundred thousand.)
        pushed, moved = out[carried], carry[carried]
        # A vertex carried so far in that its way out is longer than the carry goes back
        # where it was, out of it: carrying must not send a vertex through a collider.
        far = np.einsum("ij,ij->i", pushed, pushed) > np.einsum("ij,ij->i", moved, moved) * (1.0 + 1e-6)
        pushed[far] = -moved[far]
        if not pushed.any():
            return
        out[:] = 0
        out[carried] = pushed
        surface.correct(out)
        again[carried[~far]] += pushed[~far]
        if not complete:
            return


def _show_overshoot(surface: Surface, overshoot: Overshoot, find: Find, dt: float, before: np.ndarray) -> bool:
    """The positions shown with secondary motion: the surface's plus the followers' lag,
    where that lag would carry a vertex into a collider pushed out again, and scaled down
    where it would turn faces over (``FoldGuard.calmed``); on the shown positions only: the
    solver's state stays the kinematic response. Returns whether they differ from the last
    frame's."""
    added = overshoot.step(dt)
    was_ringing, overshoot.ringing = overshoot.ringing, added is not None
    if added is None:  # the surface's own positions (None: no copy of them)
        overshoot.shown = None
        return was_ringing
    base = surface.positions
    shown = base.copy()
    ringing = nonzero_rows(added)
    shown[ringing] += added[ringing]  # (float32, as the solver's positions)
    swinging = ringing.nonzero()[0]
    shown += find(shown, swinging, _furthest_among(shown, before, swinging), shown=True).push
    if overshoot.guard is not None:
        shown = _calmed(overshoot.guard, base, shown, swinging, find, before)
    overshoot.shown = shown
    return True


def _calmed(guard: FoldGuard, base, shown, swinging, find: Find, before) -> np.ndarray:
    """``shown`` (the swing pushed out of the colliders) scaled down toward ``base`` where it
    turns faces over (``FoldGuard.calmed``). Pushed out, a swung vertex can turn a face its
    neighbours swing away from; what scaling takes back into a collider (across a box's
    edge) is pushed out again, which can turn a face again: a few rounds, then scaled down
    once more without the push. What that last scaling leaves inside a collider takes the
    response's position (``base``, out of them): the two ends of a scaled swing are out of a
    collider, but the way between need not be (a box turned to face a monkey as it was traced
    over her face left a vertex of Jelly's swing 2 cm inside it)."""
    for pushes_left in range(CALMING_ROUNDS - 1, -1, -1):
        calmed = guard.calmed(base, shown, swinging)
        if calmed is None:
            return shown
        scaled = rows_differ(calmed, shown).nonzero()[0]
        out = find(calmed, scaled, _furthest_among(calmed, before, scaled), shown=True).push
        if not pushes_left:
            inside = nonzero_rows(out)
            calmed[inside] = base[inside]
            return calmed
        shown = calmed + out
    return shown


def _furthest_among(positions: np.ndarray, before: np.ndarray, among: np.ndarray) -> float:
    """How far any vertex of ``among`` (indices) is from where it was ``before``."""
    return _furthest(positions[among] - before[among], np.zeros(among.size, dtype=bool))


def _furthest(motion: np.ndarray, pushed: np.ndarray) -> float:
    """The length of the longest row of ``motion`` (n, 3) that is not ``pushed`` (n,),
    rounded up past float32's rounding (a bound must not come out short)."""
    squared = np.einsum("ij,ij->i", motion, motion)
    squared[pushed] = 0.0
    return float(np.sqrt(squared.max())) * (1.0 + 1e-5) if squared.size else 0.0
