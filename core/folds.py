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
"""

import numpy as np

from .graph import ranges

#: Bisection steps for the factor on the response along the surface (1/256 at the end).
ROUNDS = 8
#: Rings of triangles around the folded faces that are straightened, tried in turn until one
#: region holds the fold (the last: far enough for any fold a step makes).
REGION_RINGS = (2, 4, 8, 16, 64)
#: Faces whose normal is within this cosine of lying in their rest plane count as folded.
FLAT = 0.01


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
        for i in range(1, int(sizes.max(initial=0)) - 1):  # fan of each polygon from its first corner
            big = sizes > i + 1
            fans.append(np.stack([corners[starts[big]], corners[starts[big] + i], corners[starts[big] + i + 1]], 1))
        triangles = np.concatenate(fans)
        self.rest = np.asarray(rest, dtype=np.float64)
        self._rest32 = self.rest.astype(np.float32)
        self.normals = np.asarray(normals, dtype=np.float64)
        self._normals32 = self.normals.astype(np.float32)
        rest_normals = self._face_normals(self.rest, triangles)
        length = np.linalg.norm(rest_normals, axis=1)
        keep = length > 1e-12 * max(1.0, float(np.abs(self.rest).max(initial=0.0))) ** 2
        self.triangles = triangles[keep]
        self.rest_normals = rest_normals[keep] / length[keep, None]
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
        normals = self._face_normals(positions, self.triangles[faces]).astype(np.float64)
        # Nearly on edge counts as turned: a face kept just short of it stays visibly a face.
        facing = np.einsum("ij,ij->i", normals, self.rest_normals[faces])
        return faces[facing <= FLAT * np.linalg.norm(normals, axis=1)]

    def straighten(self, positions: np.ndarray, moved: np.ndarray) -> np.ndarray | None:
        """The displacement (n, 3) that unfolds the faces a step folded around vertices
        ``moved``: the response along the surface (off the rest normals) scaled down around
        the folds, just enough. None where nothing folded."""
        # A response along the rest normals alone keeps a sheet a height field: only a face
        # with a vertex this step moved, and moved off its normal, can have turned over.
        # Whole-array float32 passes: a step usually moves most of the mesh (coarse levels),
        # and gathering those rows would cost more than reading every row.
        response = np.asarray(positions, dtype=np.float32) - self._rest32
        along = np.einsum("ij,ij->i", response, self._normals32)
        response -= along[:, None] * self._normals32
        drifting = np.einsum("ij,ij->i", response, response) > self._leeway
        candidates = np.zeros(drifting.shape, dtype=bool)
        candidates[moved] = True
        drifted = (drifting & candidates).nonzero()[0]
        folded = self.folded(positions, drifted) if drifted.size else drifted
        if folded.size == 0:
            return None
        positions = np.asarray(positions, dtype=np.float64)
        # Around the folds only: elsewhere the response along the surface is the surface's own
        # (a curved mesh pressed along one axis, coarse levels spreading a push), and scaling
        # it everywhere moved vertices far from any fold (a ball sliding across a face: 0.65 m
        # where the press was 0.2 m deep). The region grows until it holds what folds.
        for rings in REGION_RINGS:
            region, weight = self._around(self.triangles[folded].ravel(), rings)
            placed = self._scaled_down(positions, region, weight)
            if placed is not None:
                return placed - positions
        return None

    def _around(self, seeds: np.ndarray, rings: int) -> tuple[np.ndarray, np.ndarray]:
        """The vertices within ``rings`` rings of triangles of ``seeds``, and each one's weight:
        1 on the seeds, falling to 1 / (rings + 1) on the last ring."""
        ring = np.full(self.rest.shape[0], -1)
        ring[seeds] = 0
        front = np.unique(seeds)
        for step in range(1, rings + 1):
            reached = np.unique(self.triangles[self._faces_around(front)].ravel())
            front = reached[ring[reached] < 0]
            ring[front] = step
        region = (ring >= 0).nonzero()[0]
        return region, 1.0 - ring[region] / (rings + 1.0)

    def _scaled_down(self, positions: np.ndarray, region: np.ndarray, weight: np.ndarray) -> np.ndarray | None:
        """``positions`` with the response along the surface in ``region`` scaled down, by
        ``weight`` times the one factor (found by bisection) that leaves no face there
        folded; None if some stays folded even with none of it (the fold reaches further)."""
        response = positions[region] - self.rest[region]
        along = np.einsum("ij,ij->i", response, self.normals[region])[:, None] * self.normals[region]
        sideways = response - along

        def scaled(factor: float) -> np.ndarray:
            placed = positions.copy()
            placed[region] -= ((1.0 - factor) * weight)[:, None] * sideways
            return placed

        if self.folded(scaled(0.0), region).size:
            return None
        low, high = 0.0, 1.0  # no fold with none of the sideways response, a fold with all
        for _ in range(ROUNDS):
            middle = (low + high) / 2
            if self.folded(scaled(middle), region).size:
                high = middle
            else:
                low = middle
        return scaled(low)
