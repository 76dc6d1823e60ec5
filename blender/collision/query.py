"""Displacement vectors: for each vertex of a mesh inside a collider, the vector that takes it
out (Harrison 1994, section 4.2.2), in the mesh's object space.

Direction: the contact's normal (frictionless) blended with the collider's motion relative
to the surface (full friction). The contact's normal is the surface's inward normal at first
contact, then, while the contact lasts, the outward normal of the collider face the vertex
was last pushed out through: a dent's own normals crease at its rim, and pushing along them
folds it. Length: to where the collider's volume ends along it, plus a standoff. A vertex is
inside when the first face its ray meets faces along the ray (it is leaving the volume). The
side a vertex is pressed from is chosen at first contact and kept while contact lasts, so a
collider that goes deep or through a thin sheet never flips the dent.

A vertex resting on a still rigid collider needs no ray: where the last ray found it on a
face, the plane of that face answers until the vertex moves away (most of a held press).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import bpy
import numpy as np

from .colliders import Collider, carried_box, usable_colliders
from .raycast import RayCaster

if TYPE_CHECKING:  # the query takes it ready-made: this package imports nothing of core
    from ...core import VertexNormals

#: Vertices within this fraction of a collider's size outside it are touching it.
TOUCH_TOLERANCE = 1e-4


@dataclass
class Contact:
    """What a query found, in the deformable's object space."""

    displacement: np.ndarray  # (n, 3)
    touching: np.ndarray  # (n,) bool: outside, resting on a collider
    messages: list[str] = field(default_factory=list)
    queried: int = 0  # vertices that passed the broad phase and were cast for


class CollisionQuery:
    """Per-mesh query state: the side each vertex is pressed from, and last positions of the
    colliders for their motion. One per deformable mesh.

    ``normals``, when given, makes the mesh's vertex normals (``core.VertexNormals`` of its
    topology): the query then finds the normals of the vertices it needs itself.
    """

    def __init__(self, scene: bpy.types.Scene, owner: str = "", normals: "VertexNormals | None" = None):
        self.caster = RayCaster(scene, owner)
        self._vertex_normals = normals
        self._last_normals: tuple = ()  # (positions, indices, their normals) of the last query
        self.side = np.zeros(0, dtype=np.int8)  # +1: pushed against its normal, -1: along it
        # The outward normal (world) of the collider face each vertex was last pushed out
        # through, nan where none: the way out while the contact lasts.
        self.contact = np.zeros((0, 3))
        self._previous: dict[str, np.ndarray] = {}  # collider name -> last world matrix
        self._resting: _Resting | None = None  # where vertices rest, while nothing else moves

    def displacements(
        self,
        deformable: bpy.types.Object,
        positions: np.ndarray,
        normals: np.ndarray | Callable[[np.ndarray], np.ndarray] | None,
        candidates,
        friction: float = 0.0,
        standoff: float = 0.0,
        depsgraph: bpy.types.Depsgraph | None = None,
    ) -> Contact:
        """The vectors for ``positions`` (n, 3) with unit ``normals`` (n, 3), object space.
        ``normals`` may be a function giving the normals (m, 3) of the vertices whose indices
        (m,) it is given, or None for the query's own vertex normals: either is asked only
        for vertices near a collider whose push no contact's normal steers already.
        ``depsgraph``: the evaluated one the colliders are read from (the add-on passes the
        one its frame-change handler was given); by default the context's."""
        count = positions.shape[0]
        if self.side.shape != (count,):
            self.side = np.zeros(count, dtype=np.int8)
            self.contact = np.full((count, 3), np.nan)
        if depsgraph is None:  # a script's call: no handler hands one down
            depsgraph = bpy.context.evaluated_depsgraph_get()
        colliders, messages = usable_colliders(deformable, candidates, depsgraph)
        contact = Contact(np.zeros((count, 3), dtype=np.float32), np.zeros(count, dtype=bool), messages)
        matrix = np.array(deformable.matrix_world, dtype=np.float64)
        inverse = np.linalg.inv(matrix)
        near = np.zeros(count, dtype=bool)
        for collider in colliders:  # broad phase in object space: no transform of every vertex
            near |= _near(positions, collider, standoff, inverse)
        moves = self._moves(colliders)
        if not near.any():
            self._forget(np.flatnonzero(self.side))
            self._resting = None
            return contact
        queried = near.nonzero()[0]
        points = positions[queried] @ matrix[:3, :3].T + matrix[:3, 3]
        # The surface's normals matter only where no contact's normal steers the push.
        normal_world = np.zeros((queried.size, 3))
        unsteered = np.flatnonzero(~np.isfinite(self.contact[queried]).all(axis=1))
        if unsteered.size:
            index = queried[unsteered]
            if normals is None:
                near_normals = self._normals_at(positions, index)
            else:
                near_normals = normals(index) if callable(normals) else normals[index]
            normal_world[unsteered] = _unit(near_normals @ inverse[:3, :3])  # normals: the inverse transpose
        # A held press: vertices resting on rigid colliders that have not moved (nor the mesh)
        # keep resting, without a ray, while the plane they rest on says so.
        state = (
            [(c.obj.name, np.array(c.obj.matrix_world).tobytes()) for c in colliders],
            matrix.tobytes(),
            friction,
            standoff,
        )
        tolerance = TOUCH_TOLERANCE * min(c.radius for c in colliders)
        resting = self._resting
        if resting is None or resting.origin.shape[0] != count:
            resting = self._resting = _Resting(state, count)
        elif resting.state != state:  # something moved: no vertex is known to rest
            resting.restart(state)
        if all(c.rigid for c in colliders):
            inward = self._inward(queried, normal_world, self.side[queried])
            still = resting.still(queried, points, inward, standoff, tolerance)
            contact.touching[queried[still]] = True
            queried, points, normal_world = queried[~still], points[~still], normal_world[~still]
        contact.queried = queried.size
        if queried.size:
            motion = [points @ move[:3, :3].T + move[:3, 3] - points for move in moves]
            push_world, touching, planes = self._push(
                colliders, points, normal_world, motion, queried, friction, standoff, depsgraph
            )
            target = points + push_world
            local = target @ inverse[:3, :3].T + inverse[:3, 3]
            contact.displacement[queried] = local - positions[queried]
            contact.touching[queried] = touching
            resting.record(queried, points, touching, planes)
        # A vertex out of contact forgets its side (queried ones in _push): the next contact
        # chooses again. Only a vertex with a side has anything to forget (a contact normal,
        # a plane it rests on), and those are few.
        self._forget(np.flatnonzero(~near & (self.side != 0)))
        return contact

    def _normals_at(self, positions: np.ndarray, index: np.ndarray) -> np.ndarray:
        """The vertex normals of vertices ``index`` at ``positions``, made again only when
        either has changed since the last query: a press held still makes none."""
        if self._vertex_normals is None:
            raise ValueError("no normals given, and the query was made without the mesh's vertex normals")
        last = self._last_normals
        if last and np.array_equal(last[1], index) and np.array_equal(last[0], positions):
            return last[2]
        normals = self._vertex_normals(positions, index)
        self._last_normals = (positions, index, normals)
        return normals

    def _forget(self, which: np.ndarray) -> None:
        """Vertices ``which`` are out of contact: no side, no contact normal, not resting."""
        self.side[which] = 0
        self.contact[which] = np.nan
        if self._resting is not None:
            self._resting.forget(which)

    def _moves(self, colliders: list[Collider]) -> list[np.ndarray]:
        """Each collider's rigid motion (a 4 x 4 world matrix) since the last query, which
        every query records; a deforming collider's own shape change is not counted."""
        moves = []
        for collider in colliders:
            now = np.array(collider.obj.matrix_world, dtype=np.float64)
            before = self._previous.get(collider.obj.name, now)
            self._previous[collider.obj.name] = now
            moves.append(now @ np.linalg.inv(before))
        return moves

    def _cast(self, depsgraph, objects, points, directions, flip, forward, backward, ahead, behind) -> None:
        """One evaluation: rays ahead for the ``forward`` vertices and behind for the
        ``backward`` ones (masks), written into ``ahead`` and ``behind``: each a pair of
        signed distances (k, m) and outward face normals (k, m, 3)."""
        f, b = forward.nonzero()[0], backward.nonzero()[0]
        if f.size + b.size == 0:
            return
        origins = np.concatenate([points[f], points[b]])
        rays = np.concatenate([directions[:, f], -directions[:, b]], axis=1)
        signed, normals = self.caster.cast(objects, origins, rays, depsgraph)
        signed, normals = signed * flip, normals * flip[:, :, None]
        ahead[0][:, f], behind[0][:, b] = signed[:, : f.size], signed[:, f.size :]
        ahead[1][:, f], behind[1][:, b] = normals[:, : f.size], normals[:, f.size :]

    def _push(self, colliders, points, normals, motions, queried, friction, standoff, depsgraph):
        """World-space push vectors and touching flags for the queried vertices, and the
        plane each touching one rests on (a point and the outward normal, (t, 3) each)."""
        side = self.side[queried]
        was_in_contact = side != 0
        undecided = np.flatnonzero(side == 0)
        if undecided.size:
            side[undecided] = _first_contact_side(colliders, points[undecided], normals[undecided])
        inward = self._inward(queried, normals, side)
        directions = np.stack([_direction(inward, motion, friction) for motion in motions])  # (k, m, 3)
        objects = [c.obj for c in colliders]
        sizes = np.array([c.radius for c in colliders])[:, None]
        flip = np.array([-1.0 if c.inverted else 1.0 for c in colliders])[:, None]
        # Signed distances to the first face ahead (along the push) and behind. Ahead > 0 or
        # behind > 0: inside (the ray leaves the volume through that face), and ahead is the
        # way out; behind < 0: outside, and -behind is the gap to the collider.
        # Each comes with the faces' outward normals (k, m, 3).
        shape = (len(colliders), points.shape[0])
        ahead_hits = (np.full(shape, np.nan), np.full((*shape, 3), np.nan))
        behind_hits = (np.full(shape, np.nan), np.full((*shape, 3), np.nan))
        # Each vertex casts the ray it most likely needs first: a vertex that was in contact
        # while its collider holds still or retreats is resting on it (behind), one whose
        # collider advances along the push is inside again (ahead), a new one is inside.
        advancing = np.zeros(points.shape[0], dtype=bool)
        for motion, direction in zip(motions, directions, strict=True):
            advancing |= np.einsum("ij,ij->i", motion, direction) > 0
        back_first = was_in_contact & ~advancing
        self._cast(depsgraph, objects, points, directions, flip, ~back_first, back_first, ahead_hits, behind_hits)
        # The other ray only where the first left the answer open: the way out of an inside
        # vertex found from behind; the gap of an outside vertex that was in contact (or, with
        # a standoff, of any): a vertex never in contact has no offsets to keep.
        need_ahead = back_first & (behind_hits[0] > 0).any(axis=0)
        need_gap = ~back_first & ~(ahead_hits[0] > 0).any(axis=0) & (was_in_contact | (standoff > 0))
        self._cast(depsgraph, objects, points, directions, flip, need_ahead, need_gap, ahead_hits, behind_hits)
        ahead, behind = ahead_hits[0], behind_hits[0]
        inside = ahead > 0
        length = np.where(inside, ahead + standoff, 0.0)
        gap = np.where(~inside & (behind <= 0), -behind, np.inf)  # 0: on the face
        length = np.where(~inside & (gap < standoff), standoff - gap, length)
        touching = np.any(~inside & (gap <= standoff + TOUCH_TOLERANCE * sizes), axis=0)
        # A vertex left exactly on a face (where the last step put it) meets that face at
        # distance 0, or its ray slips past it (inside from behind, no way out ahead): either
        # way it rests on the face.
        touching |= np.any((ahead == 0) | ((behind > 0) & ~inside), axis=0)
        # A push shorter than the touching tolerance is rounding, not penetration: touching.
        tiny = (length > 0) & (length <= TOUCH_TOLERANCE * sizes)
        touching |= tiny.any(axis=0)
        length = np.where(tiny, 0.0, length)
        longest = np.argmax(length, axis=0)  # several colliders: the longest vector wins
        pick = np.arange(points.shape[0])
        push = directions[longest, pick] * length[longest, pick][:, None]
        pushed = length[longest, pick] > 0
        touching &= ~pushed
        side[~(pushed | touching)] = 0
        self.side[queried] = side
        rests = touching.nonzero()[0]
        planes = _nearest_faces(
            points[rests], directions[:, rests], *([h[:, rests] for h in hits] for hits in (ahead_hits, behind_hits))
        )
        # The contact's normal for the next queries: the face a vertex inside was pushed out
        # through, kept while it stays in contact (pushed or touching), forgotten after.
        contact = self.contact[queried]
        out = pushed & inside[longest, pick]
        contact[out] = ahead_hits[1][longest[out], pick[out]]
        contact[~(pushed | touching)] = np.nan
        self.contact[queried] = contact
        return push, touching, planes

    def _inward(self, queried: np.ndarray, normals: np.ndarray, side: np.ndarray) -> np.ndarray:
        """Unit directions out of the colliders for vertices ``queried`` (world normals
        ``normals``, pressed from ``side``): while a contact lasts, the normal of the face
        last pushed through, so a dent whose own normals crease (a ridge at its rim) is still
        pushed the way the collider's surface says; at first contact, the surface's inward
        normal on the side it is pressed from."""
        inward = -normals * side[:, None]
        contact = self.contact[queried]
        known = np.isfinite(contact).all(axis=1)
        inward[known] = contact[known]
        return inward


class _Resting:
    """Where vertices rest on colliders, as their last rays found them (world space): the
    rays' origin, and the plane of the face met (a point and the outward normal), where
    ``rests``. Valid while ``state`` holds: the colliders' and the mesh's matrices, friction
    and standoff."""

    def __init__(self, state: tuple, count: int):
        self.state = state
        self.rests = np.zeros(count, dtype=bool)
        self.origin, self.point, self.normal = (np.zeros((count, 3)) for _ in range(3))

    def still(self, index, points, inward, standoff: float, tolerance: float) -> np.ndarray:
        """Which vertices ``index``, now at ``points`` and pushed along ``inward`` (unit), still
        rest: moved less than half the touching tolerance since their ray, their push facing
        the plane's normal, and the plane at the standoff along the push, within half the
        tolerance. A ray would find the same face (or one as near): a resting vertex."""
        still = np.zeros(index.size, dtype=bool)
        candidates = np.flatnonzero(self.rests[index])
        if candidates.size == 0:
            return still
        which, points, inward = index[candidates], points[candidates], inward[candidates]
        offset = points - self.origin[which]
        normal = self.normal[which]
        moved = np.einsum("ij,ij->i", offset, offset) <= (tolerance / 2) ** 2
        facing = np.einsum("ij,ij->i", normal, inward)
        height = np.einsum("ij,ij->i", points - self.point[which], normal)  # above the plane
        still[candidates] = moved & (facing >= 0.5) & (np.abs(height - standoff * facing) <= facing * tolerance / 2)
        return still

    def record(self, index, points, touching, planes) -> None:
        """What the rays of vertices ``index`` found: those ``touching`` rest on ``planes``."""
        point, normal = planes
        found = np.isfinite(normal).all(axis=1)
        self.rests[index] = False
        resting = index[touching][found]
        self.rests[resting] = True
        self.origin[resting], self.point[resting], self.normal[resting] = (
            points[touching][found],
            point[found],
            normal[found],
        )

    def restart(self, state: tuple) -> None:
        """Valid for ``state`` now, with no vertex resting (the planes are kept, unread:
        clearing what ``rests`` marks is cheaper than new arrays for every vertex)."""
        self.state = state
        self.rests[:] = False

    def forget(self, which) -> None:
        self.rests[which] = False


def _nearest_faces(points, directions, ahead, behind) -> tuple[np.ndarray, np.ndarray]:
    """For each vertex, the nearest face either of its rays met, of any collider: a point on
    it and its outward normal, (m, 3) each, nan where no ray met a face. ``ahead`` and
    ``behind``: each the distances (k, m) and normals (k, m, 3) its rays found."""
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
    return point, normal


def _first_contact_side(colliders: list[Collider], points: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """The side newly touched vertices are pressed from: one choice per collider, from where
    its centre is against the mean position and normal of the vertices it newly reaches
    (per-vertex choices would tear a dent apart where the centre lies in the surface).
    +1: pressed against the normal; -1: along it. Ties press against the normal."""
    centres = np.array([c.centre for c in colliders])
    nearest = np.argmin(np.linalg.norm(points[:, None] - centres[None], axis=2), axis=1)
    side = np.ones(points.shape[0], dtype=np.int8)
    for k in np.unique(nearest):
        mine = nearest == k
        facing = np.dot(centres[k] - points[mine].mean(axis=0), normals[mine].mean(axis=0))
        side[mine] = -1 if facing < -1e-9 * (1 + colliders[k].radius) else 1
    return side


def _direction(inward: np.ndarray, motion: np.ndarray, friction: float) -> np.ndarray:
    """Unit push directions: the inward normal blended with the collider's relative motion.

    Where the collider does not move, friction has nothing to follow: the normal is used."""
    moving = _unit(motion)
    blend = (1 - friction) * inward + friction * moving
    blend = np.where(np.linalg.norm(moving, axis=1, keepdims=True) > 0, blend, inward)
    return _unit(blend)


def _near(positions: np.ndarray, collider: Collider, standoff: float, to_local: np.ndarray) -> np.ndarray:
    """Broad phase, in the mesh's object space: vertices in the collider's bounding box and
    bounding sphere (grown by the standoff and the touching tolerance), both carried into
    object space conservatively (the box's corners; the sphere by the largest stretch)."""
    margin = standoff + TOUCH_TOLERANCE * collider.radius
    low, high = carried_box(collider.low - margin, collider.high + margin, to_local)
    # The axis that rejects most vertices first (judged on a sample of about a thousand),
    # then the others on what passed: most vertices cost one pair of comparisons.
    sample = positions[:: max(1, positions.shape[0] // 1024)]
    first, *others = np.argsort(((sample >= low) & (sample <= high)).sum(axis=0), kind="stable")
    column = positions[:, first]
    boxed = ((column >= low[first]) & (column <= high[first])).nonzero()[0]
    for axis in others:
        values = positions[:, axis].take(boxed)
        boxed = boxed[(values >= low[axis]) & (values <= high[axis])]
    centre = to_local[:3, :3] @ collider.centre + to_local[:3, 3]
    radius = (collider.radius + margin) * np.linalg.norm(to_local[:3, :3], 2)
    offset = positions.take(boxed, axis=0).astype(np.float64)  # take: rows, several times faster
    offset -= centre
    near = np.zeros(positions.shape[0], dtype=bool)
    near[boxed[np.einsum("ij,ij->i", offset, offset) <= radius**2]] = True
    return near


def _unit(vectors: np.ndarray) -> np.ndarray:
    length = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, length, out=np.zeros_like(vectors), where=length > 0)
