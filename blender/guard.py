"""The one re-entrancy guard: while we move the scene through frames or write shape keys,
the frame changes and edits we cause are ours, and the handlers leave them alone (a nested
frame change would step a simulation twice; our own key writes would restart it)."""

from collections.abc import Iterator
from contextlib import contextmanager

_busy = False


@contextmanager
def busy() -> Iterator[None]:
    """Mark what happens inside as ours (nesting allowed)."""
    global _busy
    was, _busy = _busy, True
    try:
        yield
    finally:
        _busy = was


def is_busy() -> bool:
    """Whether the frame change or edit a handler sees now is ours."""
    return _busy
