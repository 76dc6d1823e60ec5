"""Copies of a simulation's whole state at some frames, to simulate again from.

A frame's step reads more than the positions: the solver's levels, the collision query's
memory, the secondary motion's followers, the volume's last ring... A ``States`` keeps a deep
copy of all of it (``snapshot``) and gives a fresh deep copy back (``restore``), so stepping
on from a restored state gives the same bits as the first time (a step is deterministic).
What must not be copied (the hierarchy, Blender's data, what never changes once made) is
kept by reference: ``shared`` says which.

A snapshot costs what changed since the last one: each array is matched with the one found
by the same path in the last snapshot. The same bits: the last snapshot's copy is shared
(the rest shape, a level nothing moved). Some rows changed (along its longest axis): those
rows alone are kept, over the last snapshot's copy (a chain of at most ``CHAIN``, then the
rows changed since the chain's first copy; a new array, over zeros: its rows that are not 0).
The last snapshot's copy is found by the array itself, else by its path. Equal to
another array of the same snapshot: shared. Equal to an array the caller can make again from
the rest of the state (``derived``: the positions, made from the solver's finest level): not
kept, made again on restoring. An object's attributes named in its class's ``TRANSIENT``
(what a frame makes afresh before reading it) are not kept: None once restored.
"""

import copy
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

#: A copy kept as rows changed over an earlier one is at most this many such steps from a
#: whole one: restoring applies at most this many.
CHAIN = 16

#: Rows changed beyond this share of an array: the array is kept whole.
SPARSE = 0.5


def _bits(array: np.ndarray) -> np.ndarray:
    """``array`` as unsigned integers of its item size (bits compared exactly: -0 is not 0,
    a NaN equals itself), contiguous."""
    array = np.ascontiguousarray(array)
    if array.dtype.itemsize in (1, 2, 4, 8):
        return array.view(f"u{array.dtype.itemsize}")
    return array.view(np.uint8)


def _comparable(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and not a.dtype.hasobject and a.dtype.itemsize in (1, 2, 4, 8)


class _Copy:
    """One array as a snapshot keeps it: whole, or the rows along ``axis`` that changed over
    an earlier copy (``base``)."""

    __slots__ = ("axis", "base", "depth", "derived", "nbytes", "rows", "values", "whole", "zeros")

    def __init__(self, whole=None, base=None, axis=0, rows=None, values=None, derived=None, zeros=None):
        self.whole, self.base, self.axis, self.rows, self.values = whole, base, axis, rows, values
        self.derived = derived  # (key, shape, dtype): made again by the caller
        self.zeros = zeros  # (shape, dtype): all zeros
        self.depth = 0 if base is None else base.depth + 1
        if derived is not None or zeros is not None:
            self.nbytes = 0
        else:
            self.nbytes = whole.nbytes if whole is not None else rows.nbytes + values.nbytes

    def array(self) -> np.ndarray:
        """The array kept, a new writeable copy (uninitialised for a derived one)."""
        if self.derived is not None:
            return np.empty(self.derived[1], dtype=self.derived[2])
        if self.zeros is not None:
            return np.zeros(self.zeros[0], dtype=self.zeros[1])
        if self.whole is not None:
            return self.whole.copy()
        array = self.base.array()
        index = [slice(None)] * array.ndim
        index[self.axis] = self.rows
        array[tuple(index)] = self.values
        return array


class _Slot:
    """Stands for an array in a snapshot's structure (``State.value``)."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __deepcopy__(self, memo):  # (every slot is in the memo when restoring)
        return memo.get(id(self), self)


class State:
    """One snapshot: the structure with a slot for each array, and the arrays' copies."""

    __slots__ = ("copies", "value")

    def __init__(self, value: Any, copies: list[_Copy]):
        self.value, self.copies = value, copies


class States:
    """Snapshots of one simulation's state. ``shared(value)``: whether a value is kept by
    reference (not copied)."""

    def __init__(self, shared: Callable[[Any], bool]):
        self._shared = shared
        self._kept: dict[int, Any] = {}  # id: what is kept by reference
        self._last: dict[tuple, _Copy] = {}  # path: its copy, at the last snapshot or restore
        # The same, by the array itself (id: the array, weakly, and its copy): an array found by
        # another path than before (a structure grown around it) is still matched.
        self._by_id: dict[int, tuple[weakref.ref, _Copy]] = {}

    def _walk(self, value: Any, transient: list | None = None) -> dict[tuple, np.ndarray]:
        """Every array reachable from ``value`` outside what is shared, by its first path;
        the objects with ``TRANSIENT`` attributes found added to ``transient``."""
        arrays: dict[tuple, np.ndarray] = {}
        seen: set[int] = set()
        stack: list[tuple[tuple, Any]] = [((), value)]
        while stack:
            path, value = stack.pop()
            if id(value) in seen or id(value) in self._kept:
                continue
            if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
                continue
            seen.add(id(value))
            if isinstance(value, np.ndarray):
                if value.dtype.hasobject:
                    raise TypeError("arrays of objects are not kept")
                arrays[path] = value
            elif self._shared(value):
                self._kept[id(value)] = value
            elif isinstance(value, dict):
                stack.extend(((*path, repr(key)), item) for key, item in value.items())
            elif isinstance(value, (list, tuple)):
                stack.extend(((*path, index), item) for index, item in enumerate(value))
            elif isinstance(value, (set, frozenset)):
                stack.extend(((*path, "set"), item) for item in value)
            else:
                skip = getattr(type(value), "TRANSIENT", ())
                if skip and transient is not None:
                    transient.append(value)
                if hasattr(value, "__dict__"):
                    stack.extend(((*path, name), item) for name, item in vars(value).items() if name not in skip)
                for name in getattr(type(value), "__slots__", ()):
                    if hasattr(value, name) and name not in skip:
                        stack.append(((*path, name), getattr(value, name)))
        return arrays

    def _copy(
        self, path: tuple, array: np.ndarray, made: list[tuple[np.ndarray, _Copy]], derived: dict[str, np.ndarray]
    ) -> _Copy:
        for key, made_again in derived.items():
            if _comparable(made_again, array) and np.array_equal(_bits(made_again), _bits(array)):
                return _Copy(derived=(key, array.shape, array.dtype))
        before = self._last.get(path)
        known = self._by_id.get(id(array))
        if known is not None and known[0]() is array:
            before = known[1]
        if before is not None and before.derived is not None:
            before = None
        if before is None and array.ndim and not array.dtype.hasobject and array.dtype.itemsize in (1, 2, 4, 8):
            before = _Copy(zeros=(array.shape, array.dtype))  # a new array: its rows that are not 0
        if before is not None:
            old = before.whole if before.whole is not None else before.array()
            if _comparable(old, array):
                differ = _bits(array) != _bits(old)
                if array.ndim == 0:
                    if not differ:
                        return before
                else:
                    axis = int(np.argmax(array.shape))
                    if differ.ndim > 1:
                        differ = differ.any(axis=tuple(a for a in range(differ.ndim) if a != axis))
                    rows = np.flatnonzero(differ)
                    if rows.size == 0:
                        return before
                    if before.depth >= CHAIN:  # the rows changed since the chain's first copy instead
                        root = before
                        while root.base is not None:
                            root = root.base
                        if root.axis == axis or root.base is None:
                            differ = _bits(array) != _bits(root.array())
                            if differ.ndim > 1:
                                differ = differ.any(axis=tuple(a for a in range(differ.ndim) if a != axis))
                            rows, before = np.flatnonzero(differ), root
                    if rows.size <= SPARSE * array.shape[axis] and before.depth < CHAIN:
                        values = np.take(array, rows, axis=axis)
                        return _Copy(base=before, axis=axis, rows=rows.astype(np.int32), values=values)
        for other, kept in made:  # the same bits as another array of this snapshot
            if _comparable(other, array) and np.array_equal(_bits(other), _bits(array)):
                return kept
        whole = array.copy()
        whole.flags.writeable = False
        return _Copy(whole=whole)

    def snapshot(self, value: Any, derived: dict[str, np.ndarray] | None = None) -> State:
        """A deep copy of ``value``, its arrays kept as what changed since the last snapshot
        (or restore); those with the bits of an array of ``derived`` not kept (``restore``
        is given them again)."""
        transient: list = []
        arrays = self._walk(value, transient)
        memo: dict[int, Any] = dict(self._kept)
        copies: list[_Copy] = []
        made: list[tuple[np.ndarray, _Copy]] = []
        last: dict[tuple, _Copy] = {}
        by_id: dict[int, tuple[weakref.ref, _Copy]] = {}
        for path, array in arrays.items():
            kept = self._copy(path, array, made, derived or {})
            if kept.whole is not None:
                made.append((array, kept))
            memo[id(array)] = _Slot(len(copies))
            copies.append(kept)
            last[path] = kept
            by_id[id(array)] = (weakref.ref(array), kept)
        self._last, self._by_id = last, by_id
        held = [(obj, {name: getattr(obj, name) for name in type(obj).TRANSIENT}) for obj in transient]
        try:
            for obj, names in held:
                for name in names:
                    setattr(obj, name, None)
            return State(copy.deepcopy(value, memo), copies)
        finally:
            for obj, names in held:
                for name, item in names.items():
                    setattr(obj, name, item)

    def restore(self, state: State, derive: Callable[[Any], dict[str, np.ndarray]] | None = None) -> Any:
        """A fresh deep copy of what ``state`` kept (its arrays new and writeable): the live
        state to step on from. ``derive(restored)``: the arrays that were ``derived`` at the
        snapshot, made again from the rest of the restored state."""
        memo: dict[int, Any] = dict(self._kept)
        slots: list[_Slot] = []
        arrays = [kept.array() for kept in state.copies]

        def find(value, seen):  # every slot in the structure, by walking it
            stack = [value]
            while stack:
                value = stack.pop()
                if id(value) in seen or id(value) in self._kept:
                    continue
                seen.add(id(value))
                if isinstance(value, _Slot):
                    slots.append(value)
                elif isinstance(value, dict):
                    stack.extend(value.values())
                elif isinstance(value, (list, tuple, set, frozenset)):
                    stack.extend(value)
                elif not isinstance(value, (bool, int, float, complex, str, bytes, np.generic, np.ndarray)):
                    if hasattr(value, "__dict__"):
                        stack.extend(vars(value).values())
                    for name in getattr(type(value), "__slots__", ()):
                        if hasattr(value, name):
                            stack.append(getattr(value, name))

        find(state.value, set())
        for slot in slots:
            memo[id(slot)] = arrays[slot.index]
        restored = copy.deepcopy(state.value, memo)
        if derive is not None:
            made = derive(restored)
            for kept, array in zip(state.copies, arrays, strict=True):
                if kept.derived is not None:
                    array[...] = made[kept.derived[0]]
        # What was restored is what the next snapshot changes from.
        index = {id(array): i for i, array in enumerate(arrays)}
        self._last = {
            path: state.copies[index[id(array)]] for path, array in self._walk(restored).items() if id(array) in index
        }
        self._by_id = {id(array): (weakref.ref(array), kept) for array, kept in zip(arrays, state.copies, strict=True)}
        return restored

    @staticmethod
    def nbytes(states: Iterable[State], counted: dict[int, int] | None = None) -> int:
        """Memory held by the arrays of ``states``, each copy counted once (along its chain).
        ``counted``: the copies counted already (by id: not counted again), filled in."""
        counted = {} if counted is None else counted
        total = 0
        for state in states:
            for kept in state.copies:
                while kept is not None and id(kept) not in counted:
                    counted[id(kept)] = kept.nbytes
                    total += kept.nbytes
                    kept = kept.base
        return total
