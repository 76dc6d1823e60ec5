"""Test scenes for the solver: grids and analytic colliders, no Blender needed."""

import numpy as np

from core import GridHierarchy, LevelSettings, Surface


def grid_rest(level: int, size: float = 2.0, height=None) -> np.ndarray:
    """A flat (2^level + 1)^2 grid in the xy plane, centred, ``size`` across; (n, 3).

    ``height(i, j)`` (integer row and column arrays) may lift vertices off the plane.
    """
    side = 2**level + 1
    rows, cols = np.mgrid[0:side, 0:side]
    x = (cols / (side - 1) - 0.5) * size
    y = (rows / (side - 1) - 0.5) * size
    z = np.zeros_like(x) if height is None else height(rows, cols)
    return np.stack([x, y, z], axis=-1).reshape(-1, 3).astype(np.float64)


def grid_quads(side: int) -> np.ndarray:
    """Row-major quads of a side x side vertex grid, (cells, 4)."""
    row, col = np.divmod(np.arange((side - 1) ** 2), side - 1)
    first = row * side + col
    return np.stack([first, first + 1, first + side + 1, first + side], axis=1)


def shuffled_triangulated_grid(level: int, seed: int = 0):
    """A grid split into triangles, its vertices in a random order: no longer a grid to us."""
    side = 2**level + 1
    quads = grid_quads(side)
    triangles = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
    order = np.random.default_rng(seed).permutation(side * side)
    new_index = np.argsort(order)
    return grid_rest(level)[order], new_index[triangles]


def uv_sphere(radius: float, segments: int, rings: int):
    """A closed UV sphere of triangles (Blender's primitive, triangulated): positions (n, 3)
    and triangles (t, 3), wound outward."""
    theta = np.linspace(0.0, np.pi, rings + 1)[1:-1]
    phi = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    ring = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1).reshape(-1, 3)
    points = np.vstack([ring, [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]]) * radius
    top, bottom = len(ring), len(ring) + 1
    r, s = np.divmod(np.arange((rings - 2) * segments), segments)
    a, b = r * segments + s, r * segments + (s + 1) % segments
    c, d = b + segments, a + segments
    s = np.arange(segments)
    last = (rings - 2) * segments
    triangles = np.concatenate(
        [
            np.stack([a, d, c], 1),
            np.stack([a, c, b], 1),
            np.stack([np.full(segments, top), s, (s + 1) % segments], 1),
            np.stack([np.full(segments, bottom), last + (s + 1) % segments, last + s], 1),
        ]
    )
    return points, triangles


def tube(radius: float, length: float, segments: int, rows: int):
    """An open tube of triangles along x, centred: positions (n, 3) and triangles (t, 3)."""
    phi = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    x, p = np.meshgrid(np.linspace(-length / 2, length / 2, rows), phi, indexing="ij")
    points = np.stack([x, radius * np.cos(p), radius * np.sin(p)], axis=-1).reshape(-1, 3)
    r, s = np.divmod(np.arange((rows - 1) * segments), segments)
    a, b = r * segments + s, r * segments + (s + 1) % segments
    return points, np.concatenate([np.stack([a, b, b + segments], 1), np.stack([a, b + segments, a + segments], 1)])


def capped_cylinder(radius: float, depth: float, segments: int):
    """Blender's cylinder along z, centred, as ``primitive_cylinder_add`` makes it: vertices
    in pairs round the rim (bottom, top), ``segments`` side quads and an n-gon at each end
    (its default "N-Gon" fill). Positions (n, 3) and polygons as Blender stores them
    (corners, sizes), each facing out."""
    phi = 2 * np.pi * np.arange(segments) / segments
    points = np.zeros((segments, 2, 3))
    points[..., 0], points[..., 1] = (radius * np.sin(phi))[:, None], (radius * np.cos(phi))[:, None]
    points[:, :, 2] = [-depth / 2, depth / 2]
    bottom, top = 2 * np.arange(segments), 2 * np.arange(segments) + 1
    sides = np.stack([bottom, top, np.roll(top, -1), np.roll(bottom, -1)], axis=1)
    corners = np.concatenate([sides.ravel(), np.roll(top[::-1], 2), bottom])
    sizes = np.concatenate([np.full(segments, 4), [segments, segments]])
    return points.reshape(-1, 3), (corners, sizes)


def grid_surface(level: int, **settings) -> Surface:
    """A flat grid surface with uniform settings (keywords of ``LevelSettings.uniform``)."""
    return Surface(GridHierarchy(level), grid_rest(level), LevelSettings.uniform(level + 1, **settings))


class Sphere:
    """A sphere collider that pushes the surface along a fixed direction."""

    def __init__(self, centre, radius: float, direction=(0.0, 0.0, -1.0)):
        self.centre = np.asarray(centre, dtype=np.float64)
        self.radius = float(radius)
        self.direction = np.asarray(direction, dtype=np.float64) / np.linalg.norm(direction)

    def inside_depth(self, points: np.ndarray) -> np.ndarray:
        """How far each point is inside the sphere (negative outside), (n,)."""
        return self.radius - np.linalg.norm(np.asarray(points, np.float64) - self.centre, axis=1)

    def push(self, points: np.ndarray) -> np.ndarray:
        """Displacement vectors (n, 3): from each point inside, along ``direction`` to where
        the sphere ends; zero outside. Exact ray-sphere exit distance."""
        rel = np.asarray(points, np.float64) - self.centre
        b = rel @ self.direction
        c = (rel * rel).sum(axis=1) - self.radius**2
        inside = c < 0
        exit_distance = np.where(inside, -b + np.sqrt(np.maximum(b * b - c, 0.0)), 0.0)
        return exit_distance[:, None] * self.direction


def push_all(colliders, points: np.ndarray) -> np.ndarray:
    """Several colliders: the longest vector wins per vertex."""
    vectors = np.stack([c.push(points) for c in colliders])
    longest = np.argmax(np.linalg.norm(vectors, axis=2), axis=0)
    return vectors[longest, np.arange(points.shape[0])]


def touching_any(colliders, points: np.ndarray, tolerance: float = 1e-4) -> np.ndarray:
    """Vertices outside every collider but within ``tolerance`` of one, (n,) bool."""
    depth = np.max([c.inside_depth(points) for c in colliders], axis=0)
    return (depth <= 0) & (depth > -tolerance)


def run(surface: Surface, colliders, seconds: float, fps: float) -> list[np.ndarray]:
    """Step ``surface`` for ``seconds`` at ``fps`` against static colliders; positions per step."""
    frames = []
    for _ in range(round(seconds * fps)):
        points = surface.positions.astype(np.float64)
        if colliders:
            surface.step(push_all(colliders, points), 1.0 / fps, touching_any(colliders, points))
        else:
            surface.step(np.zeros_like(points), 1.0 / fps)
        frames.append(surface.positions.astype(np.float64))
    return frames


#: A sphere that dips 5 cm into the 2-unit grid, a little off centre.
PRESS = Sphere([0.1, 0.05, 0.55], 0.6)
