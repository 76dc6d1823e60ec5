"""A mesh pressed against something else springs back when the press leaves.

A closed mesh resting on (or near) a support, a floor box or an open floor plane facing any
way, is crushed onto it by a ball from the other side, held, and let go. With an elastic
preset the whole mesh is back at rest once the ball has gone for longer than its time to
rest. Before a contact held only against its collider, the vertices resting on the support
kept every coarser offset above them from relaxing (a resting vertex was held both ways),
and a crush whose coarse levels took the press stayed for good.
"""

import numpy as np
import pytest

from contact_scenes import Ball, Box, Floor, Frames
from core import LevelSettings, Surface, build_hierarchy
from scenes import uv_sphere

#: The elastic presets' curves (``blender/presets``): absorption coarse to fine, damping's
#: response time and the time to rest, in seconds.
PRESETS = {
    "Stiff Shell": ([0.9, 0.8, 0.4, 0.1], 0.0, 0.12),
    "Rubber": ([0.2, 0.5, 0.6, 0.6], 0.04, 0.35),
    "Jelly": ([0.2, 0.5, 0.5, 0.6], 0.02, 0.25),
    "Flesh": ([0.0, -0.35, 0.3, 0.5], 0.06, 0.6),
    "Belly": ([0.0, -0.25, 0.3, 0.5], 0.08, 0.5),
}
AXES = np.eye(3)


def crushed(seed: int, friction: float | None = None):
    """A random crush: the mesh, its triangles or polygons, the support and the ball, the
    frame the ball has gone by, the last frame, fps and the preset's name. ``friction``: the
    surface's (drawn at random when None: none in half the crushes, as the add-on's default)."""
    rng = np.random.default_rng(seed)
    name = list(PRESETS)[seed % len(PRESETS)]
    radius = rng.uniform(0.3, 0.5)
    segments = int(rng.integers(16, 33))
    rest, faces = uv_sphere(radius, segments, segments // 2)
    rest = rest * rng.uniform(0.6, 1.2, size=3)  # an ellipsoid: a pebble, a cushion, an egg
    corners, sizes = faces.ravel(), np.full(len(faces), 3)
    radius = float(np.linalg.norm(rest, axis=1).max())
    # The support, under the mesh along -up: a box's face (up an axis) or a plane facing up.
    box = rng.random() < 0.5
    if box:
        up = AXES[rng.integers(3)] * rng.choice([-1.0, 1.0])
    else:
        up = rng.normal(size=3)
        up /= np.linalg.norm(up)
    turn = _turn_z_to(up)
    rest = rest @ turn.T  # the mesh stood on the support's side
    lowest = float(-(rest @ up).min())
    gap = rng.uniform(0.0, 0.02)
    rest = rest + up * (lowest + gap)  # resting on the face at 0, or just above it
    fps = float(rng.choice([24.0, 60.0]))
    frame = lambda seconds: round(seconds * fps)  # noqa: E731
    arrive, leave, gone, last = frame(0.5), frame(1.0), frame(1.3), frame(3.2)
    ball_radius = rng.uniform(0.2, 0.6)
    depth = rng.uniform(0.3, 0.85) * float(np.ptp(rest @ up))  # how far into the mesh's rest the ball goes
    side = rng.normal(size=3) * 0.3 * radius
    side -= (side @ up) * up
    top = float((rest @ up).max())
    start = side + up * (top + ball_radius + 1.0)
    # (Its lowest point stays a tenth of the mesh's height off the support: keyed into the
    # support, the ball would leave the mesh no room.)
    press = side + up * max(_height(rest, side, up, ball_radius, depth), ball_radius + 0.1 * float(np.ptp(rest @ up)))
    times = np.arange(last + 1)
    path = np.stack(
        [np.interp(times, [0, arrive, leave, gone], [a, b, b, a]) for a, b in zip(start, press, strict=True)], 1
    )
    if box:
        half = np.full(3, 3.0)
        half[np.argmax(np.abs(up))] = 0.5
        support = Box([-up * 0.5] * (last + 1), half)
    else:
        support = Floor([np.zeros(3)] * (last + 1), up, 3.0)
    drawn = 0.0 if rng.random() < 0.5 else float(rng.uniform(0.1, 1.0))
    friction = drawn if friction is None else friction
    colliders = [Ball(path, ball_radius), support]
    scene = Frames(elastic(rest, corners, sizes, name), faces, colliders, friction=friction, fps=fps)
    return scene, rest, gone, last, name


def elastic(rest, corners, sizes, name: str) -> Surface:
    """A surface of the mesh with the elastic preset ``name``'s curves (nothing yields)."""
    hierarchy = build_hierarchy(rest, corners, sizes)
    levels = len(hierarchy.sizes)
    curve, response, time_to_rest = PRESETS[name]
    settings = LevelSettings(
        absorption=np.interp(np.linspace(0.0, 1.0, levels), np.linspace(0.0, 1.0, 4), curve),
        response_time=np.full(levels, response),
        time_to_rest=np.full(levels, time_to_rest),
        yield_limit=np.full(levels, 10.0),
    )
    return Surface(hierarchy, rest, settings)


def _height(rest, side, up, radius: float, depth: float) -> float:
    """How far along ``up`` past ``side`` a ball of ``radius`` is centred for its lowest
    point to reach ``depth`` below the mesh's top there (its highest vertices of the 8
    nearest ``side`` across ``up``)."""
    heights = rest @ up
    across = np.linalg.norm(rest - np.outer(heights, up) - side, axis=1)
    top = float(heights[np.argsort(across)[:8]].max())
    return top + radius - depth


def _turn_z_to(up: np.ndarray) -> np.ndarray:
    """A rotation taking +z to unit ``up``."""
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, up)
    s, c = float(np.linalg.norm(axis)), float(z @ up)
    if s < 1e-9:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    k = axis / s
    cross = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + s * cross + (1 - c) * cross @ cross


@pytest.mark.parametrize("seed", range(40))
def test_a_mesh_crushed_onto_a_support_springs_back_once_the_press_has_gone(seed):
    """Every elastic preset, crushed 30-85 % of its height onto a box or a plane facing any
    way, held half a second and let go: every frame nothing inside either collider by more
    than 1e-3 of the mesh's radius; at the last frame (1.9 s after the ball left, over 3 of
    the preset's times to rest) no vertex further from rest than 1 % of it. Before, 17 of
    these 40 stayed crushed for good, by 4.6-19 cm (Jelly, Rubber) and 15-43 cm (Stiff Shell)."""
    _springs_back(*crushed(seed))


#: Still fails (README, Known failures): seed 35 at 0.85, 6.3 cm inside the ball.
STILL_INSIDE = pytest.mark.xfail(strict=True, reason="a Stiff Shell crushed with friction 0.85: 6.3 cm inside")
CRUSHES_WITH_FRICTION = [
    pytest.param(35, f, marks=[STILL_INSIDE] if f == 0.85 else []) for f in (0.15, 0.3, 0.45, 0.7, 0.85, 1.0)
] + [(10, 0.85), (10, 1.0)]


@pytest.mark.parametrize("seed, friction", CRUSHES_WITH_FRICTION)
def test_a_stiff_shell_crushed_onto_a_box_with_friction_stays_out_of_both(seed, friction):
    """Seeds 35 and 10 (Stiff Shell, 76 % and 64 % of the height onto a box) with friction.
    While the ball held, a vertex the relaxing shell had moved into the box was pushed out
    along the box's way back to its rest, which the ball now covered; out of the ball that
    way was longer than the push, so it was left in the middle of the overlap there
    (``core.contact._no_room``): 8.5-29 mm inside the ball (seed 35), 65 mm (seed 10, 0.85).
    Where there is room between the box's face and the ball along the push, it stops in the
    middle of that room: out of both. Seed 35 at 0.85 is still 6.3 cm inside: the floor's
    rest rule sends a vertex toward its rest inside the ball, and refusing such moves (not
    only those that cross the ball) undid it, but left a monkey's ear on top of a turned box
    that lifted it away, for good, and made squeezes under turned boxes shake."""
    _springs_back(*crushed(seed, friction))


def _springs_back(scene, rest, gone, last, name) -> None:
    radius = float(np.linalg.norm(rest - rest.mean(axis=0), axis=1).max())
    deepest = inside = 0.0
    for frame in range(last + 1):
        positions = scene.play(frame)
        deepest = max(deepest, float(np.linalg.norm(positions - rest, axis=1).max()))
        inside = max(inside, *(float(c.depth(positions).max()) for c in scene.colliders))
        if frame == gone:
            at_release = float(np.linalg.norm(positions - rest, axis=1).max())
    left = float(np.linalg.norm(positions - rest, axis=1).max())
    assert deepest > 0.1 * radius, f"{name}: the ball never pressed ({deepest:.3f} m)"
    assert inside < 1e-3 * radius, f"{name}: {inside:.4f} m inside a collider"
    assert left < 0.01 * radius, f"{name}: {left:.4f} m left of {deepest:.3f} (at release {at_release:.3f})"


def test_a_ball_crushed_onto_a_floor_springs_back_when_the_press_leaves():
    """A new user's scene: a sphere (radius 0.4) resting on a floor box is crushed 0.65 m by a
    ball whose response the coarsest level takes (Stiff Shell's absorptions, time to rest
    0.12 s, 60 fps); the ball leaves at frame 75. Without the floor it is back at rest by
    frame 80 (1 mm); with it, it stayed crushed for good (0.645 m at frame 140): its bottom
    rested on the floor, held both ways, and the coarse levels that held the crush down never
    relaxed. Now back within 1 cm by frame 140 (0.5 mm by frame 80)."""
    rest, triangles = uv_sphere(0.4, 32, 16)
    rest = rest + [0.0, 0.0, 0.401]
    hierarchy = build_hierarchy(rest, triangles.ravel(), np.full(len(triangles), 3))
    levels = len(hierarchy.sizes)
    absorption = np.interp(np.linspace(0.0, 1.0, levels), np.linspace(0.0, 1.0, 4), [0.9, 0.8, 0.4, 0.1])
    settings = LevelSettings(
        absorption=absorption,
        response_time=np.zeros(levels),
        time_to_rest=np.full(levels, 0.12),
        yield_limit=np.full(levels, 1.0),
    )
    last = 140
    path = [[0.03, 0.0, np.interp(f, [0, 30, 60, 75], [1.15, 0.45, 0.45, 1.15])] for f in range(last + 1)]
    floor = Box([[0.0, 0.0, -0.5]] * (last + 1), [3.0, 3.0, 0.5])
    scene = Frames(Surface(hierarchy, rest, settings), triangles, [Ball(path, 0.3), floor], fps=60)
    deepest = 0.0
    for frame in range(last + 1):
        positions = scene.play(frame)
        deepest = max(deepest, float(np.linalg.norm(positions - rest, axis=1).max()))
    assert deepest > 0.6
    assert float(np.linalg.norm(positions - rest, axis=1).max()) < 0.01


def squeezed(seed: int):
    """A random squeeze: a ball pressed down to a small gap (2-8 % of the mesh's height) over a
    box the mesh rests on, with friction, then slid across it (or held where it pressed),
    held, and lifted away; each closed collider's rays cast only for the vertices near it, as
    the add-on casts them. Returns the scene, the rest positions, the slide's length and the
    last frame."""
    rng = np.random.default_rng(seed)
    name = list(PRESETS)[seed % len(PRESETS)]
    radius = rng.uniform(0.3, 0.5)
    segments = int(rng.integers(16, 33))
    rest, faces = uv_sphere(radius, segments, segments // 2)
    rest = rest * rng.uniform(0.7, 1.2, size=3)
    corners, sizes = faces.ravel(), np.full(len(faces), 3)
    rest = rest + [0.0, 0.0, -rest[:, 2].min() + rng.uniform(0.0, 0.01)]
    height = float(np.ptp(rest[:, 2]))
    fps = float(rng.choice([24.0, 60.0]))
    frame = lambda seconds: round(seconds * fps)  # noqa: E731
    down, slid, leave, gone, last = frame(0.5), frame(1.5), frame(2.0), frame(2.3), frame(3.5)
    ball_radius = rng.uniform(0.4, 1.0) * radius
    start = rng.normal(size=3) * 0.3 * radius
    start[2] = 0.0
    angle = rng.uniform(0.0, 2.0 * np.pi)
    slide = rng.choice([0.0, rng.uniform(0.3, 0.8) * radius])
    end = start + slide * np.array([np.cos(angle), np.sin(angle), 0.0])
    low = ball_radius + rng.uniform(0.02, 0.08) * height  # its lowest point over the box
    above = height + ball_radius + 0.5
    times = np.arange(last + 1)
    keys = [0, down, slid, leave, gone]
    path = np.stack(
        [
            np.interp(times, keys, [start[0], start[0], end[0], end[0], end[0]]),
            np.interp(times, keys, [start[1], start[1], end[1], end[1], end[1]]),
            np.interp(times, keys, [above, low, low, low, above]),
        ],
        1,
    )
    support = Box([[0.0, 0.0, -0.5]] * (last + 1), [3.0, 3.0, 0.5])
    friction = float(rng.uniform(0.2, 0.8))
    colliders = [Ball(path, ball_radius), support]
    surface = elastic(rest, corners, sizes, name)
    scene = Frames(surface, faces, colliders, friction=friction, fps=fps, each_near=True)
    return scene, rest, float(slide), last


@pytest.mark.parametrize("seed", range(64))
def test_a_mesh_squeezed_onto_a_box_and_slid_over_stays_out_of_both(seed):
    """Every elastic preset on a box, a ball pressed down to 2-8 % of the mesh's height over
    the box, with friction, slid across (or held), then lifted: every frame nothing inside
    either collider by more than 1e-3 of the mesh's radius, and no vertex further from rest
    than the mesh's height plus the slide (a squeeze moves a vertex about its height at most,
    friction drags it the slide). Before, a push out of the box was asked of the ball only
    where the vertex was near the ball before its push (a broad phase's answer for the
    vertex where it was, not where it went): the box's rest rule put vertices back at their
    rest, under the ball now there, 18 cm inside it (a new user's sphere crushed and slid
    over, Stiff Shell); and the rule's way back to the rest crossed the ball whole, 0.87 m up
    through it, and was pushed down again the next frame: a held squeeze jumped. And a ball
    leaving carried off what its press had laid on its side (4 of these 64 before, 0.93-1.27
    m from rest): found inside it after it moved, a vertex at its side near its equator was
    pushed back the way it came, up onto its top, 35 cm for a 20 cm move (3 mm inside it
    straight out from its centre), and carried from there; now the way straight out from the
    centre is tried too, the shortest taken."""
    scene, rest, slide, last = squeezed(seed)
    radius = float(np.linalg.norm(rest - rest.mean(axis=0), axis=1).max())
    height = float(np.ptp(rest[:, 2]))
    inside = furthest = 0.0
    worst = -1
    for frame in range(last + 1):
        positions = scene.play(frame)
        deepest = max(float(c.depth(positions).max()) for c in scene.colliders)
        if deepest > inside:
            inside, worst = deepest, frame
        furthest = max(furthest, float(np.linalg.norm(positions - rest, axis=1).max()))
    assert inside < 1e-3 * radius, f"{inside:.4f} m inside a collider at frame {worst} (radius {radius:.3f})"
    assert furthest < height + slide, f"a vertex {furthest:.3f} m from rest (height {height:.3f}, slide {slide:.3f})"
