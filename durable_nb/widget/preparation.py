"""Preparing a long session's first widget ahead, and the registries of open widgets and preparations.

    after_cell(agent)     # what the notebook calls when a %durable cell ends: prepare() soon after
    prepare(agent)        # once the kernel is idle: copies on its loop, the layout and views in a thread
    take(agent, entries)  # the agent's next widget: the preparation, or None
    sync_widgets(agent)   # every open widget of the agent syncs

A first widget lays out the whole log, tallies every reply and builds the active path's views:
O(n), about 1.5 s at 300k entries on a slow core. For a log of :data:`PREPARE_MIN` entries or more
the notebook prepares it when a ``%durable`` cell ends and the kernel has been idle a while: the
layout in a background thread that reads only the entries logged so far, the views from the
agent's kept active path; the next widget takes it and adds what was logged since, so a later
``%durable show`` paints at once. A show that comes before it started does it itself; one that
comes while the thread works waits for it. The preparation and the open widgets are
kept per agent, weakly, in :func:`durable_nb.kept.kept`, beside the running tallies.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from ..collector import settle
from ..kept import keep_tally, kept, kept_shape, kept_tally
from ..session import Entry
from .follow import main_thread_caller
from .idle import Gate, quick_switches, when_idle
from .layout import Layout
from .tree import layout_of, log_of
from .turns import Turns, ahead, turns_of
from .views import PathState


def opened(widget: Any) -> None:
    """Register ``widget`` (a :class:`~durable_nb.widget.SessionWidget`) as open, held weakly. O(1)."""
    kept(widget.agent).widgets.add(widget)


def widgets_of(agent: Any) -> list[Any]:
    """Return the registered widgets showing ``agent`` (closed ones too: check ``comm``). O(its widgets)."""
    return list(kept(agent).widgets)


def sync_widgets(agent: Any) -> None:
    """Call :meth:`SessionWidget.sync` on every open widget showing ``agent``. O(widgets)."""
    for w in widgets_of(agent):
        if w.comm is not None:
            w.sync()


PREPARE_MIN = 20_000  # entries from which a first widget's state is worth preparing ahead (prepare)


class _Worker:
    """A preparation's steps: ``copy()`` on the agent's thread (it returns False when there is nothing
    to prepare), then ``work(in_thread)``. :meth:`start` (once the kernel is idle,
    :func:`~durable_nb.widget.idle.when_idle`, on its loop) copies and starts the work in a thread;
    :meth:`join` (a widget that needs it now, on the agent's thread) copies and works in the caller
    when it has not started yet, else opens the thread's gate (it pauses no more for the running
    cell, which now waits for it) and waits for it. Once ``work`` is done the thread goes on with
    ``after()`` (its own gate: it pauses for every cell), which nobody waits for."""

    def __init__(
        self,
        copy: Callable[[], bool],
        work: Callable[[bool], None],
        gate: Gate,
        after: Callable[[], None] | None = None,
    ) -> None:
        self._copy, self._work, self._gate, self._after = copy, work, gate, after
        self._done = threading.Event()  # set once ``work`` ended in the thread (``after`` may still run)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._here = False

    def start(self) -> None:
        with self._lock:
            if self._thread is not None or self._here:
                return
            self._here = not self._copy()
            if self._here:
                return
            settle()  # the copies just made go to the oldest generation: the next cell's collections skip them
            self._thread = threading.Thread(target=self._run, name="durable_nb-prepare", daemon=True)
            self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        with self._lock:
            thread, here = self._thread, self._thread is None and not self._here
            self._here = self._here or here
        if here and self._copy():
            self._work(False)
        elif thread is not None:
            self._gate.open()
            self._done.wait(timeout)

    def _run(self) -> None:  # the thread: the work a widget waits for, then what it does not
        try:
            self._work(True)
        finally:
            self._done.set()
        if self._after is not None:
            self._after()


class Prepared:
    """What the first widget of an agent computes from its whole log, computed ahead by
    :func:`prepare`: the layout (and the session's tally, kept) from the log as it was then, and the
    state at the leaf (:class:`PathState`). Nothing is done on the kernel's loop right after the cell
    (the next cell of Run All is not kept waiting): once the kernel has been idle a while, its copies
    are made on the loop and the rest (the tallies, transcript and elided count, then the layout)
    runs in a background thread that reads only those copies, pausing between steps while a cell runs
    (:mod:`~durable_nb.widget.idle`). A widget that needs it before does it all at once itself
    (:func:`take`). ``layout`` is set when it is done (it stays ``None`` if laying out failed);
    ``count`` and ``last_id`` say which log it was made from. Then the thread goes on, pausing for
    every cell, with the timeline's turns of the same copy (:func:`~durable_nb.widget.turns.ahead`,
    kept per agent: the page asks for them right after the first paint), which a widget never waits
    for (a timeline request meanwhile takes in the rest itself)."""

    def __init__(self, agent: Any) -> None:
        self.count, self.last_id = 0, ""
        self.layout: Layout | None = None
        self.at_leaf: PathState | None = None
        ref, gate, later = weakref.ref(agent), Gate(), Gate()
        log: list[Entry] = []
        distinct = False
        turns: Turns | None = None

        def copy() -> bool:  # on the agent's thread, at C speed
            nonlocal log, distinct, turns
            a = ref()
            if a is None:
                return False
            log, distinct = log_of(a)
            turns = turns_of(a)  # made here, on the agent's thread: the thread and the widgets share it
            self.count, self.last_id = len(log), log[-1].id if log else ""
            self.at_leaf = PathState(a, later=True, shape=kept_shape(a, log))
            return True

        def work(in_thread: bool) -> None:
            pause = gate.wait if in_thread else (lambda: None)
            try:
                with quick_switches() if in_thread else nullcontext():
                    a, at_leaf = ref(), self.at_leaf
                    if a is None or at_leaf is None:
                        return
                    pause()
                    shape, path = at_leaf.shape, at_leaf.path  # of the log and path as they were then
                    t = kept_tally(a, "session", log, shape is not None and shape.messages_only)  # status's, reused
                    chain = len(path) == len(log) and path == log  # the log is its path (C speed: same objects)
                    if chain:  # then the path's tally is the same (what session_tally keeps)
                        keep_tally(a, "path", len(path), at_leaf.leaf, t)
                    pause()
                    at_leaf.finish(a)  # O(depth), in Python; list copies for a log of plain messages
                    pause()
                    self.layout = layout_of(log, distinct=distinct, shape=shape, chain=chain)
            except Exception:  # noqa: BLE001 - the widget then lays it out itself, and reports any error
                pass

        def after() -> None:  # in the thread, after the layout: what the page's first timeline request reads
            if turns is None or not log:
                return
            try:
                with quick_switches():
                    ahead(turns, log, later.wait)
            except Exception:  # noqa: BLE001 - the first timeline request then builds them itself
                pass

        self.thread = _Worker(copy, work, gate, after)
        when_idle(self.thread.start)


def after_cell(agent: Any) -> None:
    """Prepare ``agent``'s next widget (:func:`prepare`) on the kernel's thread once the running
    cell has ended: the one call the notebook makes when a ``%durable`` cell ends. Nothing outside
    a kernel; a failure is swallowed (nobody is there to tell; the widget then computes it all
    itself and reports any error). O(1) here."""
    call = main_thread_caller()
    if call is None:
        return

    def ahead() -> None:  # on the kernel's io loop, after the cell
        try:
            prepare(agent)
        except Exception:  # noqa: BLE001 - see the docstring
            pass

    call(ahead)


def prepare(agent: Any) -> Prepared | None:
    """Prepare what the next :class:`SessionWidget` of ``agent`` would otherwise compute from the
    whole log before its first paint: the tree's layout and the session's tally, in a background
    thread (it reads only the list of entries logged so far, so the agent may go on working), and
    the state at the leaf (the path, its views and tally, from the agent's kept active path: a
    copy at C speed, or built now as a first turn would). That widget takes it and adds what was
    logged since (O(new entries)), so ``%durable show`` on a long session paints at once. The
    notebook calls this on the kernel's thread when a ``%durable`` cell ends; call it on the
    agent's thread.

    Returns the preparation, or ``None`` when there is nothing to prepare: a log shorter than
    :data:`PREPARE_MIN` (a widget lays it out at once), a preparation not yet taken, or an open
    widget of ``agent`` that a new one copies its layout from. O(1) here; once the kernel is idle,
    O(depth) at C speed on its loop with the agent's caches warm and a collection of the young
    generations (:func:`~durable_nb.collector.settle`: ~60 ms at 1M entries); the layout's O(n)
    runs in the thread (a widget made meanwhile waits for it, or does it all itself before).
    """
    k = kept(agent)
    if k.prepared is not None or any(w._hide is None and w.comm is not None for w in widgets_of(agent)):
        return None
    count = getattr(agent, "id_count", None)  # O(1): the log's distinct ids (as many as its entries, usually)
    if (count() if count is not None else len(agent.entries())) < PREPARE_MIN:
        return None
    p = k.prepared = Prepared(agent)
    return p


def prepared(agent: Any) -> Prepared | None:
    """Return ``agent``'s preparation not yet taken, or ``None`` (it is left in place). O(1)."""
    return kept(agent).prepared


def take(agent: Any, entries: list[Entry]) -> Prepared | None:
    """Return the preparation of ``agent`` (waiting for its thread if it is still laying out) and
    forget it, or ``None`` when there is none or ``entries`` (the log now) no longer extends the
    log it was made from. O(1), plus the wait."""
    k = kept(agent)
    p, k.prepared = k.prepared, None
    if p is None:
        return None
    p.thread.join()
    if p.layout is None or not (0 < p.count <= len(entries) and entries[p.count - 1].id == p.last_id):
        return None
    return p
