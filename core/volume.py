"""Volume preservation: the volume a press removed, given back around the contact.

Harrison (1994, section 5.6) proposes it for the relaxation step: lengthen (or shorten) the
elastic offsets to recover the volume the deformation lost. Here it is done on the shown
surface, as secondary motion is (``core.overshoot``): after a frame's step the volume the
response removed is measured and given back as one outward move of the vertices not in
contact, along their rest normals, weighted by a smooth falloff of their distance from the
contact (``reach``, scene units: how far from the contact the volume reappears; greatest
at its rim, 0 from ``reach`` on). The solver's state stays the kinematic response, so what
is given back is a function of the deficit now, never a sum over frames: a press held for
ever does not grow it, and scrubbing shows exactly what was played.

What is measured:
- a closed mesh (every edge between two triangles): the enclosed volume, against rest; the
  move's size is the root of a cubic (the volume of moved triangles is cubic in it), so it
  is exact before the colliders are asked;
- an open sheet: the displaced volume over the region within ``reach`` of the contact, the
  sum of each vertex's move along its rest normal times its area (linear in the move).

The move is made in a few parts, the colliders asked after each (as for overshoot): a vertex
that meets one stops there, pushed out of it, and takes no further part; what it did not
give is given by the others in a second round (``ROUNDS``). No vertex moves further than
twice the dent is deep, so a reach too small to hold the volume gives back less, never a spike.
"""

import numpy as np

from .constants import NEGLIGIBLE

#: Rounds of giving back: a round's vertices the colliders push out are left out of the next.
ROUNDS = 2
#: The most a vertex is moved, as a multiple of the dent's depth (the deepest any vertex
#: moved along its rest normal).
TALLEST = 2.0
#: A round's move is made in parts no longer than this share of the dent's depth, the
#: colliders asked after each: a collider thinner than that where a vertex rises can be
#: passed (as one thinner than its own motion in a frame can pass the surface).
PART = 0.25
#: The contact's rim is sampled this finely (a share of the reach) to measure distances from
#: it: a vertex's distance is off by at most this much of the reach.
SAMPLING = 1.0 / 8.0
#: Rows of the distance matrix computed at once (bounded memory on dense meshes).
CHUNK = 1 << 21
#: Without contact (a dent springing back), the dent is where the surface went in by at least
#: this share of its deepest.
DENT = 0.5


def triangles_of(corners: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Polygons as Blender stores them (loops, corners per face), fanned into triangles (t, 3)."""
    corners, sizes = np.asarray(corners, dtype=np.int64), np.asarray(sizes, dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    fans = [np.zeros((0, 3), dtype=np.int64)]
    for i in range(1, int(sizes.max(initial=0)) - 1):  # per corner count, not per face
        big = sizes > i + 1
        fans.append(np.stack([corners[starts[big]], corners[starts[big] + i], corners[starts[big] + i + 1]], 1))
    return np.concatenate(fans)


def enclosed_volume(positions: np.ndarray, triangles: np.ndarray) -> float:
    """The signed volume (divergence theorem) of a closed mesh wound outward."""
    p = np.asarray(positions, dtype=np.float64)
    a, b, c = p[triangles[:, 0]], p[triangles[:, 1]], p[triangles[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


class Volume:
    """Volume preservation for one surface, built once per topology and rest shape.

    Parameters
    ----------
    rest : (n, 3) float, rest positions
    corners, sizes : the polygons (Blender's loops and corners per face)
    normals : (n, 3) float, the rest shape's unit vertex normals (the direction given back)
    reach : how far from the contact the volume reappears (object units, > 0)
    """

    def __init__(self, rest: np.ndarray, corners: np.ndarray, sizes: np.ndarray, normals: np.ndarray, reach: float):
        if not reach > 0:
            raise ValueError(f"reach must be positive, got {reach}")
        self.rest = np.asarray(rest, dtype=np.float64)
        self.normals = np.asarray(normals, dtype=np.float64)
        self.reach = float(reach)
        self.triangles = triangles_of(corners, sizes)
        t = self.triangles
        edges = np.sort(np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]]), axis=1)
        self.edges, uses = np.unique(edges, axis=0, return_counts=True)
        self.closed = bool(len(t)) and bool((uses == 2).all())
        self.rest_volume = enclosed_volume(self.rest, t) if self.closed else 0.0
        # Each vertex's share of the surface (a third of each triangle around it).
        a, b, c = (self.rest[t[:, i]] for i in range(3))
        third = np.linalg.norm(np.cross(b - a, c - a), axis=1) / 6.0
        self.area = np.bincount(t.ravel(), np.repeat(third, 3), minlength=len(self.rest))
        self.size = float(np.linalg.norm(np.ptp(self.rest, axis=0))) or 1.0
        self.shown: np.ndarray | None = None  # the positions shown at the last frame (None: as given)
        self.given = 0.0  # the volume given back at the last frame (object units cubed)

    def deficit(self, positions: np.ndarray, region: np.ndarray | None = None) -> float:
        """The volume the response removed: for a closed mesh its enclosed volume's loss
        against rest; for a sheet, minus the displaced volume over ``region`` (n,) bool."""
        if self.closed:
            return self.rest_volume - enclosed_volume(positions, self.triangles)
        return -float((self.area * self.height(positions))[region].sum())

    def height(self, positions: np.ndarray) -> np.ndarray:
        """How far each vertex moved out along its rest normal (negative: in), (n,)."""
        move = np.asarray(positions, dtype=np.float64) - self.rest
        return np.einsum("ij,ij->i", move, self.normals)

    def source(self, positions: np.ndarray, contact: np.ndarray) -> np.ndarray:
        """Where the volume was taken: the vertices in contact, or without contact (a dent
        springing back) the dent's deepest part. (n,) bool."""
        if contact.any():
            return contact
        depth = np.abs(self.height(positions))
        deepest = depth.max(initial=0.0)
        if deepest <= NEGLIGIBLE * self.size:
            return contact
        return depth >= DENT * deepest

    def distance(self, source: np.ndarray) -> np.ndarray:
        """Each vertex's rest distance from ``source`` (n,) bool, within about ``SAMPLING``
        of the reach; ``inf`` beyond the reach, 0 on the source."""
        distance = np.full(len(self.rest), np.inf)
        distance[source] = 0.0
        # Out of the source, the nearest source vertex is on its rim (an edge leaving it),
        # sampled one per cell of a fine grid: a few hundred points, not the contact's all.
        a, b = self.edges[:, 0], self.edges[:, 1]
        leaving = source[a] != source[b]
        rim = np.unique(np.where(source[a[leaving]], a[leaving], b[leaving]))
        if rim.size == 0:
            return distance
        cells = np.floor(self.rest[rim] / (SAMPLING * self.reach)).astype(np.int64)
        _cells, first = np.unique(cells, axis=0, return_index=True)
        samples = self.rest[rim[np.sort(first)]]
        low, high = samples.min(axis=0) - self.reach, samples.max(axis=0) + self.reach
        near = ~source & ((self.rest >= low) & (self.rest <= high)).all(axis=1)
        candidates = near.nonzero()[0]
        squared_samples = (samples * samples).sum(axis=1)
        rows = max(1, CHUNK // len(samples))
        for begin in range(0, candidates.size, rows):  # chunks of vertices, each vectorized
            chunk = candidates[begin : begin + rows]
            p = self.rest[chunk]
            squared = (p * p).sum(axis=1)[:, None] - 2.0 * p @ samples.T + squared_samples
            distance[chunk] = np.sqrt(np.maximum(squared.min(axis=1), 0.0))
        distance[distance > self.reach] = np.inf
        return distance

    def falloff(self, distance: np.ndarray) -> np.ndarray:
        """The weight of each vertex's share, (n,): a smooth ring, 0 at the contact (the
        vertices beside it lie under the collider, which a tall move there would meet or
        pass), 1 half the reach from it, 0 again from the reach on."""
        x = np.minimum(distance / self.reach, 1.0)
        return 16.0 * (x * (1.0 - x)) ** 2

    def scale(self, positions: np.ndarray, direction: np.ndarray, wanted: float, region) -> float:
        """How far to move along ``direction`` (n, 3) to give back ``wanted`` volume."""
        if not self.closed:  # the displaced volume is linear in the move
            gained = float((self.area * np.einsum("ij,ij->i", direction, self.normals))[region].sum())
            return wanted / gained if abs(gained) > 0 else 0.0
        # det(p + s u, q + s v, r + s w) / 6 over the triangles a move touches: a cubic in s.
        t = self.triangles[(direction[self.triangles] != 0).any(axis=(1, 2))]
        p = np.asarray(positions, dtype=np.float64)
        x, u = (p[t[:, i]] for i in range(3)), (direction[t[:, i]] for i in range(3))
        (a, b, c), (d, e, f) = x, u

        def det(x1, x2, x3):
            return float(np.einsum("ij,ij->", x1, np.cross(x2, x3)))

        linear = (det(d, b, c) + det(a, e, c) + det(a, b, f)) / 6.0
        square = (det(d, e, c) + det(d, b, f) + det(a, e, f)) / 6.0
        cubic = det(d, e, f) / 6.0
        if abs(linear) <= 0:
            return 0.0
        s = wanted / linear
        for _ in range(8):  # Newton from the linear guess: the nearest root, to rounding
            value = ((cubic * s + square) * s + linear) * s - wanted
            slope = (3.0 * cubic * s + 2.0 * square) * s + linear
            if slope == 0:
                break
            s -= value / slope
        return s

    def give_back(self, positions: np.ndarray, contact: np.ndarray, push_out) -> np.ndarray | None:
        """The positions to show: ``positions`` (n, 3) with the volume the response removed
        given back around ``contact`` (n,) bool, the vertices the colliders touched this
        frame. ``push_out(shown, moved)`` asks the colliders about the ``moved`` (n,) bool
        vertices of ``shown`` and returns the pushes out (n, 3). Returns None when nothing
        is given back (no contact, no dent, or nothing within reach)."""
        self.given = 0.0
        source = self.source(positions, contact)
        if not source.any():
            return None
        distance = self.distance(source)
        region = None if self.closed else np.isfinite(distance)
        weight = self.falloff(distance)
        start = self.deficit(positions, region)
        if abs(start) <= (NEGLIGIBLE * self.size) ** 3 or not weight.any():
            return None
        # No vertex is moved further than twice the dent is deep: bounded, and what a small
        # reach cannot hold is not given back rather than thrown past the colliders.
        limit = TALLEST * float(np.abs(self.height(positions)).max())
        shown = np.array(positions, dtype=np.float32)
        given = np.zeros(len(shown))  # how far each vertex was moved along its normal so far
        for _round in range(ROUNDS):
            moving = weight > 0
            wanted = self.deficit(shown, region)
            if not moving.any() or wanted == 0:
                break
            s = self.scale(shown, weight[:, None] * self.normals, wanted, region)
            step = np.clip(given + s * weight, -limit, limit) - given
            parts = max(1, int(np.ceil(np.abs(step).max() / (PART * limit / TALLEST))))
            stopped = self._rise(shown, moving, step[:, None] * self.normals, parts, push_out)
            given += step
            weight[stopped] = 0.0  # held by a collider: the next round gives its share to others
            if not stopped.any():
                break
        self.given = start - self.deficit(shown, region)
        return shown

    def _rise(self, shown: np.ndarray, moving: np.ndarray, move: np.ndarray, parts: int, push_out) -> np.ndarray:
        """Move ``shown``'s ``moving`` vertices by ``move`` (n, 3) in ``parts`` equal parts,
        asking the colliders after each: a vertex that meets one stops there, pushed out of
        it (a whole move at once could carry a vertex through a thin part of a collider, out
        of its far side, where no query would find it). Returns the stopped vertices."""
        start = shown.copy()
        stopped = np.zeros(len(shown), dtype=bool)
        for part in range(1, parts + 1):
            going = moving & ~stopped
            if not going.any():
                break
            shown[going] = start[going] + (move[going] * (part / parts)).astype(np.float32)
            out = push_out(shown, going)
            pushed = (out != 0).any(axis=1)
            shown[pushed] += out[pushed].astype(np.float32)
            stopped |= pushed
        return stopped
