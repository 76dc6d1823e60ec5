"""Moving colliders with exact ray casts, and a frame of the add-on's pipeline without Blender:
query, step, then the correction of what the step put back inside. The contact rules and the
solver are the add-on's own (``core``); only the rays are cast here, analytically."""

import numpy as np

from core import Surface, VertexNormals
from core.contact import Colliders, Contacts
from core.folds import FoldGuard
from core.frame import advance, shown, unchanged
from core.volume import Volume


class Ball:
    """A sphere whose centre follows ``path`` (frames, 3)."""

    def __init__(self, path, radius: float):
        self.path = np.asarray(path, dtype=np.float64)
        self.radius = float(radius)
        self.centre = self.path[0]

    def at(self, frame: int) -> np.ndarray:
        """Move to ``frame``; returns the motion (3,) since the last frame."""
        before, self.centre = self.centre, self.path[frame]
        return self.centre - before

    def depth(self, points: np.ndarray) -> np.ndarray:
        """How far each point is inside (negative outside), (n,)."""
        return self.radius - np.linalg.norm(points - self.centre, axis=1)

    def cast(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance to the first face along each ray (+ leaving, - entering, nan: none)
        and its outward normal, as the add-on's ray caster gives them."""
        rel = origins - self.centre
        b = np.einsum("ij,ij->i", rel, directions)
        c = np.einsum("ij,ij->i", rel, rel) - self.radius**2
        root = np.sqrt(np.maximum(b * b - c, 0.0))
        leaving = c < 0
        t = np.where(leaving, -b + root, -b - root)
        hit = (b * b - c >= 0) & (t >= 0)
        signed = np.where(hit, np.where(leaving, t, -t), np.nan)
        normals = (origins + t[:, None] * directions - self.centre) / self.radius
        normals[~hit] = np.nan
        return signed, normals


class Box:
    """An axis-aligned box of half-sizes ``half`` whose centre follows ``path``."""

    def __init__(self, path, half):
        self.path = np.asarray(path, dtype=np.float64)
        self.half = np.asarray(half, dtype=np.float64)
        self.radius = float(np.linalg.norm(self.half))
        self.centre = self.path[0]

    at = Ball.at

    def depth(self, points: np.ndarray) -> np.ndarray:
        """How far each point is inside (the distance to the nearest face; negative outside)."""
        return (self.half - np.abs(points - self.centre)).min(axis=1)

    def cast(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rel = origins - self.centre
        with np.errstate(divide="ignore", invalid="ignore"):
            inverse = 1.0 / directions
            near = (-np.sign(directions) * self.half - rel) * inverse
            far = (np.sign(directions) * self.half - rel) * inverse
        near = np.where(directions == 0, np.where(np.abs(rel) <= self.half, -np.inf, np.inf), near)
        far = np.where(directions == 0, np.where(np.abs(rel) <= self.half, np.inf, -np.inf), far)
        enter, leave = near.max(axis=1), far.min(axis=1)
        inside = (np.abs(rel) < self.half).all(axis=1)
        hit = (enter <= leave) & (leave >= 0)
        t = np.where(inside, leave, enter)
        hit &= t >= 0
        axis = np.where(inside, far.argmin(axis=1), near.argmax(axis=1))
        normals = np.zeros_like(origins)
        rows = np.arange(len(origins))
        sign = np.where(inside, np.sign(directions[rows, axis]), -np.sign(directions[rows, axis]))
        normals[rows, axis] = sign
        normals[~hit] = np.nan
        return np.where(hit, np.where(inside, t, -t), np.nan), normals


class Frames:
    """The add-on's frame on a surface without Blender: colliders move, the query finds the
    pushes of the vertices near them, the surface steps, and whatever the step put back
    inside a collider (relaxation, damping, bulging) is pushed out again."""

    def __init__(
        self, surface: Surface, faces, colliders, friction=0.0, standoff=0.0, fps=24.0, overshoot=None, reach=None
    ):
        """``faces``: (f, c) vertex indices of the surface's polygons, each of c corners;
        ``overshoot``: a ``core.overshoot.Overshoot`` of the surface (its shown positions are
        played); ``reach``: volume preservation on, giving back within that distance of the
        contact (``self.volume``, a ``core.volume.Volume``)."""
        self.overshoot = overshoot
        rest = surface.positions.astype(np.float64)
        faces = np.asarray(faces)
        corners, sizes = faces.ravel(), np.full(len(faces), faces.shape[1])
        self.normals = VertexNormals(len(rest), corners, sizes)(rest, np.arange(len(rest)))
        self.volume = None if reach is None else Volume(rest, corners, sizes, self.normals, reach)
        self.guard = FoldGuard(rest, corners, sizes, self.normals)
        self.surface, self.colliders = surface, colliders
        self.friction, self.standoff, self.dt = friction, standoff, 1.0 / fps
        self.contacts = Contacts(surface.vertex_count)
        self.rest = rest
        self.previous = surface.positions.astype(np.float64)
        self.motions = np.zeros((len(colliders), 3))

    def play(self, frame: int) -> np.ndarray:
        """Bring the colliders to ``frame`` and respond; returns the positions (n, 3)."""
        self.motions = np.array([c.at(frame) for c in self.colliders])
        advance(self.surface, self.query, self.dt, self.guard, self.overshoot, volume=self.volume)
        extra = shown(self.surface, self.overshoot, self.volume)
        return (self.surface.positions if extra is None else extra).astype(np.float64)

    def query(self, positions: np.ndarray, among: np.ndarray | None = None, within: float = np.inf, shown=False):
        """Pushes (n, 3) and touching flags (n,) of the vertices near a collider (``among``):
        the first query of a frame sees the colliders' motion, the second (after the step)
        sees them hold still. ``within``, how far ``among`` moved since the first query, is
        checked, not used (every vertex is tested): the step must not understate it.
        ``shown``: positions shown, not the solver's: the contact memory is left as it was
        (``core.frame.Find``; the positions last asked about are remembered, as the add-on's
        query does)."""
        if shown:
            with unchanged(self.contacts):
                return self.query(positions, among, within)
        positions = positions.astype(np.float64)
        if among is None:
            self.first = positions
        elif among.size:
            moved = np.linalg.norm(positions[among] - self.first[among], axis=1).max()
            assert moved <= within, f"the step moved a vertex {moved} but said {within}"
        count = positions.shape[0]
        push, touching = np.zeros((count, 3)), np.zeros(count, dtype=bool)
        near = np.zeros(count, dtype=bool)
        for c in self.colliders:
            near |= close_to(c, positions, self.standoff)
        asked = near.copy()
        if among is not None:
            asked[:] = False
            asked[among] = near[among]
        queried = asked.nonzero()[0]
        approach = positions - self.previous
        self.previous = positions
        if queried.size:
            rules = Colliders(
                [str(i) for i in range(len(self.colliders))],
                np.array([c.centre for c in self.colliders]),
                np.array([c.radius for c in self.colliders]),
                lambda origins, rays: _cast_each(self.colliders, origins, rays),
            )
            if among is None:  # each collider's press axis, from every vertex near it
                self.contacts.aim(rules, positions[queried], self.normals[queried])
            found = self.contacts.push(
                queried,
                positions[queried],
                self.normals[queried],
                approach[queried],
                np.broadcast_to(self.motions[:, None], (len(self.colliders), queried.size, 3)),
                rules,
                self.friction,
                self.standoff,
                offsets=positions[queried] - self.rest[queried],
            )
            push[queried], touching[queried] = found.push, found.touching
        if among is None:
            self.motions[:] = 0  # within the frame, after this query, the colliders hold still
            self.contacts.forget((~near & self.contacts.held).nonzero()[0])
            far = [str(i) for i, c in enumerate(self.colliders) if not (close_to(c, positions, self.standoff)).any()]
            self.contacts.release(far)
        return push, touching


def close_to(collider, positions: np.ndarray, standoff: float) -> np.ndarray:
    """The broad phase: vertices in the collider's bounding sphere, a little grown."""
    return np.linalg.norm(positions - collider.centre, axis=1) <= collider.radius * 1.01 + standoff


def _cast_each(colliders, origins, rays):
    results = [c.cast(origins, rays[i]) for i, c in enumerate(colliders)]
    return np.stack([r[0] for r in results]), np.stack([r[1] for r in results])
