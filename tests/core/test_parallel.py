"""Whole-level passes split over threads give the same bits as one pass."""

import numpy as np
import pytest

from core import LevelSettings, MeshHierarchy, Surface, parallel
from scenes import Sphere, push_all, touching_any, uv_sphere


def test_spans_cover_the_range_once_in_order():
    for count in (0, 1, 100, parallel.SMALLEST_SPAN * 3 + 7):
        spans = parallel.spans(count)
        covered = np.concatenate([np.arange(count)[span] for span in spans])
        np.testing.assert_array_equal(covered, np.arange(count))
        assert all(span.stop - span.start >= min(count, parallel.SMALLEST_SPAN) for span in spans)


def _played(cores: int, monkeypatch) -> tuple[np.ndarray, list[np.ndarray]]:
    """A sphere mesh (every vertex framed) pressed and slid across, a step a frame: its rest
    positions and each frame's."""
    monkeypatch.setattr(parallel, "cores", lambda: cores)
    monkeypatch.setattr(parallel, "SMALLEST_SPAN", 512)  # spans on a small mesh too
    rest, triangles = uv_sphere(1.0, 96, 48)
    hierarchy = MeshHierarchy.from_triangles(rest, triangles)
    surface = Surface(
        hierarchy,
        rest,
        LevelSettings.uniform(len(hierarchy.sizes), absorption=0.3, response_time=0.1, time_to_rest=0.3),
    )
    frames = []
    for step in range(24):
        ball = Sphere((0.2 * np.sin(step / 4), 0.0, 1.25 - 0.02 * min(step, 12)), 0.4, (0, 0, -1))
        points = surface.positions.astype(np.float64)
        surface.step(push_all([ball], points), 1 / 24, touching_any([ball], points))
        frames.append(surface.positions.copy())
    return rest, frames


@pytest.mark.parametrize("cores", [2, 3, 8])
def test_threads_change_no_bit(cores, monkeypatch):
    rest, one = _played(1, monkeypatch)
    _rest, many = _played(cores, monkeypatch)
    assert np.abs(one[-1] - rest).max() > 0.1  # it was pressed
    for a, b in zip(one, many, strict=True):
        assert a.tobytes() == b.tobytes()
