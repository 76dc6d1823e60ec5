"""Kept states (issue 17): a snapshot restored gives back every array bit for bit, costs what
changed since the last snapshot, and a surface stepped on from a restored state gives the
bits it gave the first time."""

import numpy as np
import pytest

from core.checkpoints import States
from scenes import Sphere, grid_surface, touching_any


class Thing:
    pass


def test_every_snapshot_restores_bit_for_bit_and_costs_what_changed():
    rng = np.random.default_rng(0)
    thing = Thing()
    thing.moving = rng.normal(size=(3, 4000)).astype(np.float32)
    thing.same = thing.moving  # one array under two names stays one
    thing.fixed = rng.normal(size=(4000, 3))
    thing.nested = {"list": [np.zeros(4000, dtype=bool), 3], "twin": None}
    states = States(lambda value: False)
    kept, truth = [], []
    for _ in range(40):
        thing.moving[:, rng.integers(0, 4000, 40)] += np.float32(1)
        thing.moving[0, 0] = -0.0 if thing.moving[0, 0] == 0 else 0.0  # bits, not values
        thing.nested["list"][0] = thing.nested["list"][0].copy()  # a new array, a few rows flipped
        thing.nested["list"][0][rng.integers(0, 4000, 5)] ^= True
        thing.nested["twin"] = thing.fixed.copy()  # the same bits as another array
        kept.append(states.snapshot(thing))
        truth.append((thing.moving.copy(), thing.fixed.copy(), thing.nested["list"][0].copy()))
    whole = thing.moving.nbytes + thing.fixed.nbytes + thing.nested["list"][0].nbytes
    assert States.nbytes(kept) < 2 * whole + 40 * 40 * 16  # (a whole copy each: 40 x)
    for index in rng.permutation(len(kept)):
        restored = states.restore(kept[index])
        moving, fixed, flags = truth[index]
        np.testing.assert_array_equal(restored.moving.view(np.uint32), moving.view(np.uint32))
        np.testing.assert_array_equal(restored.fixed, fixed)
        np.testing.assert_array_equal(restored.nested["list"][0], flags)
        assert restored.same is restored.moving and restored.moving.flags.writeable
        assert restored.nested["twin"] is not restored.fixed
        restored.moving[:] = 7  # the kept state is not changed by its restored copy
    np.testing.assert_array_equal(states.restore(kept[0]).moving, truth[0][0])


@pytest.mark.parametrize("seed", range(3))
def test_a_surface_stepped_on_from_a_restored_state_gives_the_same_bits(seed):
    """A ball wandering into a sheet: the surface's state kept every few steps (its solutions
    kept apart, as the add-on keeps them) and stepped on from each gives the steps' bits."""
    rng = np.random.default_rng(seed)
    surface = grid_surface(5, time_to_rest=0.3, response_time=0.05)
    surface.settings.absorption[2] = 0.4
    balls = [Sphere([*rng.uniform(-0.3, 0.3, 2), 0.45 - 0.01 * k], 0.5) for k in range(30)]
    states = States(lambda value: False)

    def step(ball) -> np.ndarray:
        points = surface.positions
        surface.step(ball.push(points), 1 / 24, touching_any([ball], points))
        return surface.positions

    def snapshot():
        solved = {"solved": surface.solved_positions()}
        with surface.solutions_apart() as apart:
            return states.snapshot((surface, apart), solved)

    def restore(state):
        def derive(value):
            value[0].with_solutions(value[1])
            return {"solved": value[0].solved_positions()}

        return states.restore(state, derive)[0]

    played, kept = [], {}
    for k, ball in enumerate(balls):
        if k % 4 == 0:
            kept[k] = snapshot()
        played.append(step(ball))
    assert any(np.abs(p - played[0]).max() > 1e-3 for p in played)  # it moved
    for k in rng.permutation(sorted(kept)):
        surface = restore(kept[k])
        for later in range(k, min(k + 6, len(balls))):
            np.testing.assert_array_equal(step(balls[later]).view(np.uint32), played[later].view(np.uint32))
