"""Volume preservation (issue 21): the volume a press removed, given back around the contact.

A closed UV sphere squeezed between two balls keeps its enclosed volume within 2 % of rest
every frame (without volume preservation it loses more, so the tests can fail); a sheet
pressed by a ball keeps its displaced volume within 5 % over the region within the reach of
the contact; a held press gives back the same, frame after frame, for 200 frames; random
paths keep every contact invariant with it on, and the same input gives the same bits.
"""

import itertools

import numpy as np
import pytest
from test_contact import LEVEL, SIDE, check_frame, random_settings, triangles, wandering_path

from contact_scenes import Ball, Frames
from core import GridHierarchy, LevelSettings, Surface, build_hierarchy
from core.vectors import nonzero_rows
from core.volume import Volume, enclosed_volume
from scenes import grid_quads, grid_rest, uv_sphere

#: Per level, coarse to fine (interpolated over the sphere's levels): an elastic profile (only
#: the finer levels give way), the Rubber preset's (the whole body gives way) and the Flesh
#: preset's (a bulging level: it gains volume).
PROFILES = {"elastic": [0.0, 0.0, 0.3, 1.0], "rubber": [0.2, 0.5, 0.6, 0.6], "flesh": [0.0, -0.35, 0.3, 0.5]}
BALL = 0.25  # the squeezing balls' radius; the sphere's is 0.5
FRAMES = 72  # in over 1 s at 24 fps to 0.2 deep each side, held 1 s, out after 2 s


def squeeze(profile: str, reach: float | None, frames: int = FRAMES):
    """A sphere of radius 0.5 squeezed along x between two balls 0.2 deep each side, held,
    then released; returns the shown positions of every frame (frames, n, 3), the sphere's
    triangles and the balls' paths."""
    rest, faces = uv_sphere(0.5, 48, 24)
    hierarchy = build_hierarchy(rest, faces.ravel(), np.full(len(faces), 3))
    levels = len(hierarchy.sizes)
    settings = LevelSettings.uniform(levels, response_time=0.04, time_to_rest=0.35)
    settings.absorption[:] = np.interp(np.linspace(0, 1, levels), np.linspace(0, 1, 4), PROFILES[profile])
    t = np.arange(frames) / 24
    x = np.where(t < 2.0, np.maximum(0.8 - 0.5 * t, 0.55), 0.55 + (t - 2.0))  # the balls' centres
    paths = [np.stack([s * x, 0 * t, 0 * t], axis=1) for s in (1, -1)]
    balls = [Ball(path, BALL) for path in paths]
    scene = Frames(Surface(hierarchy, rest, settings), faces, balls, reach=reach)
    shown, scene.shortfalls = [], []  # each frame's shortfall (None: kept as promised)
    for frame in range(frames):
        shown.append(scene.play(frame))
        assert max(ball.depth(shown[-1]).max() for ball in balls) <= 1e-3 * BALL, "inside a ball"
        scene.shortfalls.append(None if scene.volume is None else scene.volume.shortfall)
    return np.array(shown), faces, scene


@pytest.mark.parametrize(
    ("profile", "reach"),
    [("elastic", 0.15), ("elastic", 0.3), ("elastic", 1.0), ("rubber", 0.3), ("rubber", 1.0), ("flesh", 0.3)],
)
def test_a_squeezed_closed_sphere_keeps_its_volume_within_2_percent_every_frame(profile, reach):
    """Pressed in, held, released: every frame (measured: within 0.26 % at a reach of 15 cm,
    elastic; within 0.0001 % at the others). Flesh's bulge gains volume: given back inward."""
    shown, faces, _scene = squeeze(profile, reach)
    rest_volume = enclosed_volume(shown[0], faces)
    change = np.array([enclosed_volume(p, faces) / rest_volume - 1.0 for p in shown])
    assert np.abs(change).max() < 0.02, f"{np.abs(change).max():.2%}"
    assert np.linalg.norm(shown - shown[0], axis=2).max() > 0.15  # it was squeezed (0.2 each side)


def test_a_reach_too_small_to_hold_the_volume_gives_back_what_it_can_and_no_spike():
    """Rubber (the whole ball gives way: 24.7 % lost) with a reach of 15 cm on a 50 cm ball:
    the ring within the reach would have to rise further than twice the dent is deep, which
    no vertex does; it gives back most (measured: 18.0 % lost; 13.9 % while any vertex of the
    ring could rise the whole limit) and stays bounded."""
    shown, faces, _scene = squeeze("rubber", 0.15)
    plain, _faces, _scene = squeeze("rubber", None)
    rest_volume = enclosed_volume(shown[0], faces)
    change = np.array([enclosed_volume(p, faces) / rest_volume - 1.0 for p in shown])
    assert -0.2 < change.min() < -0.02
    rest = shown[0]
    normals = rest / np.linalg.norm(rest, axis=1)[:, None]
    deepest = -np.einsum("fij,ij->fi", plain - rest, normals).min(axis=1)  # the dent's depth, each frame
    added = np.einsum("fij,ij->fi", shown - plain, normals).max(axis=1)
    assert (added <= 2.0 * deepest + 1e-6).all()


def test_a_reach_far_too_small_is_recorded_with_the_reach_that_would_hold_the_volume():
    """Rubber with a Reach of 2 cm on a 50 cm ball (shorter than its edges: nothing can rise)
    gives back nothing, 24.7 % lost: every frame it falls short is recorded, with what was
    missing and none of it given back; ``needed_reach`` then says about 38 cm, and that reach
    keeps the volume within 2 % every frame, with no frame short. A Reach that holds it (30 cm)
    records none, and nor does one that keeps it within the 2 % promised (elastic, 15 cm,
    0.26 % lost) though it gives back less than all."""
    shown, faces, scene = squeeze("rubber", 0.02)
    rest_volume = enclosed_volume(shown[0], faces)
    change = np.array([enclosed_volume(p, faces) / rest_volume - 1.0 for p in shown])
    short = [(frame, s) for frame, s in enumerate(scene.shortfalls) if s is not None]
    # Short exactly on the frames that lose more than 2 %: the record is the promise.
    assert [frame for frame, _s in short] == list(np.flatnonzero(change < -0.02))
    assert len(short) > 30 and change.min() < -0.2
    assert all(s.kept == 0 and s.given == 0 and s.wanted > 0.02 * rest_volume for _f, s in short)
    worst = max((s for _f, s in short), key=lambda s: s.wanted - s.given)
    needed = scene.volume.needed_reach(worst)
    assert 0.2 < needed < 0.5  # measured 0.38 (0.28 while any vertex of the ring could rise the whole limit)
    held, _faces, scene = squeeze("rubber", needed)
    change = np.array([enclosed_volume(p, faces) / rest_volume - 1.0 for p in held])
    assert np.abs(change).max() < 0.02, f"{np.abs(change).max():.2%}"
    assert scene.shortfalls == [None] * FRAMES
    for profile, reach in (("rubber", 0.3), ("elastic", 0.15)):
        _shown, _faces, scene = squeeze(profile, reach)
        assert scene.shortfalls == [None] * FRAMES, (profile, reach)


def test_a_reach_too_small_for_part_of_the_volume_says_how_much_was_kept():
    """Rubber with a Reach of 15 cm keeps part (18.0 % lost of 24.7 %): its short frames say
    so (the share kept between 0 and 1, as measured), and the reach it needs is longer."""
    shown, faces, scene = squeeze("rubber", 0.15)
    plain, _faces, _scene = squeeze("rubber", None)
    rest_volume = enclosed_volume(shown[0], faces)
    for frame, shortfall in enumerate(scene.shortfalls):
        if shortfall is None:
            continue
        lost = rest_volume - enclosed_volume(plain[frame], faces)
        kept = (enclosed_volume(shown[frame], faces) - enclosed_volume(plain[frame], faces)) / lost
        assert shortfall.wanted == pytest.approx(lost, rel=1e-4)
        assert shortfall.kept == pytest.approx(kept, abs=1e-4) and 0 < kept < 0.98
    worst = max((s for s in scene.shortfalls if s is not None), key=lambda s: s.wanted - s.given)
    assert scene.volume.needed_reach(worst) > 0.2


def test_the_reach_is_measured_in_the_space_given_a_non_uniform_scale_too():
    """Distances from the contact measured on the rest shape as the scene sees it: a UV sphere
    scaled (1, 1, 3) has every vertex's distance from a contact at +x that of its scaled
    position, to within the sampling (an eighth of the reach), and the ring reaches as far
    up (z) as around (y) in the scene, a third as far in the object's own units."""
    rest, faces = uv_sphere(0.5, 48, 24)
    normals = rest / np.linalg.norm(rest, axis=1)[:, None]
    scale = np.diag([1.0, 1.0, 3.0])
    reach = 0.2
    volume = Volume(rest, faces.ravel(), np.full(len(faces), 3), normals, reach, space=scale)
    source = rest[:, 0] > 0.45
    distance = volume.distance(source)
    scene = rest @ scale.T
    exact = np.linalg.norm(scene[:, None] - scene[source][None], axis=2).min(axis=1)
    within = exact < reach - reach / 8
    assert np.abs(distance[within] - exact[within]).max() <= reach / 8
    assert np.isinf(distance[exact > reach + reach / 8]).all()

    def past(ring):  # how far the ring reaches past the contact up and around, object units
        edge = np.abs(rest[source, 1]).max()  # (the contact is as wide up as around)
        return np.abs(rest[ring, 2]).max() - edge, np.abs(rest[ring, 1]).max() - edge

    up, around = past(np.isfinite(distance))
    assert up == pytest.approx(around / 3, rel=0.25), (up, around)
    volume.measure(reach)  # in object space: as far up as around
    up, around = past(np.isfinite(volume.distance(source)))
    assert up == pytest.approx(around, rel=0.1), (up, around)


@pytest.mark.parametrize(("profile", "lost"), [("elastic", 0.06), ("rubber", 0.2), ("flesh", -0.02)])
def test_without_volume_preservation_the_squeezed_sphere_loses_more_than_2_percent(profile, lost):
    """Or gains more, with Flesh's bulge (measured: 8.0 % lost, elastic; 24.7 %, Rubber;
    2.16 % gained, Flesh, as issue 21 measured in Blender, 2.6 %)."""
    shown, faces, _scene = squeeze(profile, None)
    rest_volume = enclosed_volume(shown[0], faces)
    change = np.array([enclosed_volume(p, faces) / rest_volume - 1.0 for p in shown])
    if lost > 0:
        assert change.min() < -lost
    else:
        assert change.max() > -lost


def test_volume_comes_back_within_the_reach_of_the_contact():
    """Where the volume reappears: what volume preservation adds to the response (the same
    press without it) moves out only vertices within the reach of the balls' contact. (Beyond
    it the two differ by rounding-sized amounts: the query remembers the positions it was
    last asked about, the shown ones, when it measures how a vertex approached a collider.)"""
    reach = 0.15
    shown, _faces, scene = squeeze("elastic", reach, frames=40)
    plain, _faces, _scene = squeeze("elastic", None, frames=40)
    rest = shown[0]
    added = np.einsum("ij,ij->i", shown[-1] - plain[-1], scene.normals)
    touched = np.max([ball.depth(shown[-1]) for ball in scene.colliders], axis=0) > -1e-3 * BALL  # (held)
    distance = np.linalg.norm(rest[:, None] - rest[touched][None], axis=2).min(axis=1)
    bulge = added[(distance > 0) & (distance < reach)].max()
    assert bulge > 0.01  # near the contact (measured 2.2 cm)
    assert np.abs(added[distance > reach]).max() < 0.002 * bulge  # (measured 1.4e-5 m, 0.06 %)


def press_sheet(reach: float | None, frames: int, profile=(0.0, 0.3, 0.3, 0.3, 0.4, 0.6, 1.0)):
    """A ball of radius 0.3 comes down 0.1 into a 65 x 65 sheet (2 m) over 1 s and holds;
    returns the scene, the shown positions of every frame and the solver's (the response
    without the volume given back)."""
    rest = grid_rest(LEVEL)
    settings = LevelSettings.uniform(LEVEL + 1, response_time=0.04, time_to_rest=0.5)
    settings.absorption[:] = profile
    t = np.arange(frames) / 24
    ball = Ball(np.stack([0 * t, 0 * t, np.maximum(0.35 - 0.15 * t, 0.2)], axis=1), 0.3)
    scene = Frames(Surface(GridHierarchy(LEVEL), rest, settings), grid_quads(SIDE), [ball], reach=reach)
    shown, response = [], []
    for frame in range(frames):
        shown.append(scene.play(frame))
        response.append(scene.surface.positions.astype(np.float64))
    return scene, np.array(shown), np.array(response)


def test_a_reach_that_grows_changes_what_is_shown_smoothly_without_a_pop():
    """A keyframed Reach rising from 15 to 45 cm over a held press (a Rubber-like sheet: the
    ring cannot hold it all), asked in steps of 5 mm: each step moves the shown sheet a
    little and none at once (measured: at most 16 mm, 0.16 of the dent, a step). Before, a
    vertex entering the ring rose from nothing to the whole limit (twice the dent) in one
    step: steps of up to 63 mm, the first one moving nothing at all."""
    scene, _shown, _response = press_sheet(0.15, 36, profile=(0.2, 0.3, 0.4, 0.5, 0.6, 0.6, 1.0))
    volume, base = scene.volume, scene.surface.positions
    found = scene.query(base.astype(np.float64), None, np.inf, shown=True)
    push, touching = found.push, found.touching
    contact = nonzero_rows(push) | touching
    dent = -base[:, 2].min()

    def push_out(positions, among):
        return scene.query(positions, among, np.inf, shown=True)[0]

    seen = []
    for reach in np.arange(0.15, 0.45001, 0.005):
        volume.measure(float(reach))
        shown = volume.give_back(base, contact, push_out)
        seen.append(base if shown is None else shown.copy())
        assert volume.shortfall is not None  # (short all the way: the ring is full)
    steps = np.array([np.linalg.norm(b - a, axis=1).max() for a, b in itertools.pairwise(seen)])
    assert steps.max() < 0.25 * dent, f"{steps.max() / dent:.2f} of the dent in one step"
    assert (steps > 0).all()  # every step shows the Reach's change
    assert np.linalg.norm(seen[-1] - seen[0], axis=1).max() > dent  # and it does give back more


def test_a_pressed_sheet_keeps_its_displaced_volume_within_5_percent_over_the_region():
    """The displaced volume (each vertex's move along its rest normal times its area) summed
    over the vertices within the reach of the contact (measured exactly here, against every
    vertex the ball holds in the response; the bulge given back may ride up onto the ball
    too): within 5 % of the dent's volume, every frame the ball presses."""
    reach = 0.4
    scene, shown, response = press_sheet(reach, 48)
    rest, ball = shown[0], scene.colliders[0]
    area = Volume(rest, grid_quads(SIDE).ravel(), np.full((SIDE - 1) ** 2, 4), scene.normals, reach).area
    checked = 0
    for frame, positions in enumerate(shown):
        ball.at(frame)
        touched = ball.depth(response[frame]) > -1e-3 * ball.radius
        if not touched.any():
            continue
        distance = np.linalg.norm(rest[:, None] - rest[touched][None], axis=2).min(axis=1)
        displaced = area * (positions - rest)[:, 2]
        region = distance <= reach
        dent = -displaced[displaced < 0].sum()
        assert abs(displaced[region].sum()) <= 0.05 * dent, f"frame {frame}: {displaced[region].sum() / dent:.1%}"
        checked += 1
    assert checked > 20 and dent > 0.005  # pressed for most of the clip, a dent of 5 litres
    _scene, plain, _response = press_sheet(None, 48)
    last = (area * (plain[-1] - rest)[:, 2]).sum()
    assert last < -0.5 * dent  # without it most of the dent's volume is gone


def test_a_held_press_gives_back_the_same_volume_and_does_not_grow_over_200_frames():
    scene, shown, _response = press_sheet(0.4, 250)
    rest = shown[0]
    height = (shown - rest)[:, :, 2]
    bulge = height.max(axis=1)
    assert bulge[50] > 0.05  # a ring around the dent (measured 10.7 cm: the coarse levels sink much of the sheet)
    assert np.abs(bulge[50:] - bulge[50]).max() <= 1e-6  # settled: the same, not growing
    assert np.abs(shown[-1] - shown[50]).max() <= 1e-6
    assert scene.volume is not None and scene.volume.given > 0


def test_random_paths_with_volume_on_keep_every_invariant_every_frame():
    """Random settings (a bulging level too), random reach, a ball wandering deep and fast:
    nothing inside it, no face turned over, no pop-through, bounded, every frame; then the
    same input gives the same bits. The bound allows what is given back on top of the
    surface's own (2 plus the bulge, times the deepest reach): at most twice the dent's depth
    more. No vertex went further than 1.79 times the deepest reach."""
    faces = triangles()
    worst = 0.0
    for seed in range(4):
        rng = np.random.default_rng(100 + seed)
        rest = grid_rest(LEVEL)
        settings = random_settings(rng, LEVEL + 1, bulge=seed % 2 == 1)
        bulge = float(-np.minimum(settings.absorption, 0).sum())
        radius = rng.uniform(0.15, 0.35)
        path = wandering_path(rng, 120, radius, deepest=radius * 1.4, step=0.15)
        reach = rng.uniform(0.5, 1.5) * radius
        runs = []
        for _run in range(2):
            shape = Ball(path, radius)
            scene = Frames(Surface(GridHierarchy(LEVEL), rest, settings), grid_quads(SIDE), [shape], reach=reach)
            deepest, played = 0.0, []
            for frame in range(len(path)):
                positions = scene.play(frame)
                deepest = max(deepest, -(shape.centre[2] - radius))
                check_frame(positions, rest, shape, faces, deepest, bulge + 2.0)
                worst = max(worst, np.abs(positions - rest).max() / max(deepest, 1e-9))
                played.append(positions)
            runs.append(np.array(played))
        assert np.array_equal(runs[0], runs[1])
    assert worst > 0.5  # it was pressed (measured: 1.79 times the deepest reach at most)


def test_without_a_press_nothing_is_given_back_and_the_frame_is_the_response_bit_for_bit():
    """A ball passing above the sheet, never touching: every frame shows the solver's own
    positions, the same bits as without volume preservation; a closed sphere reads as
    closed, a sheet as open."""
    rest = grid_rest(LEVEL)
    t = np.arange(30) / 24
    path = np.stack([t - 0.5, 0 * t, 0.5 + 0 * t], axis=1)
    played = []
    for reach in (None, 0.4):
        surface = Surface(GridHierarchy(LEVEL), rest, LevelSettings.uniform(LEVEL + 1))
        scene = Frames(surface, grid_quads(SIDE), [Ball(path, 0.3)], reach=reach)
        played.append(np.array([scene.play(frame) for frame in range(len(t))]))
        if reach is not None:
            assert scene.volume is not None and not scene.volume.closed and scene.volume.shown is None
    np.testing.assert_array_equal(played[0], played[1])
    sphere, faces = uv_sphere(0.5, 16, 8)
    assert Volume(sphere, faces.ravel(), np.full(len(faces), 3), sphere / 0.5, 0.2).closed
