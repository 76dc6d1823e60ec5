"""Which played frames to let go of when what the cache holds passes a memory budget.

An animator scrubbing a short shot has memory to spare: every frame is kept and shows at
once. Only past the budget are frames let go of (``PlayedFrames.drop``), to be simulated
again from the nearest state kept before them when shown (the same bits, a few frames' work
later). Those that hold much go first (a pressing frame costs a whole copy: letting go of a
frame that changed little frees little and still costs a simulation to show), the furthest
from the frame shown first (scrubbing stays near where the animator is); the frames near it
are never let go of (stepping a frame or two back shows them at once).
"""

from collections.abc import Sequence

from .played import PlayedFrames

#: Frames this near the frame shown (either side) are never let go of.
NEAR = 4


def fit(caches: Sequence[PlayedFrames], budget: int, besides: int, around: int, large: int) -> list[int]:
    """Let go of frames until ``caches`` and ``besides`` bytes held with them (the states
    kept) fit in ``budget`` bytes, if they can: the same frames in every cache (the
    positions and the pressure: showing a frame simulates again at most one frame then),
    those holding more than ``large`` bytes first, each group furthest from frame ``around``
    first, none within ``NEAR`` of it. Returns the frames let go of."""
    held = besides + sum(cache.nbytes for cache in caches)
    if held <= budget:
        return []
    sizes: dict[int, int] = {}
    for cache in caches:
        for frame, size in cache.sizes().items():
            sizes[frame] = sizes.get(frame, 0) + size
    candidates = [frame for frame, size in sizes.items() if size > 0 and abs(frame - around) > NEAR]
    candidates.sort(key=lambda frame: (sizes[frame] <= large, -abs(frame - around), frame))
    dropped = []
    for frame in candidates:
        if held <= budget:
            break
        for cache in caches:
            cache.drop(frame)
        held -= sizes[frame]
        dropped.append(frame)
    return dropped
