"""A step places again only the vertices that can have changed; that must be invisible."""

import numpy as np
import pytest

from core import GridHierarchy, LevelSettings, MeshHierarchy, Surface, solver
from scenes import Sphere, grid_rest, push_all, shuffled_triangulated_grid, touching_any

DT = 1.0 / 24


def surface_of(kind: str, response: str, prolongation: str) -> Surface:
    # Bumpy, so the rest offsets are not zero and every frame counts.
    if kind == "grid":
        rest = grid_rest(6)
        hierarchy = GridHierarchy(6)
    else:
        rest, triangles = shuffled_triangulated_grid(6)
        hierarchy = MeshHierarchy.from_triangles(rest, triangles)
    rest[:, 2] = 0.03 * np.sin(5 * rest[:, 0]) * np.cos(4 * rest[:, 1])
    levels = len(hierarchy.sizes)
    settings = LevelSettings.uniform(levels, time_to_rest=0.3, yield_limit=0.03)
    settings.prolongation = prolongation
    if response == "spread":  # the finer half of the levels take part: a bulge, damping, a map
        settings.absorption[levels // 2 :] = np.linspace(0.3, 0.6, levels - levels // 2)
        settings.absorption[-2] = -0.2
        settings.response_time[1::2] = 0.1
        settings.substeps = 2
        settings.maps["absorption"] = np.random.default_rng(3).uniform(0.0, 1.0, rest.shape[0])
    return Surface(hierarchy, rest, settings)


def history(kind: str, response: str, prolongation: str, fraction: float, monkeypatch):
    """Positions and offsets after each step of a ball that presses, slides and leaves;
    with the share of the finest level's vertices each step placed again."""
    monkeypatch.setattr(solver, "SPARSE_FRACTION", fraction)
    surface = surface_of(kind, response, prolongation)
    hierarchy = surface.hierarchy
    placed: list[float] = []
    whole_call = type(hierarchy).prolong_with_frames

    def counting(level, coarse, method, rows=None):
        if level == len(hierarchy.sizes) - 1:
            placed.append(1.0 if rows is None else rows.size / hierarchy.sizes[-1])
        return whole_call(hierarchy, level, coarse, method, rows)

    monkeypatch.setattr(hierarchy, "prolong_with_frames", counting, raising=False)
    shapes = []
    path = [(-0.3 + 0.03 * i, 0.1, 0.19 - min(i, 6) * 0.005 + max(i - 14, 0) * 0.01) for i in range(24)]
    for centre in path:
        ball = Sphere(centre, 0.2)
        points = surface.positions.astype(np.float64)
        surface.step(push_all([ball], points), DT, touching_any([ball], points))
        offsets = [np.concatenate(surface.offsets(j)) for j in range(surface.level_count)]
        shapes.append((surface.positions, offsets))
    return shapes, placed


@pytest.mark.parametrize("prolongation", ["linear", "cubic"])
@pytest.mark.parametrize("response", ["local", "spread"])
@pytest.mark.parametrize("kind", ["grid", "mesh"])
def test_placing_only_what_changed_gives_what_placing_every_vertex_gives_bit_for_bit(
    kind, response, prolongation, monkeypatch
):
    sparse, placed = history(kind, response, prolongation, 1.0, monkeypatch)
    whole, placed_whole = history(kind, response, prolongation, -1.0, monkeypatch)
    assert set(placed_whole) == {1.0}
    for (positions, offsets), (positions_whole, offsets_whole) in zip(sparse, whole, strict=True):
        np.testing.assert_array_equal(positions, positions_whole)
        for level, level_whole in zip(offsets, offsets_whole, strict=True):
            np.testing.assert_array_equal(level, level_whole)
    assert np.abs(sparse[10][0] - sparse[0][0]).max() > 0.02  # the ball did press in
    # A step places a small part of the finest level: the press, and where coarser levels
    # moved under it (cubic prolongation reaches further on a grid).
    if prolongation == "linear" or kind == "mesh":
        assert np.median(placed[1:]) < (0.1 if response == "local" else 0.4)
