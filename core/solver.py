"""The multi-resolution collision response of Harrison (1994), chapters 4 and 5.

One step restricts the displacement vectors down the hierarchy, then walks up from the
coarsest level: each level is placed by prolongating its parent and adding its offsets in
the parent's frames, takes its share of the displacement (absorption, clamped to what the
coarser levels left undone, damped in time), yields, and the finest level absorbs the rest.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .constants import DTYPE, NEGLIGIBLE, TINY
from .frames import to_frame, to_object, trust_turns
from .hierarchy import FrameBasis, Hierarchy
from .locality import inverse
from .settings import PROPERTIES, LevelSettings
from .timing import fraction_per_step
from .vectors import dot, nonzero_rows, norm


@dataclass
class _Level:
    """The state of one level; vectors (3, n_j).

    The rest offsets are in the parent surface's frames, so the rest shape's details turn
    with the coarser levels (Forsey and Bartels' reference offsets). The response's own
    offsets are in object space: each is a push the surface took, along the direction it was
    pushed. Kept in frames, they turned with every coarse tilt, and at a deep dent's walls
    (where the coarse levels tilt most) slid the fine levels sideways past their neighbours
    until faces turned over.
    """

    rest: np.ndarray  # rest positions (object space)
    reference: np.ndarray  # r: rest offsets from the prolongated rest parent, frame coordinates
    detail: np.ndarray  # the same in object space, at rest: F_rest r
    elastic: np.ndarray  # o, object space
    plastic: np.ndarray  # p, object space
    solution: np.ndarray  # s: current positions (object space)
    offsets: np.ndarray  # p + o, kept up to date where they change: a step reads one array
    pending: np.ndarray  # what damping has not yet let through of this level's share (object space)


@dataclass
class _Rests:
    """The vertices resting on colliders, as a step holds them (``Surface._resting_ways``):
    per level, coarse to fine, the box (6, n_j) int8 of the ways out of each vertex's resting
    descendants (``NOT_RESTING`` where none rests) and the vertices with one (``marked``);
    and each resting vertex's room (``room``, by the finest level's ``marked``)."""

    boxes: list[np.ndarray]
    marked: list[np.ndarray]
    room: np.ndarray
    key: tuple[np.ndarray, np.ndarray]  # the finest level's resting vertices and their boxes


@dataclass
class _Coefficients:
    """Per-step coefficients of one level: scalars, or (n_j,) arrays where a map applies."""

    absorption: np.ndarray
    damping: np.ndarray  # gamma: fraction of a change accepted this step
    relaxation: np.ndarray  # mu: fraction of an elastic offset recovered this step
    yield_limit: np.ndarray
    kept: np.ndarray  # 1 - mu: the part of an elastic offset out of contact that stays


class Surface:
    """A deformable surface: a hierarchy, its rest shape, its state and its settings.

    Parameters
    ----------
    hierarchy : Hierarchy
        Levels and transfer operators (``GridHierarchy``, or one built for a mesh).
    rest_positions : (n, 3) float
        Rest positions of the finest level (the mesh's vertices).
    settings : LevelSettings, optional
        Per-level coefficients; ``LevelSettings.uniform`` defaults when omitted.
    """

    #: Not kept in a copy of the state (``core.checkpoints``): the last frame's resting ways,
    #: made again when needed.
    TRANSIENT = ("_ways", "_settling")

    _positions: np.ndarray  # the finest level's solution in the mesh's order, (n, 3)
    _stale: list[np.ndarray]  # each level's vertices pushed at the last step
    _settling: tuple | None  # the last step's finest relaxing (``relaxed_alone``), its order

    def __init__(self, hierarchy: Hierarchy, rest_positions: np.ndarray, settings: LevelSettings | None = None):
        rest = np.asanyarray(rest_positions, dtype=np.float64)
        if rest.shape != (hierarchy.sizes[-1], 3):
            raise ValueError(f"rest positions must be ({hierarchy.sizes[-1]}, 3), got {rest.shape}")
        if not np.isfinite(rest).all():
            raise ValueError("rest positions must be finite")
        self.hierarchy = hierarchy
        # The levels are in the hierarchy's own orders; the mesh's order is kept at the
        # boundary (inputs and positions), so a caller never sees the difference.
        self._order = hierarchy.vertex_order
        self._rank = None if self._order is None else inverse(self._order)
        self.settings = settings or LevelSettings.uniform(len(hierarchy.sizes))
        self.settings.check(self.level_count, self.vertex_count)
        self._negligible = DTYPE(NEGLIGIBLE * (float(np.linalg.norm(np.ptp(rest, axis=0))) or 1.0))
        self._build_levels(np.ascontiguousarray(rest.T, dtype=DTYPE))
        self._cache_key: tuple = ()
        self._coefficients: list[_Coefficients] = []
        # Start from the composed rest shape, so vertices no step touches never change a bit.
        self.reset()

    @property
    def level_count(self) -> int:
        return len(self.hierarchy.sizes)

    @property
    def vertex_count(self) -> int:
        return self.hierarchy.sizes[-1]

    def _build_levels(self, finest_rest: np.ndarray) -> None:
        levels: list[_Level] = []
        for j in range(self.level_count):
            rest = self.hierarchy.inject(j, finest_rest)
            zeros = np.zeros_like(rest)
            reference = detail = zeros  # (level 0 has no parent; the others get theirs below)
            levels.append(
                _Level(rest, reference, detail, zeros.copy(), zeros.copy(), rest.copy(), zeros.copy(), zeros.copy())
            )
        self._levels = levels
        self._compute_reference_offsets()

    def _compute_reference_offsets(self) -> None:
        """r(j) = F^T (rest(j) - P rest(j-1)), for the current prolongation method.

        Elastic and plastic offsets are kept: only the rest shape's description changes.
        """
        method = self.settings.prolongation
        for j in range(1, self.level_count):
            lv = self._levels[j]
            parent, frames = self.hierarchy.prolong_with_frames(j, self._levels[j - 1].rest, method)
            at_rest = frames(slice(None))
            lv.reference = to_frame(at_rest, lv.rest - parent)
            # Where the rest shape is the parent surface (a flat region) this is rounding:
            # exactly 0 instead, so those vertices need no frame while nothing presses them.
            lv.reference[np.abs(lv.reference) < self._negligible] = 0
            lv.detail = to_object(at_rest, lv.reference)
        self._built_for = method

    # -- reading and resetting ----------------------------------------------------------------

    @property
    def positions(self) -> np.ndarray:
        """Current positions of the mesh's vertices, (n, 3) float32 (a copy)."""
        return self._positions.copy()

    def solved_positions(self) -> np.ndarray:
        """The mesh's positions made afresh from the finest level's solution: the bits of
        ``positions`` (which a step keeps up to date row by row), a new array."""
        finest = self._levels[-1].solution
        positions = np.empty((self.vertex_count, 3), dtype=DTYPE)
        for axis in range(3):
            positions[:, axis] = finest[axis] if self._rank is None else finest[axis].take(self._rank)
        return positions

    def _composed(self, level: int) -> np.ndarray:
        """Level ``level``'s positions placed whole from its parent's solution and its offsets,
        as a step places a whole level (before its response moves the vertices in contact)."""
        lv = self._levels[level]
        if level == 0:
            return lv.rest + lv.offsets
        coarse = self._levels[level - 1].solution
        parent, frames = self.hierarchy.prolong_with_frames(level, coarse, self.settings.prolongation)
        placed = _place_in_frames(frames, parent, lv.reference, lv.detail)
        placed += lv.offsets
        return placed

    @staticmethod
    def _patch(array: np.ndarray, made: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The columns (vertices) of (3, n) ``array`` whose bits differ from ``made``, and
        their values."""
        rows = np.flatnonzero((array.view(np.uint32) != made.view(np.uint32)).any(axis=0)).astype(np.int32)
        return rows, np.ascontiguousarray(array[:, rows])

    @contextmanager
    def solutions_apart(self) -> Iterator[dict]:
        """What a copy of the state keeps instead of the arrays it can make again: each
        level's solution as what differs from it placed whole (``_composed``; most vertices
        are where their parent and offsets place them, those the response moved last aside),
        its offsets as what differs from the elastic plus the plastic ones, the vertices each
        level pushed last as a mask. While the context lasts, the surface is without them
        (None), and without the positions where they are the finest level's; ``with_solutions``
        makes them all again, bit for bit."""
        apart: dict = {"solutions": [], "offsets": [], "stale": []}
        for j, lv in enumerate(self._levels):
            apart["solutions"].append(self._patch(lv.solution, self._composed(j)))
            apart["offsets"].append(self._patch(lv.offsets, lv.plastic + lv.elastic))
            pushed = self._stale[j]
            ordered = pushed.dtype == np.int64 and bool((np.diff(pushed) > 0).all())
            mask = np.zeros(lv.rest.shape[1], dtype=bool)
            mask[pushed] = True
            apart["stale"].append(np.packbits(mask) if ordered else pushed)
        held = [(lv.solution, lv.offsets) for lv in self._levels]
        stale, positions = self._stale, self._positions
        solved = self.solved_positions()
        derived = np.array_equal(solved.view(np.uint32), positions.view(np.uint32))
        try:
            for lv in self._levels:
                lv.solution = lv.offsets = None  # type: ignore[assignment]
            self._stale = None  # type: ignore[assignment]
            if derived:
                self._positions = None  # type: ignore[assignment]
            yield apart
        finally:
            for lv, (solution, offsets) in zip(self._levels, held, strict=True):
                lv.solution, lv.offsets = solution, offsets
            self._stale, self._positions = stale, positions

    def with_solutions(self, apart: dict) -> None:
        """Make again what ``solutions_apart`` kept apart, coarse to fine."""
        self._stale = []
        for j, lv in enumerate(self._levels):
            rows, values = apart["offsets"][j]
            lv.offsets = lv.plastic + lv.elastic
            lv.offsets[:, rows] = values
            rows, values = apart["solutions"][j]
            placed = self._composed(j)
            placed[:, rows] = values
            lv.solution = placed
            pushed = apart["stale"][j]
            if pushed.dtype == np.uint8:  # a mask
                pushed = np.flatnonzero(np.unpackbits(pushed, count=lv.rest.shape[1])).astype(np.int64)
            self._stale.append(pushed)
        if self._positions is None:
            self._positions = self.solved_positions()

    def level_positions(self, level: int) -> np.ndarray:
        """Current positions of the vertices of one level, (n_j, 3) (a copy), in the level's
        order (a mesh hierarchy's ``level_vertices``; the finest level's is ``vertex_order``)."""
        return np.ascontiguousarray(self._levels[level].solution.T)

    def offsets(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """Elastic and plastic offsets of one level, each (n_j, 3) in object space, in the
        level's order (as ``level_positions``)."""
        lv = self._levels[level]
        return np.ascontiguousarray(lv.elastic.T), np.ascontiguousarray(lv.plastic.T)

    def in_mesh_order(self, finest: np.ndarray) -> np.ndarray:
        """Values (3, n) of the finest level's vertices, in its order (what prolongating a
        level's offsets gives), in the mesh's order (``finest`` itself where they agree: a
        grid's)."""
        return finest if self._rank is None else finest.take(self._rank, axis=1)

    def relaxed_alone(self) -> np.ndarray:
        """The vertices (indices, the mesh's order) the last step moved by relaxing their own
        finest-level offsets, out of contact, while the coarser levels under them moved them
        little or not at all (``ALONE``): a press held still moves only these
        (``core.folds.FoldGuard.held_back``). Worked out when asked, only while a press holds
        still: read it before any ``correct`` (which forgets it)."""
        if self._settling is None:
            return np.zeros(0, dtype=np.int64)
        alone = _alone(self._levels[-1].solution, *self._settling)
        return alone if self._order is None else self._order[alone]

    def elastic_offsets(self, level: int) -> np.ndarray:
        """The elastic offsets of one level, (3, n_j) object space, as the solver holds them
        (read only: for ``core.pressure`` and ``core.overshoot``, which read them each frame)."""
        view = self._levels[level].elastic.view()
        view.flags.writeable = False
        return view

    def reset(self) -> None:
        """Back to the rest shape: every offset zero."""
        for lv in self._levels:
            lv.elastic[:] = 0
            lv.plastic[:] = 0
            lv.offsets[:] = 0
            lv.pending[:] = 0
        self._ways: _Rests | None = None  # the last step's ``_resting_ways``
        self._settling = None
        self._stale = [np.zeros(0, dtype=np.int64) for _ in self._levels]  # pushed last step
        self._positions = np.zeros((self.vertex_count, 3), dtype=DTYPE)  # the finest level's, (n, 3)
        self._place(np.zeros((3, self.vertex_count), dtype=DTYPE), update=False)

    # -- stepping -----------------------------------------------------------------------------

    def step(
        self,
        displacement: np.ndarray,
        dt: float,
        touching: np.ndarray | None = None,
        away: np.ndarray | None = None,
        gap: np.ndarray | None = None,
        room: np.ndarray | None = None,
    ) -> bool:
        """Advance by ``dt`` seconds with the displacement vectors of the finest level.

        Parameters
        ----------
        displacement : (n, 3) float
            For each vertex, the vector that takes it out of the colliders from its current
            position (zero where it is outside), measured on ``positions``.
        dt : float
            Step length in seconds (1 / fps for one step a frame).
        touching : (n,) bool, optional
            Vertices resting on a collider's surface (outside, within a small tolerance):
            they count as in contact, so their offsets do not relax back into the collider,
            but they absorb nothing. Without it, a vertex placed exactly on the collider
            relaxes into it and is pushed out again on alternate steps (a flicker whose
            size depends on the frame rate).
        away : (n, 3) float, optional
            For each touching vertex, the unit way its collider would push it out (0 where
            not known): its contact then holds only against that way (``_held``); without
            it, a resting vertex keeps every offset above it from relaxing, both ways.
        gap : (n,) float, optional
            For each touching vertex, how far behind it along ``away`` the face it rests on
            lies (0 when not given): the face its rest is judged against.
        room : (n,) float, optional
            For each touching vertex, how much nearer its face it may come (0 when not
            given): the gap less a standoff.

        With ``settings.substeps`` > 1 the step is split: each sub-step of ``dt / substeps``
        applies its share of what is still left between each contact vertex and its goal
        point (the thesis's step-size coefficient), so coarse levels, damping and relaxation
        see smaller steps and the last sub-step still ends at the goal.

        Returns False when the step changed nothing (no push, nothing left to relax), so a
        caller may keep what it read of ``positions`` before.
        """
        if not dt > 0:
            raise ValueError(f"dt must be positive, got {dt}")
        d = self._displacement(displacement)
        self._settling = None
        resting = None
        if touching is not None:
            touching = np.asanyarray(touching, dtype=bool)
            if touching.shape != (self.vertex_count,):
                raise ValueError(f"touching must be ({self.vertex_count},), got {touching.shape}")
            resting = touching if self._order is None else touching[self._order]
        self.settings.check(self.level_count, self.vertex_count)
        touch = self._resting_ways(resting, away, gap, room)
        if self._idle(d, touch, dt):
            return False
        count = self.settings.substeps
        if count == 1:
            self._place(d, update=True, dt=dt, touch=touch)
            return True
        goal = self._levels[-1].solution + d
        contact = dot(d, d) > TINY**2
        for i in range(count):
            left = np.where(contact, goal - self._levels[-1].solution, 0.0)
            self._place(left / (count - i), update=True, dt=dt / count, touch=touch)
        return True

    def correct(self, displacement: np.ndarray) -> bool:
        """Move vertices by ``displacement`` (n, 3) at once, on the finest level alone: what
        a step's relaxation, damping or bulging put back inside a collider comes out again,
        and nothing else moves (the thesis's answer for what is left: apply the algorithm
        again, here with all the absorption on the finest level, so one pass is enough and it
        adds no spread or bulge of its own). Returns False when there was nothing to move."""
        d = self._displacement(displacement)
        if not d.any():
            return False
        self._settling = None  # (``relaxed_alone`` is the step's alone)
        self._place(d, update=True, correcting=True)
        return True

    def _displacement(self, displacement: np.ndarray) -> np.ndarray:
        """``displacement`` (n, 3) checked, as a (3, n) array of the working precision."""
        d = np.asanyarray(displacement, dtype=DTYPE)
        if d.shape != (self.vertex_count, 3):
            raise ValueError(f"displacement must be ({self.vertex_count}, 3), got {d.shape}")
        if self._rank is None:
            d = np.ascontiguousarray(d.T)
        else:  # into the finest level's order: only the rows that push (NaN rows included)
            pushing = nonzero_rows(d).nonzero()[0]
            moved = np.zeros((3, self.vertex_count), dtype=DTYPE)
            moved[:, self._rank[pushing]] = d[pushing].T
            d = moved
        if not np.isfinite(d).all():  # a broken collider query must not poison the state
            d = np.nan_to_num(d, nan=0.0, posinf=0.0, neginf=0.0)
        return d

    def _idle(self, d: np.ndarray, touch: "_Rests | None", dt: float) -> bool:
        """A step that would change nothing: no push, and no elastic offset left to relax
        (each is 0, kept by a vertex resting on a collider, or on a level that never
        recovers), nor a new prolongation method to rebuild for. The shape stays bit for bit,
        so most frames of a shot (away from contact, or a press held still once it has
        settled) cost next to nothing."""
        if self.settings.prolongation != self._built_for or d.any():
            return False
        if self._damping_owed():  # damping still lets a share through
            return False
        coefficients = self._per_step(dt)
        for j, lv in enumerate(self._levels):
            relaxing = lv.elastic.any(axis=0) & (coefficients[j].relaxation != 0)
            if touch is not None:
                relaxing &= ~self._held(j, touch)
            if relaxing.any():
                return False
        return True

    def _damping_owed(self) -> bool:
        """Whether some level's damping still owes a share of an earlier press (``_drain``)."""
        return any(lv.pending.any() for lv in self._levels)

    def _resting_ways(self, resting, away, gap, room) -> "_Rests | None":
        """The vertices ``resting`` (n,) (the finest level's order) and their ways out of
        their colliders (``away`` (n, 3), ``gap`` and ``room`` (n,), the mesh's order:
        ``step``'s), restricted to every level, coarse to fine: for each vertex, the box that
        holds every resting descendant's way out (``AWAY_SCALE`` times the largest of each
        component, then of its negative, rounded up). The whole cube (held both ways) for a
        vertex the collider presses, whose rest lies behind the face it rests on (a held
        press: its dent stays as it is, bulge and all), or whose way is not known (0, or no
        ``away``); a vertex pushed onto a collider from a rest in front of it (the floor
        under a crushed mesh) holds only against its way out."""
        if resting is None or not resting.any():
            return None
        at = resting.nonzero()[0]
        rows = at if self._order is None else self._order[at]  # (the mesh's order)
        ways = np.zeros((at.size, 3)) if away is None else np.asarray(away)[rows]
        box = np.ceil(AWAY_SCALE * np.concatenate([ways.T, -ways.T]) - 1e-3)
        finest = self._levels[-1]
        face = np.zeros(at.size) if gap is None else np.asarray(gap, dtype=np.float64)[rows]  # its face behind it
        behind = (
            dot(_gather(finest.rest, at) - _gather(finest.solution, at), ways.T) < -face - PRESSED * self._negligible
        )
        box[:, ~ways.any(axis=1) | behind] = AWAY_SCALE
        box = np.clip(box, -AWAY_SCALE, AWAY_SCALE).astype(np.int8)
        space = np.zeros(at.size) if room is None else np.maximum(np.asarray(room, dtype=np.float64)[rows], 0.0)
        kept = self._ways  # a held press rests the same way every frame
        if kept is not None and np.array_equal(kept.key[0], at) and np.array_equal(kept.key[1], box):
            kept.room = space
            return kept
        finest_box = np.full((6, self.vertex_count), NOT_RESTING, dtype=np.int8)
        finest_box[:, at] = box
        boxes, marked = [finest_box], [at]
        for j in range(self.level_count - 1, 0, -1):
            boxes.insert(0, self.hierarchy.restrict_max(j, boxes[0]))
            marked.insert(0, (boxes[0][0] != NOT_RESTING).nonzero()[0])
        self._ways = _Rests(boxes, marked, space, (at, box))
        return self._ways

    def _held(self, level: int, rests: "_Rests") -> np.ndarray:
        """The vertices of ``level`` whose elastic offsets the resting vertices (``rests``:
        ``_resting_ways``'s) keep from relaxing: where relaxing them could move the vertex,
        or a resting descendant, into its collider, part of the offset lying along a way out
        some descendant has. Not otherwise: a contact pushes, it does not pull. A ball
        crushed onto a floor and gone: the coarse levels' offsets it left point down, into
        the mesh, the vertices it pushed onto the floor leave it upward, and relaxing lifts
        them: the mesh springs back (held both ways, it stayed crushed for good)."""
        lv = self._levels[level]
        held = np.zeros(lv.rest.shape[1], dtype=bool)
        marked = rests.marked[level]
        if marked.size:
            # Relaxing moves a vertex against its elastic offset; one resting a little off
            # its face may come that much nearer (its own, on the finest level).
            room = rests.room if level == self.level_count - 1 else 0.0
            held[marked] = _into(-_gather(lv.elastic, marked), _gather(rests.boxes[level], marked), room)
        return held

    def _place(
        self,
        d: np.ndarray,
        update: bool,
        dt: float = 1.0,
        touch: "_Rests | None" = None,
        correcting: bool = False,
    ) -> None:
        """One pass down (restriction) and up (response) the hierarchy.

        ``touch`` (``_resting_ways``'s) marks the vertices resting on a collider
        and their ancestors: a resting vertex keeps its own offsets from relaxing, and the
        ancestors' where that could move it into the collider (``_held``); the finest level
        holds it where it rests.
        ``correcting``: the finest level alone takes ``d``, at once (``correct``).

        Only what can have changed is placed again: on each level, the vertices whose parent
        or frame reads a coarser vertex that moved, whose offsets changed (relaxed, pushed),
        and those pushed last step (kept as placed plus the push, so placed again from their
        offsets). Every other vertex keeps its position, which is what placing it again would
        give, bit for bit; a press taken by the fine levels costs what it touches.
        """
        settings = self.settings
        whole = not update
        if settings.prolongation != self._built_for:
            self._compute_reference_offsets()
            whole = True
        contacts = [_contact(d)]  # per level: the vertices with a displacement, and its lengths
        if correcting:  # the coarse levels take no part: they need no displacement
            restricted = [np.zeros((3, size), dtype=d.dtype) for size in self.hierarchy.sizes[:-1]] + [d]
            reach = restricted
            none = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=d.dtype))
            contacts = [none] * (self.level_count - 1) + contacts
        else:
            restricted, reach = [d], [self._reach(d, contacts[0][0])]
            for j in range(self.level_count - 1, 0, -1):
                # A vertex with no displacement has no reach: both restrict over its contact.
                moving = contacts[0][0]
                restricted.insert(0, self.hierarchy.restrict(j, restricted[0], settings.restriction, moving))
                reach.insert(0, self.hierarchy.restrict(j, reach[0], "max", moving))
                contacts.insert(0, _contact(restricted[0]))
        coefficients = self._correcting() if correcting else self._per_step(dt) if update else []
        # What damping held back on coarser levels this step, carried up like positions: each
        # level's share is measured against the undamped motion, so the split between levels
        # does not depend on the step length (frame-rate independence with damping).
        held_back: np.ndarray | None = None
        settling = None  # the finest level's relaxing vertices (``relaxed_alone``)
        moved = np.zeros(0, dtype=bool)  # the coarser level's vertices that moved this step
        last = self.level_count - 1
        # The contacts let go of what moves away from them only while nothing presses: a
        # collider pushing drags the coarse levels (a ball leaving a torus's hole lifts its
        # ring), and damping lets a press through after it stops; meanwhile they hold.
        pressing = bool(contacts[-1][0].size) or self._damping_owed()
        for j, lv in enumerate(self._levels):
            count = lv.rest.shape[1]
            contact, length = contacts[j]
            resting = None
            if j == last and touch is not None and update and not correcting:
                # Vertices resting on a collider stay where they rest: whatever the coarser
                # levels do this step (a share damping lets through, say), the finest level
                # holds them there, as it holds a pushed vertex at its goal.
                resting = np.setdiff1d(touch.marked[j], contact, assume_unique=True)
                contact = np.union1d(contact, resting)
                resting_before = _gather(lv.solution, resting)
            # A correction moves the finest level alone: the coarse levels stay as they are,
            # their last pushed vertices placed again at the next step.
            coarse_correction = correcting and j < last
            again = np.zeros(count, dtype=bool)  # vertices to place again
            again[contact] = True
            if update:
                in_contact = again.copy()
                if touch is not None:
                    if resting is not None:  # (a resting vertex's own offsets: as its ancestors')
                        in_contact[resting] = False
                    in_contact |= self._held(j, touch)
                relaxed, shrunk = self._relax(lv, in_contact, coefficients[j])
                again[relaxed] = True
                if j == last and not correcting:  # (where they were, and how far relaxing takes them)
                    settling = relaxed, _gather(lv.solution, relaxed), shrunk
                if not coarse_correction:
                    again[self._stale[j]] = True
                if j < last and not correcting:
                    again[self._drain(lv, coefficients[j])] = True
            rows = None if whole or j == 0 else self._rows(j, again, moved)
            old = lv.solution
            if rows is None:  # the whole level
                at = contact
                if j == 0:  # level 0 has no parent: its rest positions are its parent surface
                    placed = lv.rest + lv.offsets
                else:
                    coarse = self._levels[j - 1].solution
                    parent, frames = self.hierarchy.prolong_with_frames(j, coarse, settings.prolongation)
                    placed = _place_in_frames(frames, parent, lv.reference, lv.detail)
                    placed += lv.offsets
            else:  # only ``rows``, in place
                old_rows = _gather(old, rows)
                at = np.searchsorted(rows, contact)  # contact columns among the rows
                placed = lv.solution
                if rows.size:
                    coarse = self._levels[j - 1].solution
                    parent, frames = self.hierarchy.prolong_with_frames(j, coarse, settings.prolongation, rows)
                    old = old_rows  # the positions before this step, by row
                    moved_rows = _place_in_frames(frames, parent, _gather(lv.reference, rows), _gather(lv.detail, rows))
                    moved_rows += _gather(lv.offsets, rows)
                    placed[:, rows] = moved_rows
            if touch is not None and resting is not None and resting.size and not pressing:
                # ... except where the coarser levels take them away from the collider: a
                # contact pushes, it does not pull (a mesh crushed onto a floor springing back).
                motion = _gather(placed, resting) - resting_before
                room = touch.room[np.searchsorted(touch.marked[j], resting)]
                leaving = ~_into(motion, _gather(touch.boxes[j], resting), room) & motion.any(axis=0)
                if leaving.any():
                    contact = np.setdiff1d(contact, resting[leaving], assume_unique=True)
                    at = contact if rows is None else np.searchsorted(rows, contact)
            if j > 0 and held_back is not None:
                held_back = self.hierarchy.prolong(j, held_back, settings.prolongation, patch=True)
            if update and contact.size:
                held_back = self._respond(
                    lv,
                    placed,
                    contact,
                    _gather(restricted[j], contact),
                    length,
                    _gather(reach[j], contact),
                    _gather(old, at),
                    coefficients[j],
                    held_back,
                    j == last,
                )
            if rows is not None:
                moved = np.zeros(count, dtype=bool)
                moved[rows[(_gather(placed, rows) != old_rows).any(axis=0)]] = True
            elif j < self.level_count - 1:  # the finest level placed whole is written whole
                moved = (placed != old).any(axis=0)
            if not coarse_correction:
                self._stale[j] = contact if update else contact[:0]
            lv.solution = placed
        finest = self._levels[-1].solution
        if settling is not None:
            self._settling = settling
        changed = None if rows is None else moved.nonzero()[0]
        if changed is None or changed.size > SPARSE_FRACTION * moved.size:
            for axis in range(3):  # a row at a time: a transposed copy of the whole is 4 x slower
                self._positions[:, axis] = finest[axis] if self._rank is None else finest[axis].take(self._rank)
        else:
            self._positions[changed if self._order is None else self._order[changed]] = _gather(finest, changed).T

    def _rows(self, level: int, again: np.ndarray, moved: np.ndarray) -> np.ndarray | None:
        """The vertices of ``level`` to place again: those marked ``again`` and those reading a
        coarser vertex that ``moved``; None for the whole level, when that is most of it."""
        spread = np.count_nonzero(moved)
        if spread > SPARSE_FRACTION * moved.size:  # a global response: most of this level too
            return None
        if spread:
            again = again | self.hierarchy.dependents(level, moved, self.settings.prolongation)
        rows = again.nonzero()[0]
        # Most of the level: one pass over it is cheaper than gathers.
        return None if rows.size > SPARSE_FRACTION * again.size else rows

    def _reach(self, d: np.ndarray, pushed: np.ndarray) -> np.ndarray:
        """Where each pushed vertex of the finest level (``pushed``, indices) must go, from
        rest: its goal less its rest position (3, n), zero elsewhere."""
        lv = self._levels[-1]
        reach = np.zeros_like(d)
        reach[:, pushed] = _gather(lv.solution, pushed) + _gather(d, pushed) - _gather(lv.rest, pushed)
        return reach

    def _relax(self, lv: _Level, in_contact: np.ndarray, c: _Coefficients) -> tuple[np.ndarray, np.ndarray]:
        """Elastic offsets out of contact shrink by the relaxation fraction; contact keeps them.
        What shrinks below float32 resolution at the object's size becomes exactly 0.
        Returns the vertices whose offsets changed, and by how much they shrank (3, m)."""
        if not c.relaxation.any():
            return np.zeros(0, dtype=np.int64), np.zeros((3, 0), dtype=lv.elastic.dtype)
        relaxing = (lv.elastic.any(axis=0) & ~in_contact).nonzero()[0]
        was = _gather(lv.elastic, relaxing)
        elastic = was * _at(c.kept, relaxing)
        elastic[np.abs(elastic) < self._negligible] = 0
        lv.elastic[:, relaxing] = elastic
        lv.offsets[:, relaxing] = _gather(lv.plastic, relaxing) + elastic
        return relaxing, was - elastic

    @staticmethod
    def _respond(
        lv: _Level,
        placed: np.ndarray,
        contact: np.ndarray,
        push: np.ndarray,
        length: np.ndarray,
        reach: np.ndarray,
        old: np.ndarray,
        c: _Coefficients,
        held_back: np.ndarray | None,
        finest: bool,
    ) -> np.ndarray | None:
        """Absorb this level's share of the displacement at its ``contact`` vertices, in
        place: ``push`` (3, m) their displacements, ``length`` their lengths, ``reach`` (3, m)
        the deepest goal of a contact below them, from rest, ``old`` their positions before
        this step.

        Returns the motion held back by damping so far (coarser levels and this one), or
        None while there is none.
        """
        free = _gather(placed, contact)
        if finest:
            # The finest level takes what is left, as a vector, at once: every contact vertex
            # ends at its goal point, out of the collider (invariant 1) and no further
            # (invariant 3), even where coarser levels overshot it, moved it sideways or hold
            # part of their share back (damping: the coarser levels give way over time, and
            # the contact holds meanwhile).
            share = old + push - free
            elastic = _gather(lv.elastic, contact) + share
            placed[:, contact] += share
            Surface._set_elastic(lv, contact, elastic, _at(c.yield_limit, contact))
            return held_back
        if held_back is not None:
            free += _gather(held_back, contact)
        unit = push / length
        along = dot(free - old, unit)  # moved by coarser levels
        absorption = _at(c.absorption, contact)
        # No further along the push than this step's push, nor than the deepest goal below
        # is from rest: a coarse vertex that pushes from one child after another (a ball
        # sliding, wandering) would otherwise sink a step's push further every step.
        deepest = dot(reach, unit)
        room = deepest - dot(free - _gather(lv.rest, contact), unit)
        left = np.maximum(np.minimum(length - along, room), 0.0)
        # The level's share is a fraction of how deep the colliders reach beneath it, from
        # rest (a state), less what it already holds along the push: not a fraction of each
        # step's push, whose sum over a press depends on how many steps it took (the
        # restriction keeps the longest child's push, and a sum of longest pushes grows with
        # the number of steps). So a press gives the same dent at any frame rate, and a
        # press held or sliding (every step pushes again) cannot grow a level's share, in
        # or out (a bulge), beyond its fraction.
        wanted = absorption * deepest - dot(_gather(lv.offsets, contact), unit)
        share = unit * np.where(absorption >= 0, np.clip(wanted, 0.0, left), np.minimum(wanted, 0.0))
        damping = _at(c.damping, contact)
        delta = share * damping
        if (damping < 1).any():
            # What damping holds back now is let through over the response time (``_drain``);
            # finer levels see it as done, so they do not take it themselves.
            if held_back is None:
                held_back = np.zeros_like(placed)
            held_back[:, contact] += share - delta
            lv.pending[:, contact] += share - delta
        placed[:, contact] += delta
        Surface._set_elastic(lv, contact, _gather(lv.elastic, contact) + delta, _at(c.yield_limit, contact))
        return held_back

    @staticmethod
    def _set_elastic(lv: _Level, index: np.ndarray, elastic: np.ndarray, limit: np.ndarray) -> None:
        """Set the elastic offsets of vertices ``index`` to ``elastic`` (3, m), yielding: the
        part beyond the limit becomes permanent (plastic)."""
        size = norm(elastic)
        over = size > limit
        if over.any():
            excess = elastic[:, over] * (1.0 - limit[over] / size[over])
            elastic[:, over] -= excess
            lv.plastic[:, index[over]] += excess
        lv.elastic[:, index] = elastic
        lv.offsets[:, index] = _gather(lv.plastic, index) + elastic

    def _drain(self, lv: _Level, c: _Coefficients) -> np.ndarray:
        """Let through this step the damping fraction of what the level's damping held back
        in earlier steps: a level gives way over its response time, in seconds, at any frame
        rate. What is left below float32 resolution is let through whole. Returns the
        vertices whose offsets changed."""
        waiting = lv.pending.any(axis=0).nonzero()[0]
        if waiting.size == 0:
            return waiting
        owed = _gather(lv.pending, waiting)
        left = owed * (1 - _at(c.damping, waiting))
        left[np.abs(left) < self._negligible] = 0
        lv.pending[:, waiting] = left
        Surface._set_elastic(lv, waiting, _gather(lv.elastic, waiting) + owed - left, _at(c.yield_limit, waiting))
        return waiting

    def _correcting(self) -> list[_Coefficients]:
        """Coefficients of a correction: the finest level takes all at once, nothing relaxes
        (the yield limits stay)."""
        zero, one = np.zeros((), dtype=DTYPE), np.ones((), dtype=DTYPE)
        return [_Coefficients(zero, one, zero, c.yield_limit, one) for c in self._coefficients or self._per_step(1.0)]

    def _per_step(self, dt: float) -> list[_Coefficients]:
        """Per-level, per-step coefficients for step length ``dt``, cached while unchanged."""
        s = self.settings
        key = (dt, *tuple(np.asarray(getattr(s, n), dtype=np.float64).tobytes() for n in PROPERTIES))
        # Maps by identity: reading two 263k maps every step would cost more than using them.
        # A map is changed by assigning a new array (documented on LevelSettings.maps).
        key += tuple((n, id(m)) for n, m in sorted(s.maps.items()))
        if key == self._cache_key:
            return self._coefficients
        coefficients = []
        for j in range(self.level_count):
            weight = {n: self.hierarchy.inject(j, np.asarray(m, dtype=np.float64)) for n, m in s.maps.items()}
            yield_weight = weight.get("yield_limit", np.float64(1.0))
            values = (
                s.absorption[j] * weight.get("absorption", np.float64(1.0)),
                fraction_per_step(s.response_time[j], dt, weight.get("response_time", 1.0)),
                fraction_per_step(s.time_to_rest[j], dt, weight.get("time_to_rest", 1.0)),
                # A weight of 0 on a level that never yields is 0 (plastic), not inf * 0 (NaN).
                np.where(yield_weight > 0, s.yield_limit[j], 0.0) * yield_weight,
            )
            # In the working precision, so per-vertex maps do not promote every product.
            absorption, damping, relaxation, yield_limit = (np.asarray(v, dtype=DTYPE) for v in values)
            coefficients.append(_Coefficients(absorption, damping, relaxation, yield_limit, 1 - relaxation))
        self._cache_key, self._coefficients = key, coefficients
        return coefficients


#: ``Surface._resting_ways``: the ways out of the colliders, as int8 (the box holding them
#: rounded up, so it never comes out smaller), and the value of a vertex where none rests.
AWAY_SCALE = 127
NOT_RESTING = -128
#: A resting vertex is pressed by its collider where its rest lies further behind the face
#: it rests on than this many ``Surface._negligible`` (1e-7 of the mesh's size): 1e-4.
PRESSED = 1000
#: A motion takes a resting vertex into its collider where its part against the way out
#: passes this share of its length.
AWAY_SLACK = 0.05

#: ``Surface.relaxed_alone``: a vertex's relaxing moves it alone where the coarser levels under
#: it moved it no further than this share of that (a coarse vertex still relaxing a bulge
#: far off, say); a surface springing back moves with its coarse levels.
ALONE = 0.5

#: A level is placed again row by row when fewer than this fraction of its vertices need it,
#: else whole (the same result: gathers cost more than a pass over most of a level).
SPARSE_FRACTION = 0.5

#: Vertices a chunk when frames are built and applied: small enough that a chunk's frames
#: and offsets stay in a core's L2 cache (about 1 MB here), large enough to amortise numpy.
CHUNK = 16384


def _place_in_frames(frames: FrameBasis, parent: np.ndarray, reference: np.ndarray, detail: np.ndarray) -> np.ndarray:
    """``parent + F reference``, into a new array (``parent`` stays as it was, since a frame
    basis may still read it), each detail turned only as far as its frame can be trusted
    (``trust_turns``; ``detail``: the details at rest). A vertex without a rest offset sits
    on its parent surface and needs no frame (most of a flat region); the others are placed
    a cache-sized chunk at a time."""
    framed = reference.any(axis=0).nonzero()[0]
    if framed.size <= SPARSE_FRACTION * reference.shape[1]:
        placed = parent.copy()
        if framed.size:
            base = _gather(parent, framed)
            rows = to_object(frames(framed), _gather(reference, framed), base=base)
            trust_turns(rows, base, _gather(detail, framed))
            placed[:, framed] = rows
        return placed
    placed = np.empty_like(parent)
    for start in range(0, reference.shape[1], CHUNK):
        chunk = slice(start, start + CHUNK)
        to_object(frames(chunk), reference[:, chunk], out=placed[:, chunk], base=parent[:, chunk])
        trust_turns(placed[:, chunk], parent[:, chunk], detail[:, chunk])
    return placed


def _into(motion: np.ndarray, box: np.ndarray, room: np.ndarray | float = 0.0) -> np.ndarray:
    """Whether ``motion`` (3, m) can take a vertex into a collider, given the box (6, m) of
    its resting descendants' ways out (``Surface._resting_ways``): the most the motion
    goes against any way in the box (exact where they share one way) passes the ``room``
    (m,) between the vertex and its face by ``AWAY_SLACK`` of its length (a vertex a motion
    takes to its face, say back to its rest on it, is not taken in)."""
    high, low = box[:3] / AWAY_SCALE, -box[3:] / AWAY_SCALE
    against = np.maximum(-motion * high, -motion * low).sum(axis=0)
    return against > room + AWAY_SLACK * norm(motion)


def _alone(finest: np.ndarray, relaxed: np.ndarray, was: np.ndarray, shrunk: np.ndarray) -> np.ndarray:
    """Of the finest level's vertices ``relaxed`` (indices), placed at ``was`` (3, m) before the
    step, whose offsets shrank by ``shrunk`` (3, m), those their own relaxing moved at least
    ``1 / ALONE`` times as far as the coarser levels under them did (now at ``finest``)."""
    under = _gather(finest, relaxed) - was + shrunk  # the motion less the vertex's own
    return relaxed[dot(under, under) <= ALONE**2 * dot(shrunk, shrunk)]


def _contact(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vertices with a displacement (3, n) longer than TINY, and its lengths there."""
    moving = d.any(axis=0).nonzero()[0]
    length = norm(_gather(d, moving))
    keep = length > TINY
    return moving[keep], length[keep]


def _gather(vectors: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Columns ``index`` of a (3, n) array: ``take``, several times faster than vectors[:, index]."""
    return vectors.take(index, axis=1)


def _at(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Per-vertex values at ``index`` (m,), whether a level's value is a scalar or a map."""
    values = np.asarray(values)
    return values[index] if values.ndim else np.full(index.shape, values)
