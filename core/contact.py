"""Contact rules: which side a vertex is pressed from, which way and how far it is pushed out
of the colliders, when it touches one, and when it still rests on one without a ray.

Pure numpy: the rays are cast by a function the caller gives (Blender's Geometry Nodes in
the add-on, exact spheres and boxes in the tests), so every rule here is tested without
Blender. All vectors are world space, rows (m, 3) (any rigid frame will do: the add-on's is
the mesh's own, so that a mesh and a collider moving together are still to each other);
``k`` colliders, ``m`` vertices asked.

The rules that keep a contact from folding, popping through or running away:

- **Push along the collider's press axis.** Each collider presses along one axis: the mean
  of the surface's reference normals near it (the normals the surface has *without* the
  response: its rest normals, carried by any deformation), pointing in. A vertex is pushed
  along that axis, never along the dent's own normals, which crease at a dent's rim, nor
  along the collider's faces, which fan out around a ball and push a deep dent's walls
  sideways past their neighbours. On a sheet the axis is the sheet's normal, and the pushes
  keep it a height field over its rest shape: no face turns over. On a curved surface one
  axis keeps the pressed region a height field along it, where each vertex's own normal
  would not: normals converge under a deep press (they cross at a bump's centre of
  curvature) and a vertex whose normal lies across the press (the side of a brow) would be
  pushed sideways, ahead of a sliding collider, which plows it along. Only a vertex facing
  away from the axis (past 90 degrees, the far side of a thin part) turns to its own normal.
  Friction tilts the push toward the collider's motion along the surface. Squeezing the
  mesh with another collider, the axis turns at most 25 degrees a frame (``_squeezed``).
- **The side comes from the approach, once per collider.** When a collider first reaches
  the mesh, it presses from the side its centre was on before it moved this frame (relative
  to the surface, which may move too), judged against the vertices it has reached (found
  inside it by a ray either way along their push): a plate that came down fast presses
  down even if its centre is already past the sheet. One side per collider, not per vertex:
  a vertex a deep ball engulfs at its dent's wall has no approach of its own worth reading
  (the ball reaches it sideways), but it lies on the dent's side. An open collider (a plane
  as floor) has one way out only, behind its faces: the vertices it reached say which, its
  centre (the middle of a floor, metres away) says nothing.
- **The side is kept while the collider is near the mesh**, pressing or not: a ball
  withdrawing from a deep dent leaves its vertices behind it, and a vertex that relaxes back
  into it is pushed out the way the dent was, never through the far side.
- **Contact has hysteresis.** A new contact touches within ``TOUCH_TOLERANCE`` of a
  collider's size; a vertex already in contact stays touching within ``HOLD_TOLERANCE``, so
  a collider that moves along with the surface (tracking) does not lose it to rounding.
- **Out of every collider, or in the middle of the room between two.** Where a push ends is
  asked of every collider it may enter (``_out_of_the_others``); where the push out of that
  one undoes the first (longer, or back into it), the vertex stops in the middle of the room
  the two leave along the push, or, with none, of their overlap (``_no_room``). A rule that
  sends a vertex back toward its rest does not send it through another collider
  (``_clear_way``).
- **Not through in one step.** A vertex a step moved right through a still collider, in at
  one side and out at the other, goes back to where it went in (``_crossed_closed``); a
  push that would cross a collider's middle is taken a shorter way out where the collider's
  move explains no such depth: back the way the vertex came, or straight out from the
  collider's centre where the collider sweeps over the vertex without pressing it
  (``Contacts._not_through``).
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial

import numpy as np

from .constants import TINY
from .vectors import unit_rows

#: Vertices within this fraction of a collider's size outside it touch it (a new contact).
TOUCH_TOLERANCE = 1e-4
#: A vertex that was in contact at the last query keeps touching within this fraction of the
#: collider's size: rounding between frames (a collider tracking the surface, a rig that
#: moves it) must not release it, or its offsets relax into the collider.
HOLD_TOLERANCE = 1e-3
#: A vertex in contact at the last query with a collider that turned along its own surface
#: under it (a ball spinning in place) keeps touching within up to this fraction of the
#: collider's size more: the faces of a faceted ball swing in and out under a held vertex as
#: it spins (up to 1 % of its radius for Blender's UV sphere).
FACETING = 1e-2
#: The most friction tilts a push from the surface's normal toward the collider's motion.
FRICTION_TILT = 1.0  # tan(45 degrees)
#: A vertex whose inward normal is this cosine past a right angle with the press axis (120
#: degrees) is pushed along its own normal; from 90 degrees to there, a blend.
AXIS_BLEND = 0.5
#: The press axis is used where the nearness-weighted mean of the normals is at least this
#: long (the normals agree on a side); shorter, they point all round: no axis.
AXIS_AGREEMENT = 0.5

#: Two colliders pressing the mesh squeeze what lies between them where their bounding spheres
#: come this much nearer than they touch (``_squeezing``): two jaws, two hands. (Three balls
#: pressing a monkey from three sides at 1.5 to 2 times do not: each presses its own part.)
SQUEEZE_REACH = 1.25

#: The cosine of the most a wide collider's kept press axis turns in one query (25 degrees).
KEPT_TURN = float(np.cos(np.radians(25.0)))
#: A vertex a wide collider holds is sent to where its rest position leaves the collider
#: when that is this many times nearer its rest than where its push leaves it, and its push
#: leaves it further than this many times as deep as the collider reaches (``_from_rest``).
REST_NEARER = 1.5

#: A collider moving within this cosine of a vertex's push (60 degrees) presses it: the
#: nearest way out of it, straight out from its centre, can lie behind the vertex
#: (``Contacts._not_through``).
PRESSING = 0.5

#: What a collider is to the surface. A collider presses from the side it came from and the
#: longest push wins; an interior (a bone, a rib cage under the skin) is a volume the surface
#: must stay outside of, pushed out along its own normals; a container is a volume it must stay
#: inside of (its inside and outside swapped by the caller), pushed in against them. Interiors
#: and containers hold the surface whatever presses it: a vertex one of them pushes takes that
#: push, not a longer collider's, so a ball pressing the skin onto a bone leaves it on the bone.
COLLIDER, INTERIOR, CONTAINER = 0, 1, 2
#: The side each kind presses from, fixed: outward along the normals for an interior, inward
#: against them for a container (0: the collider's, chosen from its approach).
KIND_SIDE = {COLLIDER: 0, INTERIOR: -1, CONTAINER: 1}

#: ``cast(origins (m, 3), directions (k, m, 3))``: signed distances (k, m) to the first face
#: of each collider along each ray (positive where the face faces along the ray: the ray
#: leaves the volume there; negative where it enters; nan for no hit) and that face's
#: outward normal (k, m, 3), nan for no hit. A ray whose direction is nan is not cast (no
#: hit): a collider too far from a vertex to reach it (``Contacts.push``'s ``reach``).
Cast = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass
class Colliders:
    """What the rules need to know of the colliders at this query (world space)."""

    names: list[str]  # what the contact memory knows each collider by
    centres: np.ndarray  # (k, 3) bounding-sphere centres
    sizes: np.ndarray  # (k,) bounding-sphere radii: the scale of every tolerance (``scales``)
    cast: Cast
    kinds: np.ndarray | None = None  # (k,) COLLIDER, INTERIOR or CONTAINER; None: all colliders
    #: (k,) open meshes (a plane as floor), whose inside, behind their faces, has no far
    #: side: a vertex in it finds no face behind it. None: all closed.
    open: np.ndarray | None = None
    #: The mesh's bounding radius, where known: a collider wider than the mesh scales its
    #: tolerances by the mesh's size, not its own (1e-4 of a 20 m floor is 2 mm: a tenth of a
    #: pebble resting on it).
    mesh_size: float | None = None
    #: (k, 3) the faces' unit normal of each open collider that is flat (a plane), as the
    #: rays see them (its solid side is behind them, or in front where the mesh came from
    #: behind: ``Contacts.flipped``), nan rows for the others; None: none is.
    flat: np.ndarray | None = None
    #: (k, 3, 3) each collider's rotation since the last query (None: none turned).
    turns: np.ndarray | None = None

    def scales(self) -> np.ndarray:
        """(k,) the length each collider's tolerances are fractions of: its size, or the
        mesh's where that is smaller."""
        return self.sizes if self.mesh_size is None else np.minimum(self.sizes, self.mesh_size)

    def kind(self, k: int) -> int:
        return COLLIDER if self.kinds is None else int(self.kinds[k])

    def closed(self) -> np.ndarray:
        """(k,) the closed colliders (not open meshes)."""
        return np.ones(len(self.names), dtype=bool) if self.open is None else ~self.open

    def unbounded(self) -> np.ndarray | None:
        """(k,) the colliders whose inside has no far side (an open mesh; a container, whose
        outside is its inside), or None for none."""
        if self.kinds is None:
            return self.open
        containers = self.kinds == CONTAINER
        return containers if self.open is None else containers | self.open


@dataclass
class Pushes:
    """What the rules found for the vertices asked, world space."""

    push: np.ndarray  # (m, 3) the vector that takes each vertex out (zero where none)
    touching: np.ndarray  # (m,) bool: outside a collider, resting on it
    planes: tuple[np.ndarray, np.ndarray]  # the face each touching vertex rests on: point, normal (t, 3)
    inward: np.ndarray  # (t, 3) the unit direction each touching vertex is pushed along
    away: np.ndarray  # (t, 3) each touching vertex's unit way out of what it rests on (``_ways_out``)
    gap: np.ndarray  # (t,) how far behind each touching vertex, along ``away``, the face it rests on lies
    room: np.ndarray  # (t,) how much nearer the face it may come: ``gap`` less the standoff
    source: np.ndarray | None = None  # (m,) the collider pushing each vertex (index), -1: none
    rests_on: np.ndarray | None = None  # (t,) the collider whose face each touching vertex rests on


class Contacts:
    """Per-mesh contact memory: the side each collider presses from, and which vertices were
    in contact at the last query.

    A side is +1 for pressing against the surface's reference normals (pushing along
    -normal), -1 along them. ``side`` holds, per vertex, the side of the collider that last
    pushed it or that it touches (0: none). ``axes`` holds each collider's press axis (along
    the normals; None where the normals near it agree on none), set by ``aim`` at a frame's
    first query from every vertex near it, and kept for the frame's second query, which asks
    about some of them only.
    """

    def __init__(self, count: int):
        self.sides: dict[str, int] = {}  # by collider name, while the collider is near
        self.axes: dict[str, np.ndarray | None] = {}  # by collider name, from the last ``aim``
        #: By open collider name, while it is near: True where the mesh came to it from
        #: behind its faces, so its solid side is in front of them (``_came_from_behind``).
        self.flipped: dict[str, bool] = {}
        #: Wide closed colliders the mesh started wholly inside (a ball in a 10 m box): no way
        #: out of one is the mesh's, so it pushes none while near (``_enclosing``).
        self.enclosing: set[str] = set()
        #: Colliders with vertices near their centre whose normals point all round (no press
        #: axis): inside a closed mesh, say (``_aim_by_faces``).
        self.all_round: set[str] = set()
        #: Colliders more than twice as large as the mesh (a floor, a table under a ball at
        #: its corner): nearness to their centre does not say where the contact is. Their
        #: press axis comes from their faces where the mesh meets them (``_aim_by_faces``).
        self.wide: set[str] = set()
        self.side = np.zeros(count, dtype=np.int8)
        self.held = np.zeros(count, dtype=bool)  # pushed or touching at the last query
        #: The axis each wide collider, and each whose nearby normals point all round, got
        #: from its faces where the mesh meets it, kept while near (``_aim_by_faces``).
        self.kept_axes: dict[str, np.ndarray] = {}
        #: The last press axis each collider had from the normals near it: pressed so deep
        #: that they point all round, it tries that axis too (``_straighter``).
        self.last_axes: dict[str, np.ndarray] = {}
        #: How deep each wide collider reaches into the mesh's rest shape this frame (``_from_rest``).
        self.reaches: dict[str, float] = {}
        #: Asked of shown positions (``core.frame.unchanged``): they did not come from the last
        #: query's by a move of the surface's (``_back_the_way_it_came``).
        self.showing = False

    def aim(self, colliders: "Colliders", points: np.ndarray, normals: np.ndarray) -> None:
        """Each collider's press axis, from every vertex near it (``points`` and their unit
        reference normals, (m, 3)): their mean normal, weighted by nearness to its centre. A
        wide collider, or one whose nearby normals point all round, keeps the axis its faces
        gave it (``_aim_by_faces``), or has none yet."""
        mesh_size = np.inf if colliders.mesh_size is None else colliders.mesh_size  # unknown: none is wide
        squeezing = _squeezing(colliders, [name in self.sides for name in colliders.names])
        self.reaches.clear()  # a frame's first query: how deep each wide collider reaches, found anew
        for k, (name, centre, size) in enumerate(zip(colliders.names, colliders.centres, colliders.sizes, strict=True)):
            # An interior or a container holds each vertex along its own normal: the normals
            # near a bone inside a closed surface point all round, and no one axis fits them.
            held_by_normals = colliders.kind(k) != COLLIDER
            if not held_by_normals and size > 2.0 * mesh_size:  # aimed by its own faces (``_aim_by_faces``)
                self.wide.add(name)
                self.axes[name] = self.kept_axes.get(name)
                self.all_round.discard(name)
                continue
            self.wide.discard(name)
            had = self.axes.get(name)
            if had is not None and name not in self.all_round:  # from its normals
                self.last_axes[name] = had
            offset = points - centre
            within = bool((np.einsum("ij,ij->i", offset, offset) < size * size).any())
            axis = None if held_by_normals else press_axis(points, normals, centre, size)
            if axis is not None and had is not None and squeezing[k]:
                axis = _squeezed(had, axis)
            if axis is None and not within and not held_by_normals:
                # Nothing within it (it is leaving): what the response carries back into it
                # this frame is pushed out along the axis it pressed along. Without one, each
                # vertex went along its own normal: a ball lifting off a monkey's cheek slower
                # than it sprang back put 457 vertices back inside, pushed up to 29 cm each
                # its own way, and 395 of her triangles turned over.
                axis = had
            self.axes[name] = axis
            # No axis though vertices are near its centre: their normals point all round.
            all_round = axis is None and not held_by_normals and within
            # Pressed deep, it keeps the axis its faces gave it while it stays (one box risen
            # into a monkey's chin had every vertex on its top, and a few just inside which
            # left through far faces: no axis from them), until the normals agree with it:
            # while it slid, their mean came and went, 90 degrees off, and pushed 0.85 m.
            kept = self.kept_axes.get(name)
            if kept is not None and not held_by_normals:
                axis = self.axes[name]
                all_round |= axis is None or float(axis @ kept) < KEPT_TURN
            if all_round:
                self.all_round.add(name)
                self.axes[name] = self.kept_axes.get(name)
            else:
                self.all_round.discard(name)
                self.kept_axes.pop(name, None)

    def turn(self, name: str, rotation: np.ndarray) -> None:
        """Collider ``name`` turned by ``rotation`` (3 x 3) since the last query: if it is wide,
        the axis its faces gave it turns with it. A wall swinging round a mesh (or, seen from
        the mesh, a mesh spinning against a still wall) kept that axis where its faces no longer
        were, and pushed the mesh along it, 1.8 m. (Only a wide one: a ball spinning as it
        presses has the same faces where it presses, and the axes of the others come from the
        mesh's normals; turned with the spin, a ball's threw a cylinder's rim 0.77 m.) The
        faces correct the turned axis at the next push (``_aim_by_faces``)."""
        kept = self.kept_axes.get(name)
        if name in self.wide and kept is not None:
            self.axes[name] = self.kept_axes[name] = rotation @ kept

    def forget(self, which: np.ndarray) -> None:
        """Vertices ``which`` are clearly out of contact (near no collider)."""
        self.side[which] = 0
        self.held[which] = False

    def release(self, names) -> None:
        """Colliders ``names`` are near no vertex: the next contact chooses their side anew."""
        for name in names:
            self.sides.pop(name, None)
            self.axes.pop(name, None)
            self.flipped.pop(name, None)
            self.enclosing.discard(name)
            self.last_axes.pop(name, None)
            self.all_round.discard(name)
            self.wide.discard(name)
            self.kept_axes.pop(name, None)

    def push(
        self,
        queried: np.ndarray,
        points: np.ndarray,
        normals: np.ndarray,
        approach: np.ndarray,
        motions: np.ndarray,
        colliders: Colliders,
        friction: float = 0.0,
        standoff: float = 0.0,
        offsets: np.ndarray | None = None,
        reach: np.ndarray | None = None,
    ) -> Pushes:
        """Pushes for the vertices ``queried`` (m,) at ``points`` (m, 3) with unit reference
        normals ``normals`` (m, 3), that moved by ``approach`` (m, 3) since the last query,
        while collider ``i`` moved the space at each point by ``motions[i]`` (k, m, 3).
        ``offsets`` (m, 3): how far the response has moved each vertex, which bounds
        friction's drag (``push_direction``); None for no bound. ``reach`` (k, m) bool, or
        None for all: the vertices each collider can reach, the others far from it (outside
        the bounds of a closed collider, by more than its tolerances and the standoff): no
        ray of theirs is cast against it. Its rays could only have found it from outside and
        far, which neither pushes nor touches: each collider's rays are cast for the part of
        the mesh it presses (three colliders pressing three parts cast a third as many)."""
        was_held = self.held[queried]
        relative = motions - approach
        sides, new = self._sides(colliders, points, normals, relative, standoff)
        if any(name not in self.axes for name in colliders.names):  # not aimed yet: from these
            self.aim(colliders, points, normals)

        def tilted(k: int, inward: np.ndarray, rows=slice(None)) -> np.ndarray:  # collider k's pushes at rows
            grip = friction if colliders.kind(k) == COLLIDER else 0.0  # structure holds, it does not drag
            return push_direction(inward, motions[k, rows], grip, None if offsets is None else offsets[rows])

        def directions_for(sides: np.ndarray) -> np.ndarray:  # (k, m, 3)
            return np.stack(
                [
                    tilted(k, press_inward(-normals * side, self.axes[name], side))
                    for k, (name, side) in enumerate(zip(colliders.names, sides, strict=True))
                ]
            )

        directions = directions_for(sides)
        sizes = colliders.scales()[:, None]
        unbounded = colliders.unbounded()
        rules = (motions, was_held, standoff, unbounded, reach)
        cast = self._oriented(colliders)
        ahead, behind, raw = _cast_both(cast, points, directions, *rules, both_ways=new.any())
        if new.any():  # judged again from what the rays found, where they found anything
            if self._orient(colliders, new, raw, points, directions, relative):
                cast = self._oriented(colliders)
                ahead, behind, raw = _cast_both(cast, points, directions, *rules, both_ways=True)
            reached = sides.copy()
            near = _near(colliders, colliders.sizes)
            # Which new colliders' centres lie outside their bodies: one cast, made only when
            # a side comes to the approach of the vertices inside (``_reached_side``), not at
            # every frame a collider comes near before it touches.
            hollow = cache(partial(_hollow, cast, colliders, new))

            def is_hollow(k: int) -> bool:
                return bool(hollow()[k])

            for k in new.nonzero()[0]:
                reached[k] = _reached_side(
                    sides[k],
                    (raw[0][0][k], raw[1][0][k]),
                    directions[k],
                    points,
                    normals,
                    relative[k],
                    colliders.centres[k],
                    near[k],
                    partial(is_hollow, k),
                )
            if (reached != sides).any():  # a side turned: its rays point the other way now
                sides, directions = reached, directions_for(reached)
                ahead, behind, _ = _cast_both(cast, points, directions, *rules)
        slack = _faceting(colliders, points, behind[1])
        length, touch = _lengths(ahead[0], behind[0], sizes, standoff, was_held, slack)
        if new.any() and queried.size == self.held.size:
            self._enclosing(colliders, new, length, relative)
        if self._aim_by_faces(colliders, cast, sides, length, ahead, points, relative):  # a wide collider: aimed again
            directions = directions_for(sides)
            ahead, behind, _ = _cast_both(cast, points, directions, *rules)
            slack = _faceting(colliders, points, behind[1])
            length, touch = _lengths(ahead[0], behind[0], sizes, standoff, was_held, slack)
        length, directions, touch = self._straighter(
            cast, colliders, sides, points, normals, tilted, standoff, ahead, (length, directions, touch)
        )
        moves = (motions, relative)
        found = self._not_through(
            cast, colliders, sides, points, normals, moves, tilted, standoff, (length, directions, touch)
        )
        solid = self._solid_sides(colliders)
        found = _through_the_face(cast, colliders, sides, solid, points, tilted, standoff, ahead, found)
        found = _back_into_containers(cast, colliders, points, tilted, standoff, ahead[0], found)
        length, directions, touch = found
        if offsets is not None and self.wide:
            length, directions, touch = self._from_rest(
                cast, colliders, sides, points, normals, offsets, standoff, (length, directions, touch)
            )
        # No vertex within its reach yet (``_sides``), or all of the mesh inside it: it pushes none.
        enclosing = np.array([name in self.enclosing for name in colliders.names])
        idle = (sides == 0) | enclosing
        length[idle], touch[idle] = 0.0, False
        if colliders.open is not None and colliders.open.any():
            length, directions = _crossed_open(
                cast, points, directions, relative, length, sizes[:, 0], standoff, colliders.open
            )
        length, directions, touch = _crossed_closed(
            cast, colliders, points, (motions, relative), ~enclosing, standoff, reach, (length, directions, touch)
        )
        touching = touch.any(axis=0)
        longest = _winner(length, touch, colliders.kinds)
        pick = np.arange(points.shape[0])
        push = directions[longest, pick] * length[longest, pick][:, None]
        pushed = length[longest, pick] > 0
        if pushed.any() and not self.showing:
            _back_the_way_it_came(colliders, motions, approach, was_held, longest, push, pushed)
        if len(colliders.names) > 1 and pushed.any():
            push = _out_of_the_others(
                cast, colliders, sides, solid, points, directions, longest, push, pushed, rules, tilted
            )
        touching &= ~pushed
        # The collider each vertex is in contact with: the one pushing it, else the nearest
        # it touches. Those in contact commit their collider's side.
        gap_order = np.where(np.isnan(behind[0]) | (behind[0] > 0), np.inf, -behind[0])
        which = np.where(pushed, longest, np.argmin(gap_order, axis=0))
        held = pushed | touching
        for k in np.unique(which[held]):
            self.sides[colliders.names[k]] = int(sides[k])
        side = np.where(held, sides[which], 0).astype(np.int8)
        keep = ~held & was_held  # in contact before, not now: its side stays until it is far
        side[keep] = self.side[queried][keep]
        self.side[queried] = side
        self.held[queried] = held
        rests = touching.nonzero()[0]
        *planes, rests_on = nearest_faces(
            points[rests], directions[:, rests], *([h[:, rests] for h in hits] for hits in (ahead, behind))
        )
        # The way out of what each rests on: the collider of the nearest face its rays met
        # where it touches that one, else the nearest it touches (``which`` can name one it
        # does not touch, whose direction there is not set).
        on = np.argmin(np.where(touch[:, rests], gap_order[:, rests], np.inf), axis=0)
        on = np.where(touch[on, rests], on, np.argmax(touch[:, rests], axis=0))
        on = np.where(touch[rests_on, rests], rests_on, on)
        inward = directions[on, rests]
        away = _ways_out(colliders, planes[1], rests_on, inward, touch[:, rests].sum(axis=0) > 1)
        gap = np.nan_to_num(np.einsum("ij,ij->i", points[rests] - planes[0], away))
        room = np.maximum(gap - standoff, 0.0)
        return Pushes(
            push, touching, (planes[0], planes[1]), inward, away, gap, room, np.where(pushed, longest, -1), rests_on
        )

    def _enclosing(self, colliders: Colliders, new, length, relative) -> None:
        """Note each closed collider the mesh starts in: wide (more than twice its size),
        meeting it now (``new`` (k,) bool) with every vertex inside it (``length`` (k, m): a
        way out, all vertices asked) and nothing moved (``relative`` (k, m, 3): its motion
        at them less theirs; the shot's first frame, or all still). Every way out of it is a
        way out of the mesh too: a ball keyed inside a 10 m box was flattened onto the box's
        far faces, 11 m. Such a collider is a room the mesh is in; the Container setting
        keeps a mesh in one (the query reports it). A mesh that moved wholly inside in one
        frame (a sheet falling fast onto a floor box) came in the way it moved, and is
        pushed back out that way."""
        for k in new.nonzero()[0]:
            room = colliders.names[k] in self.wide and not _is_open(colliders, k)
            if room and colliders.kind(k) == COLLIDER and not relative[k].any() and (length[k] > 0).all():
                self.enclosing.add(colliders.names[k])

    def _aim_by_faces(self, colliders: Colliders, cast: Cast, sides, length, ahead, points, relative) -> bool:
        """Aim each wide collider, and each whose nearby normals point all round, from its own
        faces where the vertices inside it leave it (``length`` (k, m) > 0; ``ahead``: the
        rays' distances and the faces' outward normals), the nearest counting most; returns
        whether any was.
        The normals near a collider's centre point all round where it is wide against the
        mesh (a floor under a monkey or a foot): its centre is far from where they meet,
        and a vertex pushed along its own normal (the side of a chin) went along the floor,
        out at its far side, metres away. The faces a vertex is nearest to leaving through
        are where the collider presses it from. A wide collider is also left the way the
        vertices came in (along ``relative`` (k, m, 3), its motion at them less theirs),
        through the faces they crossed: a standing tube's normals all lie along a floor box,
        and leave it through its sides only. (A collider inside a closed mesh is left
        through faces all round: still no axis.)"""
        aimed = False
        for k, name in enumerate(colliders.names):
            # A wide collider, or one whose nearby normals point all round, is aimed, or its
            # kept axis followed, at every push.
            if sides[k] == 0 or not (name in self.wide or name in self.all_round):
                continue
            kept = self.kept_axes.get(name)
            inside = (length[k] > 0) & np.isfinite(ahead[0][k]) & (ahead[0][k] > 0)
            distances, normals = ahead[0][k][inside], ahead[1][k][inside]
            if name in self.wide and kept is None:
                # Behind an open collider a vertex's own normal may miss it (a tube's lie
                # along a floor plane): any vertex whose ray met nothing may have come in.
                maybe = inside | (_is_open(colliders, k) & np.isnan(ahead[0][k]))
                ways, limits = _ways_in(points, maybe, relative[k], outside=~maybe & (length[k] == 0))
                if ways.size:
                    rays = np.full((len(colliders.names), *ways.shape), np.nan)  # others: not cast
                    rays[k] = ways
                    back, back_normals = cast(points[maybe], rays)
                    out = np.isfinite(back[k]) & (back[k] > 0) & (back[k] <= limits)
                    distances = np.concatenate([distances, back[k][out]])
                    normals = np.concatenate([normals, back_normals[k][out]])
            if name in self.wide and colliders.mesh_size is not None:
                # A way out further than the mesh is wide is a far face of the collider (a
                # vertex leaving a floor box through its side, metres away), not where it presses.
                near = distances <= 2.0 * colliders.mesh_size
                distances, normals = distances[near], normals[near]
            if not distances.size:
                continue
            weight = 1.0 / np.maximum(distances, 1e-9 * colliders.sizes[k])
            faces = weight @ normals
            size = float(np.linalg.norm(faces))
            if size > AXIS_AGREEMENT * float(weight.sum()):
                # Kept to 1e-3: where a ray meets an edge or a corner (a ball right above a
                # sphere's pole), which face Blender reports can change when the same scene is
                # built again, and the same scene must give the same bits.
                axis = np.round(-faces / size * sides[k], 3)  # along the surface's normals
                axis /= np.linalg.norm(axis)
                # A kept axis follows the faces its rays leave through (a floor that tilts), by
                # less than KEPT_TURN a query: a jump is a vertex leaving through a far face (the
                # side of a floor box, metres away), not a turn. Cast again only where it turned
                # more than rounding.
                if kept is not None and not 1.0 - 1e-9 > float(axis @ kept) >= KEPT_TURN:
                    continue
                if name not in self.wide and not _toward(axis, colliders, k, sides[k], points[inside]):
                    continue
                self.axes[name] = self.kept_axes[name] = axis
                aimed = True
        return aimed

    def _straighter(self, cast, colliders, sides, points, normals, tilted, standoff, ahead, found):
        """The pushes ``found`` (lengths (k, m), directions (k, m, 3), touching (k, m)) with
        each vertex inside a collider that faces away from its press axis, and so is pushed
        toward its own normal (``press_inward``), pushed along the axis instead where that way
        out is shorter (``tilted(k, inward, rows)``: collider k's push directions). A vertex
        facing away is on the far side of a thin part, or in a fold of a curved surface
        pressed into a wide collider: under a monkey's chin pressed 10 cm into a 20 m floor
        box, a vertex whose normal lay along the floor went out through the box's far side,
        13 m away. The shorter way is the one it came in by. Behind a plane, a vertex facing
        away may find no way out along its own normal at all (away from the plane): along the
        axis it does. One left on the face by the last push is 0 from it along the axis: it
        touches (it was thrown 4 m along a floor box when that was not a way out). A vertex
        inside a wide collider also tries its own normal: near a floor box's edge its way out
        is through the side, not up the axis the box's top gave; one inside a collider whose
        nearby normals point all round tries its last axis."""
        length, directions, touch = found
        away = np.zeros(length.shape, dtype=bool)
        axes = {}
        for k, name in enumerate(colliders.names):
            axis = self.axes.get(name)
            if axis is None or sides[k] == 0:
                continue
            axes[k] = -axis * sides[k]  # pointing in
            # Inside, or behind an open collider where its push ray met nothing (it may leave
            # past the plane's edge, or point away from it).
            maybe_inside = (length[k] > 0) | (_is_open(colliders, k) & np.isnan(ahead[0][k]))
            away[k] = maybe_inside & ((normals @ axes[k]) * sides[k] > 0)  # the inward normal against it
        # A wide collider's axis is its faces' where the mesh first met it: where the mesh
        # leaves it through another face (a ball sliding off a floor box's edge, down its
        # side), a vertex's own normal is the shorter way out, not up through the box.
        wide = np.array([name in self.wide for name in colliders.names])[:, None] & (length > 0) & ~away
        # Pressed so deep that the normals near it point all round (no axis from them), a
        # collider also tries the last axis it had: a 1.2 m box risen 33 cm into a monkey's
        # chin and then sliding had every vertex on its top but a few just inside, which
        # left through its far faces (no axis from them) and, pushed along their own
        # normals, went 1.2 m through the box. Their way out is back up that axis. (A tube
        # squeezing a ball all round has no way out along it: the ball's own normals stay.)
        last = {
            k: axis
            for k, name in enumerate(colliders.names)
            if name in self.all_round and sides[k] and (axis := self.last_axes.get(name)) is not None
        }
        deep = np.zeros(length.shape, dtype=bool)
        for k in last:
            deep[k] = length[k] > 0
        for mask, direction in (
            (away, lambda k: axes[k]),
            (wide, lambda k: -normals * sides[k]),
            (deep, lambda k: -last[k] * sides[k]),
        ):
            if mask.any():
                length, directions, touch = _shorter(
                    cast, colliders, points, mask, direction, tilted, standoff, (length, directions, touch)
                )
        return length, directions, touch

    def _solid_sides(self, colliders: Colliders) -> np.ndarray:
        """(k, 3) each flat open collider's unit normal pointing into its solid side (behind
        its faces, or in front of them where the mesh came from behind), nan rows for the
        others."""
        solid = np.full((len(colliders.names), 3), np.nan)
        if colliders.flat is not None:
            for k, name in enumerate(colliders.names):
                solid[k] = colliders.flat[k] * (1.0 if self.flipped.get(name, False) else -1.0)
        return solid

    def _not_through(self, cast, colliders: Colliders, sides, points, normals, moves, tilted, standoff, found):
        """The pushes ``found`` (lengths (k, m), directions (k, m, 3), touching (k, m)) with
        each push that heads through the middle of a closed collider taken a shorter way out
        where there is one (``moves``: each collider's motion at the vertices, and that less
        theirs, (k, m, 3) each).

        A push heading toward a closed collider's centre crosses its middle, whichever side
        it presses from: the ways out lead away from it (a ball judged to press a monkey from
        inside her pushed a vertex 4 mm inside it 1.6 m through it, and the whole monkey
        after it). A ball 0.4-0.75 times a monkey's
        width, pressed 25 cm into her and sliding, pushed an ear vertex 0.85 m along its axis,
        through the ball, 2 cm from the way out along the vertex's own normal. Such a vertex
        also tries its own normal, the axis and the last axis the normals gave (each points
        into the mesh), the shortest taken. It also tries back the way it came in where the
        collider did not move there (the frame's second query: the response carried an ear
        vertex 9 cm into a ball behind the ear, and every way into the mesh went 1 m through
        the ball), or where the push is longer than the collider's radius and than the
        collider moved at it (a ball sliding 3 cm onto the back of an ear pushed a vertex 1
        m: its move explains no such depth). Where it tries back the way it came, it also tries
        straight out from the collider's centre (a ball's nearest way out): a ball lifting
        out of a deep squeeze found inside it a vertex its press had laid at its side, by its
        equator; back the way it came took it 35 cm up onto the ball's top, and the ball
        carried it off from there (1.27 m from rest), where straight out from the centre it
        lay 3 mm inside. Not where the collider presses the vertex (moves along its push,
        ``PRESSING``): a ball dragged through a sheet in three frames holds the dent's
        vertices above its centre, and straight out from it would pop them back through the
        top. Not otherwise: a vertex carried ahead of a fast thin plate can be inside it
        from above, and going back would pop the dent through the plate; a box that jumped 3
        m over a whole monkey in one frame carries her along."""
        length, directions, touch = found
        motions, relative = moves
        through = np.zeros(length.shape, dtype=bool)
        way_back = np.zeros(length.shape, dtype=bool)
        swept = np.zeros(length.shape, dtype=bool)
        closed = colliders.closed()
        for k, name in enumerate(colliders.names):
            if closed[k] and sides[k] != 0 and name not in self.wide and colliders.kind(k) == COLLIDER:
                inside = (length[k] > 0).nonzero()[0]  # (the pushed only: few of those asked)
                toward = np.einsum("ij,ij->i", directions[k, inside], colliders.centres[k] - points[inside])
                through[k, inside] = toward > 0
                came = np.einsum("ij,ij->i", relative[k, inside], relative[k, inside])
                pushed = length[k, inside]
                unexplained = (pushed > colliders.sizes[k]) & (came < pushed**2)
                moving = motions[k, inside]
                way_back[k, inside] = through[k, inside] & (~moving.any(axis=1) | unexplained)
                # Swept over by the collider, which does not press it (``PRESSING``).
                speed = np.sqrt(np.einsum("ij,ij->i", moving, moving))
                along = np.einsum("ij,ij->i", moving, directions[k, inside])
                swept[k, inside] = through[k, inside] & unexplained & (speed > 0) & (along <= PRESSING * speed)
        if not through.any():
            return found
        axes = {k: axis for k, name in enumerate(colliders.names) if (axis := self.axes.get(name)) is not None}
        recent = {k: axis for k, name in enumerate(colliders.names) if (axis := self.last_axes.get(name)) is not None}
        every = range(len(colliders.names))
        for mask, ways, direction in (
            (through, every, lambda k: -normals * sides[k]),
            (through, axes, lambda k: -axes[k] * sides[k]),
            (through, recent, lambda k: -recent[k] * sides[k]),
            (way_back, every, lambda k: _rays_along(relative[k])),  # back the way it came in
            (swept, every, lambda k: _rays_along(points - colliders.centres[k])),  # out from the centre
        ):
            mask = mask & np.isin(np.arange(len(colliders.names)), list(ways))[:, None]
            if mask.any():
                length, directions, touch = _shorter(
                    cast, colliders, points, mask, direction, tilted, standoff, (length, directions, touch)
                )
        return length, directions, touch

    def _from_rest(self, cast, colliders, sides, points, normals, offsets, standoff, found):
        """The pushes ``found`` (lengths (k, m), directions (k, m, 3), touching (k, m)) with
        each vertex a wide collider holds sent to where its rest position (``points`` less
        ``offsets``, (m, 3): how far the response has moved each) leaves that collider,
        where that is much nearer its rest than where the push leaves it. A push starts where
        the response has already moved a vertex: while the mesh moves along a wide
        collider's face, a vertex caught on it rides along, frame by frame, each push short
        (a ball sliding off a floor box's edge and falling past its side had vertices held on
        the top and stretched 1.7 m). From its rest, the way out (along the axis or its own
        normal, the shorter) is as far as the collider reaches into the mesh there. A vertex
        inside a closed collider whose rest is outside it altogether is put back at its rest.
        None is sent where the way there crosses another collider (``_clear_way``)."""
        length, directions, touch = found
        wide = {
            k: axis
            for k, name in enumerate(colliders.names)
            if name in self.wide and sides[k] and (axis := self.axes.get(name)) is not None
        }
        held = np.zeros(length.shape, dtype=bool)
        for k in wide:
            held[k] = (length[k] > 0) | touch[k]
        rows = held.any(axis=0).nonzero()[0]
        if not rows.size:
            return found
        rest = points[rows] - offsets[rows]
        m = rows.size
        rays = np.full((len(colliders.names), 2 * m, 3), np.nan)  # the other colliders' are not cast
        for k, axis in wide.items():
            rays[k, :m] = -axis * sides[k]
            rays[k, m:] = -normals[rows] * sides[k]
        signed = cast(np.concatenate([rest, rest]), rays)[0]
        signed = np.where(np.isfinite(signed) & (signed > 0), signed, np.inf)
        by_normal = signed[:, m:] < signed[:, :m]
        exit = np.where(by_normal, signed[:, m:], signed[:, :m])  # (k, m): inf where neither ray leaves it
        way = np.where(by_normal[..., None], rays[:, m:], rays[:, :m])
        inside_now = length[:, rows] > 0
        # Left a little off the face, within the touching tolerance: from exactly on a box's
        # side, a ray up along the side grazes it, and which way Blender's rays answer such
        # a tie can change when the same scene is built again.
        clear = 0.5 * TOUCH_TOLERANCE * colliders.scales()[:, None]
        out = np.where(np.isfinite(exit), exit + standoff + clear, 0.0)  # the rest itself where it is outside
        goal = rest + way * out[..., None]
        now = np.linalg.norm(offsets[rows] + directions[:, rows] * length[:, rows, None], axis=2)  # from its rest
        from_rest = np.linalg.norm(goal - rest, axis=2)
        # How deep the collider reaches into the mesh's rest shape: a vertex moved no further
        # than REST_NEARER times that is pressed, not dragged, and is left as it is: the
        # response spreads a press, and friction drags it (a ball rolling on a floor), so its
        # offsets need not lie along the way out of its own rest.
        # Kept over the frame's queries: the one after the step asks only the vertices it moved.
        reach = np.where(held[:, rows] & np.isfinite(exit), from_rest, 0.0).max(axis=1)
        for k in wide:
            name = colliders.names[k]
            reach[k] = self.reaches[name] = max(reach[k], self.reaches.get(name, 0.0))
        reach = reach[:, None]
        # A touching vertex whose rest is outside relaxes to it. Behind a plane's edge a rest
        # position is outside it, but the mesh between is not: only a closed collider's.
        closed = colliders.closed()
        nearer = (
            held[:, rows]
            & (np.isfinite(exit) | (inside_now & closed[:, None]))
            & (now > REST_NEARER * reach)
            & (REST_NEARER * from_rest < now)
        )
        if not nearer.any():
            return found
        ks, at = nearer.nonzero()
        move = goal[ks, at] - points[rows[at]]
        distance = np.linalg.norm(move, axis=1)
        clear = _clear_way(cast, colliders, points[rows[at]], move, distance, ks)
        ks, at, move, distance = ks[clear], at[clear], move[clear], distance[clear]
        there = distance <= TOUCH_TOLERANCE * colliders.scales()[ks]  # at its goal already: on the face
        length, directions, touch = length.copy(), directions.copy(), touch.copy()
        length[ks, rows[at]] = np.where(there, 0.0, distance)
        way = move / np.maximum(distance, 1e-300)[:, None]
        directions[ks, rows[at]] = np.where(there[:, None], directions[ks, rows[at]], way)
        touch[ks, rows[at]] = there
        return length, directions, touch

    def _oriented(self, colliders: Colliders) -> Cast:
        """The colliders' cast, with the faces of the open colliders the mesh came to from
        behind turned round (their inside is in front of their faces)."""
        flips = np.array([self.flipped.get(name, False) for name in colliders.names])
        return turned(colliders.cast, flips)

    def _orient(self, colliders: Colliders, new, raw, points, directions, relative) -> bool:
        """Decide which way each open collider new to the mesh faces it, from what both of
        every vertex's rays found (``raw``, as ``_cast_both`` gives it); returns whether
        one was turned round. Decided once some vertex is behind its faces, and kept while
        it stays near."""
        if colliders.open is None:
            return False
        (ahead, ahead_normals), (behind, behind_normals) = raw
        turned = False
        for k in (new & colliders.open).nonzero()[0]:
            name = colliders.names[k]
            if name in self.flipped:
                continue
            flip = _came_from_behind(
                points, directions[k], relative[k], ahead[k], ahead_normals[k], behind[k], behind_normals[k]
            )
            if flip is not None:
                self.flipped[name] = flip
                turned |= flip
        return turned

    def _sides(self, colliders: Colliders, points, normals, relative, standoff: float = 0.0):
        """Each collider's side (k,), and which were chosen now (k,): the one kept while it is
        near, else chosen now from the vertices nearest it among those within its bounding
        sphere (judged again from those its rays find inside it: ``_reached_side``;
        committed once it touches one); 0 while none is within it (no vertex can be inside
        it, so it pushes none). Not from vertices outside it: those near another collider
        would judge it from where they are, not where it comes from (a soft partner arriving
        at a ball already pressed on its top by a cube was judged from the top and pushed the
        ball through itself)."""
        sides = np.array([self.sides.get(name, 0) for name in colliders.names], dtype=np.int8)
        if colliders.kinds is not None:  # an interior's or a container's side is its kind's
            fixed = np.array([KIND_SIDE[int(kind)] for kind in colliders.kinds], dtype=np.int8)
            sides = np.where(fixed != 0, fixed, sides)
        new = (sides == 0).nonzero()[0]
        if new.size:
            distance = np.linalg.norm(points[:, None] - colliders.centres[None], axis=2)  # (m, k)
            nearest = np.argmin(distance, axis=1)
            reach = colliders.sizes * (1.0 + HOLD_TOLERANCE) + standoff
            near = _near(colliders, reach)
            for k in new:
                within = distance[:, k] <= reach[k]
                mine = within & (nearest == k)
                if not mine.any():  # none nearer to it than to another: all those within it
                    mine = within
                if mine.any():
                    sides[k] = approach_side(
                        points[mine], normals[mine], relative[k, mine], colliders.centres[k], near[k]
                    )
        chosen = np.zeros(sides.shape, dtype=bool)
        chosen[new] = sides[new] != 0
        return sides, chosen


def _through_the_face(cast: Cast, colliders: Colliders, sides, solid, points, tilted, standoff: float, ahead, found):
    """The pushes ``found`` (lengths, directions, touching; (k, m) each, directions (k, m,
    3)) with each vertex on a flat open collider's solid side (``solid`` (k, 3): the unit
    normal pointing into it, nan for other colliders) whose push met nothing (``ahead``: the
    push rays' hits) pushed straight out through its face, where that is a way out.

    Such a vertex may have gone round the plane's edge: a sheet springing back past the low
    edge of a tilted plane lifting off it was 7 cm behind its face, 2 cm in from the edge,
    and its push, along the axis the sheet's normals gave, passed the edge. One on the
    solid side beyond the plane's edge meets no face: not behind it."""
    length, _, touch = found
    missed = np.zeros(length.shape, dtype=bool)
    for k in np.isfinite(solid).all(axis=1).nonzero()[0]:
        behind = (points - colliders.centres[k]) @ solid[k] > 0
        missed[k] = behind & (sides[k] != 0) & (length[k] == 0) & ~touch[k] & np.isnan(ahead[0][k])
    if not missed.any():
        return found
    return _shorter(cast, colliders, points, missed, lambda k: -solid[k], tilted, standoff, found)


def _shorter(cast: Cast, colliders: Colliders, points, mask, direction, tilted, standoff: float, found) -> tuple:
    """The pushes ``found`` (lengths, directions, touching; (k, m) each, directions (k, m,
    3)) with the vertices ``mask`` (k, m) pushed another way where it is the shorter way
    out: ``direction(k)``, collider k's inward direction, (3,) or (m, 3), tilted by friction
    (``tilted``). A way out under the rounding tolerance leaves the vertex touching.

    Inside a closed collider every ray leaves it: where the other way finds no way out (no
    face met, or a face entered first), the vertex is on its surface, within rounding (its
    first ray grazed the face it starts on and left through a far one: a vertex on a box's
    top was pushed 1.4 m through the box). It touches, pushed the standoff. A way that is
    not known (a nan direction: back the way it came, where neither moved) is not cast and
    says nothing: read as no way out, it left a vertex a box swallowed in one frame 1.15 m
    inside it, touching, for as long as the box held still."""
    length, directions, touch = found
    asked = mask.any(axis=0).nonzero()[0]
    other = np.full(directions[:, asked].shape, np.nan)  # the other colliders' rays are not cast
    known = np.zeros(other.shape[:2], dtype=bool)
    for k in mask.any(axis=1).nonzero()[0]:
        inward = np.broadcast_to(direction(k), (points.shape[0], 3))[asked]
        known[k] = ~np.isnan(inward).any(axis=1)
        other[k] = np.where(known[k][:, None], tilted(k, inward, asked), np.nan)
    signed = cast(points[asked], other)[0]
    was = length[:, asked]
    shorter = mask[:, asked] & (signed >= 0) & ((was == 0) | (signed + standoff < was))
    closed = colliders.closed()
    # Inside by its first ray: pushed further than the standoff (within it: outside, near).
    on_surface = mask[:, asked] & known & closed[:, None] & (was > standoff) & ~(signed > 0)
    if not (shorter.any() or on_surface.any()):
        return length, directions, touch
    length, directions, touch = length.copy(), directions.copy(), touch.copy()
    ks, rows = on_surface.nonzero()
    length[ks, asked[rows]], touch[ks, asked[rows]] = standoff, True
    ks, rows = (shorter & ~on_surface).nonzero()
    out = signed[ks, rows] + standoff
    on_face = out <= TOUCH_TOLERANCE * colliders.scales()[ks]  # as ``_lengths``'s rounding
    length[ks, asked[rows]] = np.where(on_face, 0.0, out)
    touch[ks, asked[rows]] |= on_face
    directions[ks, asked[rows]] = other[ks, rows]
    return length, directions, touch


def _back_into_containers(cast: Cast, colliders: Colliders, points, tilted, standoff: float, ahead, found) -> tuple:
    """The pushes ``found`` (lengths, directions, touching; (k, m) each, directions (k, m, 3))
    with each vertex that a container's ray along its own normal did not meet (``ahead``
    (k, m), nan: it met no wall) sent toward the container's centre where that way enters it:
    out of a container, a vertex whose normal runs along the wall (a sphere keyed past a box's
    wall, its side vertices) has no way back in along it, and was left out (87 of a sphere's
    266 vertices, up to 8.5 cm out of a 1 m box). A vertex inside meets the wall ahead, or its
    way to the centre does not enter the container first: neither is moved."""
    if colliders.kinds is None or not (colliders.kinds == CONTAINER).any():
        return found
    length = found[0]
    # (Touching too: from out of the container its ray behind can enter it, which reads as
    # resting on the wall from inside.)
    lost = (colliders.kinds == CONTAINER)[:, None] & np.isnan(ahead) & (length == 0)
    if not lost.any():
        return found
    return _shorter(
        cast, colliders, points, lost, lambda k: unit_rows(colliders.centres[k] - points), tilted, standoff, found
    )


def _ways_in(points, maybe, relative, outside) -> tuple[np.ndarray, np.ndarray]:
    """Unit rays back the way the vertices ``maybe`` (m,) bool came into a collider, (i, 3)
    for the i of them, and how far along each its way in can be (i,); nan rays where none is
    known. A vertex that moved came in against ``relative`` (m, 3), the collider's motion at
    it less its own, from any distance. One that has not moved (the mesh starts the shot
    inside a floor box) came in from the mesh's part outside the collider (``outside``
    (m,) bool: the mean of those points), no further than that: a monkey made with her chin
    in a floor box is left up through its top, not along her chin's normals out through its
    side, 10 m away."""
    came = relative[maybe]
    travel = np.linalg.norm(came, axis=1)
    ways = np.full(came.shape, np.nan)
    limits = np.full(travel.shape, np.inf)
    moved = travel > 0
    ways[moved] = came[moved] / travel[moved, None]
    if outside.any() and not moved.all():
        toward = points[outside].mean(axis=0) - points[maybe][~moved]
        span = np.linalg.norm(toward, axis=1)
        ways[~moved] = np.where(span[:, None] > 0, toward / np.maximum(span, 1e-300)[:, None], np.nan)
        limits[~moved] = span
    return (ways, limits) if (~np.isnan(ways)).any() else (ways[:0], limits[:0])


def _toward(axis, colliders: Colliders, k: int, side: int, inside) -> bool:
    """Whether ``axis`` (along the mesh's normals) points from the vertices ``inside``
    (i, 3) closed collider k toward its centre, as a press from its solid side does: the
    faces a few vertices just inside leave through can be its far faces (the axis they give
    points back out through the mesh). Open colliders, and those met from their inside,
    are not judged."""
    if _is_open(colliders, k) or side != 1 or not inside.size:
        return True
    return float(axis @ (colliders.centres[k] - inside.mean(axis=0))) > 0.0


def _is_open(colliders: Colliders, k: int) -> bool:
    return colliders.open is not None and bool(colliders.open[k])


def turned(cast: Cast, flips: np.ndarray) -> Cast:
    """``cast`` with the faces of the colliders ``flips`` (k,) marks turned round: what a ray
    leaves there it enters, and their normals point the other way (a mirrored collider, an
    open one met from behind)."""
    if not flips.any():
        return cast
    sign = np.where(flips, -1.0, 1.0)[:, None]

    def turned_cast(origins: np.ndarray, rays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        signed, normals = cast(origins, rays)
        return signed * sign, normals * sign[:, :, None]

    return turned_cast


def _came_from_behind(points, direction, relative, ahead, ahead_normals, behind, behind_normals) -> bool | None:
    """Whether the mesh came to an open collider (a plane) from behind its faces: the side
    a plane faces is how it was made, not which side presses (a plane facing up, keyed down
    onto a ball, presses with its back). From the vertices its rays found behind its faces
    (``ahead``, ``behind`` (m,): signed hits along and against ``direction`` (m, 3), with
    their faces' normals (m, 3)): those that were behind that face before this frame's motion
    (``relative`` (m, 3): the collider's motion at them less theirs) came from behind,
    those in front of it crossed it now. Where nothing moved (the first frame), the side
    most of the vertices the rays met are on. None while no vertex is behind it; False
    where more are enclosed (behind faces both ways) than behind one only."""
    leave_ahead = np.where(ahead > 0, ahead, np.inf)
    leave_behind = np.where(behind > 0, behind, np.inf)
    behind_face = np.isfinite(np.minimum(leave_ahead, leave_behind))
    if not behind_face.any():
        return None
    # A vertex behind faces both ways is enclosed by them (a mesh with a few holes, such as
    # extruded text, is open but holds volumes): its faces face the right way. A plane's
    # faces can be behind a vertex one way only; those say which way they face it.
    enclosed = (ahead > 0) & (behind > 0)
    behind_face &= ~enclosed
    if enclosed.sum() >= behind_face.sum():
        return False
    by_ahead = leave_ahead <= leave_behind
    along = np.where(by_ahead, leave_ahead, -leave_behind)
    along = np.where(behind_face, along, 0.0)
    face = points + direction * along[:, None]  # where each leaves through the nearest face
    normal = np.where(by_ahead[:, None], ahead_normals, behind_normals)
    # Against the collider, a vertex was ``relative`` further along before this frame.
    was = np.einsum("ij,ij->i", points + relative - face, np.nan_to_num(normal))[behind_face]
    crossed, stayed = int((was > 0).sum()), int((was <= 0).sum())
    moved = np.abs(np.einsum("ij,ij->i", relative, np.nan_to_num(normal))[behind_face]).max() > 0
    if moved and crossed != stayed:
        return stayed > crossed
    in_front = ~behind_face & ((ahead < 0) | (behind < 0))
    return int(behind_face.sum()) > int(in_front.sum())


def _reached_side(
    side: int, hits, directions, points, normals, relative, centre, near=None, hollow: Callable[[], bool] = bool
) -> int:
    """A new collider's side, judged again from the vertices its rays found inside it
    (``hits``: signed distances (m,) along the push ``directions`` (m, 3) for ``side`` and
    against it, positive where a ray leaves it); ``side`` where none is. A vertex with one
    way out only (behind an open collider's face: a plane) votes for it; where none has, or
    the votes tie, the approach of the vertices inside decides (``approach_side``) from the
    collider's centre, or, for a ``hollow()`` one (its centre outside its body: tongs, an arm
    bent at the elbow, a ring), from where its body is at each vertex: a closed collider has
    a way out both ways, and the middle of that chord through it is in its body. The centre
    of a collider of two parts can lie inside the mesh they pinch, and judged from there both
    parts pressed from inside it and pushed it out through themselves (a ball's sides 0.44 m
    through a pincer's jaws at their first touch). Not for a solid one: a box's chords along
    the normals of a monkey's chin and ear run every way through it, and their middles said
    it came from inside her."""
    ahead, behind = hits
    out_ahead, out_behind = ahead > 0, behind > 0
    inside = out_ahead | out_behind
    if not inside.any():
        return side
    one_way = out_ahead ^ out_behind
    votes = int(np.where(out_ahead[one_way], side, -side).sum())
    if votes:
        return 1 if votes > 0 else -1
    if not hollow():
        return approach_side(points[inside], normals[inside], relative[inside], centre, near)
    half = (ahead[inside] + behind[inside]) / 2
    middles = points[inside] + directions[inside] * (ahead[inside] - half)[:, None]
    return approach_side(points[inside], normals[inside], relative[inside], centre, near, (middles, half))


#: Any direction will do to ask whether a point is inside a closed collider; this one lies
#: along no axis or diagonal, so it meets no edge of an upright box.
ASKING = np.array([0.267, 0.535, 0.802]) / np.linalg.norm([0.267, 0.535, 0.802])


def _hollow(cast: Cast, colliders: Colliders, which: np.ndarray) -> np.ndarray:
    """Per collider (k,), whether its centre lies outside its own body (a ray from it leaves
    no face first), asked of the colliders ``which`` (k,) bool only (False for the others)."""
    count = len(colliders.names)
    rays = np.full((count, count, 3), np.nan)
    rays[which, which] = ASKING
    signed = cast(colliders.centres, rays)[0]
    return which & ~(np.diagonal(signed) > 0)


def _near(colliders: Colliders, reach: np.ndarray) -> list[float | None]:
    """Per collider, the length ``approach_side`` weighs vertices by nearness to its centre
    within (``reach`` (k,)): None (all alike) for a wide one, more than twice the mesh's size."""
    wide = colliders.sizes > 2.0 * (np.inf if colliders.mesh_size is None else colliders.mesh_size)
    return [None if w else float(r) for w, r in zip(wide, reach, strict=True)]


def _out_of_the_others(
    cast: Cast, colliders: Colliders, sides, solid, points, directions, longest, push, pushed, rules, tilted
):
    """The pushes (m, 3) with each vertex ``pushed`` (by collider ``longest``) that its push
    takes into another collider pushed out of that one too, along that one's direction
    (``directions`` (k, m, 3)), or through a flat one's face (``_through_the_face``). A
    vertex below a floor and past a wall's lower edge, lifted by the floor's push, ended
    behind the wall (5 cm, a ball pressed into the corner of the two with Flesh and Keep
    Volume): the wall's rays, cast from where it was, had passed its edge. Also where the
    two pushes oppose: a wide floor's rest rule sent a monkey's vertex 18 cm along the floor
    behind a wall leaning back. ``rules``: as ``_cast_both`` takes them; ``tilted``: as
    ``_shorter`` does. Structure (an interior, a container) holds a vertex as ``_winner``
    says: a vertex it holds, and its pushes, are not asked (a skin a ball presses onto a
    bone stays on the bone, in the ball by their overlap)."""
    # (Not the broad phase's reach: it says which colliders were near each vertex where it
    # was, not where its push ends. A floor box's rest rule sent vertices back to their rest,
    # under a ball far from where they were, and they stayed 18 cm inside the ball.)
    motions, was_held, standoff, unbounded, _ = rules
    rows = pushed.nonzero()[0]
    others = np.ones((directions.shape[0], rows.size), dtype=bool)
    others[longest[rows], np.arange(rows.size)] = False
    if colliders.kinds is not None:  # (what structure holds stays held: ``_winner``)
        others &= (colliders.kinds == COLLIDER)[:, None] & (colliders.kinds[longest[rows]] == COLLIDER)
    others &= _may_have_entered(colliders, solid, points[rows], push[rows], standoff)
    asked = others.any(axis=0)
    if not asked.any():
        return push
    rows, others = rows[asked], others[:, asked]
    moved = points[rows] + push[rows]
    ways = directions[:, rows]
    ahead, behind, _ = _cast_both(cast, moved, ways, motions[:, rows], was_held[rows], standoff, unbounded, others)
    again, touch = _lengths(ahead[0], behind[0], colliders.scales()[:, None], standoff, was_held[rows])
    again, ways, _ = _through_the_face(
        cast,
        colliders,
        np.where(others.any(axis=1), sides, 0),
        solid,
        moved,
        lambda k, inward, sub: tilted(k, inward, rows[sub]),
        standoff,
        ahead,
        (np.where(others, again, 0.0), ways, touch | ~others),
    )
    push = push.copy()
    first = push[rows]
    for k in (again > 0).any(axis=1).nonzero()[0]:
        more = again[k] > 0
        push[rows[more]] += ways[k, more] * again[k, more, None]
    return _no_room(cast, colliders, points, rows, longest[rows], first, again, push)


def _no_room(cast: Cast, colliders: Colliders, points, rows, pushers, first, again, push) -> np.ndarray:
    """The pushes (m, 3) of the vertices of ``rows`` whose push out of another collider
    (``again`` (k, r)) undoes the push that took them in (``first`` (r, 3), by the colliders
    ``pushers`` (r,)): it is longer (that way out went through the other's far side: two balls
    pinching a cushion from above and below, their tips 1 cm past each other, sent its top
    vertices out through the bottom ball, 0.47 m), or it takes the vertex back into the
    pusher (a Rubber mesh keeps 5 cm off what it meets: squeezed into 2 cm between a ball and
    a floor box, the floor's standoff lifted a vertex back 2.6 cm inside the ball). Where two
    closed ones leave room between them along its push (from the pusher's face, ahead of the
    vertex or behind it, to the other's), it stops in the middle of that room, out of both: a
    wide floor box's rest rule sends a vertex back to its rest, under a ball now there, and
    left in the middle of their overlap, a crushed Stiff Shell's vertex stayed 8 mm inside
    the ball (with friction, held still). Where they leave none, a way out through the far
    side stops in the middle of the overlap, inside each by half. (Not for a plane: pushed
    off one into a corner, a vertex ended behind the other, 3.7 mm.)"""
    length = np.sqrt(np.einsum("ij,ij->i", first, first))
    through = again > length * (1.0 + 1e-6) + 1e-6 * colliders.scales()[:, None]
    along = first / np.where(length > 0, length, 1.0)[:, None]  # (the push's unit way)
    back_in = _back_in(cast, colliders, points[rows] + push[rows], pushers, along, again, through, length)
    if not (through.any() or back_in.any()):
        return push
    count = len(colliders.names)
    # Where the other is entered along the push from its start: where a way out through its
    # far side comes back out along the push (a back-cast from the push's end), or, back in
    # the pusher, where a ray along the push meets it.
    back = np.full((count, rows.size, 3), np.nan)
    back[through] = np.broadcast_to(-along, back.shape)[through]
    signed = cast(points[rows] + first, back)[0]
    ks, subs = through.nonzero()
    found = signed[ks, subs] > 0  # (a way back out: it came in along the push)
    ks, subs = ks[found], subs[found]
    enters = length[subs] - signed[ks, subs]  # (behind the vertex where it started inside it)
    overlap = np.minimum(signed[ks, subs], length[subs])
    share = 1.0 - overlap / (2.0 * length[subs])  # (of the push, taken: no room)
    inward = back_in.nonzero()[0]
    if inward.size:
        others = np.argmax(np.where(again[:, inward] > 0, again[:, inward], 0.0), axis=0)
        met = _cast_one_each(cast, count, points[rows[inward]], others, along[inward])
        known = met < 0  # (entered ahead; from inside it, where it was entered is not known)
        ks = np.concatenate([ks, others[known]])
        subs = np.concatenate([subs, inward[known]])
        enters = np.concatenate([enters, -met[known]])
        share = np.concatenate([share, np.ones(int(known.sum()))])
    was_through = np.arange(subs.size) < overlap.size  # (the others: back in)
    leaves = _face_along(cast, colliders, points[rows[subs]], pushers[subs], along[subs])
    closed = colliders.closed()
    room = closed[pushers[subs]] & closed[ks] & np.isfinite(leaves) & (leaves < enters)
    share[room] = (leaves[room] + enters[room]) / (2.0 * length[subs][room])
    taken = room | was_through  # (back in with no room: the pushes as they were)
    # In the middle of the room already, a push of rounding's size (1e-18 m) is none: the
    # solver takes no push under TINY, so such a vertex is free to move in the step, and
    # the frame must ask it again after (``core.frame._mend`` asks only the unpushed).
    share[taken & (np.abs(share) * length[subs] <= TINY)] = 0.0
    push[rows[subs[taken]]] = first[subs[taken]] * share[taken, None]
    return push


def _back_in(cast: Cast, colliders: Colliders, ended, pushers, along, again, through, length) -> np.ndarray:
    """(r,) which vertices another collider pushed (``again`` (k, r), not ``through`` its far
    side) end (``ended`` (r, 3)) back inside the collider that pushed them first
    (``pushers`` (r,), along ``along`` (r, 3), by ``length`` (r,)): a ray on along the push
    from where they end leaves it. Only where it is closed: the room between two is not
    measured behind a plane (``_no_room``)."""
    asked = (again > 0).any(axis=0) & ~through.any(axis=0) & (length > 0) & colliders.closed()[pushers]
    back_in = np.zeros(asked.shape, dtype=bool)
    if asked.any():
        back_in[asked] = _cast_one_each(cast, len(colliders.names), ended[asked], pushers[asked], along[asked]) > 0
    return back_in


def _face_along(cast: Cast, colliders: Colliders, points, pushers, along) -> np.ndarray:
    """(r,) where each vertex's push (``along`` (r, 3), unit) leaves the collider that pushed
    it (``pushers`` (r,)), from the vertex: ahead of it where it is inside, or behind it
    (negative) where it is outside, pushed to keep the standoff; nan where neither ray meets it."""
    count = points.shape[0]
    signed = _cast_one_each(
        cast,
        len(colliders.names),
        np.concatenate([points, points]),
        np.concatenate([pushers, pushers]),
        np.concatenate([along, -along]),
    )
    ahead, behind = signed[:count], signed[count:]
    return np.where(ahead > 0, ahead, np.where(behind < 0, behind, np.nan))


def _cast_one_each(cast: Cast, count: int, origins, which, ways) -> np.ndarray:
    """(r,) the signed distance along each ray (``origins`` (r, 3), ``ways`` (r, 3)) to the
    first face of one collider, ``which`` (r,) of the ``count``; the others' rays not cast."""
    pick = np.arange(origins.shape[0])
    rays = np.full((count, origins.shape[0], 3), np.nan)
    rays[which, pick] = ways
    return cast(origins, rays)[0][which, pick]


def _clear_way(cast: Cast, colliders: Colliders, points, move, distance, movers) -> np.ndarray:
    """(r,) which moves (``move`` (r, 3), ``distance`` (r,) long, from ``points``, each made by
    collider ``movers`` (r,)) cross no other closed collider on their way: a floor box's rest
    rule sent a vertex a ball had crushed onto the floor back to its rest, 0.87 m up through
    the ball, and the ball pressed it down again: a held squeeze jumped every four frames.
    Only the others whose bounding spheres the moves pass are cast."""
    closed = colliders.closed()
    if colliders.kinds is not None:
        closed &= colliders.kinds == COLLIDER
    clear = np.ones(points.shape[0], dtype=bool)
    if not (closed.any() and points.shape[0]):
        return clear
    to_centre = colliders.centres[:, None] - points[None]  # (k, r, 3)
    along = np.clip(np.einsum("kij,ij->ki", to_centre, move) / np.maximum(distance**2, 1e-300), 0.0, 1.0)
    miss = to_centre - along[..., None] * move[None]
    reach = colliders.sizes * (1.0 + HOLD_TOLERANCE)
    near = (np.einsum("kij,kij->ki", miss, miss) <= (reach**2)[:, None]) & closed[:, None]
    near[movers, np.arange(movers.size)] = False
    if not near.any():
        return clear
    asked = near.any(axis=0).nonzero()[0]
    unit = move[asked] / np.maximum(distance[asked], 1e-300)[:, None]
    rays = np.where(near[:, asked, None], unit[None], np.nan)
    count = asked.size
    # Along the way from its start (negative where it enters one) and back from its goal
    # (negative where the goal is outside one): a way that ends inside one is the next rules'
    # to judge (``_out_of_the_others``); refused, squeezes under a turned box shook and a
    # monkey's ear stayed on its top when it lifted.
    signed = cast(np.concatenate([points[asked], points[asked] + move[asked]]), np.concatenate([rays, -rays], 1))[0]
    enters, after = signed[:, :count], signed[:, count:]
    clear[asked] = ~((enters < 0) & (-enters < distance[asked]) & (after < 0)).any(axis=0)
    return clear


def _may_have_entered(colliders: Colliders, solid: np.ndarray, points, push, standoff: float) -> np.ndarray:
    """(k, m) whether each push (m, 3) from ``points`` may take its vertex into each
    collider: onto a flat one's solid side (``solid`` (k, 3): the unit normal pointing
    into it, nan for the others), or into another's bounding sphere. The others' rays are
    not cast again: a ball pressing a sheet 30 cm over a floor plane pushes thousands of
    vertices a few cm, none toward the floor's solid side."""
    moved = points + push
    reach = colliders.sizes * (1.0 + HOLD_TOLERANCE) + standoff
    offset = moved[None] - colliders.centres[:, None]
    may = np.einsum("kij,kij->ki", offset, offset) <= (reach**2)[:, None]
    for k in np.isfinite(solid).all(axis=1).nonzero()[0]:
        may[k] = (moved - colliders.centres[k]) @ solid[k] > -standoff - HOLD_TOLERANCE * colliders.sizes[k]
    return may


def _back_the_way_it_came(colliders: Colliders, motions, approach, was_held, longest, push, pushed) -> None:
    """``push`` (m, 3), in place: a vertex out of every collider at the last query (not
    ``was_held``) that came into a still, closed collider (``longest`` (m,): each vertex's)
    by its own move since (``approach`` (m, 3): a step's spread or relaxation) goes back that
    way where its push out is longer than twice that move, to where it was out. Its push
    along the press axis can leave through a far side: a box's, 0.7 m for a monkey's vertex
    a step had moved 7 cm in, past twice the press. (Not behind a plane: its side is its own.)"""
    pick = np.arange(push.shape[0])
    still = ~np.any(motions[longest, pick] != 0.0, axis=1)
    closed = colliders.closed()[longest]
    if colliders.kinds is not None:
        closed &= colliders.kinds[longest] == COLLIDER
    moved = np.einsum("ij,ij->i", approach, approach)
    back = pushed & ~was_held & closed & still & (moved > 0) & (np.einsum("ij,ij->i", push, push) > 4.0 * moved)
    push[back] = -approach[back]


def _winner(length: np.ndarray, touch: np.ndarray, kinds: np.ndarray | None) -> np.ndarray:
    """The collider (m,) whose push each vertex takes, from the push lengths (k, m) and
    where each vertex touches each collider (k, m): the longest of an interior's or
    container's where one pushes or the vertex rests on one (they hold the surface: a vertex
    on a bone stays on it, however a ball presses it), else the longest of all."""
    longest = np.argmax(length, axis=0)  # several colliders: the longest vector wins
    if kinds is None or not (kinds != COLLIDER).any():
        return longest
    structure = (kinds != COLLIDER)[:, None]
    holds = structure & ((length > 0) | touch)
    return np.where(holds.any(axis=0), np.argmax(np.where(holds, length, -1.0), axis=0), longest)


def approach_side(
    points: np.ndarray,
    normals: np.ndarray,
    relative: np.ndarray,
    centre: np.ndarray,
    near: float | None = None,
    bodies: tuple[np.ndarray, np.ndarray] | None = None,
) -> int:
    """The side a collider presses vertices ``points`` (m, 3) with normals (m, 3) from: the
    side of them its centre was on before this frame's motion (``relative`` (m, 3): its
    motion at them less theirs), against their mean position and normal. Before, not now: a
    thin plate that came down fast may have its centre past the sheet already, but it came
    from above. +1: against the normals; -1: along them. Ties press against them.

    With ``near`` (a length: the collider's reach), the means are weighted by nearness to its
    centre, the fourth power of it, so the vertices it met first decide: a ball meeting a
    monkey's ear held 72 of its vertices at once, the ear's back among them, and only 24
    faced the ball: their plain mean normal judged the ball to come from inside her, and its
    pushes went through it. The 5 nearest all faced it. A ball as wide as her held 90, 22
    facing it: weighed by the square, the many behind outvoted the 10 nearest (all facing
    it). (Not for a wide collider: the vertices nearest a floor box's centre are not where it
    meets the mesh.)

    With ``bodies``, where the collider's body is at each vertex (``_reached_side``: the
    middles (m, 3) of its chords through them, and their half lengths (m,)), each vertex
    votes for the side its body was on, weighed as above: vertices on opposite sides of the
    mesh, pinched between two parts of one collider, agree where their means would cancel.
    Votes within 1e-4 of the chords' lengths are a tie (a ring lying in a sheet, its middle
    on it: the rays' rounding would choose)."""
    weight = (
        np.ones(len(points))
        if near is None
        else np.clip(1.0 - np.linalg.norm(points - centre, axis=1) / near, 0.0, None) ** 4
    )
    total = float(weight.sum())
    if total <= 0.0:
        weight, total = np.ones(len(points)), float(len(points))
    if bodies is not None:
        middles, half = bodies
        vote = float(weight @ np.einsum("ij,ij->i", middles - relative - points, normals))
        return -1 if vote < -1e-4 * float(weight @ half) else 1
    before = centre - weight @ (relative + points) / total
    return -1 if float(before @ (weight @ normals)) < 0 else 1


def press_axis(points: np.ndarray, normals: np.ndarray, centre: np.ndarray, size: float) -> np.ndarray | None:
    """The press axis of a collider at ``centre`` (bounding radius ``size``) on vertices
    ``points`` with unit reference normals ``normals`` (m, 3): their mean, weighted by
    nearness to the centre, unit length, along the normals. None where they point all round
    (the collider is inside a closed surface): no one axis."""
    distance = np.linalg.norm(points - centre, axis=1)
    weight = np.clip(1.0 - distance / size, 0.0, None) ** 2
    axis = weight @ normals
    length = float(np.linalg.norm(axis))
    return axis / length if length > AXIS_AGREEMENT * weight.sum() else None


def _squeezing(colliders: Colliders, pressing: list[bool]) -> np.ndarray:
    """(k,) the colliders ``pressing`` the mesh whose bounds come near another's that presses
    it too (``SQUEEZE_REACH``): what lies between them is squeezed (``_squeezed``)."""
    kinds = np.array([colliders.kind(k) for k in range(len(pressing))])
    pressers = np.array(pressing, dtype=bool) & (kinds == COLLIDER)
    apart = np.linalg.norm(colliders.centres[:, None] - colliders.centres[None], axis=2)
    near = apart < SQUEEZE_REACH * (colliders.sizes[:, None] + colliders.sizes[None])
    np.fill_diagonal(near, False)
    return pressers & (near & pressers[None]).any(axis=1)


def _squeezed(had: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """The press axis of a collider squeezing the mesh with another (``_squeezing``): ``axis``
    from the normals near it now, unless it turned more than KEPT_TURN from the axis it
    ``had`` at the last frame; then that one. What lies near one's centre can be what the
    other pushed there, facing away from it: two jaws closing on a ball past its middle, one
    jaw's axis turned round in a frame, and both pushed the mesh the same way (a vertex
    1.24 m for jaws sweeping 0.4 m into it, ``test_pinch``). Not otherwise: alone, a ball
    sliding round a small sphere turns its axis faster, and kept it pushed the mesh ahead
    of it (up to 1.6 times as far); three balls pressing a monkey from three sides, one
    ploughed her (0.41 m moved against 0.22)."""
    return axis if float(axis @ had) >= KEPT_TURN else had


def press_inward(inward: np.ndarray, axis: np.ndarray | None, side: int) -> np.ndarray:
    """Unit directions (m, 3) a collider pressing from ``side`` with press ``axis`` (along the
    normals, or None) pushes vertices with inward normals ``inward`` (m, 3) in: the axis,
    pointing in, for every vertex whose own normal is within 90 degrees of it, blending to its
    own normal at 120 degrees and beyond; without an axis, each its own normal."""
    if axis is None:
        return inward
    axis = -axis * side
    facing = np.clip((inward @ axis) / AXIS_BLEND + 1.0, 0.0, 1.0)[:, None]
    return unit_rows(facing * axis + (1.0 - facing) * inward)


def push_direction(
    inward: np.ndarray, motion: np.ndarray, friction: float, offsets: np.ndarray | None = None
) -> np.ndarray:
    """Unit push directions (m, 3): the inward direction, tilted by friction toward the part
    of the collider's motion along the surface (up to 45 degrees at full friction), never past
    the collider's motion itself. The push always goes inward, so friction drags a surface
    along but never turns it over.

    ``offsets`` (m, 3), each vertex's displacement by the response so far, bounds the drag as
    Coulomb's law bounds a grip: a vertex is dragged along the motion no further than the
    friction times how deep it is pressed in; from there the collider slides over it. Without
    the bound a vertex in contact rides along with a sliding collider as far as it goes (a
    ball sliding across a face at friction 0.2 took vertices 0.65 m with it, pressed 0.2 m)."""
    along = np.einsum("ij,ij->i", motion, inward)[:, None]
    across = motion - along * inward
    sideways = np.linalg.norm(across, axis=1)
    tangential = unit_rows(across)
    # Toward the collider's motion, never past it: a collider coming straight in along the
    # push drags nothing sideways, however rough (a rounding-size sideways motion tilted a
    # push at full strength, and which way it pointed was rounding's).
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(sideways > 0, sideways / np.abs(along[:, 0]), 0.0)
    tilt = np.minimum(friction * FRICTION_TILT, slope)
    if offsets is not None and friction > 0:
        depth = np.maximum(np.einsum("ij,ij->i", offsets, inward), 0.0)
        grip = friction * FRICTION_TILT * depth  # the furthest it drags (the friction's, not the tilt's)
        dragged = np.einsum("ij,ij->i", offsets, tangential)
        room = np.divide(grip - dragged, grip, out=np.zeros_like(grip), where=grip > 0)
        tilt *= np.clip(room, 0.0, 1.0)
    return unit_rows(inward + tilt[:, None] * tangential)


def _crossed_open(cast: Cast, points, directions, relative, length, sizes, standoff: float, open) -> tuple:
    """Pushes (lengths (k, m), directions (k, m, 3)) with the vertices that crossed an
    ``open`` collider (k,) this frame, whose push found no way out, pushed back the way they
    came. Behind a plane a push can miss it: near its edge the push leaves past the edge (a
    ball landing across a table's edge sank 19 cm through it). A vertex found behind the
    plane by the ray back along its motion against it (``relative`` (k, m, 3)), no further
    than it moved, crossed it now."""
    travel = np.linalg.norm(relative, axis=2)  # (k, m)
    lost = open[:, None] & (length == 0) & (travel > 0)
    if not lost.any():
        return length, directions
    asked = lost.any(axis=0).nonzero()[0]
    wanted = lost[:, asked]
    back = np.where(wanted[..., None], relative[:, asked] / np.maximum(travel[:, asked, None], 1e-300), 0.0)
    signed = cast(points[asked], back)[0]
    slack = standoff + HOLD_TOLERANCE * sizes[:, None]
    crossed = wanted & (signed > 0) & (signed <= travel[:, asked] + slack)
    ks, rows = crossed.nonzero()
    length, directions = length.copy(), directions.copy()
    length[ks, asked[rows]] = signed[ks, rows] + standoff
    directions[ks, asked[rows]] = back[ks, rows]
    return length, directions


def _crossed_closed(cast: Cast, colliders: Colliders, points, moves, active, standoff: float, reach, found):
    """The pushes ``found`` (lengths, directions, touching; (k, m) each, directions (k, m, 3))
    with each vertex that went through a closed collider since the last query, in at one
    side and out at the other, pushed back to where it went in. A step can move a vertex
    further than a collider is thick: a ball lifting out of a deep squeeze let the dent under
    it go, the step's relaxation took the dent 46 cm up through the ball and out of its top,
    and the ball carried the mesh off from inside it (a new user's scenes). A vertex out of
    a still collider (``active`` (k,): those not enclosing the mesh; ``moves``: each one's
    motion at the vertices, and that less theirs, (k, m, 3) each), on the other side of its
    centre from where it was, whose way back along its own move goes into it, and whose way
    from where it was goes into it too before where it is now, crossed it. Only its own
    move: a collider that moved past a vertex (a ball sliding fast over a sheet) leaves it
    behind, where catching it on the face it went in by dragged the sheet along, ahead of
    the ball. ``reach`` (k, m): the vertices each collider's rays are cast for (None: all);
    the broad phase finds those whose move ended near it."""
    length, directions, touch = found
    motions, relative = moves
    count = len(colliders.names)
    closed = colliders.closed() & active
    if colliders.kinds is not None:
        closed &= colliders.kinds == COLLIDER
    # Moves shorter than the rounding of a contact are not asked: a vertex resting on a face
    # that a collider left by a hair is behind that face, not through the collider. A
    # collider that moved less is still (carried with the mesh, it moves by rounding).
    hold = HOLD_TOLERANCE * colliders.scales()[:, None]
    slack = standoff + hold
    travel = np.linalg.norm(relative, axis=2)
    travel[np.einsum("kij,kij->ki", motions, motions) > hold**2] = 0.0
    asked = closed[:, None] & (length == 0) & ~touch & (travel > 2.0 * slack)
    if reach is not None:
        asked &= reach
    if not asked.any():  # (a held frame: nothing moved)
        return found
    ks, rows = asked.nonzero()
    # Through, not round: where it was and where it is lie on either side of the collider's
    # centre. A vertex sliding along a ball's face (relaxing round it) moves along a chord
    # that dips into the ball, and is no more through it than before.
    now = points[rows] - colliders.centres[ks]
    opposite = np.einsum("ij,ij->i", now + relative[ks, rows], now) < 0.0
    if not opposite.any():
        return found
    ks, rows = ks[opposite], rows[opposite]
    back = relative[ks, rows] / travel[ks, rows, None]
    into = -_cast_one_each(cast, count, points[rows], ks, back)  # (nan: none met, negative: left)
    maybe = (into > 0) & (into < travel[ks, rows] - slack[ks, 0])
    if not maybe.any():
        return found
    ks, rows, back = ks[maybe], rows[maybe], back[maybe]
    went_in = -_cast_one_each(cast, count, points[rows] + relative[ks, rows], ks, -back)
    crossed = (went_in > slack[ks, 0]) & (went_in < travel[ks, rows])
    if not crossed.any():
        return found
    ks, rows, back, went_in = ks[crossed], rows[crossed], back[crossed], went_in[crossed]
    length, directions, touch = length.copy(), directions.copy(), touch.copy()
    length[ks, rows] = travel[ks, rows] - went_in + standoff
    directions[ks, rows] = back
    return length, directions, touch


def _cast_both(
    cast: Cast, points, directions, motions, was_held, standoff, unbounded=None, reach=None, both_ways=False
):
    """Rays ahead (along the push) and behind, each (distances (k, m), normals (k, m, 3)),
    where needed. Each vertex needs first the ray it most likely needs: one held in contact
    whose colliders hold still or retreat is resting (behind), one they advance on, or a new
    one, is inside (ahead). The other ray only where the first left the answer open: the way
    out of a vertex found inside from behind; the gap of an outside vertex that was in
    contact (or, with a standoff, of any). Every ray that may be needed is cast at once (a
    cast has a fixed cost, a ray almost none), and the answers to rays not needed are
    dropped, so a vertex sees exactly what asking in turn would show it. ``unbounded`` (k,):
    the colliders whose volume has no far side (an open mesh, a container's outside), where
    a vertex inside finds no face behind it: their rays ahead are always read. ``both_ways``: every
    vertex casts both rays (a collider's side is being chosen), and the third value is what
    they found before the answers not needed were dropped (as the first two; else None).
    ``reach`` (k, m): the vertices each collider's rays are cast for (None: all)."""
    shape = directions.shape[:2]
    ahead = (np.full(shape, np.nan), np.full((*shape, 3), np.nan))
    behind = (np.full(shape, np.nan), np.full((*shape, 3), np.nan))
    advancing = (np.einsum("kij,kij->ki", motions, directions) > 0).any(axis=0)
    back_first = was_held & ~advancing
    may_need_gap = was_held | (standoff > 0)  # (back_first is held, so it may need both too)
    backward = np.ones(shape[1], dtype=bool) if both_ways else may_need_gap
    _cast_into(cast, points, directions, np.ones(shape[1], dtype=bool), backward, ahead, behind, reach)
    raw = tuple((hits[0].copy(), hits[1].copy()) for hits in (ahead, behind)) if both_ways else None
    need_ahead = back_first & (behind[0] > 0).any(axis=0)
    need_gap = ~back_first & ~(ahead[0] > 0).any(axis=0) & may_need_gap
    for hits, kept in ((ahead, ~back_first | need_ahead), (behind, back_first | need_gap)):
        drop = np.broadcast_to(~kept, shape).copy()
        if unbounded is not None and hits is ahead:
            drop[unbounded] = False
        for values in hits:
            values[drop] = np.nan
    return ahead, behind, raw


def _cast_into(cast: Cast, points, directions, forward, backward, ahead, behind, reach=None) -> None:
    """One cast: rays ahead for the ``forward`` vertices and behind for the ``backward`` ones
    (masks), written into ``ahead`` and ``behind``; each collider's only for the vertices it
    can ``reach`` ((k, m), None: all)."""
    f, b = forward.nonzero()[0], backward.nonzero()[0]
    if f.size + b.size == 0:
        return
    origins = np.concatenate([points[f], points[b]])
    rays = np.concatenate([directions[:, f], -directions[:, b]], axis=1)
    if reach is not None:
        rays[~np.concatenate([reach[:, f], reach[:, b]], axis=1)] = np.nan  # not cast
    signed, normals = cast(origins, rays)
    ahead[0][:, f], behind[0][:, b] = signed[:, : f.size], signed[:, f.size :]
    ahead[1][:, f], behind[1][:, b] = normals[:, : f.size], normals[:, f.size :]


def _lengths(ahead, behind, sizes, standoff: float, was_held, slack=0.0) -> tuple[np.ndarray, np.ndarray]:
    """Push lengths (k, m) and touching flags (k, m: the vertex rests on that collider) from
    the signed distances ahead and behind. Ahead > 0 or behind > 0: inside (the ray leaves
    the volume through that face), and ahead is the way out; behind < 0: outside, and
    -behind is the gap to the collider. ``slack`` (k, m): more room for a vertex held at the
    last query to keep touching (``_faceting``)."""
    inside = ahead > 0
    length = np.where(inside, ahead + standoff, 0.0)
    gap = np.where(~inside & (behind <= 0), -behind, np.inf)  # 0: on the face
    length = np.where(~inside & (gap < standoff), standoff - gap, length)
    tolerance = np.where(was_held, HOLD_TOLERANCE * sizes + slack, TOUCH_TOLERANCE * sizes)
    touching = ~inside & (gap <= standoff + tolerance)
    # A vertex left exactly on a face (where the last step put it) meets that face at
    # distance 0, or its ray slips past it (inside from behind, no way out ahead): either
    # way it rests on the face.
    touching |= (ahead == 0) | ((behind > 0) & ~inside)
    # A push shorter than the touching tolerance is rounding, not penetration: touching.
    tiny = (length > 0) & (length <= TOUCH_TOLERANCE * sizes)
    touching |= tiny
    return np.where(tiny, 0.0, length), touching


def _faceting(colliders: Colliders, points: np.ndarray, faces: np.ndarray) -> np.ndarray | float:
    """(k, m) how far each collider's surface turned along itself under each vertex at
    ``points`` (m, 3) since the last query, up to ``FACETING`` of its size: the motion there
    of its turn about its centre, off the normal of its face behind the vertex (``faces``,
    (k, m, 3), nan where none). A face tilting toward or away from the vertex moves along its
    normal: a real gap. Only a turn: a collider sliding away carries its surface off what it
    held, which must spring back (held within the slide, a box sliding with friction across a
    monkey threw a vertex 0.70 m where its press allows 0.40)."""
    if colliders.turns is None:
        return 0.0
    offsets = points[None] - colliders.centres[:, None]  # (k, m, 3)
    turning = np.einsum("kmj,kij->kmi", offsets, colliders.turns) - offsets
    along = np.einsum("kmi,kmi->km", turning, faces)
    gliding = np.linalg.norm(turning - along[..., None] * faces, axis=2)
    return np.minimum(np.nan_to_num(gliding, nan=0.0), FACETING * colliders.scales()[:, None])


def nearest_faces(points, directions, ahead, behind) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each vertex, the nearest face either of its rays met, of any collider: a point on
    it and its outward normal, (m, 3) each, nan where no ray met a face, and the collider's
    index (m,). ``ahead`` and ``behind``: each the distances (k, m) and normals (k, m, 3) its
    rays found."""
    count = len(directions)
    distance = np.abs(np.concatenate([ahead[0], behind[0]]))  # (2k, m): ahead rays, then behind
    distance = np.where(np.isnan(distance), np.inf, distance)
    nearest = np.argmin(distance, axis=0)
    pick = np.arange(points.shape[0])
    along = distance[nearest, pick]
    met = np.isfinite(along)
    along = np.where(met, np.where(nearest < count, along, -along), 0.0)  # behind: backwards
    point = points + directions[nearest % count, pick] * along[:, None]
    normal = np.concatenate([ahead[1], behind[1]])[nearest, pick]
    point[~met] = normal[~met] = np.nan
    return point, normal, nearest % count


class Resting:
    """Where vertices rest on colliders, as their last rays found them (world space): the
    rays' origin, and the plane of the face met (a point and the outward normal), where
    ``rests``, and which collider's face that is (``on``, its index in ``state``). Valid while
    ``state`` holds: the colliders' (names and matrices, ``state[0]``) and the mesh's matrix,
    friction and standoff; when only some colliders moved, for the vertices resting on the
    others and near none that moved (``release``). A held press then needs no ray for its
    resting vertices, while another collider moves elsewhere."""

    def __init__(self, state: tuple, count: int):
        self.state = state
        self.rests = np.zeros(count, dtype=bool)
        self.on = np.full(count, -1, dtype=np.int16)
        self.origin, self.point, self.normal, self.inward = (np.zeros((count, 3)) for _ in range(4))
        # The way out of the collider (``Pushes.away``), how far the face lies behind it and
        # how much nearer it may come (``gap``, ``room``): single precision, as the solver's.
        self.away = np.zeros((count, 3), dtype=np.float32)
        self.gap, self.room = np.zeros(count, dtype=np.float32), np.zeros(count, dtype=np.float32)

    def still(self, index, points, standoff: float, tolerance: float) -> np.ndarray:
        """Which vertices ``index``, now at ``points``, still rest: moved less than half the
        touching tolerance since their ray, and the plane at the standoff along the direction
        they were pushed in then, within half the tolerance. A ray would find the same face
        (or one as near): a resting vertex."""
        still = np.zeros(index.size, dtype=bool)
        candidates = np.flatnonzero(self.rests[index])
        if candidates.size == 0:
            return still
        which, points = index[candidates], points[candidates]
        offset = points - self.origin[which]
        normal, inward = self.normal[which], self.inward[which]
        moved = np.einsum("ij,ij->i", offset, offset) <= (tolerance / 2) ** 2
        facing = np.einsum("ij,ij->i", normal, inward)
        height = np.einsum("ij,ij->i", points - self.point[which], normal)  # above the plane
        still[candidates] = moved & (facing >= 0.5) & (np.abs(height - standoff * facing) <= facing * tolerance / 2)
        return still

    def record(self, index, points, found: "Pushes") -> None:
        """What the rays of vertices ``index`` (at ``points``) found: those touching rest on
        their planes, pushed along their directions."""
        point, normal = found.planes
        met = np.isfinite(normal).all(axis=1)
        self.rests[index] = False
        resting = index[found.touching][met]
        self.rests[resting] = True
        self.origin[resting] = points[found.touching][met]
        self.point[resting], self.normal[resting], self.inward[resting] = point[met], normal[met], found.inward[met]
        self.away[resting], self.gap[resting], self.room[resting] = found.away[met], found.gap[met], found.room[met]
        self.on[resting] = -1 if found.rests_on is None else found.rests_on[met]

    def restart(self, state: tuple) -> None:
        """Valid for ``state`` now, with no vertex resting (the planes are kept, unread:
        clearing what ``rests`` marks is cheaper than new arrays for every vertex)."""
        self.state = state
        self.rests[:] = False

    def moved(self, state: tuple) -> list[int] | None:
        """The colliders (indices) whose matrices differ in ``state``; None when anything else
        does (the colliders themselves, the mesh's matrix, friction, standoff)."""
        (colliders, *rest), (now, *rest_now) = self.state, state
        if rest != rest_now or [name for name, _ in colliders] != [name for name, _ in now]:
            return None
        return [k for k, (before, after) in enumerate(zip(colliders, now, strict=True)) if before != after]

    def release(self, state: tuple, moved: list[int], near: list[np.ndarray]) -> None:
        """Valid for ``state`` now, where colliders ``moved`` (indices) moved: the vertices
        resting on them, and those near them now (``near``: each collider's vertices, by
        index), rest no longer. A vertex near none of them is out of their reach, and rests
        where it rested on the others, as their plane tells."""
        self.state = state
        self.rests[np.isin(self.on, moved)] = False
        for k in moved:
            self.rests[near[k]] = False

    def forget(self, which) -> None:
        self.rests[which] = False


def _ways_out(colliders: Colliders, normals, faces_of, inward, between) -> np.ndarray:
    """The unit ways out of their colliders of resting vertices (t, 3), what the solver's
    contact holds against (``core.frame.Found.away``): the normal of the face each rests on
    (``normals``, of colliders ``faces_of``; nan where none was met), which points out of
    the collider's solid (an open collider's as the mesh sees it: ``_oriented``), into a
    container; else the way it is pushed (``inward``). Not the push itself: blended with the
    vertex's own normal and the collider's axis, the pushes of a mesh resting on a tilted
    floor fan out 40 degrees round the floor's normal. 0 (not known: held both ways) for a
    vertex ``between`` colliders, touching more than one, and on an interior or a container,
    which hold the surface where it is (a skin a ball pressed onto a bone, let go of the
    bone, went up into the ball, which pushed it into the bone)."""
    met = np.isfinite(normals).all(axis=1)
    ways = np.where(met[:, None], normals, inward)
    if colliders.kinds is not None:
        between = between | (colliders.kinds[faces_of] != COLLIDER)
    ways[between] = 0.0
    return ways


def _rays_along(vectors: np.ndarray) -> np.ndarray:
    """Unit rays (m, 3) along each of ``vectors`` (m, 3): a collider's motion at each vertex
    less the vertex's own (back the way it came into it), or a vertex less the collider's
    centre (a ball's nearest way out); nan (not cast) where a vector is zero (neither moved,
    at the centre)."""
    length = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, length, out=np.full_like(vectors, np.nan), where=length > 0)
