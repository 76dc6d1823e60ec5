"""Displacement vectors: for each vertex of a mesh inside a collider, the vector that takes it
out (Harrison 1994, section 4.2.2), in the mesh's object space.

Direction: the surface's inward normal (frictionless) blended with the collider's motion
relative to the surface (full friction). Length: to where the collider's volume ends along
it, plus a standoff. A vertex is inside when the first face its ray meets faces along the
ray (it is leaving the volume). The side a vertex is pressed from is chosen at first contact
and kept while contact lasts, so a collider that goes deep or through a thin sheet never
flips the dent.
"""

from dataclasses import dataclass, field

import bpy
import numpy as np

from .colliders import Collider, usable_colliders
from .raycast import RayCaster

#: Vertices within this fraction of a collider's size outside it are touching it.
TOUCH_TOLERANCE = 1e-4


@dataclass
class Contact:
    """What a query found, in the deformable's object space."""

    displacement: np.ndarray  # (n, 3)
    touching: np.ndarray  # (n,) bool: outside, resting on a collider
    messages: list[str] = field(default_factory=list)
    queried: int = 0  # vertices that passed the broad phase


class CollisionQuery:
    """Per-mesh query state: the side each vertex is pressed from, and last positions of the
    colliders for their motion. One per deformable mesh."""

    def __init__(self, scene: bpy.types.Scene):
        self.caster = RayCaster(scene)
        self.side = np.zeros(0, dtype=np.int8)  # +1: pushed against its normal, -1: along it
        self._previous: dict[str, np.ndarray] = {}  # collider name -> last world matrix

    def reset(self) -> None:
        self.side = np.zeros(0, dtype=np.int8)
        self._previous.clear()

    def displacements(
        self,
        deformable: bpy.types.Object,
        positions: np.ndarray,
        normals: np.ndarray,
        candidates,
        friction: float = 0.0,
        standoff: float = 0.0,
    ) -> Contact:
        """The vectors for ``positions`` (n, 3) with unit ``normals`` (n, 3), object space."""
        count = positions.shape[0]
        if self.side.shape != (count,):
            self.side = np.zeros(count, dtype=np.int8)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        colliders, messages = usable_colliders(deformable, candidates, depsgraph)
        contact = Contact(np.zeros((count, 3)), np.zeros(count, dtype=bool), messages)
        matrix = np.array(deformable.matrix_world, dtype=np.float64)
        inverse = np.linalg.inv(matrix)
        near = np.zeros(count, dtype=bool)
        for collider in colliders:  # broad phase in object space: no transform of every vertex
            near |= _near(positions, collider, standoff, inverse)
        queried = np.flatnonzero(near)
        contact.queried = queried.size
        if queried.size:
            points = positions[queried] @ matrix[:3, :3].T + matrix[:3, 3]
            normal_world = _unit(normals[queried] @ np.linalg.inv(matrix[:3, :3]))  # inverse transpose
            motion = self._motions(colliders, points)
            push_world, touching = self._push(colliders, points, normal_world, motion, queried, friction, standoff)
            target = points + push_world
            local = (target - matrix[:3, 3]) @ np.linalg.inv(matrix[:3, :3]).T
            contact.displacement[queried] = local - positions[queried]
            contact.touching[queried] = touching
        # A vertex out of contact forgets its side (queried ones in _push): the next contact
        # chooses again.
        self.side[~near] = 0
        return contact

    def _motions(self, colliders: list[Collider], world: np.ndarray) -> list[np.ndarray]:
        """Each collider's motion since the last query at the given points (rigid: from its
        transform; a deforming collider's own shape change is not counted)."""
        motions = []
        for collider in colliders:
            now = np.array(collider.obj.matrix_world, dtype=np.float64)
            before = self._previous.get(collider.obj.name, now)
            self._previous[collider.obj.name] = now
            moved = now @ np.linalg.inv(before)
            motions.append(world @ moved[:3, :3].T + moved[:3, 3] - world)
        return motions

    def _push(self, colliders, points, normals, motions, queried, friction, standoff):
        """World-space push vectors and touching flags for the queried vertices."""
        side = self.side[queried]
        undecided = np.flatnonzero(side == 0)
        if undecided.size:
            side[undecided] = _first_contact_side(colliders, points[undecided], normals[undecided])
        inward = -normals * side[:, None]
        directions = np.stack([_direction(inward, motion, friction) for motion in motions])  # (k, m, 3)
        objects = [c.obj for c in colliders]
        sizes = np.array([c.radius for c in colliders])[:, None]
        # Forward: inside where the first face ahead is one the ray leaves the volume through.
        flip = np.array([-1.0 if c.inverted else 1.0 for c in colliders])[:, None]
        ahead = self.caster.cast(objects, points, directions) * flip
        inside = ahead > 0
        length = np.where(inside, ahead + standoff, 0.0)
        # Backward, only for vertices inside no collider (most in a press are inside): the
        # face behind, if the push ray would enter through it, is the gap to that collider.
        outside = np.flatnonzero(~inside.any(axis=0))
        gap = np.full(length.shape, np.inf)
        if outside.size:
            behind = self.caster.cast(objects, points[outside], -directions[:, outside]) * flip
            gap[:, outside] = np.where(behind < 0, -behind, np.inf)
        length = np.where(~inside & (gap < standoff), standoff - gap, length)
        touching = np.any(~inside & (gap <= standoff + TOUCH_TOLERANCE * sizes), axis=0)
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
        return push, touching


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
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=np.float64)
    world_corners = collider.low - margin + corners * (collider.high - collider.low + 2 * margin)
    local_corners = world_corners @ to_local[:3, :3].T + to_local[:3, 3]
    low, high = local_corners.min(axis=0), local_corners.max(axis=0)
    # The narrowest axis of the box first, then the others on what passed: most vertices
    # are rejected by one pair of comparisons.
    first, *others = np.argsort(high - low)
    boxed = np.flatnonzero((positions[:, first] >= low[first]) & (positions[:, first] <= high[first]))
    for axis in others:
        values = positions[boxed, axis]
        boxed = boxed[(values >= low[axis]) & (values <= high[axis])]
    centre = to_local[:3, :3] @ collider.centre + to_local[:3, 3]
    radius = (collider.radius + margin) * np.linalg.norm(to_local[:3, :3], 2)
    offset = positions[boxed] - centre
    near = np.zeros(positions.shape[0], dtype=bool)
    near[boxed[np.einsum("ij,ij->i", offset, offset) <= radius**2]] = True
    return near


def _unit(vectors: np.ndarray) -> np.ndarray:
    length = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, length, out=np.zeros_like(vectors), where=length > 0)
