"""A mesh resting on a floor box, squeezed onto it by a ball pressed down to a small gap over
the floor and slid across it, with friction: every frame, nothing of the mesh inside either.

A push out of one collider can end inside the other: it is asked of that one too
(``core.contact._out_of_the_others``). Before, it was asked only of the colliders whose
broad phase had found the vertex near them where it was before its push, so a push out of
the floor box (its rest rule sends a vertex it holds back to its rest) that ended under the
ball, far from where it started, was never asked of the ball: a new user's sphere crushed
and slid over, Stiff Shell, friction 0.38, kept vertices 18 cm inside the ball. Where the
two leave room between them along the push, from the face of the one that pushed (ahead of
the vertex, or behind it when it was pushed to keep the standoff) to the other's, it stops
in the middle of that room (``core.contact._no_room``): Rubber keeps 5 cm off what it
meets, and squeezed into 2 cm the floor's standoff lifted vertices back into the ball.
"""

import bpy
import numpy as np
import pytest
from test_secondary import apply_preset
from test_structure import select
from test_together import closed_mesh, depth_inside

from primitives import evaluated, keyed, scene_with_grid

ELASTIC = ("Rubber", "Jelly", "Stiff Shell")


@pytest.fixture(autouse=True)
def installed(addon):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def squeezed_onto_a_floor(seed: int, last: int = 60):
    """A random closed mesh (a UV or ico sphere, a subdivided cube, 0.3-0.5 m) on a floor box;
    a ball 0.4-1 times its radius comes down by frame 12 to 2-8 % of its height over the
    floor, slides 0-0.8 of its radius by frame 30 (or stays), holds to frame 40 and leaves by
    frame 46; an elastic preset, friction 0.2-0.8. Returns the scene, the mesh, the ball,
    the floor and the mesh's size (half its bounding box's diagonal)."""
    rng = np.random.default_rng(seed)
    scene, grid = scene_with_grid(last)
    bpy.data.objects.remove(grid)
    mesh = closed_mesh(str(rng.choice(["uv", "ico", "cube"])), float(rng.uniform(0.3, 0.5)), rng)
    rest = np.array([v.co for v in mesh.data.vertices])
    low, high = rest.min(axis=0), rest.max(axis=0)
    height = float(high[2] - low[2])
    radius = float(np.linalg.norm(high - low)) / 2
    bpy.ops.mesh.primitive_cube_add(size=2, location=(0.0, 0.0, float(low[2]) - 0.2 - 1e-3))
    floor = bpy.context.active_object
    floor.scale = (4 * radius, 4 * radius, 0.2)
    bpy.ops.object.transform_apply(location=False, scale=True)  # (its depths in metres: ``depth_inside``)
    ball_radius = float(rng.uniform(0.4, 1.0)) * height / 2
    bpy.ops.mesh.primitive_uv_sphere_add(radius=ball_radius, segments=32, ring_count=16)
    ball = bpy.context.active_object
    start = np.append(rng.normal(size=2) * 0.15 * height, 0.0)
    angle = rng.uniform(0.0, 2.0 * np.pi)
    slide = float(rng.choice([0.0, rng.uniform(0.3, 0.8)])) * height / 2
    end = start + slide * np.array([np.cos(angle), np.sin(angle), 0.0])
    low_z = float(low[2]) + ball_radius + float(rng.uniform(0.02, 0.08)) * height
    above = float(high[2]) + ball_radius + 0.3
    keyed(
        ball,
        {
            1: (start[0], start[1], above),
            12: (start[0], start[1], low_z),
            30: (end[0], end[1], low_z),
            40: (end[0], end[1], low_z),
            46: (end[0], end[1], above),
        },
    )
    scene.frame_set(1)
    select(mesh, [ball, floor])
    assert bpy.ops.object.collision_response_enable() == {"FINISHED"}
    apply_preset(str(rng.choice(ELASTIC)))
    mesh.collision_response.friction = float(rng.uniform(0.2, 0.8))
    return scene, mesh, ball, floor, float(np.linalg.norm(np.ptp(rest, axis=0))) / 2


@pytest.mark.parametrize("seed", range(16))
def test_a_mesh_squeezed_onto_a_floor_box_and_slid_over_stays_out_of_both(seed):
    """Every frame, nothing of the evaluated mesh inside the ball or the floor box by more
    than 1e-3 of the mesh's size (each collider's evaluated surface, by winding number).
    Before, 8 of these 16 did, by 1-44 % of the size (the most a Rubber cube: Rubber keeps
    5 cm off what it meets, and the ball came down to 2-3 cm over the floor)."""
    scene, mesh, ball, floor, size = squeezed_onto_a_floor(seed)
    inside, worst = 0.0, 0
    for frame in range(1, scene.frame_end + 1):
        scene.frame_set(frame)
        positions = evaluated(mesh)
        assert np.isfinite(positions).all()
        deepest = max(float(depth_inside(collider, positions).max()) for collider in (ball, floor))
        if deepest > inside:
            inside, worst = deepest, frame
    assert inside < 1e-3 * size, f"{inside / size:.4f} of the size inside at frame {worst}"


#: Still fail (README, Known failures): the mesh closes over a ball narrower than it, pressed
#: to 7 cm over the floor: a subdivided cube's dent wall hangs over the ball as it slides in
#: under it (seed 26), a sphere's walls rise round the ball as it lifts, faster than it
#: (seed 27); leaving, the ball lifts the mesh off from inside.
CLOSED_OVER = pytest.mark.xfail(strict=True, reason="the mesh closes over a narrow ball deep in it")


@pytest.mark.parametrize("seed", [pytest.param(s, marks=[CLOSED_OVER] if s in (26, 27) else []) for s in range(48)])
def test_a_ball_lifting_out_of_a_squeeze_leaves_the_mesh_behind(seed):
    """Every frame from the one the ball starts to leave, its centre is outside the evaluated
    mesh (by winding number). Before, 5 of these 48 had the mesh round the ball as it rose;
    in 3 the first frame's relaxation took the dent under a narrow ball up through it (46 cm
    in a step, seed 0), and the ball lifted the mesh off from inside. A vertex a step moves
    right through a still collider now goes back to where it went in
    (``core.contact._crossed_closed``)."""
    scene, mesh, ball, _, _ = squeezed_onto_a_floor(seed)
    for frame in range(1, scene.frame_end + 1):
        scene.frame_set(frame)
        if frame > 40:  # (the ball holds to frame 40, then leaves)
            centre = np.array(ball.matrix_world.translation)[None]
            assert depth_inside(mesh, centre)[0] == 0.0, f"frame {frame}: the ball is inside the mesh"
