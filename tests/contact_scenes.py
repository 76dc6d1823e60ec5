"""Moving colliders with exact ray casts, and a frame of the add-on's pipeline without Blender:
query, step, then the correction of what the step put back inside. The contact rules and the
solver are the add-on's own (``core``); only the rays are cast here, analytically."""

import numpy as np

from core import Surface, VertexNormals
from core.contact import Colliders, Contacts
from core.folds import FoldGuard
from core.frame import Found, advance, shown, unchanged
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


class Floor:
    """An open square (no far side: the add-on takes its inside to be behind its face, as
    for a plane used as floor) of half-size ``half`` facing along unit ``normal``, whose
    centre follows ``path``. Its bounding sphere is the square's: its centre lies in the
    face, metres from where a small mesh rests on it."""

    open = True

    def __init__(self, path, normal, half: float):
        self.path = np.asarray(path, dtype=np.float64)
        self.normal = np.asarray(normal, dtype=np.float64) / np.linalg.norm(normal)
        helper = np.array([1.0, 0.0, 0.0]) if abs(self.normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        self.u = np.cross(self.normal, helper) / np.linalg.norm(np.cross(self.normal, helper))
        self.v = np.cross(self.normal, self.u)
        self.half = float(half)
        self.radius = self.half * np.sqrt(2.0)
        self.centre = self.path[0]

    at = Ball.at

    def _over(self, points: np.ndarray) -> np.ndarray:
        offset = points - self.centre
        return (np.abs(offset @ self.u) <= self.half) & (np.abs(offset @ self.v) <= self.half)

    def depth(self, points: np.ndarray) -> np.ndarray:
        """How far each point is behind the face, over the square (-inf elsewhere)."""
        return np.where(self._over(points), -(points - self.centre) @ self.normal, -np.inf)

    def cast(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        facing = directions @ self.normal
        with np.errstate(divide="ignore", invalid="ignore"):
            t = -((origins - self.centre) @ self.normal) / facing
        hit = (facing != 0) & (t >= 0)
        hit &= self._over(origins + np.where(hit, t, 0.0)[:, None] * directions)
        signed = np.where(hit, np.where(facing > 0, t, -t), np.nan)  # along the normal: leaving
        normals = np.broadcast_to(self.normal, origins.shape).copy()
        normals[~hit] = np.nan
        return signed, normals


class Frames:
    """The add-on's frame on a surface without Blender: colliders move, the query finds the
    pushes of the vertices near them, the surface steps, and whatever the step put back
    inside a collider (relaxation, damping, bulging) is pushed out again."""

    def __init__(
        self,
        surface: Surface,
        faces,
        colliders,
        friction=0.0,
        standoff=0.0,
        fps=24.0,
        overshoot=None,
        reach=None,
        each_near=False,
    ):
        """``faces``: (f, c) vertex indices of the surface's polygons, each of c corners, or
        polygons of any sizes as Blender stores them, (corners, sizes);
        ``overshoot``: a ``core.overshoot.Overshoot`` of the surface (its shown positions are
        played); ``reach``: volume preservation on, giving back within that distance of the
        contact (``self.volume``, a ``core.volume.Volume``). ``each_near``: each closed
        collider's rays are cast only for the vertices near it (as the add-on casts them)."""
        self.overshoot = overshoot
        self.each_near = each_near
        rest = surface.positions.astype(np.float64)
        if isinstance(faces, tuple):
            corners, sizes = faces
        else:
            faces = np.asarray(faces)
            corners, sizes = faces.ravel(), np.full(len(faces), faces.shape[1])
        self.normals = VertexNormals(len(rest), corners, sizes)(rest, np.arange(len(rest)))
        self.volume = None if reach is None else Volume(rest, corners, sizes, self.normals, reach)
        self.guard = FoldGuard(rest, corners, sizes, self.normals)
        self.surface, self.colliders = surface, colliders
        self.friction, self.standoff, self.dt = friction, standoff, 1.0 / fps
        self.contacts = Contacts(surface.vertex_count)
        self.rest = rest
        self.size = float(np.linalg.norm(np.ptp(rest, axis=0))) / 2  # its bounding radius, as the add-on's
        self.previous = surface.positions.astype(np.float64)
        self.motions = np.zeros((len(colliders), 3))

    def play(self, frame: int) -> np.ndarray:
        """Bring the colliders to ``frame`` and respond; returns the positions (n, 3)."""
        self.motions = np.array([c.at(frame) for c in self.colliders])
        advance(
            self.surface,
            self.query,
            self.dt,
            self.guard,
            self.overshoot,
            volume=self.volume,
            friction=self.friction > 0,  # (as the add-on: without, folds are looked for near the contact)
        )
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
        push, touching, away = np.zeros((count, 3)), np.zeros(count, dtype=bool), np.zeros((count, 3))
        gap, room = np.zeros(count), np.zeros(count)
        near = np.zeros(count, dtype=bool)
        # After the step, as far round each collider as the step moved anything: a step can
        # move a vertex right through one (the add-on looks that far only where it could).
        swept = 0.0 if among is None else within
        for c in self.colliders:
            near |= close_to(c, positions, self.standoff + swept)
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
                open=np.array([getattr(c, "open", False) for c in self.colliders]),
                mesh_size=self.size,
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
                reach=self._reach(positions[queried], swept),
            )
            push[queried], touching[queried] = found.push, found.touching
            rests = queried[found.touching]
            away[rests], gap[rests], room[rests] = found.away, found.gap, found.room
        if among is None:
            self.motions[:] = 0  # within the frame, after this query, the colliders hold still
            self.contacts.forget((~near & self.contacts.held).nonzero()[0])
            far = [str(i) for i, c in enumerate(self.colliders) if not (close_to(c, positions, self.standoff)).any()]
            self.contacts.release(far)
        return Found(push, touching, away, gap, room)

    def _reach(self, points: np.ndarray, swept: float) -> np.ndarray | None:
        """Which of ``points`` each closed collider can reach (the broad phase's, ``swept``
        further: how far the step moved them), or None."""
        if not self.each_near:
            return None
        return np.array(
            [getattr(c, "open", False) | close_to(c, points, self.standoff + swept) for c in self.colliders],
            dtype=bool,
        )


def close_to(collider, positions: np.ndarray, standoff: float) -> np.ndarray:
    """The broad phase: vertices in the collider's bounding sphere, a little grown."""
    return np.linalg.norm(positions - collider.centre, axis=1) <= collider.radius * 1.01 + standoff


def _cast_each(colliders, origins, rays):
    results = [c.cast(origins, rays[i]) for i, c in enumerate(colliders)]
    return np.stack([r[0] for r in results]), np.stack([r[1] for r in results])


class MeshCollider:
    """A triangle mesh as a collider, cast exactly (Moeller-Trumbore over every triangle):
    the surface of a responding partner as one frame found it. ``points`` (n, 3) world
    positions, ``triangles`` (t, 3) wound outward."""

    def __init__(self, points: np.ndarray, triangles: np.ndarray):
        self.corners = points[triangles]  # (t, 3, 3)
        edge1 = self.corners[:, 1] - self.corners[:, 0]
        edge2 = self.corners[:, 2] - self.corners[:, 0]
        self.edges = edge1, edge2
        normals = np.cross(edge1, edge2)
        self.normals = normals / np.linalg.norm(normals, axis=1, keepdims=True)
        low, high = points.min(axis=0), points.max(axis=0)
        self.centre = (low + high) / 2
        self.radius = float(np.linalg.norm(high - low) / 2)

    def cast(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """As ``Ball.cast``: signed distance to the first face along each ray (+ leaving)."""
        edge1, edge2 = self.edges
        p = np.cross(directions[:, None], edge2[None])  # (m, t, 3)
        det = np.einsum("mti,ti->mt", p, edge1)
        with np.errstate(divide="ignore", invalid="ignore"):
            inverse = 1.0 / det
            s = origins[:, None] - self.corners[None, :, 0]
            u = np.einsum("mti,mti->mt", s, p) * inverse
            q = np.cross(s, edge1[None])
            v = np.einsum("mi,mti->mt", directions, q) * inverse
            t = np.einsum("mti,ti->mt", q, edge2) * inverse
            hit = (np.abs(det) > 1e-12) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
        t = np.where(hit, t, np.inf)
        first = np.argmin(t, axis=1)
        rows = np.arange(origins.shape[0])
        distance = t[rows, first]
        met = np.isfinite(distance)
        normals = self.normals[first]
        leaving = np.einsum("mi,mi->m", normals, directions) > 0
        signed = np.where(met, np.where(leaving, distance, -distance), np.nan)
        normals = np.where(met[:, None], normals, np.nan)
        return signed, normals

    def depth(self, points: np.ndarray) -> np.ndarray:
        """How far each point is inside, at most (the nearest face along 26 directions; its
        true depth is no more), negative outside: inside where most of those rays leave the
        volume first (a closed mesh: all do, but for rays grazing an edge)."""
        steps = np.array([-1.0, 0.0, 1.0])
        directions = np.array(np.meshgrid(steps, steps, steps)).reshape(3, -1).T
        directions = directions[np.abs(directions).sum(axis=1) > 0]
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        found = [self.cast(points, np.broadcast_to(d, points.shape))[0] for d in directions]
        signed = np.stack(found)  # (26, n)
        inside = (signed > 0).sum(axis=0) > len(directions) / 2
        leave = np.where(signed > 0, signed, np.inf).min(axis=0)
        enter = np.where(signed < 0, -signed, np.inf).min(axis=0)
        return np.where(inside, leave, -enter)
