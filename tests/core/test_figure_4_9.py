"""Harrison's Figure 4.9: a 513 x 513 grid pressed by two objects, four absorption settings
from all-fine to all-coarse; the response spreads further as absorption moves coarser."""

import itertools

import numpy as np

from scenes import Sphere, grid_surface, push_all

TWO_OBJECTS = [Sphere([-0.4, 0.0, 0.27], 0.3), Sphere([0.35, 0.1, 0.45], 0.5)]
# Absorption 1 on one level (the others 0): the finest, then coarser and coarser.
SETTINGS = {"all fine": 9, "fine": 6, "coarse": 3, "all coarse": 1}


def respond(level):
    surface = grid_surface(9)  # 513 x 513 = 263,169 vertices
    surface.settings.absorption[level] = 1.0
    before = surface.positions.astype(np.float64)
    d = push_all(TWO_OBJECTS, before)
    surface.step(d, 1 / 24)
    after = surface.positions.astype(np.float64)
    return before, d, after


def test_extent_grows_as_absorption_moves_coarser_and_every_setting_resolves_the_penetration():
    extents = []
    for level in SETTINGS.values():
        before, d, after = respond(level)
        contact = np.linalg.norm(d, axis=1) > 0
        assert contact.sum() > 10_000
        for sphere in TWO_OBJECTS:
            assert sphere.inside_depth(after)[contact].max() < 1e-5
        moved = np.linalg.norm(after - before, axis=1) > 1e-3 * np.abs(d).max()
        if level == SETTINGS["all fine"]:  # nothing outside the contact moves at all
            assert np.abs(after - before)[~contact].max() == 0.0
        extents.append(moved.mean())
    assert extents[-1] > 0.99  # all coarse: the whole surface
    assert all(b > 1.5 * a for a, b in itertools.pairwise(extents)), extents
