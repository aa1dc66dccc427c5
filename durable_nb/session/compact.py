"""Loaded entries kept out of the cyclic garbage collector's walks.

A loaded session can hold a million entries in a kernel. Messages, blocks
and message entries are ``gc=False`` structs, so the one object per entry
the cyclic GC still tracks is each message's ``content`` list, and every
full collection walks them all (~0.5 s at 300k entries). Those lists hold
blocks only, which hold JSON values: they cannot be part of a cycle (the
reason the structs are ``gc=False``), so :data:`untrack` takes them out of
the collector's lists. So does the agent for its log's list of entries, its
active path and that path's model view (a list of messages): nothing they
hold refers back to them, and a walk over them costs the collector a cache
miss an item (~45 ms CPU at 300k once the first turn built the path and its
view). Entries stay the same values. :func:`collector_paused`
pauses the collector while a block builds such objects (an import).
"""

from __future__ import annotations

import gc
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import repeat
from typing import Any


def _untracker() -> Callable[[Any], None] | None:
    """Return CPython's ``PyObject_GC_UnTrack`` (idempotent), or ``None`` where there is none."""
    if sys.implementation.name != "cpython":
        return None
    try:
        import ctypes

        f = ctypes.pythonapi.PyObject_GC_UnTrack
    except (ImportError, AttributeError, OSError):
        return None
    f.argtypes, f.restype = [ctypes.py_object], None
    return f


untrack = _untracker()
"""``untrack(obj)`` removes ``obj`` from the cyclic GC's lists (``None`` off CPython).

Only for containers that can never be part of a reference cycle: a message's
``content`` list as a store decodes it, a list of entries or messages the agent
keeps (nothing an entry holds refers back to it). Items added later stay
reachable through it as before; only a cycle through the list itself would go
unseen. ~0.3 µs a call."""


consume: Callable[[Iterable[Any]], None] = deque(maxlen=0).extend
"""``consume(it)`` exhausts the iterator ``it`` at C speed, keeping nothing: a ``map`` run for its side
effects (:func:`untrack_all`, :func:`become`)."""


def become(objs: Iterable[Any], cls: type) -> None:
    """Make each of ``objs`` an instance of ``cls`` in place (``__class__`` set, no copy), in one pass at C
    speed: the decode probes of :mod:`.kindlines` and :mod:`.extralines`, which have ``cls``'s layout."""
    consume(map(setattr, objs, repeat("__class__"), repeat(cls)))


def untrack_all(objs: Iterable[Any]) -> None:
    """:data:`untrack` each of ``objs`` (containers that can never be part of a cycle, as there) in one
    pass at C speed: ~0.05 µs a container less than a call from a Python loop. Nothing off CPython."""
    if untrack is not None:
        consume(map(untrack, objs))


def untrack_columns(holder: Any) -> None:
    """Untrack each list and dict attribute of ``holder``: columns of strs, bools and ints (a
    layout's), which can never be part of a cycle. O(attributes); nothing off CPython."""
    if untrack is not None:
        for v in vars(holder).values():
            if isinstance(v, (list, dict)):
                untrack(v)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic GC while the block runs (as it was after): for a block that builds many
    acyclic objects (a log's entries), where collections over the growing heap would find nothing."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
