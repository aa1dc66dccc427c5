"""Fan-out: one turn run by several variants at once, each on its own sibling branch.

:func:`drive` runs the variants' runs in threads (the model calls and tools
overlap; the agent serialises the commits) and hands their events to the
caller's thread in arrival order. :class:`FanOut` and :class:`Branch` are
what :meth:`durable_nb.durable.Agent.fan_out` returns.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import ai
from .variants import Variant

if TYPE_CHECKING:
    from .agent import RunStream
    from .events import Event

JOIN_AFTER_INTERRUPT = 2.0  # seconds the caller waits for the variants to stop after an interrupt


@dataclass
class Branch:
    """One variant's branch: its ``name`` (its label), the ``variant``, its
    ``index`` among the variants, the entries it wrote (``entries``, its input
    first, its label entry last), the model's ``messages`` (replies and tool
    results), its last entry ``leaf_id`` (after a reply: the label entry,
    which names the last reply; ``""`` when nothing was written), ``error``
    (``None`` when it replied), ``stop_reason``."""

    name: str
    variant: Variant
    index: int = 0
    entries: list = field(default_factory=list)
    messages: list[ai.Message] = field(default_factory=list)
    leaf_id: str = ""
    error: BaseException | None = None
    stop_reason: str = ""

    @property
    def ok(self) -> bool:
        """True when the variant's run ended without an error."""
        return self.error is None

    @property
    def text(self) -> str:
        """The variant's last reply text (``""`` when it has none)."""
        for m in reversed(self.messages):
            if m.role == "assistant":
                return m.text()
        return ""


@dataclass
class FanOut:
    """What :meth:`~durable_nb.durable.Agent.fan_out` did: ``fork_id`` (the entry
    the branches hang off: the leaf before, or the last shared input such as a
    meta entry), ``branches`` in the variants' order, ``leaf_id`` (the agent's
    leaf after: the first branch that replied, else ``fork_id``)."""

    fork_id: str = ""
    branches: list[Branch] = field(default_factory=list)
    leaf_id: str = ""

    @property
    def failed(self) -> list[Branch]:
        """The branches whose run raised."""
        return [b for b in self.branches if not b.ok]

    def __getitem__(self, name: str) -> Branch:
        """Return the branch named ``name``; ``KeyError`` if none is."""
        for b in self.branches:
            if b.name == name:
                return b
        raise KeyError(name)


def drive(
    streams: Sequence[RunStream],
    on_event: Callable[[int, Event], object] | None = None,
    stop: threading.Event | None = None,
    lock: AbstractContextManager | None = None,
) -> None:
    """Run every stream to its end, each in its own thread; call ``on_event(i, event)`` in this thread.

    Events of stream ``i`` arrive in order; streams interleave as they
    produce. A stream's error ends only that stream (it is left in
    ``stream.error``). An exception in this thread (``KeyboardInterrupt``,
    one from ``on_event``) sets ``stop`` (while holding ``lock``, the lock
    the streams' commits take and that checks ``stop``: no commit starts
    after it), asks every stream to stop at its next event (a model call
    under way finishes first; its reply is then not stored), waits up to
    :data:`JOIN_AFTER_INTERRUPT` seconds, and propagates. Cost: one thread
    per stream.
    """
    events: queue.Queue = queue.Queue()
    stop = threading.Event() if stop is None else stop
    go = threading.Event()  # every thread is started before any runs: a running one would hold up the next start

    def work(i: int, stream: RunStream) -> None:
        go.wait()
        try:
            for ev in stream:
                if stop.is_set():
                    stream.close()
                    break
                events.put((i, ev))
        except BaseException:  # noqa: BLE001 - kept in stream.error; the other variants go on
            pass
        finally:
            events.put((i, None))

    threads = [
        threading.Thread(target=work, args=(i, s), name=f"durable-variant-{i}", daemon=True)
        for i, s in enumerate(streams)
    ]
    for t in threads:
        t.start()
    go.set()
    left = len(threads)
    try:
        while left:
            try:
                i, ev = events.get(timeout=0.1)
            except queue.Empty:
                continue
            if ev is None:
                left -= 1
            elif on_event is not None:
                on_event(i, ev)
    except BaseException:
        with lock if lock is not None else nullcontext():
            stop.set()
        for t in threads:
            t.join(JOIN_AFTER_INTERRUPT / len(threads))
        raise
    for t in threads:
        t.join()
