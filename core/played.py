"""The positions of every frame played, kept exactly, in memory that grows with what moves.

Scrubbing back must show a played frame bit for bit, so every frame's positions are kept;
a whole copy a frame is 12 bytes a vertex (11 MB at a million vertices, 1.7 GB after 150
frames). Most of a mesh holds still from one frame to the next (away from the press, or a
press held once it has settled), so a frame is kept as the rows that changed since the frame
before, with a whole copy every ``CHECKPOINT`` frames to start from (and wherever most of
it moved). Reading a frame copies the whole copy before it and applies the changes after
it; playing on from a frame just read applies one frame's changes.

A cache given a ``limit`` (``keep``) does not keep a frame that changed more than that share
of a whole copy (a frame while a collider presses, when the response moves nearly every
vertex a little): its owner keeps the whole state of its simulation now and then and
simulates such a frame again when it is asked for (``blender.simulation``); ``get`` says so
by raising ``NotKept``, and the frames simulated again are handed back through ``seed``.
The first of ``RUN`` frames kept in a row after one not kept is kept whole (a held stretch
after a press reads without simulating; a frame or two kept between frames not kept are kept
as changes, read by simulating the one before), and those of the last ``RECENT`` frames
played that are not kept are held as they are until then (stepping back a few frames needs
no simulation).
"""

import numpy as np

from .vectors import rows_differ

#: A whole copy every this many frames: reading a frame applies at most this many changes.
CHECKPOINT = 32

#: Of the last this many frames played, those not kept are held as they are.
RECENT = 4

#: The first of this many frames kept in a row after one not kept is kept whole.
RUN = 4


class NotKept(KeyError):
    """A frame played that the cache did not keep: simulate ``frame`` again and ``seed`` it
    (the frame asked for, or the one before it it is kept as changes from)."""

    def __init__(self, frame: int):
        super().__init__(frame)
        self.frame = frame


class PlayedFrames:
    """Frames played, in the order played: each new frame is the one after the last (a
    simulation runs forward only; it starts again with a new cache)."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}  # frame: (rows, values) or (whole, None)
        self._first = 0  # the first frame kept
        self._last: tuple[int, np.ndarray] | None = None  # the last frame kept and its positions
        self._read: tuple[int, np.ndarray] | None = None  # the last frame read and its positions
        self._recent: dict[int, np.ndarray] = {}  # those not kept of the last ``RECENT`` played
        self._seeded: dict[int, np.ndarray] = {}  # frames not kept simulated again, until ``forget_seeds``
        # The first frame kept after one not kept, until RUN in a row are kept (or one is not).
        self._run: tuple[int, np.ndarray] | None = None

    def __contains__(self, frame: int) -> bool:
        return frame in self._kept

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def last(self) -> np.ndarray | None:
        """The positions of the last frame kept (None before any)."""
        return None if self._last is None else self._last[1]

    def keep(self, frame: int, positions: np.ndarray, limit: float | None = None) -> None:
        """Keep ``positions`` (n, 3) (or any (n,) per-vertex values: the pressure) as frame
        ``frame``, the one after the last kept. The array is kept by reference until the next
        frame (read only: it is handed out as it is). ``limit``: a frame whose changes cost
        more than this share of a whole copy is not kept (``NotKept``) once it is no longer
        among the ``RECENT`` last."""
        if self._last is not None and frame != self._last[0] + 1:
            raise ValueError(f"frame {frame} does not follow frame {self._last[0]}")
        positions.flags.writeable = False
        if self._last is None:
            self._first = frame
        before = None if self._last is None else self._last[1]
        after_left_out = before is not None and self._kept[frame - 1][0] is None
        whole = before is None or ((frame - self._first) % CHECKPOINT == 0 and not after_left_out)
        if positions is before and not whole:
            self._kept[frame] = (np.zeros(0, dtype=np.int32), positions[:0].copy())
        elif positions is before or before is None:
            self._kept[frame] = (positions, None)
        else:
            differ = rows_differ(positions, before) if positions.ndim == 2 else positions != before
            rows = differ.nonzero()[0].astype(np.int32)
            cost = rows.nbytes + rows.size * positions[0].nbytes
            if limit is not None and cost > limit * positions.nbytes:  # simulated again when asked for
                self._kept[frame] = (None, None)  # type: ignore[assignment]
            elif whole or cost >= positions.nbytes:  # (the whole is smaller than rows and their indices)
                self._kept[frame] = (positions, None)
            else:
                self._kept[frame] = (rows, positions[rows])
        # Frames kept after one not kept are changes from it: reading them simulates it again.
        # Once ``RUN`` follow each other (held after a press, say), the first is kept whole.
        if self._kept[frame][0] is None:
            self._run = None
        elif after_left_out:
            self._run = (frame, positions)
        if self._run is not None and frame - self._run[0] + 1 >= RUN:
            if self._kept[self._run[0]][1] is not None:
                self._kept[self._run[0]] = (self._run[1], None)
            self._run = None
        self._last = (frame, positions)
        if self._kept[frame][0] is None:  # not kept: at hand while among the last played
            self._recent[frame] = positions
        self._recent.pop(frame - RECENT, None)

    def get(self, frame: int) -> np.ndarray:
        """The positions of frame ``frame`` (read only), exactly as kept."""
        if frame not in self._kept:
            raise KeyError(frame)
        if self._last is not None and frame == self._last[0]:
            return self._last[1]
        if self._read is not None and self._read[0] == frame:
            return self._read[1]
        if frame in self._recent:
            return self._recent[frame]
        if frame in self._seeded:
            return self._seeded[frame]
        whole, changes = self._kept[frame]
        if whole is None:
            raise NotKept(frame)
        if changes is None:  # kept whole
            return whole
        # Back to a frame at hand: the one last read (playing on), one not kept but held, or
        # one kept whole (a checkpoint at most).
        hand = {**self._seeded, **self._recent}
        if self._read is not None and self._read[0] < frame:
            hand[self._read[0]] = self._read[1]
        start = frame
        while self._kept[start][1] is not None and start not in hand:
            start -= 1
        if start not in hand and self._kept[start][0] is None:
            raise NotKept(start)
        positions = (hand[start] if start in hand else self._kept[start][0]).copy()
        for between in range(start + 1, frame + 1):
            rows, values = self._kept[between]
            positions[rows] = values
        positions.flags.writeable = False
        self._read = (frame, positions)
        return positions

    def seed(self, frame: int, positions: np.ndarray) -> None:
        """Frame ``frame`` simulated again (one not kept, ``NotKept``): read from here on,
        until another is read; a frame not kept is held as it is until ``forget_seeds``
        (scrubbing back and forth near it shows it again at once)."""
        if frame not in self._kept:
            raise KeyError(frame)
        positions.flags.writeable = False
        self._read = (frame, positions)
        if self._kept[frame][0] is None:
            self._seeded[frame] = positions

    def forget_seeds(self) -> None:
        """Let go of the frames simulated again (``seed``)."""
        self._seeded.clear()

    @property
    def nbytes(self) -> int:
        """Memory held by the frames kept (the arrays only), in bytes. An array kept for
        several frames counts once: a checkpoint while nothing moves keeps the last frame's
        positions by reference, no copy."""
        arrays = {id(array): array for kept in self._kept.values() for array in kept if array is not None}
        held = [*self._recent.values(), *self._seeded.values(), *([self._run[1]] if self._run else [])]
        arrays.update((id(array), array) for array in held)
        return sum(array.nbytes for array in arrays.values())
