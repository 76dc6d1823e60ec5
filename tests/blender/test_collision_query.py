"""Displacement vectors from real Blender colliders, checked against exact ray casts."""

import importlib

import bpy
import numpy as np
import pytest
from conftest import MODULE

from core import GridHierarchy, LevelSettings, Surface
from reference import first_hit, world_triangles

#: How far a 64 x 32 UV sphere of radius 0.4 lies inside the true sphere at most: its flat
#: quads span a segment and a ring, each pi / 32 wide.
TESSELLATION = 0.4 * (1 - np.cos(np.pi / 64) ** 2) * 1.01


@pytest.fixture(autouse=True)
def empty_scene(addon):
    bpy.ops.wm.read_homefile(use_empty=True)
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def new_query():
    """The installed add-on's collision query, for the current scene."""
    return importlib.import_module(MODULE + ".blender.collision").CollisionQuery(bpy.context.scene)


def grid(subdivisions: int = 64, size: float = 2.0):
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=subdivisions, y_subdivisions=subdivisions, size=size)
    obj = bpy.context.active_object
    positions = np.empty(len(obj.data.vertices) * 3, dtype=np.float32)
    obj.data.vertices.foreach_get("co", positions)
    return obj, positions.reshape(-1, 3), np.tile(np.float32([0, 0, 1]), (len(obj.data.vertices), 1))


def sphere(radius=0.4, location=(0.1, 0.0, 0.32), **options):
    bpy.ops.mesh.primitive_uv_sphere_add(segments=64, ring_count=32, radius=radius, location=location, **options)
    return bpy.context.active_object


def check_against_reference(obj, positions, contact, colliders, down=(0.0, 0.0, -1.0)):
    """Every vector runs straight down to where the first collider it is in ends, exactly."""
    matrix = np.array(obj.matrix_world)
    world = positions @ matrix[:3, :3].T + matrix[:3, 3]
    direction = np.tile(down, (len(world), 1))
    expected = np.zeros(len(world))
    for collider in colliders:
        distance, leaving = first_hit(world, direction, world_triangles(collider))
        expected = np.maximum(expected, np.where(leaving & np.isfinite(distance), distance, 0.0))
    inside = expected > 0
    length = np.linalg.norm(contact.displacement, axis=1)
    np.testing.assert_array_equal(length > 0, inside)
    assert np.abs(length - expected).max() < 1e-4 * max(max(c.dimensions) for c in colliders) / 2
    unit = contact.displacement[inside] / length[inside, None]
    np.testing.assert_allclose(unit, direction[inside], atol=1e-5)
    return inside


def test_a_sphere_pressing_a_grid_gets_exact_vectors_and_everything_else_zero():
    obj, positions, normals = grid()
    ball = sphere()
    contact = new_query().displacements(obj, positions, normals, [ball])
    inside = check_against_reference(obj, positions, contact, [ball])
    assert inside.sum() > 100 and contact.messages == []
    # Against the true sphere, the tessellation bounds the gap.
    rel = positions - np.array([0.1, 0.0, 0.32])
    true_depth = np.sqrt(np.maximum(0.16 - rel[:, 0] ** 2 - rel[:, 1] ** 2, 0)) + rel[:, 2]
    error = np.abs(np.linalg.norm(contact.displacement, axis=1) - true_depth)[inside]
    assert error.max() < TESSELLATION
    assert contact.queried < len(positions) / 5  # the broad phase kept only the neighbourhood


def test_a_concave_collider_is_exited_where_its_volume_ends():
    obj, positions, normals = grid()
    bpy.ops.mesh.primitive_torus_add(major_radius=0.5, minor_radius=0.15, location=(0, 0, 0.1))
    torus = bpy.context.active_object
    contact = new_query().displacements(obj, positions, normals, [torus])
    inside = check_against_reference(obj, positions, contact, [torus])
    hole = np.linalg.norm(positions[:, :2], axis=1) < 0.3
    assert inside.sum() > 50 and not inside[hole].any()  # the hole stays untouched


def test_a_stretched_and_mirrored_collider():
    obj, positions, normals = grid()
    ball = sphere(radius=0.3, location=(0.0, 0.1, 0.25))
    ball.scale = (1.6, -0.7, 1.0)  # the object's scale (the operator's would go into the mesh)
    bpy.context.view_layer.update()
    contact = new_query().displacements(obj, positions, normals, [ball])
    inside = check_against_reference(obj, positions, contact, [ball])
    footprint = positions[inside]
    assert np.ptp(footprint[:, 0]) > 1.8 * np.ptp(footprint[:, 1])  # stretched along x


def test_a_mesh_whose_normals_point_inward_still_collides():
    obj, positions, normals = grid()
    ball = sphere()
    ball.data.flip_normals()
    contact = new_query().displacements(obj, positions, normals, [ball])
    ball.data.flip_normals()  # the reference reads the faces as they should be
    check_against_reference(obj, positions, contact, [ball])


def test_two_overlapping_colliders_the_longest_vector_wins():
    obj, positions, normals = grid()
    big, small = sphere(radius=0.4, location=(0.1, 0, 0.33)), sphere(radius=0.2, location=(0.2, 0, 0.1))
    contact = new_query().displacements(obj, positions, normals, [big, small])
    check_against_reference(obj, positions, contact, [big, small])


def test_full_friction_tilts_the_push_45_degrees_toward_the_colliders_motion():
    """Friction drags the surface along with a sliding collider, but the push still goes
    into the surface: at full friction it leans 45 degrees from the normal toward the part of
    the collider's motion along the surface (here +x), never outward."""
    obj, positions, normals = grid()
    ball = sphere(radius=0.4, location=(0.0, 0.0, 0.32))
    query = new_query()
    query.displacements(obj, positions, normals, [ball], friction=1.0)
    ball.location.x += 0.05  # sliding sideways and down
    ball.location.z -= 0.02
    bpy.context.view_layer.update()
    contact = query.displacements(obj, positions, normals, [ball], friction=1.0)
    moved = np.linalg.norm(contact.displacement, axis=1) > 0
    unit = contact.displacement[moved] / np.linalg.norm(contact.displacement[moved], axis=1)[:, None]
    assert moved.sum() > 100
    np.testing.assert_allclose(unit, np.tile([np.sqrt(0.5), 0.0, -np.sqrt(0.5)], (moved.sum(), 1)), atol=1e-5)


def test_pushes_follow_the_reference_normals_not_the_dents_own_or_the_colliders_faces():
    """Pressed 1 cm further, every vertex is pushed along its reference normal (straight
    down on a sheet), whatever the normals of its dented neighbourhood say and however steep
    the ball's faces are where it is: pushes along one smooth field keep the sheet a height
    field, which cannot fold. Only vertices near the ball are asked for normals."""
    obj, positions, normals = grid()
    ball = sphere(radius=0.4, location=(0.0, 0.0, 0.32))
    query = new_query()
    first = query.displacements(obj, positions, normals, [ball])
    pressed = np.linalg.norm(first.displacement, axis=1) > 0
    on_ball = positions + first.displacement
    ball.location.z -= 0.01
    bpy.context.view_layer.update()
    asked = []

    def reference(index):
        asked.append(index)
        return normals[index]

    again = query.displacements(obj, on_ball, reference, [ball]).displacement
    assert pressed.sum() > 100 and len(asked) == 1
    assert asked[0].size < 0.2 * len(positions)  # the broad phase's vertices only
    np.testing.assert_allclose(again[pressed, :2], 0.0, atol=1e-6)  # straight down
    reached = on_ball[pressed] + again[pressed] - np.array(ball.location)
    assert np.abs(np.linalg.norm(reached, axis=1) - 0.4).max() < TESSELLATION  # out onto the ball


def test_a_standoff_keeps_the_gap_and_touching_vertices_are_reported():
    obj, positions, normals = grid()
    ball = sphere(radius=0.4, location=(0.0, 0.0, 0.42))  # 2 cm above the grid
    query = new_query()
    contact = query.displacements(obj, positions, normals, [ball], standoff=0.05)
    below = np.linalg.norm(contact.displacement, axis=1) > 0
    assert below.sum() > 10
    reached = positions[below] + contact.displacement[below]
    # The gap is kept along the push (straight down): 5 cm under the sphere's lower surface,
    # up to the tessellation.
    underside = 0.42 - np.sqrt(0.16 - reached[:, 0] ** 2 - reached[:, 1] ** 2)
    assert np.abs(reached[:, 2] - (underside - 0.05)).max() < TESSELLATION
    # There, exactly at the standoff: touching, and not pushed again.
    contact = query.displacements(obj, positions + contact.displacement, normals, [ball], standoff=0.05)
    assert contact.touching[below].all() and np.abs(contact.displacement).max() < 1e-5


def test_a_thin_plate_passing_through_a_sheet_never_flips_the_dent():
    obj, positions, normals = grid(subdivisions=32)
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0, 0, 0.3), scale=(0.3, 0.3, 0.02))  # 2 cm plate
    plate = bpy.context.active_object
    hierarchy = GridHierarchy.for_side(33)
    surface = Surface(hierarchy, positions, LevelSettings.uniform(len(hierarchy.sizes), time_to_rest=np.inf))
    query = new_query()
    lowest = []
    for frame in range(60):  # down through the sheet and 0.5 beyond at 1.5 cm a frame
        plate.location.z = 0.3 - 0.015 * frame
        bpy.context.view_layer.update()
        contact = query.displacements(obj, surface.positions, normals, [plate])
        surface.step(contact.displacement, 1 / 24, contact.touching)
        z = surface.positions[:, 2]
        assert z.max() <= 1e-5  # never pushed up: the dent never flips
        lowest.append(z.min())
    assert lowest[-1] < plate.location.z  # carried all the way down with the plate


@pytest.mark.parametrize("case", ["no faces", "open", "itself", "hidden", "zero scale", "deleted"])
def test_bad_colliders_are_reported_never_raised(case):
    obj, positions, normals = grid(subdivisions=16)
    if case == "no faces":
        collider = bpy.data.objects.new("Empty", None)
        bpy.context.scene.collection.objects.link(collider)
    elif case == "open":
        bpy.ops.mesh.primitive_plane_add(size=0.5, location=(0, 0, 0.01))
        collider = bpy.context.active_object
    elif case == "itself":
        collider = obj
    elif case == "hidden":
        collider = sphere()
        collider.hide_set(True)
    elif case == "zero scale":
        collider = sphere()
        collider.scale = (0, 0, 0)
        bpy.context.view_layer.update()
    else:
        collider = sphere()
        bpy.data.objects.remove(collider)
    contact = new_query().displacements(obj, positions, normals, [collider])
    assert len(contact.messages) == 1
    expected = {"no faces": "no faces", "open": "not closed", "itself": "itself", "hidden": "hidden"}
    expected |= {"zero scale": "zero scale", "deleted": "deleted"}
    assert expected[case] in contact.messages[0]
    if case != "open":
        assert np.abs(contact.displacement).max() == 0.0


def test_text_and_curves_with_geometry_collide():
    obj, positions, normals = grid()
    bpy.ops.object.text_add(location=(-0.5, -0.2, -0.05))
    text = bpy.context.active_object
    text.data.body, text.data.extrude = "Hi", 0.1
    bpy.ops.curve.primitive_bezier_circle_add(radius=0.5)
    ring = bpy.context.active_object
    ring.data.bevel_depth = 0.05
    bpy.context.view_layer.update()
    for collider in (text, ring):  # a fresh query each: contact sides are remembered
        contact = new_query().displacements(obj, positions, normals, [collider])
        assert (np.linalg.norm(contact.displacement, axis=1) > 0).sum() > 100
    check_against_reference(obj, positions, contact, [ring])  # a ring lying in the sheet: pressed down


def test_vertices_resting_on_a_still_collider_need_no_ray_until_they_move():
    obj, positions, normals = grid()
    ball = sphere()
    query = new_query()
    first = query.displacements(obj, positions, normals, [ball])
    pressed = np.linalg.norm(first.displacement, axis=1) > 0
    on_ball = positions + first.displacement  # where the solver's last level puts them
    resting = query.displacements(obj, on_ball, normals, [ball])
    assert pressed.sum() > 100 and resting.touching[pressed].all() and not resting.displacement.any()
    assert resting.queried > pressed.sum()  # every near vertex cast a ray: none rested before
    # Jittered by a quarter of the touching tolerance (1e-4 of the ball's 0.4 radius): the
    # resting vertices keep resting without a ray, and a query with the same history that
    # casts every ray (its resting record dropped) agrees.
    jitter = np.random.default_rng(1).uniform(-1e-5, 1e-5, positions.shape).astype(np.float32)
    held = query.displacements(obj, on_ball + jitter, normals, [ball])
    assert held.queried == resting.queried - resting.touching.sum()  # only those not resting
    casting = new_query()
    for step in (positions, on_ball):
        casting.displacements(obj, step, normals, [ball])
    casting._resting = None
    cast = casting.displacements(obj, on_ball + jitter, normals, [ball])
    assert cast.queried == resting.queried
    np.testing.assert_array_equal(held.touching, cast.touching)
    np.testing.assert_array_equal(held.displacement, cast.displacement)
    assert not held.displacement.any()
    # One resting vertex pushed 1 cm into the ball: a ray. Another pulled 1 cm away: it
    # leaves the broad phase (the ball's bounding sphere) and forgets where it rested.
    deepest_first = np.flatnonzero(pressed)[np.argsort(on_ball[pressed, 2])]
    into, away = deepest_first[0], deepest_first[-1]
    moved = on_ball.copy()
    moved[into, 2] += 0.01
    moved[away, 2] -= 0.01
    not_resting = resting.queried - held.touching.sum()
    again = query.displacements(obj, moved, normals, [ball])
    assert again.queried == not_resting + 1
    # Pushed along its reference normal (straight down), back out of the ball: the 1 cm it
    # was moved in, to the tessellation (the lowest point of the ball is nearly flat).
    push = again.displacement[into]
    np.testing.assert_allclose(push[:2], 0.0, atol=1e-7)
    assert push[2] == pytest.approx(-0.01, abs=TESSELLATION)
    assert not again.touching[away] and not again.displacement[away].any()
    back = query.displacements(obj, on_ball, normals, [ball])
    assert back.queried == not_resting + 2  # both cast again, though back where they rested
    assert back.touching[into] and not back.displacement[[into, away]].any()  # on the ball again
    ball.location.z -= 0.01  # the collider moves: every near vertex casts again
    bpy.context.view_layer.update()
    near = new_query().displacements(obj, on_ball, normals, [ball]).queried
    assert query.displacements(obj, on_ball, normals, [ball]).queried == near > resting.queried


def test_a_second_query_told_how_far_the_step_moved_finds_what_testing_every_vertex_finds():
    """The frame's second query tests only the vertices its first query's broad phase kept
    within twice the last step's move, when this step moved none further. Over frames whose
    steps move every vertex up to 1 cm, 1 cm, then 5 cm (more than the padding: every vertex
    tested), it finds the same pushes and touching flags, bit for bit, as a query that is not
    told and tests every vertex."""
    obj, positions, normals = grid()
    ball = sphere()
    rng = np.random.default_rng(3)
    told, untold = new_query(), new_query()
    among = np.arange(len(positions))
    for reach in (0.01, 0.01, 0.05):
        direction = rng.normal(size=positions.shape)
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        moves = (direction * rng.uniform(0, reach, (len(positions), 1))).astype(np.float32)
        after = positions + moves
        within = float(np.linalg.norm(after - positions, axis=1).max())
        for query in (told, untold):
            query.displacements(obj, positions, normals, [ball])
        found = told.displacements(obj, after, normals, [ball], among=among, within=within)
        every = untold.displacements(obj, after, normals, [ball], among=among)
        assert (np.linalg.norm(every.displacement, axis=1) > 0).sum() > 100
        np.testing.assert_array_equal(found.displacement, every.displacement)
        np.testing.assert_array_equal(found.touching, every.touching)
        assert found.queried == every.queried
