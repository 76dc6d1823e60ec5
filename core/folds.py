"""Faces the response turned over, and the move that turns them back.

Pushes along a collider's press axis (on a sheet, its normal) keep a pressed sheet a height
field over its rest shape, which cannot fold. What can fold it is motion *along* the
surface: friction dragging contact vertices with a sliding collider past neighbours it does
not touch. When a step folds a face (a triangle of a polygon whose normal turned against its
rest direction), the guard shortens the part of the response along the surface around the
fold (a few rings of triangles, fading out at their edge) by the one factor that leaves no
face folded (found by bisection): friction drags the surface as far as it can without
turning it over. Straightening vertex by vertex instead folds the neighbours of each
straightened vertex in turn; straightening the whole mesh moves what has nothing to do
with the fold. It works in the solver's space (rest space): a rig's deformation does not
fold faces.

A curved mesh is no height field, and without friction it folds near a contact too: the
coarse levels turn the surface around a dent, and the thin faces there fold (a UV sphere's
near its pole); a collider's push lays a vertex past a neighbour it does not hold (a box's
edge on a sphere). Without friction the guard straightens only near the contact
(``near_contact``). Then, anywhere, it carries the surface beside what is still folded along
with it (``carry``): scaling a pushed vertex back does not last, the next push puts it there
again; and far from any contact the coarse levels, moving a monkey's head, crumple its thin
features (7-21 rings from the ball), which no scaling along the surface undoes.

Nor does a press held still push anything, yet a step moves the surface: the offsets out of
contact relax toward the shape the press holds, and where that shape turns faces over (the
thin faces round a deep dent in a finely divided sphere) relaxing turns them over.
Straightened (or carried) after, the next step relaxed them back into the fold, and a press
held still moved every frame. So, while nothing pushes (``core.frame.HELD_STILL``), first the
motion of the vertices that relaxing their own finest offsets alone moved (the coarser levels
hold still under them: the press holds those) is taken back around what it turned over, just
enough (``held_back``), and not carried on that frame: they relax as far as they can without
folding, and a press held still comes to rest. A surface springing back moves with its coarse
levels and is left to ``straighten``: taken back, it stayed crushed.
"""

import numpy as np

from .graph import polygon_neighbours, ranges, symmetric_graph
from .vectors import rows_differ

#: Bisection steps for the factor on the response along the surface (1/256 at the end).
ROUNDS = 8
#: Rings of triangles around the folded faces that are straightened, tried in turn until one
#: region holds the fold (the last: far enough for any fold a step makes).
REGION_RINGS = (2, 4, 8, 16, 64)
#: Faces whose normal is within this cosine of lying in their rest plane count as folded.
FLAT = 0.01
#: Without friction, folds are looked for within this many rings of polygons of the
#: vertices the colliders push or hold: the coarse levels' turn of the surface around a dent
#: folds the thin faces there (a UV sphere's near its pole, 2 to 7 rings from the contact).
CONTACT_RINGS = 8
#: Rings of polygons around a fold a collider's push makes whose response is smoothed
#: (``FoldGuard.carry``; a UV sphere's folds needed 2, once 4: 4 holds them all, and trying 2
#: first cost a monkey's frame more than it saved); the most smoothing rounds, the folds
#: looked for every ``CARRY_CHECK`` rounds.
CARRY_RINGS = 4
CARRY_ROUNDS = 32
CARRY_CHECK = 4


class FoldGuard:
    """Built once per topology and rest shape.

    Parameters
    ----------
    rest : (n, 3) float
        Rest positions.
    corners, sizes :
        Polygons as Blender stores them: each face's vertices in winding order (loops), and
        corners per face.
    normals : (n, 3) float
        The rest shape's unit vertex normals: what stays of the response where it is
        straightened.
    """

    def __init__(self, rest: np.ndarray, corners: np.ndarray, sizes: np.ndarray, normals: np.ndarray):
        corners, sizes = np.asarray(corners, dtype=np.int64), np.asarray(sizes, dtype=np.int64)
        starts = np.cumsum(sizes) - sizes
        fans = [np.zeros((0, 3), dtype=np.int64)]
        # A quad: the triangle at each of its corners, so it counts as turned whichever
        # diagonal Blender splits it along (it picks by the quad's shape); a larger polygon:
        # the fan from its first corner.
        quads = starts[sizes == 4]
        for i in range(4):
            fans.append(np.stack([corners[quads + (i + j) % 4] for j in (0, 1, 2)], 1))
        for i in range(1, int(sizes.max(initial=0)) - 1):
            big = (sizes > i + 1) & (sizes != 4)
            fans.append(np.stack([corners[starts[big]], corners[starts[big] + i], corners[starts[big] + i + 1]], 1))
        triangles = np.concatenate(fans)
        self.rest = np.asarray(rest, dtype=np.float64)
        self.size = float(np.linalg.norm(np.ptp(self.rest, axis=0))) if len(self.rest) else 0.0  # (its box's diagonal)
        self._rest32 = self.rest.astype(np.float32)
        self.normals = np.asarray(normals, dtype=np.float64)
        self._normals32 = self.normals.astype(np.float32)
        rest_normals = self._face_normals(self.rest, triangles)
        length = np.linalg.norm(rest_normals, axis=1)
        keep = length > 1e-12 * max(1.0, float(np.abs(self.rest).max(initial=0.0))) ** 2
        self.triangles = triangles[keep]
        self.rest_normals = rest_normals[keep] / length[keep, None]
        # (``_folded_anywhere``'s columns: each corner of every face, each component)
        self._corner_columns = tuple(np.ascontiguousarray(self.triangles[:, k]) for k in range(3))
        self._rest_columns = tuple(np.ascontiguousarray(self.rest_normals[:, k], dtype=np.float32) for k in range(3))
        self._every = np.arange(self.triangles.shape[0])
        vertex_count = self.rest.shape[0]
        owners = self.triangles.ravel()
        self._faces_by_vertex = np.argsort(owners, kind="stable") // 3
        self._count = np.bincount(owners, minlength=vertex_count)
        self._first = np.cumsum(self._count) - self._count
        # A triangle turns over only when a corner crosses the line of the other two, which
        # takes a move along the surface, relative to them, of the triangle's height. So a
        # vertex moved along the surface by less than half the lowest height of its
        # triangles cannot have turned one over (its neighbours moved less than theirs).
        edges = [self.rest[self.triangles[:, (i + 1) % 3]] - self.rest[self.triangles[:, i]] for i in range(3)]
        longest = np.max([np.linalg.norm(e, axis=1) for e in edges], axis=0)
        height = length[keep] / np.maximum(longest, 1e-30)  # twice the area over the base
        lowest = np.full(vertex_count, np.inf)
        np.minimum.at(lowest, owners, np.repeat(height, 3))
        self._leeway = (0.5 * lowest).astype(np.float32) ** 2  # squared, as it is compared
        # Each vertex's neighbours across its polygons (``near_contact``, ``_carried``), and
        # across its triangles (``_around``'s rings), each as ranges of one array.
        self._polygon_ring = _Ring(vertex_count, *polygon_neighbours(vertex_count, corners, sizes))
        if keep.all() and sizes.max(initial=0) <= 4:  # the same graph: a quad's corner triangles join all four
            self._triangle_ring = self._polygon_ring
        else:  # (an n-gon's fan, or a triangle dropped as degenerate: built; 0.1 s at 126k vertices)
            firsts, seconds = self.triangles[:, [0, 1, 2]].ravel(), self.triangles[:, [1, 2, 0]].ravel()
            self._triangle_ring = _Ring(vertex_count, *symmetric_graph(vertex_count, firsts, seconds))

    @staticmethod
    def _face_normals(positions: np.ndarray, triangles: np.ndarray) -> np.ndarray:
        """Each triangle's (unnormalised) normal, (t, 3): component by component, a cross
        product is six multiplies (np.cross on rows is several times slower)."""
        a = positions.take(triangles[:, 0], axis=0)
        u = positions.take(triangles[:, 1], axis=0) - a
        v = positions.take(triangles[:, 2], axis=0) - a
        normals = np.empty_like(u)
        for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
            normals[:, i] = u[:, j] * v[:, k] - u[:, k] * v[:, j]
        return normals

    def _faces_around(self, vertices: np.ndarray) -> np.ndarray:
        """The triangles around ``vertices``, each once, in order (marked, not sorted)."""
        marked = np.zeros(self.triangles.shape[0], dtype=bool)
        marked[self._faces_by_vertex[ranges(self._first[vertices], self._count[vertices])]] = True
        return marked.nonzero()[0]

    def folded(self, positions: np.ndarray, vertices: np.ndarray | None = None) -> np.ndarray:
        """The faces (indices into ``triangles``) turned over at ``positions``, among those
        around ``vertices`` (all when None)."""
        faces = np.arange(self.triangles.shape[0]) if vertices is None else self._faces_around(vertices)
        return faces[self._turned(positions, faces)]

    def straighten(self, positions: np.ndarray, moved: np.ndarray, near: np.ndarray | None = None) -> np.ndarray | None:
        """The displacement (n, 3) that unfolds the faces a step folded around vertices
        ``moved``: the response along the surface (off the rest normals) scaled down around
        the folds, just enough. None where nothing folded, or where that cannot undo it.
        ``near`` (n,) bool: if given, only the faces around these vertices are looked at
        (``near_contact``: without friction nothing drags the surface along it far from a
        contact; looking everywhere cost a sliding torus's frame on a 126k monkey 7-26 ms)."""
        # A response along the rest normals alone keeps a sheet a height field: only a face
        # with a vertex this step moved, and moved off its normal, can have turned over.
        candidates = np.zeros(self.rest.shape[0], dtype=bool)
        candidates[moved] = True
        if near is None:
            folded = self._folded_anywhere(positions, candidates)
        else:
            folded = self._folded_near(positions, candidates & near)
        if folded.size == 0:
            return None
        positions = np.asarray(positions, dtype=np.float64)
        # Around the folds only: elsewhere the response along the surface is the surface's own
        # (a curved mesh pressed along one axis, coarse levels spreading a push), and scaling
        # it everywhere moved vertices far from any fold (a ball sliding across a face: 0.65 m
        # where the press was 0.2 m deep). The region grows until it holds what folds.
        if not self._along_undoes(positions, folded):
            return None
        # (Near a contact, no further than it is looked at: beyond, a curved mesh's response
        # along its normals alone folds more faces the wider the region, 6,452 at 64 rings on
        # a monkey, 60 ms to find that nothing helps.)
        for rings in REGION_RINGS if near is None else [r for r in REGION_RINGS if r <= CONTACT_RINGS]:
            region, weight = self._around(self.triangles[folded].ravel(), rings)
            placed = self._scaled_down(positions, region, weight)
            if placed is not None:
                return placed - positions
        return None

    def held_back(self, before: np.ndarray, after: np.ndarray, free: np.ndarray) -> np.ndarray | None:
        """The displacement (n, 3) that takes back, around the faces a step turned over, the
        step's motion (``before`` to ``after``, (n, 3)) of the vertices ``free`` (n,) bool
        (neither pushed nor resting, moved by relaxing their own offsets:
        ``Surface.relaxed_alone``), just enough that none stays turned; faces turned at
        ``before`` are not the step's. None where the step turned none, or taking back that
        motion does not undo them (the others' fold: ``straighten``'s). Anywhere on the mesh."""
        moved = rows_differ(after, before) & free
        if not moved.any():
            return None
        # (Every face around them: one moved along its normal alone turns a face over whose
        # other corners an earlier press dragged along the surface.)
        folded = self.folded(after, moved.nonzero()[0])
        folded = folded[~self._turned(before, folded)]
        if folded.size == 0:
            return None
        after = np.asarray(after, dtype=np.float64)
        before = np.asarray(before, dtype=np.float64)
        for rings in REGION_RINGS:
            region, fading = self._around(self.triangles[folded].ravel(), rings)
            already = self._turned(before, self._faces_around(region))
            for weight in (fading, np.ones_like(fading)):
                placed = self._scaled(after, region, weight * free[region], after[region] - before[region], already)
                if placed is not None:
                    return placed - after
        return None

    def near_contact(self, held: np.ndarray) -> np.ndarray:
        """The vertices within ``CONTACT_RINGS`` rings of polygons of those ``held`` (n,) bool
        by the colliders, (n,) bool."""
        return self._polygon_ring.rings(held.nonzero()[0], CONTACT_RINGS) >= 0

    def carry(self, positions: np.ndarray, held: np.ndarray, before: np.ndarray) -> tuple:
        """The displacement (n, 3) that unfolds the faces, anywhere, with a corner the
        colliders do not hold (``held`` (n,) bool) that were not folded at ``before`` (the
        frame's start), and whether it unfolds all of them: the response of the other
        vertices around each fold smoothed toward theirs (``_carried``), as far as that
        unfolds more. None where none folds, or smoothing unfolds none. A collider pushes
        what it holds where it must be (a box's edge laid a UV sphere's vertex past its
        neighbours, 9 of its 1,984 triangles turned over; scaled back, the push out laid it
        there again): the surface beside it is carried along. And far from any contact the
        coarse levels moving a monkey's head crumple its features 7-21 rings from the ball.
        (A fold left is not tried again the next frame: a torus sliding over a monkey's brow
        cost 10-40 ms a frame.)"""
        folded = self._folded_anywhere(positions)
        folded = folded[~held[self.triangles[folded]].all(axis=1)]
        folded = folded[~self._turned(before, folded)]
        if folded.size == 0:
            return None, True
        placed, left = self._carried(positions, self.triangles[folded].ravel(), held)
        if placed is None:
            return None, False
        moving, at = placed
        carry = np.zeros(positions.shape)
        carry[moving] = at - positions[moving].astype(np.float64)
        return carry, left == 0

    def _carried(self, positions: np.ndarray, seeds: np.ndarray, held: np.ndarray) -> tuple:
        """The response of the vertices within ``CARRY_RINGS`` rings of ``seeds``, but those
        ``held`` and the last ring, smoothed (each the mean of its neighbours', a round at a
        time) until no face around them is folded, or smoothing stops unfolding more (after
        ``CARRY_ROUNDS`` at most): the smoothed vertices and their positions (float64) that
        left the fewest faces folded (None if it unfolds none), and how many. Worked in the
        region's own rows: a fold is a few hundred vertices of a mesh of a hundred thousand."""
        region, weight = self._around(seeds, CARRY_RINGS)
        free = (weight > 1.0 / (CARRY_RINGS + 1.0) + 1e-9) & ~held[region]
        if not free.any():
            return None, 0
        local = np.full(self.rest.shape[0], -1)
        local[region] = np.arange(region.size)
        moving = region[free]
        count = self._polygon_ring.degree[moving]
        around = local[self._polygon_ring.of(moving)]  # (all in the region)
        # Each neighbour's three components added into its owner's three bins, in the order
        # of ``around`` (as three bincounts would: the same sums, bit for bit).
        bins = (np.repeat(np.arange(moving.size), count)[:, None] * 3 + np.arange(3)).ravel()
        faces = self._faces_around(moving)  # (the others do not change; their corners are in the region)
        corners = local[self.triangles[faces]]
        rest, placed = self.rest[region], positions[region].astype(np.float64)
        response = placed - rest
        slot = free.nonzero()[0]

        def turned() -> int:
            return int(self._against(self._face_normals(placed, corners), faces, FLAT).sum())

        left = turned()
        best = None
        for done in range(1, CARRY_ROUNDS + 1):
            summed = np.bincount(bins, response[around].ravel(), 3 * moving.size).reshape(-1, 3)
            response[slot] = summed / count[:, None]
            if done % CARRY_CHECK == 0:
                placed[slot] = rest[slot] + response[slot]
                still = turned()
                if still >= left:  # smoothing unfolds no more (a monkey's brow under a torus)
                    break
                best, left = placed[slot], still
                if still == 0:
                    break
        return (None, left) if best is None else ((moving, best), left)

    def calmed(self, base: np.ndarray, shown: np.ndarray, swinging: np.ndarray) -> np.ndarray | None:
        """``shown`` (n, 3) with what it adds to ``base`` (n, 3) (a swing, on vertices
        ``swinging``) scaled down around the faces it turns over, just enough (as
        ``straighten`` scales friction's drag); faces already turned in ``base`` are not its
        doing. None where it turns none over; else in ``shown``'s precision. A jelly's
        levels swing each with its own period: a fine level swinging past a coarse one's
        dent pinched a monkey's features inside out (415 of 3,936 triangles in one frame, 7
        with the swing off). Every face around the swing is checked (no ``straighten``'s
        leeway: a face squashed on a collider tips over with the least swing), turned
        strictly: one the response left on edge is the response's."""
        faces = self._faces_around(swinging) if 2 * swinging.size < self.rest.shape[0] else self._every
        turned = faces[self._turned(shown, faces, 0.0)]
        turned = turned[~self._turned(base, turned, 0.0)]
        if turned.size == 0:
            return None
        for rings in REGION_RINGS:
            region, fading = self._around(self.triangles[turned].ravel(), rings)
            already = self._turned(base, self._faces_around(region), 0.0)
            # Fading out over the rings, else all of it over them: what fading leaves on the
            # rings can tip a face that was nearly on edge in ``base``.
            for weight in (fading, np.ones_like(fading)):
                calmed = self._scaled(shown, region, weight, shown[region] - base[region], already, 0.0)
                if calmed is not None:
                    return calmed
        return None

    def _along_undoes(self, positions: np.ndarray, folded: np.ndarray) -> bool:
        """Whether the folded faces unfold with all their vertices' response along the
        surface taken away (else no region's scaling can undo them: it takes no more, and
        trying every region cost a sliding torus's frame on a monkey 85 ms: the faces a
        push lays over a collider's curve fold with their response along the normals alone)."""
        corners = self.triangles[folded]
        rest, normals = self.rest[corners], self.normals[corners]
        placed = rest + np.einsum("fij,fij->fi", positions[corners] - rest, normals)[..., None] * normals
        own = np.arange(corners.size).reshape(corners.shape)  # (each face its own three rows of ``placed``)
        return not bool(self._against(self._face_normals(placed.reshape(-1, 3), own), folded, FLAT).any())

    def _turned(self, positions: np.ndarray, faces: np.ndarray, flat: float = FLAT) -> np.ndarray:
        """Which of ``faces`` are turned over at ``positions`` (or within ``flat`` of lying in
        their rest plane), (f,) bool."""
        every = faces.size == self.triangles.shape[0]  # (all of them, in order: no gathers)
        normals = self._face_normals(positions, self.triangles if every else self.triangles[faces])
        return self._against(normals, None if every else faces, flat)

    def _against(self, normals: np.ndarray, faces: np.ndarray | None, flat: float) -> np.ndarray:
        """Which of the face normals ``normals`` (f, 3), of ``faces`` (all when None), face
        against their rest direction (or within ``flat`` of lying in their rest plane)."""
        normals = normals.astype(np.float64)
        facing = np.einsum("ij,ij->i", normals, self.rest_normals if faces is None else self.rest_normals[faces])
        if flat == 0.0:
            return facing <= 0.0
        # Nearly on edge counts as turned: a face kept just short of it stays visibly a face.
        return facing <= flat * np.sqrt(np.einsum("ij,ij->i", normals, normals))

    def _folded_anywhere(self, positions: np.ndarray, looked: np.ndarray | None = None) -> np.ndarray:
        """The faces folded at ``positions`` (as ``_against`` with ``FLAT``) with a corner among
        ``looked`` (n,) bool (every vertex if None) that drifted far enough to turn one
        (``_drifted``). Whole-array float32 passes over columns of coordinates: a step usually
        moves most of the mesh (coarse levels), and gathering its rows, or the rows of every
        face's corners, costs more (a 126k mesh: 11 ms, against 37 ms gathered)."""
        placed = np.asarray(positions, dtype=np.float32)
        drifted = _past_leeway(placed - self._rest32, self._normals32, self._leeway)
        if looked is not None:
            drifted &= looked
        if not drifted.any():
            return np.zeros(0, dtype=np.int64)
        first, second, third = self._corner_columns
        around = drifted.take(first) | drifted.take(second) | drifted.take(third)
        x = [np.ascontiguousarray(placed[:, k]) for k in range(3)]
        a = [column.take(first) for column in x]
        u = [column.take(second) - a[k] for k, column in enumerate(x)]
        v = [column.take(third) - a[k] for k, column in enumerate(x)]
        normal = [u[j] * v[k] - u[k] * v[j] for j, k in ((1, 2), (2, 0), (0, 1))]
        rest = self._rest_columns
        facing = normal[0] * rest[0] + normal[1] * rest[1] + normal[2] * rest[2]
        square = normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]
        # (facing <= FLAT |normal|, as ``_against``, compared in squares: no root per face)
        return (around & ((facing <= 0) | (facing * facing <= FLAT * FLAT * square))).nonzero()[0]

    def _folded_near(self, positions: np.ndarray, looked: np.ndarray) -> np.ndarray:
        """``_folded_anywhere`` in the rows of ``looked`` (n,) bool alone: a contact's few."""
        drifted = self._drifted(positions, looked.nonzero()[0])
        return self.folded(positions, drifted) if drifted.size else drifted

    def _drifted(self, positions: np.ndarray, looked: np.ndarray) -> np.ndarray:
        """Those of the vertices ``looked`` (indices) whose response has moved them off
        their rest normal far enough to have turned a face over (``_leeway``)."""
        response = np.asarray(positions[looked], dtype=np.float32) - self._rest32[looked]
        return looked[_past_leeway(response, self._normals32[looked], self._leeway[looked])]

    def _around(self, seeds: np.ndarray, rings: int) -> tuple[np.ndarray, np.ndarray]:
        """The vertices within ``rings`` rings of triangles of ``seeds``, and each one's weight:
        1 on the seeds, falling to 1 / (rings + 1) on the last ring."""
        ring = self._triangle_ring.rings(seeds, rings)
        region = (ring >= 0).nonzero()[0]
        return region, 1.0 - ring[region] / (rings + 1.0)

    def _scaled_down(self, positions: np.ndarray, region: np.ndarray, weight: np.ndarray) -> np.ndarray | None:
        """``positions`` with the response along the surface in ``region`` scaled down (see
        ``_scaled``)."""
        response = positions[region] - self.rest[region]
        along = np.einsum("ij,ij->i", response, self.normals[region])[:, None] * self.normals[region]
        return self._scaled(positions, region, weight, response - along)

    def _scaled(self, positions, region, weight, part, allowed=None, flat: float = FLAT) -> np.ndarray | None:
        """``positions`` with ``part`` (r, 3) of the moves of ``region`` (r,) scaled down, by
        ``weight`` (r,) times the one factor (found by bisection) that leaves no face there
        folded (but those ``allowed``, marked among the faces around ``region``); None if
        some stays folded even with none of it (the fold reaches further)."""
        faces = self._faces_around(region)
        allowed = np.zeros(faces.size, dtype=bool) if allowed is None else allowed

        def scaled(factor: float) -> np.ndarray:  # (in the positions' own precision: as shown)
            placed = positions.copy()
            placed[region] -= (((1.0 - factor) * weight)[:, None] * part).astype(positions.dtype)
            return placed

        def folds(factor: float) -> bool:
            return bool((self._turned(scaled(factor), faces, flat) & ~allowed).any())

        if folds(0.0):
            return None
        low, high = 0.0, 1.0  # no fold with none of the part, a fold with all
        for _ in range(ROUNDS):
            middle = (low + high) / 2
            if folds(middle):
                high = middle
            else:
                low = middle
        return scaled(low)


def _past_leeway(response: np.ndarray, normals: np.ndarray, leeway: np.ndarray) -> np.ndarray:
    """Whether each response (m, 3, float32; changed in place) is off its rest normal (m, 3)
    further than its squared ``leeway`` (m,): far enough to have turned a face over."""
    response -= np.einsum("ij,ij->i", response, normals)[:, None] * normals
    return np.einsum("ij,ij->i", response, response) > leeway


class _Ring:
    """A symmetric graph (``core.graph``'s heads and tails, sorted by head) as each vertex's
    neighbours: a range of ``tails``."""

    def __init__(self, vertex_count: int, heads: np.ndarray, tails: np.ndarray):
        self.tails = tails
        self.degree = np.bincount(heads, minlength=vertex_count)
        self.first = np.cumsum(self.degree) - self.degree

    def of(self, vertices: np.ndarray) -> np.ndarray:
        """The neighbours of ``vertices``, concatenated (repeats kept)."""
        return self.tails[ranges(self.first[vertices], self.degree[vertices])]

    def rings(self, seeds: np.ndarray, count: int) -> np.ndarray:
        """Each vertex's ring (n,) around ``seeds`` (indices): 0 on them, -1 past ``count``
        rings. Each ring from the last one's new vertices alone, marked (no sort)."""
        ring = np.full(self.degree.size, -1)
        ring[seeds] = 0
        front = (ring == 0).nonzero()[0]
        for step in range(1, count + 1):
            if front.size == 0:
                break
            new = np.zeros(ring.size, dtype=bool)
            new[self.of(front)] = True
            new &= ring < 0
            front = new.nonzero()[0]
            ring[front] = step
        return ring
