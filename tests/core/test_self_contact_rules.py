"""Self-contact rules (``core.self_contact``), with exact rays: a surface made of two
overlapping spheres, as one mesh whose two parts pass into each other."""

import numpy as np
import pytest

from core.self_contact import OFFSET, SHARE, TOUCH, Faces, keep_out, pushes, rays, thickness

CENTRES = np.array([[0.0, 0.0, 0.0], [1.6, 0.0, 0.0]])  # unit spheres, 0.4 deep in each other


def cast_spheres(origins: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Signed distance to the first sphere surface each ray meets: positive where the ray
    leaves a sphere there, negative where it enters, nan where it meets none."""
    best = np.full(len(origins), np.inf)
    sign = np.full(len(origins), np.nan)
    for centre in CENTRES:
        offset = origins - centre
        b = np.einsum("ij,ij->i", offset, directions)
        c = np.einsum("ij,ij->i", offset, offset) - 1.0
        root = np.sqrt(np.maximum(b * b - c, 0.0))
        for t in (-b - root, -b + root):
            hit = (b * b - c >= 0) & (t > 0) & (t < best)
            normal = offset + t[:, None] * directions
            best[hit] = t[hit]
            sign[hit] = np.sign(np.einsum("ij,ij->i", normal, directions))[hit]
    return np.where(np.isfinite(best), best * sign, np.nan)


def sphere_points(count: int) -> np.ndarray:
    """Points spread over the first sphere (a Fibonacci lattice); they are its normals too."""
    index = np.arange(count) + 0.5
    polar, around = np.arccos(1 - 2 * index / count), np.pi * (1 + 5**0.5) * index
    return np.stack([np.cos(around) * np.sin(polar), np.sin(around) * np.sin(polar), np.cos(polar)], axis=1)


def asked(points: np.ndarray, size: float = 2.0):
    offset = OFFSET * size
    origins, directions = rays(points, points, offset)
    signed = cast_spheres(origins, directions)
    return signed[: len(points)], signed[len(points) :], offset


def test_the_vertices_inside_the_other_part_are_pushed_half_way_out_and_no_other():
    points = sphere_points(4000)
    # At rest (the first sphere alone) each in ray crosses the sphere, from offset under its
    # surface: its thickness along the normal is the diameter.
    offset = OFFSET * 2.0
    cap = thickness(np.full(len(points), 2.0 - offset), offset) / 2
    assert cap == pytest.approx(1.0)
    outward, inward, offset = asked(points)
    push, touching = pushes(points, outward, inward, offset, cap, TOUCH * 2.0)
    inside = np.linalg.norm(points - CENTRES[1], axis=1) < 1.0
    deep = np.linalg.norm(points - CENTRES[1], axis=1) < 1.0 - offset
    pushed = np.abs(push).sum(axis=1) > 0
    assert deep.sum() > 100
    assert pushed[deep].all() and not pushed[~inside].any()
    # Pushed back along its own normal by half its depth: twice the push is on the other sphere.
    out = points[pushed] + push[pushed] / SHARE
    assert np.linalg.norm(out - CENTRES[1], axis=1) == pytest.approx(1.0, abs=1e-9)
    assert np.allclose(np.cross(push[pushed], points[pushed]), 0.0, atol=1e-12)  # along the normal
    assert not touching[pushed].any()


def test_a_gap_within_the_tolerance_touches_and_a_wider_one_does_not():
    normals = np.array([[1.0, 0.0, 0.0]] * 3)
    outward = np.array([-0.5e-4, -1e-2, np.nan])  # met from the front: a gap; met nothing
    push, touching = pushes(normals, outward, np.full(3, 1.0), 1e-5, np.full(3, 1.0), 4e-4)
    assert not push.any()
    assert touching.tolist() == [True, False, False]


def test_a_depth_past_half_the_thickness_is_the_own_far_wall_and_a_long_push_is_taken_in_steps():
    normals = np.array([[0.0, 0.0, 1.0]] * 3)
    outward = np.full(3, 0.3)  # each inside another part
    inward = np.array([0.9, 0.2, 0.05])  # how far behind each the face it crossed is
    cap = np.full(3, 0.5)
    push, touching = pushes(normals, outward, inward, 0.0, cap, 1e-4, share=1.0, step=0.1)
    assert push[:, 2].tolist() == pytest.approx([0.0, -0.1, -0.05])
    assert touching.tolist() == [True, False, False]


def test_a_move_that_turns_a_face_over_is_shortened_until_none_is():
    # Two triangles sharing an edge, flat; the shared edge's far corner pushed past the edge.
    positions = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    faces = Faces(4, np.array([0, 1, 3, 2]), np.array([4]))
    moves = np.zeros((4, 3))
    moves[3] = [-1.6, -1.6, 0.0]  # past the diagonal 1-2: the quad turns over
    kept = faces.unturned(positions, moves)
    assert np.allclose(kept[:3], 0.0)
    assert 0 < np.linalg.norm(kept[3]) < np.linalg.norm(moves[3])
    after = positions + kept
    for triangle in faces.triangles:
        a, b, c = after[triangle]
        assert np.cross(b - a, c - a)[2] > 0
    assert faces.unturned(positions, kept).tobytes() == kept.tobytes()  # nothing left to shorten


def test_keep_out_is_a_function_of_the_surface_alone():
    """The same surface asked twice gives the same bits; a move is never longer than the cap;
    the vertices of the first sphere inside the second (which the exact caster holds still)
    mostly end out of it."""
    points = sphere_points(600)
    faces = Faces(600, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))  # points alone: no face to turn

    def cast(positions, normals, among):
        origins, directions = rays(positions[among], normals[among], OFFSET * 2.0)
        signed = cast_spheres(origins, directions)
        return signed[: among.size], signed[among.size :]

    first = keep_out(points, points, cast, OFFSET * 2.0, np.full(600, 1.0), np.full(600, 0.3), TOUCH * 2.0, faces)
    again = keep_out(points, points, cast, OFFSET * 2.0, np.full(600, 1.0), np.full(600, 0.3), TOUCH * 2.0, faces)
    assert first.moves.tobytes() == again.moves.tobytes()
    assert first.pressed > 10
    assert np.linalg.norm(first.moves, axis=1).max() <= 1.0
    # The pushed ones end on or out of the other sphere (it stands still here: whole rounds).
    inside = np.linalg.norm(points + first.moves - CENTRES[1], axis=1) < 1.0 - 1e-3
    assert inside.sum() < np.count_nonzero(np.linalg.norm(points - CENTRES[1], axis=1) < 1.0 - 1e-3) / 4
