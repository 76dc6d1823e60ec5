"""Whole-level passes split across the cores this process may run on.

numpy releases the GIL inside each call on large arrays, so threads that each take one
contiguous span of a level run its passes at once. Every span writes its own columns of
the output and nothing is summed across spans, so the result is the same bits however many
spans there are: the output never depends on the machine.
"""

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from typing import TypeVar

#: Below this many vertices a span costs more to hand over than it saves.
SMALLEST_SPAN = 24576

T = TypeVar("T")

_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def cores() -> int:
    """The cores this process may run on (``taskset`` and container limits included)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def spans(count: int) -> list[slice]:
    """``range(count)`` cut into at most one contiguous span per core, none shorter than
    ``SMALLEST_SPAN`` (one span when ``count`` is small)."""
    parts = max(1, min(cores(), count // SMALLEST_SPAN))
    edges = [count * i // parts for i in range(parts + 1)]
    return [slice(a, b) for a, b in pairwise(edges)]


def each_span(count: int, work: Callable[[slice], None]) -> None:
    """Run ``work(span)`` for every span of ``range(count)``, on the pool's threads when there
    is more than one; an exception in any is raised here."""
    over_spans(count, work)


def over_spans(count: int, work: Callable[[slice], T]) -> list[T]:
    """``work(span)`` for every span of ``range(count)``, in order (see ``each_span``)."""
    parts = spans(count)
    if len(parts) == 1:
        return [work(parts[0])]
    global _pool, _pool_size
    if _pool is None or _pool_size < len(parts):  # made on first use: most frames need none
        _pool, _pool_size = ThreadPoolExecutor(len(parts), thread_name_prefix="collision_response"), len(parts)
    return [done.result() for done in [_pool.submit(work, span) for span in parts]]
