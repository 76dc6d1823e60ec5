"""Soft against soft without Blender (issue 20): two responding spheres pressed into each
other, each asking about the other's surface as the frame found it (an exact triangle-mesh
cast), each taking its share of the overlap by relative stiffness, solved jointly by
``core.together.advance_together``.

1. Neither ends inside the other by more than 1e-3 of its size, every frame.
2. They meet where their stiffnesses put them: equal, at the plane between them; 3 to 1, the
   stiffer gives a quarter of the overlap.
3. The result does not depend on the order the surfaces are stepped in: the same bits.
4. Random approaches, speeds, settings and stiffnesses keep 1 and give the same bits twice.
"""

import numpy as np
import pytest
from test_contact import random_settings

from contact_scenes import MeshCollider
from core import LevelSettings, Surface, VertexNormals, build_hierarchy
from core.contact import Colliders, Contacts
from core.frame import Found
from core.together import advance_together
from scenes import uv_sphere

RADIUS = 0.5
FPS = 24.0
#: Per level, coarse to fine: the finer levels give way, the coarse ones spread a little.
ELASTIC = [0.0, 0.2, 0.6, 1.0]


class Pair:
    """Two spheres of radius 0.5 whose centres follow ``paths`` (2, frames, 3), soft against
    each other with ``stiffness`` (2,); ``order`` is the order they are stepped in."""

    def __init__(self, paths, stiffness, settings, order=(0, 1)):
        rest, self.faces = uv_sphere(RADIUS, 20, 10)
        hierarchy = build_hierarchy(rest, self.faces.ravel(), np.full(len(self.faces), 3))
        self.paths, self.stiffness, self.order = np.asarray(paths, dtype=np.float64), stiffness, order
        self.surfaces = [Surface(hierarchy, rest, settings[i]) for i in range(2)]
        corners, sizes = self.faces.ravel(), np.full(len(self.faces), 3)
        self.normals = VertexNormals(len(rest), corners, sizes)(rest.astype(np.float64), np.arange(len(rest)))
        self.contacts = [Contacts(len(rest)) for _ in range(2)]
        self.previous = [rest + self.paths[i, 0] for i in range(2)]
        self.frame = 0

    def world(self, i: int, positions: np.ndarray) -> np.ndarray:
        return positions.astype(np.float64) + self.paths[i, self.frame]

    def ask(self, positions: list[np.ndarray], whole: bool | None):
        """As ``blender.together``'s: every surface asked about the others as given."""
        by_sphere = dict(zip(self.order, positions, strict=True))
        worlds = [self.world(i, by_sphere[i]) for i in range(2)]
        found = {}
        for i in range(2):
            j = 1 - i
            other = MeshCollider(worlds[j], self.faces)
            points = worlds[i]
            near = np.linalg.norm(points - other.centre, axis=1) <= other.radius * 1.01
            queried = near.nonzero()[0]
            push, touching = np.zeros_like(points), np.zeros(len(points), dtype=bool)
            away, gap, room = np.zeros_like(points), np.zeros(len(points)), np.zeros(len(points))
            if queried.size:
                motion = self.paths[j, self.frame] - self.paths[j, max(self.frame - 1, 0)] if whole is None else 0.0
                rules = Colliders(
                    [str(j)],
                    other.centre[None],
                    np.array([other.radius]),
                    lambda origins, rays, other=other: tuple(x[None] for x in other.cast(origins, rays[0])),
                )
                result = self.contacts[i].push(
                    queried,
                    points[queried],
                    self.normals[queried],
                    (points - self.previous[i])[queried],
                    np.broadcast_to(motion, (1, queried.size, 3)),
                    rules,
                )
                share = 1.0 if whole else self.stiffness[j] / (self.stiffness[i] + self.stiffness[j])
                push[queried], touching[queried] = result.push * share, result.touching
                rests = queried[result.touching]
                away[rests], gap[rests], room[rests] = result.away, result.gap, result.room
            found[i] = Found(push, touching, away, gap, room)
            self.previous[i] = points
        return [found[i] for i in self.order]

    def play(self, frame: int) -> list[np.ndarray]:
        """Both spheres at ``frame``, world space (in sphere order)."""
        self.frame = frame
        if frame > 0:
            advance_together([self.surfaces[i] for i in self.order], self.ask, 1.0 / FPS)
        return [self.world(i, self.surfaces[i].positions) for i in range(2)]


def elastic(levels: int) -> LevelSettings:
    settings = LevelSettings.uniform(levels, response_time=0.0, time_to_rest=0.35)
    settings.absorption[:] = np.interp(np.linspace(0, 1, levels), np.linspace(0, 1, 4), ELASTIC)
    return settings


def pressed_pair(stiffness, order=(0, 1), frames: int = 30) -> tuple[Pair, list[list[np.ndarray]]]:
    """Two spheres on the x axis closing in over 12 frames until they overlap by 0.3, held."""
    gap = np.minimum(np.arange(frames) / 12.0, 1.0)
    x = 0.6 - 0.25 * gap  # each centre, from 0.6 to 0.35 off the middle
    paths = [np.stack([s * x, 0 * x, 0 * x], axis=1) for s in (-1, 1)]
    levels = len(build_hierarchy(*_sphere_arrays()).sizes)
    pair = Pair(paths, stiffness, [elastic(levels), elastic(levels)], order)
    return pair, [pair.play(frame) for frame in range(frames)]


def _sphere_arrays():
    rest, faces = uv_sphere(RADIUS, 20, 10)
    return rest, faces.ravel(), np.full(len(faces), 3)


def assert_apart(pair: Pair, shown: list[np.ndarray]) -> None:
    for i in range(2):
        other = MeshCollider(shown[1 - i], pair.faces)
        points = shown[i][np.linalg.norm(shown[i] - other.centre, axis=1) <= other.radius]  # may be inside
        depth = other.depth(points).max(initial=-np.inf)
        assert depth <= 1e-3 * RADIUS, f"sphere {i} is {depth:.5f} inside the other"


@pytest.mark.parametrize(("stiffness", "meet"), [((1.0, 1.0), 0.0), ((3.0, 1.0), 0.075)])
def test_pressed_spheres_meet_where_their_stiffness_puts_them_and_neither_enters_the_other(stiffness, meet):
    """Fronts (each one's vertex on the axis between them) at rest at 0.15 (left) and -0.15
    (right) when held: the left one, three times as stiff, gives a quarter of the 0.3 and
    they meet at 0.075. Measured: within 1.2e-8 of where they should meet, both cases. (The
    softer one's rim wraps round the stiffer one's curve, past it.)"""
    pair, frames = pressed_pair(stiffness)
    for shown in frames:
        assert_apart(pair, shown)
    rest = uv_sphere(RADIUS, 20, 10)[0]
    tip = [int(np.argmax(rest[:, 0])), int(np.argmin(rest[:, 0]))]  # each one's vertex on the axis
    left, right = frames[-1]
    fronts = left[tip[0], 0], right[tip[1], 0]
    assert abs(fronts[0] - meet) < 1e-4 and abs(fronts[1] - meet) < 1e-4, fronts


def test_the_order_they_are_stepped_in_changes_no_bit():
    _pair, frames = pressed_pair((2.0, 1.0))
    _pair, swapped = pressed_pair((2.0, 1.0), order=(1, 0))
    for a, b in zip(frames, swapped, strict=True):
        for i in range(2):
            np.testing.assert_array_equal(a[i], b[i])


def random_pair(seed: int, frames: int = 36) -> tuple[Pair, list[list[np.ndarray]]]:
    """Two spheres closing in from random directions at random speeds to a random overlap
    (up to 0.35), held, then parting; random settings and stiffness each."""
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    overlap = rng.uniform(0.05, 0.35)
    closing = rng.integers(3, 14)
    t = np.arange(frames)
    distance = 1.1 - (1.1 - (2 * RADIUS - overlap)) * np.minimum(t / closing, 1.0)
    distance = np.where(t > 28, distance[28] + 0.05 * (t - 28), distance)
    slide = np.cross(axis, rng.normal(size=3)) * rng.uniform(0.0, 0.01)  # a little sideways a frame
    paths = [s * (distance[:, None] / 2) * axis + s * slide * t[:, None] for s in (-1, 1)]
    levels = len(build_hierarchy(*_sphere_arrays()).sizes)
    settings = [random_settings(rng, levels, bulge=False) for _ in range(2)]
    pair = Pair(paths, rng.uniform(0.5, 4.0, 2), settings)
    return pair, [pair.play(frame) for frame in range(frames)]


@pytest.mark.parametrize("seed", range(5))
def test_random_approaches_keep_both_out_of_each_other_every_frame_and_the_same_bits(seed):
    pair, frames = random_pair(seed)
    for shown in frames:
        assert_apart(pair, shown)
    _pair, again = random_pair(seed)
    for a, b in zip(frames, again, strict=True):
        for i in range(2):
            np.testing.assert_array_equal(a[i], b[i])
