"""A collider far wider than the mesh it meets (a plane or a box as floor under a foot or a
monkey's chin): its centre is metres from the contact, so nearness to it does not say where
the contact is, and the normals near it point all round: no press axis from them. A vertex
pushed along its own normal, which lies along the floor, went along it (a monkey pressed 10
cm into a 20 m plane: vertices thrown 8.6 m; into a 20 m box, out at its far side, 13 m).
Such a collider is aimed by its own faces where the vertices inside it nearest leave it, and
a closed one keeps that axis while it is near (``core.contact.Contacts._aim_by_faces``).

A standing tube (its normals all horizontal) meets a 6 m wide plane, or a 6 m wide box, rising
into it from below, fast or slowly, up to 20 cm deep, sliding along under it or not, with
random settings per level; after
every frame: nothing through the floor by more than 1e-3 of the tube's size, no vertex
further from rest than twice the deepest reach (plus the bulge), the same bits twice.
"""

import numpy as np
import pytest
from test_contact import random_settings

from contact_scenes import Box, Floor, Frames
from core import Surface, build_hierarchy
from scenes import tube, uv_sphere

RADIUS, LENGTH = 0.25, 1.0


def standing_tube():
    points, triangles = tube(RADIUS, LENGTH, 24, 11)
    return points[:, [1, 2, 0]], triangles  # its axis along z: every normal horizontal


def ball():
    return uv_sphere(LENGTH / 2, 24, 12)


def play(seed: int, floor_kind: str = "plane", frames: int = 40, mesh=standing_tube):
    rng = np.random.default_rng(seed)
    rest, faces = mesh()
    hierarchy = build_hierarchy(rest, faces.ravel(), np.full(len(faces), 3))
    settings = random_settings(rng, len(hierarchy.sizes), bulge=bool(seed % 2))
    bulge = float(-np.minimum(settings.absorption, 0).sum())
    deepest, speed = rng.uniform(0.05, 0.2), rng.uniform(0.01, 0.1)
    top = np.concatenate([np.arange(-0.05, deepest, speed), np.full(frames, deepest)])[: frames * 3 // 4]
    top = np.concatenate([top, np.linspace(deepest, -0.1, frames - top.size)]) + rest[:, 2].min()
    # Half the seeds slide the floor along under the tube while it presses (up to 2 cm a frame).
    drift = rng.uniform(-0.02, 0.02, 2) * (seed % 2 == 0) * np.arange(frames)[:, None]
    path = np.stack([drift[:, 0], drift[:, 1], top], axis=1)  # the floor's top at height ``top``
    if floor_kind == "plane":
        floor = Floor(path, [0.0, 0.0, 1.0], 3.0)
    else:  # a box 6 m wide, 60 cm thick
        half = np.array([3.0, 3.0, 0.3])
        floor = Box(path - [0.0, 0.0, half[2]], half)
    scene = Frames(Surface(hierarchy, rest, settings), faces, [floor])
    shown = []
    for frame in range(frames):
        shown.append(scene.play(frame))
        depth = floor.depth(shown[-1]).max()
        assert depth <= 1e-3 * LENGTH, f"frame {frame}: {depth:.4f} through the floor"
    return np.array(shown), rest, deepest, bulge


@pytest.mark.parametrize("floor_kind", ["plane", "box"])
@pytest.mark.parametrize("seed", range(8))
def test_a_standing_tube_pressed_onto_a_wide_floor_stays_out_and_bounded(seed, floor_kind):
    shown, rest, deepest, bulge = play(seed, floor_kind)
    moved = np.linalg.norm(shown - rest, axis=2).max()
    assert moved <= deepest * (2.0 + bulge) + 1e-3 * LENGTH, f"ran away: {moved:.3f}"
    assert moved >= 0.9 * deepest, "it was pressed"


@pytest.mark.parametrize("floor_kind", ["plane", "box"])
@pytest.mark.parametrize("seed", range(6))
def test_a_ball_pressed_onto_a_wide_floor_stays_out_and_bounded(seed, floor_kind):
    """A closed mesh (its normals point all round) on the same floors."""
    shown, rest, deepest, bulge = play(seed, floor_kind, mesh=ball)
    moved = np.linalg.norm(shown - rest, axis=2).max()
    assert moved <= deepest * (2.0 + bulge) + 1e-3 * LENGTH, f"ran away: {moved:.3f}"
    assert moved >= 0.9 * deepest, "it was pressed"


@pytest.mark.parametrize("floor_kind", ["plane", "box"])
def test_the_same_input_gives_the_same_bits(floor_kind):
    assert np.array_equal(play(2, floor_kind)[0], play(2, floor_kind)[0])


def slide_off(seed: int, frames: int = 48):
    """A ball pressed into a 6 m box's top slides across its edge and falls past its side,
    which ends inside the ball (as a keyed ball in a user's scene). Returns (positions shown
    each frame, the rest, the deepest the box reached into the rest shape up to each frame,
    the bulge)."""
    rng = np.random.default_rng(seed)
    rest, faces = ball()
    hierarchy = build_hierarchy(rest, faces.ravel(), np.full(len(faces), 3))
    settings = random_settings(rng, len(hierarchy.sizes), bulge=bool(seed % 2))
    bulge = float(-np.minimum(settings.absorption, 0).sum())
    radius = LENGTH / 2
    depth, overhang, drop = rng.uniform(0.05, 0.15), rng.uniform(0.05, 0.3), rng.uniform(0.5, 1.2)
    slide = int(rng.integers(8, 24))  # frames to reach the edge: fast or slowly
    half = np.array([3.0, 3.0, 0.3])
    # Moved with the box, not the ball (the same relative motion): its side from beyond the
    # ball to ``overhang`` inside it, then its top rising past the ball's middle.
    edge = np.full(frames, overhang - radius)
    edge[:slide] = np.linspace(radius + 0.2, overhang - radius, slide)
    top = np.concatenate([np.zeros(slide), np.linspace(0.0, drop, frames - slide)]) + depth - radius
    path = np.stack([edge - half[0], np.full(frames, rng.uniform(-0.1, 0.1)), top - half[2]], axis=1)
    box = Box(path, half)
    friction, standoff = rng.choice([0.0, 0.5]), rng.choice([0.0, 0.02])
    scene = Frames(Surface(hierarchy, rest, settings), faces, [box], friction=friction, standoff=standoff)
    shown, reach = [], []
    for frame in range(frames):
        shown.append(scene.play(frame))
        reach.append(max(box.depth(rest).max(), reach[-1] if reach else 0.0) + standoff)
        inside = box.depth(shown[-1]).max()
        assert inside <= 1e-3 * LENGTH, f"frame {frame}: {inside:.4f} inside the box"
    return np.array(shown), rest, np.array(reach), bulge


@pytest.mark.parametrize("seed", range(16))
def test_a_ball_sliding_off_a_box_and_falling_past_its_side_is_not_dragged_along(seed):
    """A vertex the box holds is pushed from where the response has moved it; held on the
    top while the ball falls past the side, it rode up the box frame by frame (1.7 m in a
    user's scene, for a 30 cm overhang). Every frame: nothing inside the box, no vertex further
    from rest than twice as far as the box has reached into the ball (plus the bulge)."""
    shown, rest, reach, bulge = slide_off(seed)
    moved = np.linalg.norm(shown - rest, axis=2).max(axis=1)
    worst = int(np.argmax(moved / reach.clip(1e-9)))
    assert (moved <= reach * (2.0 + bulge) + 1e-3 * LENGTH).all(), (
        f"frame {worst}: moved {moved[worst]:.3f}, the box reached {reach[worst]:.3f} in"
    )


def test_sliding_off_gives_the_same_bits():
    assert np.array_equal(slide_off(3)[0], slide_off(3)[0])
