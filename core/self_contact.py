"""Self-contact rules: which vertices of a mesh are inside another part of the same mesh (the
inside of a bending elbow, a belly fold), and the moves that take them out.

Pure numpy: the rays are cast by the caller (Blender's Geometry Nodes in the add-on, exact
shapes or a plain triangle caster in the tests) against the mesh's own surface. Each vertex
casts two rays along its outward normal ``n``, both started a little off the surface
(``offset``) so they never meet the faces around the vertex itself:

- **out**, from ``p + offset n`` along ``n``. A surface that does not pass through itself
  is met from the front there (the ray enters another part: a gap) or not at all. A first
  face met from behind (the ray *leaves* a volume) means the vertex is inside another part.
- **in**, from ``p - offset n`` along ``-n``. For a vertex inside another part, the first
  face behind it is that part's face it crossed: how deep it is in. Or it is the mesh's own
  far wall, when the vertex is less than ``offset`` in (the ray starts out of the part) or
  deeper than its own part is thick: a depth above ``cap`` (half the vertex's thickness at
  rest) is that wall, not a depth, and the vertex only touches.

``keep_out`` is a function of the surface it is given and nothing else: no memory of the
last frame, so a pose held still gives the same moves, bit for bit, every frame (it cannot
flicker), at any frame rate and whatever path of scrubbing led there. Its rounds push both
sides of a fold back along the normals of the surface as given, each ``share`` (half) of its
depth (two soft partners of equal stiffness: they meet between), the last round the whole
of what is left; no vertex moves further than ``cap`` nor a round's ``step`` a round (a
crease the bend crumples turns its normals, and its rays can read depths across the mesh),
and a move that would turn a face over against the surface as given is shortened until it
does not (``unturned``).

An open sheet folded onto itself has no inside: while its halves approach, their rays meet
each other from the front (a gap); once one half has passed through the other, its rays meet
nothing from behind, and nothing is pushed. Self-contact holds closed meshes, and open ones
that enclose a volume along the normals (a tube without caps).
"""

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .graph import polygon_neighbours

#: The rays start this fraction of the mesh's size off the surface: past the rounding of the
#: faces around the vertex, far below what contact must hold (1e-3 of the size).
OFFSET = 1e-5
#: A vertex this fraction of the mesh's size from another part (or less than ``OFFSET`` into
#: it) touches it (what the panel counts).
TOUCH = 2e-4
#: Each side of a fold takes this share of the depth (equal stiffness: half each).
SHARE = 0.5
#: Rounds of ``keep_out``: each casts the rays again on the surface the last left; all but the
#: last take ``SHARE`` of each depth, the last the whole of what is left.
ROUNDS = 4
#: The furthest a vertex moves a round, in its mean edge lengths at rest.
STEP = 3.0
#: Rings of vertices around a pushed one that move with it, each this share of the ring nearer.
SPREAD_RINGS = 2
FALLOFF = 0.5
#: Halvings of a move that turns a face over before it is dropped (``unturned``).
HALVINGS = 6


def rays(positions: np.ndarray, normals: np.ndarray, offset: float) -> tuple[np.ndarray, np.ndarray]:
    """The two rays of every vertex, out then in: origins and unit directions, (2n, 3) each."""
    out = positions + offset * normals
    back = positions - offset * normals
    return np.concatenate([out, back]), np.concatenate([normals, -normals])


def thickness(inward: np.ndarray, offset: float) -> np.ndarray:
    """Each vertex's thickness at rest (n,): how far its in ray (signed distances, nan where
    it met nothing) goes before it leaves the mesh; infinite where it never does (a sheet)."""
    return np.where(inward > 0, inward + offset, np.inf)


def pushes(
    normals: np.ndarray,
    outward: np.ndarray,
    inward: np.ndarray,
    offset: float,
    cap: np.ndarray,
    touch: float,
    share: float = SHARE,
    step: np.ndarray | float = np.inf,
) -> tuple[np.ndarray, np.ndarray]:
    """The pushes (n, 3) out of the mesh's other parts and the touching flags (n,), from each
    vertex's unit outward ``normals`` (n, 3) and the signed distances its out and in rays met
    (n,) each: positive where the face met faces along the ray (the ray leaves a volume),
    negative where it faces against it, nan where nothing was met. ``cap`` (n,): the deepest
    a vertex is taken to be (deeper: its in ray met its own far wall). ``touch``: the gap
    within which a vertex touches. ``step`` (n,): the furthest a vertex is pushed at once;
    a deeper one is taken in over several questions (a crease the bend crumples turns its
    normals, and its rays read depths that would throw it across the mesh)."""
    with np.errstate(invalid="ignore"):  # nan compares False: a ray that met nothing
        inside = outward > 0
        depth = inward + offset
        pushed = inside & (inward > 0) & (depth <= cap)
        depth = np.minimum(depth, step)
        near = (outward <= 0) & (offset - outward <= touch)  # a gap of offset + |outward|
    push = np.where(pushed[:, None], normals * -(share * np.where(pushed, depth, 0.0))[:, None], 0.0)
    touching = (inside & ~pushed) | near
    return push.astype(normals.dtype, copy=False), touching


class Cast(Protocol):
    """``cast(positions (n, 3), normals (n, 3), among (m,))``: the signed distances (m,) each
    out and in ray of the vertices ``among`` meets on the surface at ``positions`` (see
    ``pushes``)."""

    def __call__(
        self, positions: np.ndarray, normals: np.ndarray, among: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass
class Kept:
    """What ``keep_out`` found: the moves (n, 3), how many vertices its first round found
    inside another part (``pressed``) and touching one, and the rays it cast."""

    moves: np.ndarray
    pressed: int
    touching: int
    rays: int


def keep_out(
    positions: np.ndarray,
    normals: np.ndarray,
    cast: Cast,
    offset: float,
    cap: np.ndarray,
    step: np.ndarray,
    touch: float,
    faces: "Faces",
    rounds: int = ROUNDS,
    among: np.ndarray | None = None,
) -> Kept:
    """The moves (n, 3) that take the surface at ``positions`` (n, 3) out of itself, along
    its unit vertex ``normals`` (n, 3) there: ``rounds`` rounds of ``pushes``, the last taking
    the whole of what is left, each asking only about the vertices the last pushed and the
    vertices of their faces (``among``: the first round's, every vertex when None). No move is
    longer than ``cap`` (n,), nor than ``step`` (n,) a round; after each round none turns a
    face of ``faces`` over (``unturned``), so the next asks again from a surface that is not
    turned over. A function of its arguments alone: the same surface, the same bits."""
    count = positions.shape[0]
    start = np.asarray(positions, dtype=np.float64)
    moved = start.copy()
    normals = np.asarray(normals, dtype=np.float64)
    asked = np.arange(count) if among is None else np.asarray(among, dtype=np.int64)
    pressed = touching = rays_cast = 0
    for round_ in range(rounds):
        if asked.size == 0:
            break
        outward, inward = cast(moved, normals, asked)
        rays_cast += 2 * asked.size
        share = 1.0 if round_ == rounds - 1 else SHARE
        push, touches = pushes(normals[asked], outward, inward, offset, cap[asked], touch, share, step[asked])
        pushing = push.any(axis=1)
        if round_ == 0:
            pressed, touching = int(np.count_nonzero(pushing)), int(np.count_nonzero(touches))
        if not pushing.any():
            break
        full = np.zeros((count, 3))
        full[asked[pushing]] = push[pushing]
        spread = faces.spread(full)
        moves = _within(moved + spread - start, cap)
        moves = faces.unturned(start, moves)
        moved = start + moves
        asked = faces.around(spread.any(axis=1)).nonzero()[0]
    return Kept(moved - start, pressed, touching, rays_cast)


def _within(moves: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``moves`` (n, 3) shortened to at most ``cap`` (n,) each."""
    length = np.sqrt(np.einsum("ij,ij->i", moves, moves))
    longer = length > cap
    moves[longer] *= (cap[longer] / length[longer])[:, None]
    return moves


class Faces:
    """A mesh's faces as the triangles of their corners (each corner with the corners before
    and after it: for a quad, both ways of splitting it), to find the faces a move turns over
    and the vertices around moved ones. Built once per topology."""

    def __init__(self, vertex_count: int, corners: np.ndarray, sizes: np.ndarray):
        corners, sizes = np.asarray(corners, dtype=np.int64), np.asarray(sizes, dtype=np.int64)
        starts = np.cumsum(sizes) - sizes
        last = starts + sizes - 1
        following, previous = np.arange(corners.size) + 1, np.arange(corners.size) - 1
        following[last], previous[starts] = starts[sizes > 0], last[sizes > 0]
        self.triangles = np.stack([corners[previous], corners, corners[following]], axis=1)
        self.count = vertex_count
        self._corners, self._starts = corners, starts
        self._face = np.repeat(np.arange(sizes.size), sizes)
        self._heads, self._tails = polygon_neighbours(vertex_count, corners, sizes)

    def spread(self, pushes: np.ndarray, rings: int = SPREAD_RINGS, falloff: float = FALLOFF) -> np.ndarray:
        """``pushes`` (n, 3) spread over the ``rings`` rings of vertices around the pushed
        ones, as a coarse level spreads a push: each ring takes ``falloff`` of the mean of
        what its neighbours nearer the push took."""
        spread = pushes.copy()
        taken = pushes.any(axis=1)
        for _ring in range(rings):
            if taken.all() or not taken.any():
                break
            edges = taken[self._tails] & ~taken[self._heads]
            heads, tails = self._heads[edges], self._tails[edges]
            if heads.size == 0:
                break
            total = np.zeros((self.count, 3))
            np.add.at(total, heads, spread[tails])
            number = np.bincount(heads, minlength=self.count)
            ring = number > 0
            spread[ring] = falloff * total[ring] / number[ring, None]
            taken |= ring
        return spread

    def around(self, mask: np.ndarray) -> np.ndarray:
        """``mask`` (n,) bool grown by every vertex of a face with a vertex in it."""
        if not mask.any():
            return mask.copy()
        touched = np.logical_or.reduceat(mask[self._corners], self._starts)
        grown = mask.copy()
        grown[self._corners[touched[self._face]]] = True
        return grown

    def unturned(self, positions: np.ndarray, moves: np.ndarray) -> np.ndarray:
        """``moves`` (n, 3) shortened where they turn a triangle over against ``positions``
        (n, 3): the longest move among the corners of each turned triangle is halved,
        ``HALVINGS`` times, then dropped, until none is turned (with every move dropped,
        every corner is where it was)."""
        moves = moves.copy()
        halved = np.zeros(self.count, dtype=np.int64)
        # Moves are only ever shortened: the triangles that can turn are among those with a
        # moving corner now, and their normals at ``positions`` do not change.
        corners = self.triangles[moves.any(axis=1)[self.triangles].any(axis=1)]
        before = _normals(positions, corners)
        while True:
            moving = moves.any(axis=1)[corners].any(axis=1)  # (a corner whose move was dropped: not)
            turned = np.einsum("ij,ij->i", before[moving], _normals(positions, corners[moving], moves)) <= 0.0
            if not turned.any():
                return moves
            at = corners[moving][turned]
            length = np.einsum("ijk,ijk->ij", moves[at], moves[at])
            longest = np.unique(at[np.arange(at.shape[0]), length.argmax(axis=1)])
            halved[longest] += 1
            moves[longest] *= np.where(halved[longest] > HALVINGS, 0.0, 0.5)[:, None]


def _normals(positions: np.ndarray, triangles: np.ndarray, moves: np.ndarray | None = None) -> np.ndarray:
    """Each triangle's (t, 3) normal, not made unit; with ``moves`` (n, 3), at ``positions``
    moved by them (only the corners' rows added)."""
    if moves is None:
        a, b, c = (positions[triangles[:, k]] for k in range(3))
    else:
        a, b, c = (positions[triangles[:, k]] + moves[triangles[:, k]] for k in range(3))
    return np.cross(b - a, c - a)
