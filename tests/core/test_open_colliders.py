"""Open colliders (a plane used as floor or as a press): their inside is behind their face
and has no far side, and their bounding sphere's centre is in the face, metres from where a
small mesh meets it. Neither may decide the contact.

A closed sphere meets a large open square (tilted, off-centre, rising into it fast or
slowly, facing it or facing away, with random settings per level, some bulging) and is let
go again. After every frame, on the positions the add-on would write: no vertex through the
square (past it, on the side it came from) by more than 1e-3 of the sphere's size; hardly a
face turned over against its rest direction (a curved mesh's limit, README); no vertex
further from rest than twice the deepest reach (plus the bulge); the same bits twice.
Before the fix, the side was judged from every vertex within the square's bounding sphere
(all round the sphere: their normals cancel) and a vertex held on the square read only
its ray behind it, which finds no face: the sphere sank through, as deep as it was pressed;
a square facing away from the sphere took the whole sphere for its inside, and pulled the
vertices it reached through itself.
"""

import numpy as np
import pytest
from test_contact import random_settings

from contact_scenes import Floor, Frames
from core import Surface, build_hierarchy
from scenes import uv_sphere

RADIUS = 0.5


def rising_floor(rng, frames: int) -> tuple[Floor, np.ndarray, float]:
    """A square of half-size 3, tilted up to 30 degrees and off-centre by up to 0.3 along
    it, that rises from 5 cm short of the sphere into it, up to 0.25 deep at up to 8 cm a
    frame, holds, and falls back, facing the sphere or facing away from it (a plane keyed
    onto a ball the way it was made: its back presses); returns it, the direction it rises
    in and its deepest reach into the sphere."""
    tilt = rng.uniform(0.0, np.radians(30.0))
    turn = rng.uniform(0.0, 2.0 * np.pi)
    normal = np.array([np.sin(tilt) * np.cos(turn), np.sin(tilt) * np.sin(turn), np.cos(tilt)])
    deepest = rng.uniform(0.05, 0.25)
    speed = rng.uniform(0.01, 0.08)
    height = np.concatenate(
        [
            np.arange(-0.05, deepest, speed),
            np.full(frames, deepest),  # held (cut below)
        ]
    )[: frames * 2 // 3]
    height = np.concatenate([height, np.linspace(deepest, -0.1, frames - height.size)])
    slide = np.cross(normal, rng.normal(size=3))
    slide *= rng.uniform(0.0, 0.3) / np.linalg.norm(slide)
    path = slide + normal * (height[:, None] - RADIUS)  # the face at the sphere's surface + height
    facing = rng.choice([1.0, -1.0])
    return Floor(path, normal * facing, 3.0), normal, deepest


def play(seed: int, frames: int = 60):
    """The sphere's shown positions every frame (frames, n, 3), its rest, its triangles, the
    square, the direction it rises in, the deepest reach and the bulge its settings allow."""
    rng = np.random.default_rng(seed)
    rest, faces = uv_sphere(RADIUS, 32, 16)
    hierarchy = build_hierarchy(rest, faces.ravel(), np.full(len(faces), 3))
    settings = random_settings(rng, len(hierarchy.sizes), bulge=bool(seed % 2))
    bulge = float(-np.minimum(settings.absorption, 0).sum())
    floor, rising, deepest = rising_floor(rng, frames)
    scene = Frames(Surface(hierarchy, rest, settings), faces, [floor])
    shown = np.array([scene.play(frame) for frame in range(frames)])
    return shown, rest, faces, floor, rising, deepest, bulge


def _face_normals(positions: np.ndarray, faces: np.ndarray) -> np.ndarray:
    a, b, c = (positions[..., faces[:, i], :] for i in range(3))
    n = np.cross(b - a, c - a)
    return n / np.linalg.norm(n, axis=-1, keepdims=True)


@pytest.mark.parametrize("seed", range(12))
def test_a_sphere_meeting_an_open_square_stays_on_its_side_every_frame(seed):
    shown, rest, faces, floor, rising, deepest, bulge = play(seed)
    for frame, positions in enumerate(shown):
        floor.at(frame)
        past = -(positions - floor.centre) @ rising  # past the square, on the side it came from
        crossed = np.where(floor.depth(positions) > -np.inf, past, -np.inf).max()  # over it
        assert crossed <= 1e-3 * RADIUS, f"frame {frame}: {crossed:.4f} through the square"
    turned = np.einsum("fij,ij->fi", _face_normals(shown, faces), _face_normals(rest, faces))
    # A sphere pressed half its radius flat is pressed deeper than it is curved: README's
    # limit for curved meshes (some faces may turn while pressed) allows a few; here at most
    # 1 of 960 (seed 9: a bulging level over a kept dent, after the release, 92 degrees).
    assert (turned < 0).mean(axis=1).max() <= 0.002, "faces turned over"
    moved = np.linalg.norm(shown - rest, axis=2).max()
    assert moved <= deepest * (2.0 + bulge) + 1e-3 * RADIUS, "ran away"
    assert moved >= 0.9 * deepest, "it was pressed"  # the square reached into it that deep


def test_the_same_input_gives_the_same_bits():
    first, second = play(3)[0], play(3)[0]
    assert np.array_equal(first, second)
