"""The frames played: every frame read back bit for bit, in any order, in memory that grows
with what moves (issue 17: a whole copy a frame was 1.7 GB after 150 frames at 1M vertices)."""

import numpy as np
import pytest

from core.budget import NEAR, fit
from core.played import CHECKPOINT, NotKept, PlayedFrames


def played(seed: int, frames: int, count: int = 5000):
    """A random shot: most frames move a few hundred rows, some hold still (the same array,
    as the add-on hands an idle frame), some move every row."""
    rng = np.random.default_rng(seed)
    positions = rng.normal(size=(count, 3)).astype(np.float32)
    shot = []
    for _ in range(frames):
        kind = rng.choice(["some", "idle", "all"], p=[0.7, 0.2, 0.1])
        if kind == "idle" and shot:
            shot.append(shot[-1])
            continue
        positions = positions.copy()
        rows = np.arange(count) if kind == "all" else rng.choice(count, rng.integers(0, 300), replace=False)
        positions[rows] += rng.normal(scale=1e-3, size=(rows.size, 3)).astype(np.float32)
        shot.append(positions)
    return shot


@pytest.mark.parametrize("seed", range(3))
def test_every_frame_reads_back_bit_for_bit_in_any_order(seed):
    shot = played(seed, 150)
    frames = PlayedFrames()
    start = 7
    for offset, positions in enumerate(shot):
        frames.keep(start + offset, positions)
        assert frames.get(start + offset) is positions  # the head is handed out as it is
    order = np.random.default_rng(seed).permutation(len(shot))
    for offset in list(order) + list(range(len(shot))):  # scrubbing at random, then playing through
        np.testing.assert_array_equal(frames.get(start + int(offset)), shot[offset])
    assert start - 1 not in frames and start + len(shot) not in frames
    with pytest.raises(KeyError):
        frames.get(start + len(shot))


def test_memory_grows_with_what_moves_not_with_the_mesh():
    count, moved, length = 100_000, 500, 128
    rng = np.random.default_rng(0)
    frames = PlayedFrames()
    positions = rng.normal(size=(count, 3)).astype(np.float32)
    for frame in range(length):
        positions = positions.copy()
        positions[rng.choice(count, moved, replace=False)] += 1e-3
        frames.keep(frame, positions)
    whole = positions.nbytes
    checkpoints = -(-length // CHECKPOINT)
    # the checkpoints, plus each frame's rows (4 bytes of index, 12 of values)
    assert frames.nbytes <= checkpoints * whole + length * moved * 16
    assert frames.nbytes < 0.05 * length * whole  # a whole copy a frame would be 20 x this


def test_a_held_shot_costs_its_first_frame_alone():
    frames = PlayedFrames()
    positions = np.random.default_rng(1).normal(size=(1000, 3)).astype(np.float32)
    for frame in range(3 * CHECKPOINT + 1):
        frames.keep(frame, positions)  # an idle step hands the same array on
    # Each checkpoint keeps that array again, by reference: no copy, and counted once.
    assert frames.nbytes == positions.nbytes
    assert all(frames.get(frame) is positions for frame in range(0, 3 * CHECKPOINT + 1, CHECKPOINT))


def test_kept_positions_are_read_only_and_frames_follow_each_other():
    frames = PlayedFrames()
    frames.keep(1, np.zeros((4, 3), dtype=np.float32))
    with pytest.raises(ValueError):
        frames.get(1)[0, 0] = 1.0
    with pytest.raises(ValueError, match="does not follow"):
        frames.keep(3, np.zeros((4, 3), dtype=np.float32))


def read_simulating_again(frames: PlayedFrames, shot: list, frame: int, replayed: list) -> np.ndarray:
    """Frame ``frame`` read back, a frame let go of simulated again (seeded) when asked."""
    try:
        return frames.get(frame)
    except NotKept as missing:
        assert missing.frame <= frame
        replayed.append(missing.frame)
        frames.seed(missing.frame, shot[missing.frame].copy())
        return frames.get(frame)


def test_frames_let_go_of_are_read_once_simulated_again():
    """Frames dropped anywhere (whole copies, changes, the last): reading one, or a frame kept
    as changes after it, says which to simulate again; seeded, it reads back, and so do the
    frames after it."""
    shot = played(11, 80)
    frames = PlayedFrames()
    for frame, positions in enumerate(shot):
        frames.keep(frame, positions)
    before = frames.nbytes
    dropped = [int(f) for f in np.random.default_rng(3).choice(len(shot), 30, replace=False)]
    for frame in [*dropped, 0, CHECKPOINT, len(shot) - 1]:
        frames.drop(frame)
    assert frames.dropped() == len({*dropped, 0, CHECKPOINT, len(shot) - 1})
    assert frames.nbytes < before
    replayed: list[int] = []
    for frame in rng_frames(len(shot)) + list(range(len(shot))):
        np.testing.assert_array_equal(read_simulating_again(frames, shot, frame, replayed), shot[frame])
    assert replayed and set(replayed) <= {*dropped, 0, CHECKPOINT}
    frames.forget_seeds()
    with pytest.raises(NotKept):
        frames.get(CHECKPOINT)


@pytest.mark.parametrize("seed", range(3))
def test_past_the_budget_frames_far_from_the_one_shown_are_let_go_of_first(seed):
    """Under the budget nothing is let go of; past it, frames holding much go first, the
    furthest from the frame shown first, none near it, and the rest fits; what is left
    reads back exactly (frames let go of simulated again), positions and pressure alike."""
    shot = played(seed, 100)
    pressure = [np.ascontiguousarray(p[:, 0]) for p in shot]
    frames, pressures = PlayedFrames(), PlayedFrames()
    for frame, (positions, reading) in enumerate(zip(shot, pressure, strict=True)):
        frames.keep(frame, positions)
        pressures.keep(frame, reading)
    held = frames.nbytes + pressures.nbytes
    whole = shot[0].nbytes
    assert fit([frames, pressures], held + 1000, 1000, 50, whole // 20) == []
    around = int(np.random.default_rng(seed).integers(0, 100))
    sizes = {f: frames.sizes()[f] + pressures.sizes()[f] for f in range(100)}
    dropped = fit([frames, pressures], held // 3, 1000, around, whole // 20)
    assert dropped and frames.nbytes + pressures.nbytes + 1000 <= held // 3
    assert all(abs(f - around) > NEAR for f in dropped)
    large = [f for f in dropped if sizes[f] > whole // 20]
    assert dropped[: len(large)] == large  # those holding much first
    distances = [abs(f - around) for f in large]
    assert distances == sorted(distances, reverse=True)
    kept_large = [f for f in range(100) if f not in dropped and sizes[f] > whole // 20 and abs(f - around) > NEAR]
    assert not kept_large or min(distances) >= max(abs(f - around) for f in kept_large)
    for cache, values in ((frames, shot), (pressures, pressure)):
        replayed: list[int] = []
        for frame in rng_frames(100):
            np.testing.assert_array_equal(read_simulating_again(cache, values, frame, replayed), values[frame])
        assert set(replayed) <= set(dropped)


def test_nothing_near_the_frame_shown_is_let_go_of_even_past_the_budget():
    shot = played(5, 40)
    frames = PlayedFrames()
    for frame, positions in enumerate(shot):
        frames.keep(frame, positions)
    dropped = fit([frames], 0, 0, 20, 0)
    assert set(range(20 - NEAR, 20 + NEAR + 1)).isdisjoint(dropped)
    assert all(frames.sizes()[f] == 0 for f in range(40) if f not in dropped and abs(f - 20) > NEAR)


def rng_frames(count: int) -> list[int]:
    return [int(f) for f in np.random.default_rng(4).integers(0, count, 60)]
