"""The frames played: every frame read back bit for bit, in any order, in memory that grows
with what moves (issue 17: a whole copy a frame was 1.7 GB after 150 frames at 1M vertices)."""

import numpy as np
import pytest

from core.played import CHECKPOINT, RECENT, NotKept, PlayedFrames


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


def test_frames_that_changed_much_are_left_out_and_read_once_simulated_again():
    """With a limit, a frame whose changes cost more than that share of a copy is not kept
    once it is no longer among the last RECENT: reading it (or a frame kept as changes after
    it) says which to simulate again; seeded, it reads back, and so do the frames after it.
    The first frame kept after one left out is whole."""
    shot = played(11, 80)
    frames = PlayedFrames()
    for frame, positions in enumerate(shot):
        frames.keep(frame, positions, 0.05)
    left_out = [f for f in range(len(shot)) if frames._kept[f][0] is None]
    assert left_out and len(left_out) < len(shot) - 20
    for frame in rng_frames(len(shot)):
        try:
            found = frames.get(frame)
        except NotKept as missing:
            assert missing.frame in left_out and missing.frame <= frame
            assert frame == missing.frame or frame not in left_out
            frames.seed(missing.frame, shot[missing.frame].copy())
            found = frames.get(frame)
        np.testing.assert_array_equal(found, shot[frame])
    frames.forget_seeds()
    for frame in range(len(shot) - RECENT + 1, len(shot)):  # the last played, at hand
        np.testing.assert_array_equal(frames.get(frame), shot[frame])
    whole = shot[0].nbytes
    assert frames.nbytes < (len(shot) - len(left_out) + RECENT + 3) * whole


def rng_frames(count: int) -> list[int]:
    return [int(f) for f in np.random.default_rng(4).integers(0, count, 60)]
