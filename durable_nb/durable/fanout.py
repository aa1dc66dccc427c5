"""Fan-out: one turn run by several variants at once, each on its own sibling branch.

:func:`fan_out` is :meth:`durable_nb.durable.Agent.fan_out`; :func:`drive`
runs the variants' runs in threads (the model calls and tools overlap; the
agent serialises the commits) and hands their events to the caller's thread
in arrival order. :class:`FanOut` and :class:`Branch` are what it returns.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from .. import ai
from ..errors import DurableError, ModelError
from ..models import Model, ModelLike, build
from ..session import Entry, MessageEntry, is_ephemeral, is_turn_start
from .events import Event
from .inputs import mark_ephemeral, text
from .inputs import system as system_entry
from .loop import Host, RunStream, run_loop
from .settings import SettingsError, check_settings
from .tools import Tool, as_tools
from .variants import Variant, as_variant, names

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


def fan_out(
    agent: Host,
    entries: Sequence[Entry | str],
    variants: Iterable[Variant | dict[str, Any] | ModelLike],
    tools: Iterable[Callable[..., Any] | Tool] | None = None,
    settings: dict[str, Any] | None = None,
    on_event: Callable[[Branch, Event], object] | None = None,
) -> FanOut:
    """Run one turn once per variant, each on its own sibling branch, concurrently; return a
    :class:`~durable_nb.durable.FanOut`.

    ``entries`` is a run's input (as :meth:`~durable_nb.durable.Agent.run` takes it); its last
    ordinary user message and what follows it go to every branch, the
    input before it (meta entries, notes) is stored once, at the leaf,
    and shared; ephemeral input reaches every variant's model and is
    never stored. A variant is a model (a name, a callable, a model
    object) or a dict with ``model``, ``system``, ``label`` and settings
    (see :mod:`durable_nb.durable.variants`); ``settings`` apply to every
    variant (a variant's own win). A variant whose system prompt differs
    from the session's stores it on its branch. Each branch gets a label
    naming what differs, ``<what>@t<turn>`` (``offline@t3``,
    ``temperature=1@t3``), unique in the session.

    The variants' model calls and tool calls run in threads at the same
    time (so their tools must tolerate that); the agent stores their
    entries one commit at a time. ``on_event(branch, event)`` is called in
    the caller's thread with each variant's events as they come (``branch``
    is its :class:`~durable_nb.durable.Branch`, filled so far). A variant
    that fails ends only its own branch (``Branch.error``; its stored
    entries stay); the others go on. Afterwards the leaf is on the first
    variant that replied (in the order given), else at the fork point.

    Raises :class:`DurableError` (one line, naming the variant) before
    anything is written for no variant, no user message in ``entries``,
    a model that cannot be built or a bad setting. A
    ``KeyboardInterrupt`` stops every variant (nothing more is written)
    and propagates. Cost: one thread and one run per variant.
    """
    agent._check_open()
    vs = [as_variant(v) for v in variants]
    if not vs:
        raise DurableError("fan_out needs at least one variant (a model, or a dict of model/system/settings)")
    models, used = built_variants(agent, vs, settings)
    specs = as_tools(agent.tools if tools is None else tools)
    items = [text(e) if isinstance(e, str) else e for e in entries]
    k = max((i for i, e in enumerate(items) if is_turn_start(e)), default=-1)
    if k < 0:
        raise DurableError("fan_out needs the user's message to send (a str or durable.text(...))")
    shared = agent._log.prepare(items[:k])
    fork = next((e.id for e in reversed(shared) if not is_ephemeral(e)), agent.leaf_id)
    current = agent.system
    for x in shared:
        if isinstance(x, MessageEntry) and x.message.role == "system" and not is_ephemeral(x):
            current = x.message.text()
    user = items[k]
    origin = user.message.origin if isinstance(user, MessageEntry) else None
    runs = []
    for v in vs:
        own: list[Entry | str] = list(items[k:])
        if v.system is not None and v.system != current:
            sys_entry = system_entry(v.system)
            sys_entry.message.origin = origin  # the cell's own entry (a re-run finds it)
            own.insert(0, sys_entry)
        prepared = mark_ephemeral(agent._log.prepare(own, fork), shared)
        runs.append((prepared, agent._log.active.run_view(shared + prepared)))
    turn = sum(1 for e in agent.path() if is_turn_start(e)) + 1
    labels = names([replace(v, model=m) for v, m in zip(vs, models)], f"t{turn}", agent.labels())
    agent._log.commit(shared)
    out = FanOut(fork_id=fork, branches=[Branch(n, v, i) for i, (n, v) in enumerate(zip(labels, vs))])
    halt = threading.Event()
    streams = [
        RunStream(run_loop(agent, m, view, prepared, specs, u, fork, move=False, halt=halt))
        for m, u, (prepared, view) in zip(models, used, runs)
    ]
    _run(agent, out, streams, halt, on_event)
    return out


def built_variants(
    agent: Host, vs: list[Variant], settings: dict[str, Any] | None
) -> tuple[list[Model], list[dict[str, Any]]]:
    """Return each variant's model and its settings (the agent's, then ``settings``, then the variant's),
    checked; raises ``ModelError`` / ``SettingsError`` naming the variant (``variant 2: ...``). Builds
    each model once; writes nothing. Used by fan-out and evaluation runs."""
    models: list[Model] = []
    used: list[dict[str, Any]] = []
    for i, v in enumerate(vs, 1):
        try:
            models.append(build(v.model) if v.model is not None else agent._built_model())
            used.append(check_settings({**agent.settings, **(settings or {}), **v.settings}))
        except ModelError as e:
            raise ModelError(f"variant {i}: {e}") from None
        except SettingsError as e:
            raise SettingsError(f"variant {i}: {e}") from None
    return models, used


def _run(
    agent: Host,
    out: FanOut,
    streams: list[RunStream],
    halt: threading.Event,
    on_event: Callable[[Branch, Event], object] | None,
) -> None:
    """Drive the variants' streams, filling ``out``'s branches; label each branch that replied at its end
    and leave the leaf on the first of them (else at the fork point)."""

    def receipt(i: int, ev: Event) -> None:
        b = out.branches[i]
        if ev.type in ("agent_start", "message_end"):
            b.entries += ev.entries
            b.leaf_id = ev.leaf_id
        if ev.type == "message_end" and ev.message is not None:
            b.messages.append(ev.message)
        elif ev.type == "agent_end":
            b.stop_reason = ev.stop_reason
        if on_event is not None:
            on_event(b, ev)

    try:
        drive(streams, receipt, halt, agent._log.lock)
    finally:
        for b, s in zip(out.branches, streams):
            b.error = s.error if s.error is not None else (None if s.done else KeyboardInterrupt())
        ok = [b for b in out.branches if b.ok and b.leaf_id]
        agent.branch(ok[0].leaf_id if ok else out.fork_id)
        out.leaf_id = agent.leaf_id
    for b in ok:  # each branch's label entry goes at its own end
        agent.branch(b.leaf_id)
        b.entries.append(agent.label(b.name))
        b.leaf_id = agent.leaf_id
    agent.branch(ok[0].leaf_id if ok else out.fork_id)
    out.leaf_id = agent.leaf_id
