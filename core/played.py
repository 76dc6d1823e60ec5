"""The positions of every frame played, kept exactly, in memory that grows with what moves.

Scrubbing back must show a played frame bit for bit, so every frame's positions are kept;
a whole copy a frame is 12 bytes a vertex (11 MB at a million vertices, 1.7 GB after 150
frames). Most of a mesh holds still from one frame to the next (away from the press, or a
press held once it has settled), so a frame is kept as the rows that changed since the frame
before, with a whole copy every ``CHECKPOINT`` frames to start from (and wherever most of
it moved). Reading a frame copies the whole copy before it and applies the changes after
it; playing on from a frame just read applies one frame's changes.

Frames can be let go of (``drop``: what the played frames may hold is a budget, and its
owner chooses which to let go of). Its owner keeps the whole state of its simulation now and
then and simulates such a frame again when it is asked for (``blender.simulation``): ``get``
says so by raising ``NotKept`` (for the frame asked for, or the one before it that it is kept
as changes from), and the frames simulated again are handed back through ``seed``.
"""

import numpy as np

from .vectors import rows_differ

#: A whole copy every this many frames: reading a frame applies at most this many changes.
CHECKPOINT = 32


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
        self._seeded: dict[int, np.ndarray] = {}  # frames not kept simulated again, until ``forget_seeds``

    def __contains__(self, frame: int) -> bool:
        return frame in self._kept

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def last(self) -> np.ndarray | None:
        """The positions of the last frame kept (None before any)."""
        return None if self._last is None else self._last[1]

    def keep(self, frame: int, positions: np.ndarray) -> None:
        """Keep ``positions`` (n, 3) (or any (n,) per-vertex values: the pressure) as frame
        ``frame``, the one after the last kept. The array is kept by reference until the next
        frame (read only: it is handed out as it is)."""
        if self._last is not None and frame != self._last[0] + 1:
            raise ValueError(f"frame {frame} does not follow frame {self._last[0]}")
        positions.flags.writeable = False
        if self._last is None:
            self._first = frame
        before = None if self._last is None else self._last[1]
        whole = before is None or (frame - self._first) % CHECKPOINT == 0
        if positions is before and not whole:
            self._kept[frame] = (np.zeros(0, dtype=np.int32), positions[:0].copy())
        elif positions is before or before is None:
            self._kept[frame] = (positions, None)
        else:
            differ = rows_differ(positions, before) if positions.ndim == 2 else positions != before
            rows = differ.nonzero()[0].astype(np.int32)
            cost = rows.nbytes + rows.size * positions[0].nbytes
            if whole or cost >= positions.nbytes:  # (the whole is smaller than rows and their indices)
                self._kept[frame] = (positions, None)
            else:
                self._kept[frame] = (rows, positions[rows])
        self._last = (frame, positions)

    def drop(self, frame: int) -> None:
        """Let go of what frame ``frame`` keeps: reading it, or a frame kept as changes after
        it, raises ``NotKept`` until it is simulated again (``seed``)."""
        if frame in self._kept:
            self._kept[frame] = (None, None)  # type: ignore[assignment]

    def dropped(self) -> int:
        """How many frames were let go of."""
        return sum(whole is None for whole, _ in self._kept.values())

    def sizes(self) -> dict[int, int]:
        """What each frame kept holds alone (what letting go of it frees), in bytes: an array
        kept whole for several frames (a mesh holding still) is freed by none of them alone."""
        uses: dict[int, int] = {}
        for array in [whole for whole, _ in self._kept.values()] + list(self._seeded.values()):
            if array is not None:
                uses[id(array)] = uses.get(id(array), 0) + 1
        sizes = {}
        for frame, (whole, changes) in self._kept.items():
            if changes is not None:
                sizes[frame] = whole.nbytes + changes.nbytes
            elif whole is not None:
                sizes[frame] = whole.nbytes if uses[id(whole)] == 1 else 0
        return sizes

    def get(self, frame: int) -> np.ndarray:
        """The positions of frame ``frame`` (read only), exactly as kept."""
        if frame not in self._kept:
            raise KeyError(frame)
        if self._last is not None and frame == self._last[0]:
            return self._last[1]
        if self._read is not None and self._read[0] == frame:
            return self._read[1]
        if frame in self._seeded:
            return self._seeded[frame]
        whole, changes = self._kept[frame]
        if whole is None:
            raise NotKept(frame)
        if changes is None:  # kept whole
            return whole
        # Back to a frame at hand: the one last read (playing on), one simulated again, or one
        # kept whole (a checkpoint at most).
        hand = dict(self._seeded)
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
        arrays.update((id(array), array) for array in self._seeded.values())
        return sum(array.nbytes for array in arrays.values())
