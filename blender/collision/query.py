"""Displacement vectors: for each vertex of a mesh inside a collider, the vector that takes it
out (Harrison 1994, section 4.2.2), in the mesh's object space.

The rules (which side a collider presses from, which way and how far a vertex is pushed,
when it touches) are ``core.contact``'s, tested there without Blender. This module brings
them Blender's colliders: which objects can collide, a broad phase in the mesh's object
space, each collider's motion from its matrices, each vertex's own motion, and the rays,
cast in Blender's own C++ (``raycast.RayCaster``).

A vertex resting on a still rigid collider needs no ray: where the last ray found it on a
face, the plane of that face answers until the vertex moves away (most of a held press).

The rules work in the mesh's own rigid frame (its object's rotation and location), not the
world's: what they see and remember (each collider's motion, each vertex's, press axes,
sides, where vertices rest) is relative to the mesh. A mesh and its collider carried together
by a moving, turning parent (a hand on a walking character's belly) press as if both held still.
A posed mesh's frame also follows what its rig does to it as a whole (the rigid motion that
best carries its unposed shape onto the posed one): a collider parented to the bone that
carries the mesh is still in it.
"""

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import bpy
import numpy as np

from ...core.contact import (
    COLLIDER,
    CONTAINER,
    HOLD_TOLERANCE,
    TOUCH_TOLERANCE,
    Colliders,
    Contacts,
    Resting,
    turned,
)
from ...core.frame import unchanged
from ...core.vectors import nonzero_rows, unit_rows
from .colliders import Collider, carried_box, usable_colliders
from .patch import Patch
from .raycast import RayCaster

if TYPE_CHECKING:
    from ...core import VertexNormals


#: Blender keeps object matrices in single precision: an object carried together with the
#: mesh by a moving parent is still against it only to about 1e-7 of the matrices' entries
#: (their scale and distance from the origin); this much is taken for still.
ROUNDING = 1e-6
#: A posed mesh's motion as a whole (``_posing``) is measured on this many of its vertices.
POSING_SAMPLE = 4096
#: A step that moved a vertex further than this share of a closed collider's thinnest extent
#: can have taken it from one side of the collider's centre, out of it, to the other, out of
#: it (a ball: at least 1 / (2 sqrt 2) of its diameter): the second query then looks that far
#: round it (``core.contact._crossed_closed``).
THROUGH = 0.35


@dataclass
class Contact:
    """What a query found, in the deformable's object space."""

    displacement: np.ndarray  # (n, 3)
    touching: np.ndarray  # (n,) bool: outside, resting on a collider
    messages: list[str] = field(default_factory=list)
    queried: int = 0  # vertices that passed the broad phase and were cast for
    #: The object whose push each vertex takes (an index into ``sources``), -1: none.
    source: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int16))
    sources: list[str] = field(default_factory=list)  # the colliders' names, in the query's order
    #: (n, 3): the unit way the collider each touching vertex rests on would push it out, 0
    #: elsewhere (``core.frame.Found``).
    away: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.float32))
    #: (n,): how far behind each touching vertex, along ``away``, its face lies (object space),
    #: and how much nearer it may come (less the standoff)
    gap: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    room: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))


@dataclass
class _Broad:
    """What a frame's first query's broad phase was given, and the vertices within ``pad``
    (object space) of it: ``wide``, (n,) bool."""

    positions: np.ndarray
    colliders: list[Collider]
    standoff: float
    inverse: np.ndarray
    pad: float
    wide: np.ndarray


class CollisionQuery:
    """Per-mesh query state: the contact memory (``core.contact.Contacts``), the colliders'
    last matrices (their motion), the vertices' last world positions (theirs), and where
    vertices rest. One per deformable mesh.

    ``normals``, when given, makes the mesh's vertex normals (``core.VertexNormals`` of its
    topology): a query given no reference normals then uses those of the positions it is
    asked about.
    """

    #: Made afresh by every frame's first query before any query reads it: a kept state of
    #: the simulation leaves it out (``core.checkpoints``).
    TRANSIENT = ("_broad",)

    def __init__(
        self, scene: bpy.types.Scene, owner: str = "", normals: "VertexNormals | None" = None, size: float | None = None
    ):
        self.caster = RayCaster(scene, owner)
        self.size = size  # the mesh's bounding radius at rest, object space (None: not known)
        self._vertex_normals = normals
        self.contacts = Contacts(0)
        self.near = np.zeros(0, dtype=bool)  # the broad phase's answer at the last full query
        # collider name -> its last world matrix, and that matrix in the mesh's rigid frame
        self._previous: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        # The positions the last query was given (kept, not copied: a caller passes a new
        # array each time) and the object's matrix then, in the world and in its rigid frame
        # (``_seen``): each vertex's own motion.
        self._last: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        # A posed mesh's rigid motion as a whole at the frame's first query (``_posing``),
        # which its frame follows through the frame's queries (None: none, or not posed).
        self._posing: np.ndarray | None = None
        self._resting: Resting | None = None
        self._broad: _Broad | None = None  # the last whole query's broad phase
        # How far the last step moved a vertex it did not push (told by a frame's second query):
        # the next frame's broad phase keeps the vertices twice that near (``_broad_phase``).
        self._step_moved = 0.0
        #: A later query of a frame reads the colliders again, not where its first query found
        #: them: set for a mesh whose colliders respond too (``blender.together``), whose
        #: surfaces move between a frame's queries.
        self.fresh_colliders = False
        self._keeping = True  # what it finds is remembered (not inside ``unchanged``)
        self._pushed_behind: dict[str, float] = {}  # by open collider: its longest push at the last whole query

    @contextmanager
    def unchanged(self) -> Iterator[None]:
        """Queries of shown positions (``core.frame.Find``'s ``shown``): what the query
        remembers is left as it was, the contact memory (``core.frame.unchanged``), the
        positions the next query measures each vertex's motion from, how far the last step
        moved (the next broad phase's padding) and where vertices rest."""
        saved = self._last, self._step_moved, self._keeping
        self._keeping = False
        try:
            with unchanged(self.contacts):
                yield
        finally:
            self._last, self._step_moved, self._keeping = saved

    def displacements(
        self,
        deformable: bpy.types.Object,
        positions: np.ndarray,
        normals: np.ndarray | Callable[[np.ndarray], np.ndarray] | None,
        candidates,
        friction: float = 0.0,
        standoff: float = 0.0,
        depsgraph: bpy.types.Depsgraph | None = None,
        among: np.ndarray | None = None,
        offsets: Callable[[np.ndarray], np.ndarray] | None = None,
        within: float = np.inf,
        kinds=None,
        unposed: np.ndarray | None = None,
    ) -> Contact:
        """The vectors for ``positions`` (n, 3), object space. ``normals``: the surface's
        reference normals, object space, which the pushes follow (its rest normals, carried
        by any deformation): an (n, 3) array, a function giving those (m, 3) of the vertices
        (m,) it is given (asked only for vertices near a collider), or None for the vertex
        normals of ``positions``.

        A frame asks twice: first every vertex (``among`` None: the colliders' motion since
        the last frame is read, and vertices and colliders far from each other forget their
        contact), then, after the step, only the vertices it moved (``among``, indices), with
        the colliders holding still. ``depsgraph``: the evaluated one the colliders are read
        from (the add-on passes its frame-change handler's); by default the context's.
        ``offsets``: a function giving how far the response has moved the vertices (m,) it
        is given (object space, (m, 3)), which bounds friction's drag and a wide collider's
        hold (``Contacts.push``); asked only for those; None for no bound.
        ``within``: how far (object space) any vertex of ``among`` moved since the first
        query; the broad phase then tests only those the first query's padding held.
        ``kinds``: each candidate's kind (``core.contact``: collider, interior, container),
        all colliders when None. ``unposed``: for a posed mesh, the positions (n, 3) its
        deformation carried to ``positions`` (the solver's, in rest space): the frame follows
        the rigid motion between them, found at the frame's first query (``_posing``)."""
        count = positions.shape[0]
        if self.contacts.held.shape != (count,):
            self.contacts, self._resting, self._last, self._broad = Contacts(count), None, None, None
            self.near = np.zeros(count, dtype=bool)
        if depsgraph is None:  # a script's call: no handler hands one down
            depsgraph = bpy.context.evaluated_depsgraph_get()
        whole = among is None
        if whole or self._broad is None or self.fresh_colliders:
            colliders, messages = usable_colliders(deformable, list(candidates), depsgraph, kinds)
        else:  # the frame's second query: the colliders are where its first found them
            colliders, messages = self._broad.colliders, []
        contact = Contact(np.zeros((count, 3), dtype=np.float32), np.zeros(count, dtype=bool), messages)
        contact.source = np.full(count, -1, dtype=np.int16)
        contact.away = np.zeros((count, 3), dtype=np.float32)
        contact.gap = np.zeros(count, dtype=np.float32)
        contact.room = np.zeros(count, dtype=np.float32)
        contact.sources = [c.obj.name for c in colliders]
        matrix = np.array(deformable.matrix_world, dtype=np.float64)
        inverse = np.linalg.inv(matrix)
        frame = _rigid_frame(matrix)  # the rules' space: see the module's docstring
        if whole:
            self._posing = None if unposed is None else _posing(unposed, positions, frame[:3, :3].T @ matrix[:3, :3])
        if self._posing is not None:
            frame = frame @ self._posing
        into = _from_frame(frame)
        seen = _seen(into @ matrix, None if self._last is None else self._last[2], matrix)
        placed = [self._in_frame(c, frame, into) for c in colliders]  # each collider's matrix in the frame
        if whole:
            behind = self._behind_open(positions, colliders, matrix, inverse)
            near_each = self._broad_phase(positions, colliders, standoff, inverse, behind)
        else:
            # The second query of a frame asks about the vertices the step moved; those that
            # moved less than the first query's padding can be near only if they were in it.
            among = np.asarray(among)
            if self._broad is not None and within <= self._broad.pad and not self.fresh_colliders:
                among = among[self._broad.wide[among]]
            if np.isfinite(within):
                self._step_moved = within
            # Behind an open collider as far as its size: a step can move a vertex under a
            # plane from past its edge, sideways (a ball centred over a plane's edge had a
            # vertex the response moved a fraction of a millimetre past it, then back under
            # it, 8 cm deep), as well as across its faces. Past a closed one as far as the
            # step moved, where that is far enough to go right through it (``_through``).
            behind = [
                (within if _through(within, c, inverse) else 0.0) if c.closed else _local(c.radius, inverse)
                for c in colliders
            ]
            near_each = [
                _near(positions, c, standoff, inverse, among, pad) for c, pad in zip(colliders, behind, strict=True)
            ]
        near = np.zeros(count, dtype=bool)
        for index in near_each:
            near[index] = True
        moves = self._moves(colliders, placed) if whole else [np.eye(4)] * len(colliders)
        for c, move in zip(colliders, moves, strict=True):
            if not np.array_equal(move[:3, :3], np.eye(3)):
                self.contacts.turn(c.obj.name, _rigid_frame(move)[:3, :3])
        last, self._last = self._last, (positions, matrix, seen)
        if whole:
            self.near = near
            far = {c.obj.name for c, index in zip(colliders, near_each, strict=True) if not index.size}
            self.contacts.release(set(self.contacts.sides) - {c.obj.name for c in colliders} | far)
            gone = (~near & self.contacts.held).nonzero()[0]
            self.contacts.forget(gone)
            if self._resting is not None:  # nor where they rested: asked again, they cast a ray
                self._resting.forget(gone)
        if not near.any():
            if whole:
                self._resting = None
            return contact
        queried = near.nonzero()[0]
        points = positions[queried] @ seen[:3, :3].T + seen[:3, 3]
        approach = _travelled(points, queried, last)
        if normals is None:
            local_normals = self._normals_at(positions, queried)
        else:
            local_normals = normals(queried) if callable(normals) else normals[queried]
        to_object = np.linalg.inv(seen)
        normal_world = unit_rows(local_normals @ to_object[:3, :3])  # normals: the inverse transpose
        state = (
            [(c.obj.name, now.tobytes()) for c, now in zip(colliders, placed, strict=True)],
            seen.tobytes(),
            friction,
            standoff,
        )
        rules = self._colliders(colliders, depsgraph, seen, frame, moves)
        tolerance = TOUCH_TOLERANCE * float(rules.scales().min())
        resting = self._resting
        if resting is None or resting.origin.shape[0] != count:
            resting = self._resting = Resting(state, count)
        elif resting.state != state:  # something moved: no vertex near it is known to rest
            moved = resting.moved(state)
            if moved is None or len(moved) == len(colliders):  # (all moved: none rests, at once)
                resting.restart(state)
            else:
                resting.release(state, moved, near_each)
        if whole:  # each collider's press axis, from every vertex near it
            self.contacts.aim(rules, points, normal_world)
        # How far the response moved them: friction's drag is bounded by it, and a wide
        # collider sends a vertex it holds back toward its rest (``Contacts.push``).
        moved_by = None
        if offsets is not None and (friction > 0 or any(c.obj.name in self.contacts.wide for c in colliders)):
            moved_by = offsets(queried) @ seen[:3, :3].T
        if all(c.rigid for c in colliders):
            still = resting.still(queried, points, standoff, tolerance)
            contact.touching[queried[still]] = True
            rests = queried[still]
            # (A face's normal, carried as normals are: the transpose of the matrix to world.)
            if not self.fresh_colliders:
                ways = _to_object(resting.away[rests], resting.gap[rests], resting.room[rests], seen)
                contact.away[rests], contact.gap[rests], contact.room[rests] = ways
            keep = ~still
            queried, points, normal_world, approach = queried[keep], points[keep], normal_world[keep], approach[keep]
            moved_by = None if moved_by is None else moved_by[keep]
        reach = self._reach(colliders, near_each, queried, count)
        contact.queried = queried.size
        if queried.size:
            motion = np.stack([points @ move[:3, :3].T + move[:3, 3] - points for move in moves])
            found = self.contacts.push(
                queried,
                points,
                normal_world,
                approach,
                motion,
                rules,
                friction,
                standoff,
                moved_by,
                reach,
            )
            # Only the pushed: carried to object space and back, a vertex not pushed would get
            # a rounding-size vector (a turned object), which reads as a push: held where it is,
            # and not asked again after the step (a sheet relaxed into a withdrawing cone).
            pushed = nonzero_rows(found.push).nonzero()[0]
            local = found.push[pushed] @ to_object[:3, :3].T
            contact.displacement[queried[pushed]] = local
            if found.source is not None:
                contact.source[queried] = found.source
            contact.touching[queried] = found.touching
            if not self.fresh_colliders:  # (soft partners give way too: held both ways, as before)
                rests = queried[found.touching]
                ways = _to_object(found.away, found.gap, found.room, seen)
                contact.away[rests], contact.gap[rests], contact.room[rests] = ways
            if self._keeping:
                resting.record(queried, points, found)
                if whole:
                    self._record_pushed_behind(colliders, found)
        if whole:
            for name in sorted(self.contacts.enclosing & {c.obj.name for c in colliders}):
                contact.messages.append(
                    f"'{name}' encloses the whole mesh: it pushes nothing"
                    " (to keep the mesh inside it, make it the Container instead of a collider)"
                )
        return contact

    def near_within(self, among: np.ndarray, within: float) -> np.ndarray:
        """Those of vertices ``among`` (indices) that were, at the last whole query, within
        ``within`` of its broad phase: those a step that moved none of them further can have
        brought near a collider. Like a second query, it pads the next frame's broad phase by
        twice ``within``."""
        self._step_moved = within
        broad = self._broad
        if self.fresh_colliders:  # the colliders moved since: the query itself tests them all
            return among
        if broad is None:
            return among[self.near[among]]
        if within <= broad.pad:
            among = among[broad.wide[among]]
        near = np.zeros(broad.positions.shape[0], dtype=bool)
        for collider in broad.colliders:
            near[_near(broad.positions, collider, broad.standoff, broad.inverse, among, within)] = True
        return among[near[among]]

    def _broad_phase(self, positions, colliders: list[Collider], standoff: float, inverse, behind) -> list[np.ndarray]:
        """The whole query's broad phase: the vertices near each collider (indices), or within
        ``behind[i]`` of it (object space: an open collider's reach behind its faces). It
        also keeps those within twice the last step's furthest move further (``_Broad.wide``):
        a step that moves no further can bring only those near, so its second query tests
        only those."""
        pad = 2.0 * self._step_moved
        wide = [
            _near(positions, c, standoff, inverse, pad=pad + extra) for c, extra in zip(colliders, behind, strict=True)
        ]
        mask = np.zeros(positions.shape[0], dtype=bool)
        for index in wide:
            mask[index] = True
        self._broad = _Broad(positions, colliders, standoff, inverse, pad, mask)
        return [
            _near(positions, c, standoff, inverse, index, extra)
            for c, index, extra in zip(colliders, wide, behind, strict=True)
        ]

    def _behind_open(self, positions, colliders: list[Collider], matrix, inverse) -> list[float]:
        """How far behind each open collider's faces (object space) a vertex may be that was
        in front of them at the last query: as far as the vertices and the collider moved
        since (a ball dropping 5 cm a frame through a plane used as floor is 2 cm behind it
        before any ray is cast; the plane's own box is flat). The first query, with nothing
        to go by, looks as far as the collider's size. 0 for a closed collider, whose box
        holds its inside."""
        if all(c.closed for c in colliders):
            return [0.0] * len(colliders)
        last = self._last
        if last is None or last[0].shape != positions.shape:
            return [0.0 if c.closed else _local(c.radius, inverse) for c in colliders]
        before, was, _ = last
        if positions is before or not positions.size:
            low, high = (positions.min(axis=0), positions.max(axis=0)) if positions.size else (np.zeros(3),) * 2
            furthest = _box_moved(low, high, matrix - was)
        elif np.array_equal(matrix, was):  # the object held still: its vertices' own moves, scaled
            moved = positions - before
            furthest = float(np.sqrt(np.einsum("ij,ij->i", moved, moved).max())) * float(
                np.linalg.norm(matrix[:3, :3], 2)
            )
        else:
            moved = positions @ matrix[:3, :3].T - before @ was[:3, :3].T
            moved += matrix[:3, 3] - was[:3, 3]
            furthest = float(np.sqrt(np.einsum("ij,ij->i", moved, moved).max()))
        behind = []
        for c in colliders:
            if c.closed:
                behind.append(0.0)
                continue
            now = np.array(c.obj.matrix_world, dtype=np.float64)
            back = self._previous.get(c.obj.name, (now,))[0] @ np.linalg.inv(now)  # now -> where it was
            # And as deep as it pushed a vertex at the last query: a mesh made across a plane,
            # neither moving, was found behind it by the first query (which looks as far as
            # the plane's size) and then never again, left 20 cm under it.
            deepest = self._pushed_behind.get(c.obj.name, 0.0)
            behind.append(_local(furthest + _box_moved(c.low, c.high, np.eye(4) - back) + deepest, inverse))
        return behind

    def _record_pushed_behind(self, colliders: list[Collider], found) -> None:
        """How far each open collider pushed a vertex at this whole query (world space),
        for the next one's broad phase (``_behind_open``)."""
        lengths = np.sqrt(np.einsum("ij,ij->i", found.push, found.push))
        for k, c in enumerate(colliders):
            if not c.closed:
                mine = lengths[found.source == k] if found.source is not None else lengths
                self._pushed_behind[c.obj.name] = float(mine.max(initial=0.0))

    def _colliders(
        self, colliders: list[Collider], depsgraph, matrix: np.ndarray, frame: np.ndarray, moves: list[np.ndarray]
    ) -> Colliders:
        """The colliders as the contact rules see them, in the mesh's rigid ``frame`` (a 4 x 4
        world matrix), with Blender's ray caster (``matrix``: the mesh's matrix in that frame,
        which scales its size; ``moves``: each one's motion in it since the last query)."""
        objects = [c.obj for c in colliders]
        patches = [self._patch(c) for c in colliders]
        turn, at = frame[:3, :3], frame[:3, 3]
        moved = not np.array_equal(frame, np.eye(4))

        def cast(origins: np.ndarray, rays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if not moved:
                return self.caster.cast(objects, origins, rays, depsgraph, patches)
            world = origins @ turn.T + at
            signed, normals = self.caster.cast(objects, world, rays @ turn.T, depsgraph, patches)
            return signed, (normals @ turn).astype(normals.dtype)  # the world's normals in the frame

        into = _from_frame(frame)
        turned_any = any(not np.array_equal(move[:3, :3], np.eye(3)) for move in moves)
        turns = np.array([_rigid_frame(move)[:3, :3] for move in moves]) if turned_any else None
        flat = None if all(c.flat is None for c in colliders) else _flat_normals(colliders) @ turn
        return Colliders(
            [c.obj.name for c in colliders],
            np.array([into[:3, :3] @ c.centre + into[:3, 3] for c in colliders]),
            np.array([c.radius for c in colliders]),
            turned(cast, np.array([c.inverted for c in colliders])),
            np.array([c.kind for c in colliders], dtype=np.int8),
            np.array([not c.closed for c in colliders]),
            None if self.size is None else self.size * float(np.linalg.norm(matrix[:3, :3], 2)),
            flat,
            turns,
        )

    def _reach(self, colliders: list[Collider], near_each: list[np.ndarray], queried, count: int) -> np.ndarray | None:
        """Which of the vertices ``queried`` each collider can reach, (k, m) bool: those its
        broad phase found near it (``near_each``), for a closed collider cast whole; an open
        one (whose inside reaches behind its faces) or one cast in part, every vertex. None
        where every collider reaches every vertex (one collider, say)."""
        if len(colliders) < 2:  # what one reaches is all that was queried
            return None
        reach = np.ones((len(colliders), queried.size), dtype=bool)
        near = np.zeros(count, dtype=bool)
        for k, (collider, index) in enumerate(zip(colliders, near_each, strict=True)):
            if collider.closed and self._patch(collider) is None:
                near[:] = False
                near[index] = True
                reach[k] = near[queried]
        return None if reach.all() else reach

    def _patch(self, collider: Collider) -> Patch | None:
        """How to cast against a closed deforming collider of a mesh whose colliders move
        between a frame's queries (a soft partner): in part, as Blender would build its whole
        search tree again at every cast. None: whole."""
        low, high = collider.local_low, collider.local_high
        if not self.fresh_colliders or collider.rigid or not collider.closed or collider.kind != COLLIDER:
            return None
        return None if low is None or high is None else Patch.around(low, high, collider.inside_out)

    def _normals_at(self, positions: np.ndarray, index: np.ndarray) -> np.ndarray:
        """The vertex normals of vertices ``index`` at ``positions`` (a script's query)."""
        if self._vertex_normals is None:
            raise ValueError("the query needs normals: pass them, or build it with the mesh's VertexNormals")
        return self._vertex_normals(positions, index)

    def _moves(self, colliders: list[Collider], placed: list[np.ndarray]) -> list[np.ndarray]:
        """Each collider's rigid motion since the last query (a 4 x 4 matrix), in the mesh's
        rigid frame (its motion against the mesh's; ``placed``: each collider's matrix in that
        frame now), which every whole query records; a deforming collider's own shape change
        is not counted."""
        moves = []
        for collider, now in zip(colliders, placed, strict=True):
            before = self._previous.get(collider.obj.name, (None, now))[1]
            self._previous[collider.obj.name] = (np.array(collider.obj.matrix_world, dtype=np.float64), now)
            # Still: exactly no motion. A turned matrix times its own inverse is the identity
            # only to rounding, and a 1e-17 motion reads as one: a plane made through a mesh
            # was judged met from behind by the few vertices behind it (pushed through).
            moves.append(np.eye(4) if np.array_equal(now, before) else now @ np.linalg.inv(before))
        return moves

    def _in_frame(self, collider: Collider, frame: np.ndarray, into: np.ndarray) -> np.ndarray:
        """``collider``'s matrix in the mesh's rigid ``frame`` (``into``: the world into it): its
        last where unchanged to rounding."""
        world = np.array(collider.obj.matrix_world, dtype=np.float64)
        return _seen(into @ world, self._previous.get(collider.obj.name, (None, None))[1], world, frame)


def _travelled(points: np.ndarray, index: np.ndarray, last: tuple | None) -> np.ndarray:
    """How far vertices ``index``, now at ``points`` in the mesh's rigid frame, moved in that
    frame since the last query (``last``: the positions it was given and the object's
    matrices then); zero the first time."""
    if last is None:
        return np.zeros_like(points)
    before, _, matrix = last
    return points - (before[index] @ matrix[:3, :3].T + matrix[:3, 3])


def _posing(unposed: np.ndarray, posed: np.ndarray, scale: np.ndarray) -> np.ndarray | None:
    """The rigid motion (4 x 4, in the object's space scaled by ``scale``, the part of its
    matrix its rigid frame leaves) that best carries points ``unposed`` (n, 3) onto ``posed``
    (least squares, Kabsch's: a mesh bound to one bone, exactly its motion; a character, its
    body's as a whole), or None where that is the identity to rounding (a rig at rest).
    Measured on at most ``POSING_SAMPLE`` vertices, the same ones each frame."""
    step = max(1, unposed.shape[0] // POSING_SAMPLE)
    a, b = unposed[::step] @ scale.T, posed[::step] @ scale.T
    middle_a, middle_b = a.mean(axis=0), b.mean(axis=0)
    u, _, vt = np.linalg.svd((a - middle_a).T @ (b - middle_b))
    if np.linalg.det(u @ vt) < 0:
        u[:, -1] = -u[:, -1]
    motion = np.eye(4)
    motion[:3, :3] = (u @ vt).T
    motion[:3, 3] = middle_b - motion[:3, :3] @ middle_a
    size = 1.0 + float(np.abs(b).max(initial=0.0))
    return None if np.allclose(motion, np.eye(4), rtol=0.0, atol=ROUNDING * size) else motion


def _rigid_frame(matrix: np.ndarray) -> np.ndarray:
    """The rigid part of an object's world ``matrix`` (4 x 4): its location, and the rotation
    of its polar decomposition (a proper one: a mirrored object keeps its mirror in what is
    left). Exactly the identity's rotation where that is within rounding of it."""
    u, _, vt = np.linalg.svd(matrix[:3, :3])
    if np.linalg.det(u @ vt) < 0:
        u[:, -1] = -u[:, -1]
    frame = np.eye(4)
    rotation = u @ vt
    if not np.allclose(rotation, frame[:3, :3], rtol=0.0, atol=1e-12):
        frame[:3, :3] = rotation
    frame[:3, 3] = matrix[:3, 3]
    return frame


def _from_frame(frame: np.ndarray) -> np.ndarray:
    """The inverse of a rigid ``frame``: the world into it."""
    into = np.eye(4)
    into[:3, :3] = frame[:3, :3].T
    into[:3, 3] = -frame[:3, :3].T @ frame[:3, 3]
    return into


def _seen(matrix: np.ndarray, before: np.ndarray | None, *worlds: np.ndarray) -> np.ndarray:
    """A matrix in the mesh's rigid frame, ``before`` (its last value) where it is that within
    the rounding of Blender's single-precision matrices (``worlds``: those it was made from,
    whose distance from the origin that rounding grows with): carried together with the mesh,
    an object is exactly still in it (the rules read a rounding-size motion as one: friction
    tilted a push toward it, at full strength)."""
    if before is None:
        return matrix
    scale = 1.0 + max(float(np.abs(world).max()) for world in worlds)
    return before if np.allclose(matrix, before, rtol=0.0, atol=ROUNDING * scale) else matrix


def _near(
    positions: np.ndarray,
    collider: Collider,
    standoff: float,
    to_local: np.ndarray,
    among: np.ndarray | None = None,
    pad: float = 0.0,
) -> np.ndarray:
    """Broad phase, in the mesh's object space: the indices (sorted) of the vertices in the
    collider's bounding box and bounding sphere (grown by the standoff and the contact's hold
    tolerance), both carried into object space conservatively (the box's corners; the sphere
    by the largest stretch), and then by ``pad`` (object space): a vertex outside the padded
    region cannot reach the plain one by moving less than ``pad``. ``among``: the indices
    to test (all when None). A container is near every vertex: those far out of it are the
    ones it must bring back."""
    if collider.kind == CONTAINER:
        return np.arange(positions.shape[0]) if among is None else np.sort(np.asarray(among))
    margin = standoff + HOLD_TOLERANCE * collider.radius
    low, high = carried_box(collider.low - margin, collider.high + margin, to_local)
    low, high = low - pad, high + pad
    if among is None:
        # The axis that rejects most vertices first (judged on a sample of about a thousand),
        # then the others on what passed: most vertices cost one pair of comparisons.
        sample = positions[:: max(1, positions.shape[0] // 1024)]
        first, *others = np.argsort(((sample >= low) & (sample <= high)).sum(axis=0), kind="stable")
        column = positions[:, first]
        boxed = _in_box(positions, ((column >= low[first]) & (column <= high[first])).nonzero()[0], low, high, others)
    else:
        boxed = _in_box(positions, np.asarray(among), low, high, [0, 1, 2])
    centre = to_local[:3, :3] @ collider.centre + to_local[:3, 3]
    radius = (collider.radius + margin) * np.linalg.norm(to_local[:3, :3], 2) + pad
    offset = positions.take(boxed, axis=0).astype(np.float64)  # take: rows, several times faster
    offset -= centre
    boxed = boxed[np.einsum("ij,ij->i", offset, offset) <= radius**2]
    return boxed if pad > 0 else _near_own_box(positions, boxed, collider, margin, to_local)


def _near_own_box(positions, index, collider: Collider, margin: float, to_local: np.ndarray) -> np.ndarray:
    """Of vertices ``index``, those within ``margin`` (world) of the collider's own box, the
    box of its shape in its own space. The box above is the world's, larger as the collider
    and the mesh turn against the world: what is near (and so what the press axis is made
    from) must not depend on that. Measured as the box's own axes stretch: exact for a
    scaled and turned collider, more than the true distance for a sheared one (which may
    lose a vertex at the margin's edge). Such vertices lie within the world's box grown by
    ``margin``: this only drops vertices."""
    if collider.local_low is None or collider.local_high is None or collider.matrix is None or not index.size:
        return index
    into = np.linalg.solve(collider.matrix, np.linalg.inv(to_local))  # the mesh's space -> the collider's
    local = positions.take(index, axis=0).astype(np.float64) @ into[:3, :3].T + into[:3, 3]
    beyond = np.maximum(collider.local_low - local, 0.0) + np.maximum(local - collider.local_high, 0.0)
    gap = beyond @ collider.matrix[:3, :3].T
    return index[np.einsum("ij,ij->i", gap, gap) <= margin**2]


def _box_moved(low: np.ndarray, high: np.ndarray, change: np.ndarray) -> float:
    """How far a point of the box ``low`` .. ``high`` moves under ``change`` (a 4 x 4 matrix
    less another: the move of each point, affine): furthest at a corner."""
    corners = np.array(list(itertools.product(*np.stack([low, high], axis=1))))
    return float(np.linalg.norm(corners @ change[:3, :3].T + change[:3, 3], axis=1).max())


def _through(moved: float, collider: Collider, to_local: np.ndarray) -> bool:
    """Whether a move of ``moved`` (in the space ``to_local`` carries into) can take a vertex
    through a closed collider: further than ``THROUGH`` of its thinnest extent (its own box
    along its axes, as its matrix stretches them; else its world box)."""
    if not np.isfinite(moved):
        return False
    if collider.local_low is not None and collider.local_high is not None and collider.matrix is not None:
        extents = (collider.local_high - collider.local_low) * np.linalg.norm(collider.matrix[:3, :3], axis=0)
    else:
        extents = collider.high - collider.low
    smallest = float(np.linalg.svd(to_local[:3, :3], compute_uv=False).min())  # the least a world length shrinks
    return moved > THROUGH * float(extents.min()) * smallest


def _local(distance: float, to_local: np.ndarray) -> float:
    """A world distance as the longest it can be in the space ``to_local`` carries into."""
    return distance * float(np.linalg.norm(to_local[:3, :3], 2))


def _in_box(positions: np.ndarray, index: np.ndarray, low, high, axes) -> np.ndarray:
    """Those of vertices ``index`` within ``low`` .. ``high`` on each of ``axes``."""
    for axis in axes:
        values = positions[:, axis].take(index)
        index = index[(values >= low[axis]) & (values <= high[axis])]
    return index


def _to_object(away, gap, room, seen: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ways out (t, 3), gaps and rooms (t,) from world space (``seen``: the mesh's object to
    world) to its object space: a face's normal carried as normals are (the transpose of the
    matrix), a distance along it as the inverse matrix carries the normal's length."""
    local = away @ seen[:3, :3]
    length = np.maximum(np.linalg.norm(local, axis=1), 1e-30)
    return local / length[:, None], gap / length, room / length


def _flat_normals(colliders: list[Collider]) -> np.ndarray:
    """(k, 3) each flat open collider's unit normal, world space; nan rows for the others."""
    return np.array([np.full(3, np.nan) if c.flat is None else c.flat for c in colliders])
