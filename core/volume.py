"""Volume preservation: the volume a press removed, given back around the contact.

Harrison (1994, section 5.6) proposes it for the relaxation step: lengthen (or shorten) the
elastic offsets to recover the volume the deformation lost. Here it is done on the shown
surface, as secondary motion is (``core.overshoot``): after a frame's step the volume the
response removed is measured and given back as one outward move of the vertices not in
contact, along their rest normals, weighted by a smooth ring around the contact (``reach``,
object units: how far from the contact the volume reappears; 0 at the contact, most at
half the reach, 0 from the reach on). The solver's state stays the kinematic response, so
what is given back is a function of the deficit now, never a sum over frames: a press held
for ever does not grow it, and scrubbing shows exactly what was played.

What is measured:
- a closed mesh (every edge between two triangles): the enclosed volume, against rest; the
  move's size is the root of a cubic (the volume of moved triangles is cubic in it), so it
  is exact before the colliders are asked;
- an open sheet: the displaced volume over the region within ``reach`` of the contact, the
  sum of each vertex's move along its rest normal times its area (linear in the move).

The move is made in a few parts, the colliders asked after each (as for overshoot): a vertex
that meets one stops there, pushed out of it, and takes no further part; what it did not
give is given by the others in a second round (``ROUNDS``). No vertex moves further than
twice the dent is deep times its weight in the ring, so a reach too small to hold the volume
gives back less, never a spike, and a vertex entering the ring (a keyframed reach that grows)
rises from nothing, not at once.
Such a frame is recorded (``shortfall``), and ``needed_reach`` estimates the reach that would
have held it, for the user to be told.

Distances from the contact, and the reach, are measured on the rest shape as the scene sees
it (``space``: the object's linear transform), so under a non-uniform scale the ring reaches
as far in every direction; the volume itself is kept in object space, which a linear
transform scales by one factor (its determinant) everywhere, so a share kept there is the
same share kept in the scene.
"""

from dataclasses import dataclass

import numpy as np

from .constants import NEGLIGIBLE
from .vectors import nonzero_rows

#: Rounds of giving back: a round's vertices the colliders push out are left out of the next.
ROUNDS = 2
#: The most a vertex is moved, as a multiple of the dent's depth (the deepest any vertex
#: moved along its rest normal).
TALLEST = 2.0
#: A vertex of the ring weighed this much or more may rise the whole ``TALLEST`` times the
#: dent; less weighed, that share of it (``room``).
FULL_FROM = 1.0
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
#: What issue 21 promises, and below which a frame is ``short``: a closed mesh's volume within
#: this share of its rest volume, an open sheet's displaced volume within that share of what
#: the press took.
CLOSED_TOLERANCE = 0.02
OPEN_TOLERANCE = 0.05
#: ``needed_reach`` asks for a ring that could give back this many times what was missing
#: without any vertex at its tallest (colliders may hold part of it; the move is not linear).
MARGIN = 2.0
#: ``needed_reach`` tries reaches this many times longer than the last, up to the object's size.
GROWTH = 1.15


@dataclass(frozen=True)
class Shortfall:
    """A frame that gave back less than the tolerance allows: what ``Volume.needed_reach``
    needs to say what reach would have held it."""

    wanted: float  # the volume missing before any was given back (object units cubed)
    given: float  # what was given back
    reach: float  # the reach then
    source: np.ndarray  # (n,) bool, where the volume was taken
    depth: float  # the dent's depth (object units)
    pressed: bool = True  # whether a collider touched the surface then (else it sprang back or swung)

    @property
    def kept(self) -> float:
        """The share of the missing volume given back."""
        return self.given / self.wanted if self.wanted else 1.0


def room(weight: np.ndarray) -> np.ndarray:
    """The share of ``TALLEST`` times the dent a vertex of the ring may rise, from its weight
    in it: all of it from ``FULL_FROM`` on, less in proportion below, none at the ring's
    edges. Continuous in the weight, so a vertex entering the ring (a keyframed Reach that
    grows, a contact that spreads) rises from nothing, not to the whole limit in one frame."""
    return np.minimum(weight / FULL_FROM, 1.0)


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
    reach : how far from the contact the volume reappears (> 0; in ``space``'s units)
    space : (3, 3) float, the linear map from object space to where the reach is measured
        (the object's world matrix without its translation); None: object space
    """

    def __init__(
        self,
        rest: np.ndarray,
        corners: np.ndarray,
        sizes: np.ndarray,
        normals: np.ndarray,
        reach: float,
        space: np.ndarray | None = None,
    ):
        self.rest = np.asarray(rest, dtype=np.float64)
        self.normals = np.asarray(normals, dtype=np.float64)
        self.reach, self.space = 1.0, np.eye(3)
        self._measured, self._squared = self.rest, np.einsum("ij,ij->i", self.rest, self.rest)
        self.measure(reach, space)
        self.triangles = triangles_of(corners, sizes)
        t = self.triangles
        edges = np.sort(np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]]), axis=1)
        edges, uses = np.unique(edges, axis=0, return_counts=True)
        self.closed = bool(len(t)) and bool((uses == 2).all())
        # Each vertex's neighbours (CSR): the source's rim is read from its own vertices only.
        ends = np.concatenate([edges, edges[:, ::-1]])
        ends = ends[np.argsort(ends[:, 0], kind="stable")]
        self._neighbours = ends[:, 1]
        self._starts = np.searchsorted(ends[:, 0], np.arange(len(self.rest) + 1))
        self.rest_volume = enclosed_volume(self.rest, t) if self.closed else 0.0
        # Each vertex's share of the surface (a third of each triangle around it).
        a, b, c = (self.rest[t[:, i]] for i in range(3))
        third = np.linalg.norm(np.cross(b - a, c - a), axis=1) / 6.0
        self.area = np.bincount(t.ravel(), np.repeat(third, 3), minlength=len(self.rest))
        self.size = float(np.linalg.norm(np.ptp(self.rest, axis=0))) or 1.0
        self.shown: np.ndarray | None = None  # the positions shown at the last frame (None: as given)
        self.given = 0.0  # the volume given back at the last frame (object units cubed)
        self.wanted = 0.0  # the volume missing at the last frame, before any was given back
        self.shortfall: Shortfall | None = None  # the last frame's, when it kept less than promised
        self._last_source: tuple[np.ndarray, np.ndarray, tuple] | None = None  # a source, its distances, their reach
        # What the last shown positions were made of: the positions, the contact, the ring.
        self._made_of: tuple[np.ndarray, np.ndarray, np.ndarray, tuple] | None = None
        self.reused = False  # whether the last frame showed the frame before's positions again

    def measure(self, reach: float, space: np.ndarray | None = None) -> None:
        """Measure distances from the contact with ``reach`` in ``space`` (see the class): a
        frame may change either (a keyframed Reach, an animated scale); the rest shape as
        ``space`` sees it is computed again only when it changed."""
        if not reach > 0:
            raise ValueError(f"reach must be positive, got {reach}")
        self.reach = float(reach)
        space = np.eye(3) if space is None else np.asarray(space, dtype=np.float64)
        if space.shape != (3, 3) or not np.isfinite(space).all() or abs(np.linalg.det(space)) < 1e-12:
            raise ValueError("space must be an invertible 3 x 3 matrix")
        if not np.array_equal(space, self.space):
            self.space = space.copy()
            self._measured = self.rest @ space.T
            self._squared = np.einsum("ij,ij->i", self._measured, self._measured)  # |p|^2, for distances

    @property
    def kept(self) -> float:
        """The share of the missing volume given back at the last frame (1: all, or none missing)."""
        return 1.0 if self.wanted == 0 else self.given / self.wanted

    def height(self, positions: np.ndarray, among: np.ndarray | None = None) -> np.ndarray:
        """How far each vertex (of ``among``, indices; every one when None) moved out along its
        rest normal (negative: in), (n,) or (len(among),)."""
        if among is None:
            return np.einsum("ij,ij->i", np.asarray(positions, dtype=np.float64) - self.rest, self.normals)
        move = np.asarray(positions[among], dtype=np.float64) - self.rest[among]
        return np.einsum("ij,ij->i", move, self.normals[among])

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

    def distance(self, source: np.ndarray, reach: float | None = None) -> np.ndarray:
        """Each vertex's rest distance from ``source`` (n,) bool, measured in ``space``,
        within about ``SAMPLING`` of the reach; ``inf`` beyond ``reach`` (default: the
        reach), 0 on the source. (The last one is kept: a held press asks again about the
        same contact every frame.)"""
        reach = self.reach if reach is None else float(reach)
        key = (reach, self.space.tobytes())
        if (
            self._last_source is not None
            and self._last_source[2] == key
            and np.array_equal(source, self._last_source[0])
        ):
            return self._last_source[1]
        distance = np.full(len(self.rest), np.inf)
        distance[source] = 0.0
        self._last_source = (source.copy(), distance, key)
        # Out of the source, the nearest source vertex is on its rim (an edge leaving it),
        # sampled one per cell of a fine grid: a few hundred points, not the contact's all.
        inner = np.flatnonzero(source)
        count = self._starts[inner + 1] - self._starts[inner]
        first = np.repeat(self._starts[inner] - (np.cumsum(count) - count), count)
        neighbours = self._neighbours[first + np.arange(count.sum())]
        rim = np.unique(np.repeat(inner, count)[~source[neighbours]])
        if rim.size == 0:
            return distance
        measured = self._measured
        cells = np.floor(measured[rim] / (SAMPLING * reach)).astype(np.int64)
        _cells, first = np.unique(cells, axis=0, return_index=True)
        samples = measured[rim[np.sort(first)]]
        low, high = samples.min(axis=0) - reach, samples.max(axis=0) + reach
        near = ~source
        for axis in range(3):  # (column by column: no (n, 3) temporaries)
            column = measured[:, axis]
            near &= (column >= low[axis]) & (column <= high[axis])
        candidates = near.nonzero()[0]
        # |p - q|^2 = |p|^2 - 2 p.q + |q|^2: the nearest sample is the least -2 p.q + |q|^2.
        squared_samples = (samples * samples).sum(axis=1)
        rows = max(1, CHUNK // len(samples))
        for begin in range(0, candidates.size, rows):  # chunks of vertices, each vectorized
            chunk = candidates[begin : begin + rows]
            nearest = (measured[chunk] @ (-2.0 * samples.T) + squared_samples).min(axis=1)
            distance[chunk] = np.sqrt(np.maximum(nearest + self._squared[chunk], 0.0))
        distance[distance > reach] = np.inf
        return distance

    def needed_reach(self, shortfall: Shortfall) -> float | None:
        """About the shortest reach whose ring could have given back what ``shortfall``'s
        frame missed (``MARGIN`` times it, none of the ring past ``TALLEST`` times the dent's
        depth, to first order: each vertex's area times its rise), in the reach's units;
        None when even a ring as wide as the object could not (a dent too deep for what is
        left of the mesh). Tries reaches ``GROWTH`` times longer in turn: for a short frame
        only, not every frame."""
        missing, rise = MARGIN * abs(shortfall.wanted), TALLEST * shortfall.depth
        extent = float(np.linalg.norm(np.ptp(self._measured, axis=0)))
        reach = shortfall.reach
        while reach < extent:
            reach *= GROWTH
            distance = self.distance(shortfall.source, reach)
            ring = np.isfinite(distance) & (distance > 0)
            if rise * float((self.area[ring] * room(self.falloff(distance[ring], reach))).sum()) >= missing:
                return reach
        return None

    def falloff(self, distance: np.ndarray, reach: float | None = None) -> np.ndarray:
        """The weight of each vertex's share, (n,): a smooth ring, 0 at the contact (the
        vertices beside it lie under the collider, which a tall move there would meet or
        pass), 1 half the reach from it, 0 again from the reach on."""
        x = np.minimum(distance / (self.reach if reach is None else reach), 1.0)
        return 16.0 * (x * (1.0 - x)) ** 2

    def _volume_of(self, positions: np.ndarray, triangles: np.ndarray) -> float:
        """Six times the signed volume the ``triangles`` (t, 3) contribute at ``positions``."""
        p = positions
        a, b, c = (np.asarray(p[triangles[:, i]], dtype=np.float64) for i in range(3))
        return float(np.einsum("ij,ij->", a, np.cross(b, c)))

    def give_back(self, positions: np.ndarray, contact: np.ndarray, push_out) -> np.ndarray | None:
        """The positions to show: ``positions`` (n, 3) with the volume the response removed
        given back around ``contact`` (n,) bool, the vertices the colliders touched this
        frame. ``push_out(shown, among)`` asks the colliders about the vertices ``among``
        (indices) of ``shown`` and returns the pushes out (n, 3). Returns None when nothing
        is given back (no contact, no dent, or nothing within reach)."""
        if self._still(positions, contact, push_out):
            self.reused = True
            return self.shown
        self.reused, self.given, self.wanted, self.shortfall, self._made_of = False, 0.0, 0.0, None, None
        source = self.source(positions, contact)
        if not source.any():
            return None
        distance = self.distance(source)
        weight = self.falloff(distance)
        ring = np.flatnonzero(weight > 0)  # the vertices that may rise (within the reach, out of contact)
        deficit, triangles = self._deficit(positions, distance, ring)
        start = deficit(positions)
        # No vertex is moved further than twice the dent is deep: bounded, and what a small
        # reach cannot hold is not given back rather than thrown past the colliders.
        depth = float(np.abs(self.height(positions)).max())
        # (A deficit within float32's rounding of the object's volume is none.)
        if abs(start) <= NEGLIGIBLE * self.size**3 or depth <= 0:
            return None
        self.wanted = start
        if ring.size == 0:  # a reach shorter than the mesh's edges: nothing can rise
            self._record(0.0, source, depth, bool(contact.any()))
            return None
        weight, normals = weight[ring], self.normals[ring]
        # Each vertex rises at most ``TALLEST`` times the dent where the ring weighs it most,
        # less toward the ring's edges (``room``), not the whole of it wherever the ring is
        # weighted at all: a ring too
        # short to hold the volume would otherwise raise a vertex entering it (a Reach that
        # grows, a contact that spreads) from nothing to the whole limit in one frame, a pop.
        # So what is shown changes as smoothly as the weights, and a full ring holds what
        # ``needed_reach`` reckons it holds.
        limit = TALLEST * depth * room(weight)
        shown = np.array(positions, dtype=np.float32)
        given = np.zeros(ring.size)  # how far each vertex rose along its normal so far
        for _round in range(ROUNDS):
            wanted = deficit(shown)
            if not weight.any() or wanted == 0:
                break
            s = self._scale(shown, ring, weight, normals, wanted, triangles)
            step = np.clip(given + s * weight, -limit, limit) - given
            parts = max(1, int(np.ceil(np.abs(step).max() / (PART * depth))))
            moving = np.flatnonzero(step)  # (a vertex stopped before rises no further)
            stopped = np.zeros(ring.size, dtype=bool)
            stopped[moving] = self._rise(shown, ring[moving], step[moving, None] * normals[moving], parts, push_out)
            given += step
            weight[stopped] = 0.0  # held by a collider: the next round gives its share to others
            if not stopped.any():
                break
        self._record(start - deficit(shown), source, depth, bool(contact.any()))
        self._made_of = (np.array(positions), contact.copy(), ring, self._measuring())
        return shown

    def _deficit(self, positions: np.ndarray, distance: np.ndarray, ring: np.ndarray):
        """The volume missing at some shown positions, as a function of them, and for a
        closed mesh the triangles around ``ring`` (only they change when it rises; else None)."""
        if self.closed:
            near = np.zeros(len(self.rest), dtype=bool)
            near[ring] = True
            triangles = self.triangles[near[self.triangles].any(axis=1)]
            others = enclosed_volume(positions, self.triangles) - self._volume_of(positions, triangles) / 6.0
            return (lambda shown: self.rest_volume - others - self._volume_of(shown, triangles) / 6.0), triangles
        # An open sheet: the displaced volume over the region within the reach.
        region = np.flatnonzero(np.isfinite(distance))
        area = self.area[region]
        return (lambda shown: -float((area * self.height(shown, region)).sum())), None

    def _record(self, given: float, source: np.ndarray, depth: float, pressed: bool) -> None:
        """Keep what a frame gave back, and whether it fell short of the tolerance (``pressed``:
        whether a collider touched the surface then)."""
        self.given = given
        left = abs(self.wanted - given)
        tolerance = CLOSED_TOLERANCE * abs(self.rest_volume) if self.closed else OPEN_TOLERANCE * abs(self.wanted)
        if left > tolerance:
            self.shortfall = Shortfall(self.wanted, given, self.reach, source.copy(), depth, pressed)

    def _measuring(self) -> tuple:
        """How distances are measured now (a keyframed Reach or scale changes it)."""
        return (self.reach, self.space.tobytes())

    def _still(self, positions: np.ndarray, contact: np.ndarray, push_out) -> bool:
        """Whether the last shown positions stand: made of the same positions and contact (a
        held press), and none of the risen vertices is in a collider now (one may have moved
        onto the bulge without touching the surface beneath)."""
        if self._made_of is None or self.shown is None:
            return False
        made_of, touched, ring, measuring = self._made_of
        if measuring != self._measuring():
            return False
        if not (np.array_equal(contact, touched) and np.array_equal(positions, made_of)):
            return False
        return not push_out(self.shown, ring)[ring].any()

    def _scale(self, positions, ring, weight, normals, wanted: float, triangles) -> float:
        """How far to move ``ring``'s vertices along ``weight`` times their ``normals`` to give
        back ``wanted`` volume (``triangles``: those around the ring, for a closed mesh)."""
        if triangles is None:  # a sheet's displaced volume is linear in the move
            gained = float((self.area[ring] * weight).sum())
            return wanted / gained if gained > 0 else 0.0
        direction = np.zeros((len(self.rest), 3))
        direction[ring] = weight[:, None] * normals
        # det(p + s u, q + s v, r + s w) / 6 over the triangles: a cubic in s.
        p = np.asarray(positions, dtype=np.float64)
        (a, b, c), (d, e, f) = ([m[triangles[:, i]] for i in range(3)] for m in (p, direction))

        def det(x1, x2, x3):
            return float(np.einsum("ij,ij->", x1, np.cross(x2, x3)))

        linear = (det(d, b, c) + det(a, e, c) + det(a, b, f)) / 6.0
        square = (det(d, e, c) + det(d, b, f) + det(a, e, f)) / 6.0
        cubic = det(d, e, f) / 6.0
        if linear == 0:
            return 0.0
        s = wanted / linear
        for _ in range(8):  # Newton from the linear guess: the nearest root, to rounding
            value = ((cubic * s + square) * s + linear) * s - wanted
            slope = (3.0 * cubic * s + 2.0 * square) * s + linear
            if slope == 0:
                break
            s -= value / slope
        return s

    def _rise(self, shown: np.ndarray, ring: np.ndarray, move: np.ndarray, parts: int, push_out) -> np.ndarray:
        """Move ``shown``'s ``ring`` vertices by ``move`` (len(ring), 3) in ``parts`` equal
        parts, asking the colliders after each: a vertex that meets one stops there, pushed
        out of it (a whole move at once could carry a vertex through a thin part of a
        collider, out of its far side, where no query would find it). Returns which of the
        ring stopped, (len(ring),) bool."""
        start = shown[ring]
        stopped = np.zeros(ring.size, dtype=bool)
        for part in range(1, parts + 1):
            going = np.flatnonzero(~stopped)
            if going.size == 0:
                break
            index = ring[going]
            shown[index] = start[going] + (move[going] * (part / parts)).astype(np.float32)
            out = push_out(shown, index)[index]
            pushed = nonzero_rows(out)
            shown[index[pushed]] += out[pushed].astype(np.float32)
            stopped[going[pushed]] = True
        return stopped
