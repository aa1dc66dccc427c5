"""Replay: which entries of the active path a replay sends again, and what it returns.

:func:`plan` is pure: given the active path from the entry a replay starts
at, it returns the turns to run again (their input entries: meta, system,
notes and the user's message), what comes after the last turn, and what it
leaves out. :func:`replay` (:meth:`durable_nb.durable.Agent.replay`) runs
the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .. import ai
from ..errors import DurableError
from ..kinds import replayed
from ..models import Model, ModelLike, build
from ..session import CompactionEntry, Entry, MessageEntry, is_turn_start
from .events import Event
from .inputs import system as system_entry
from .loop import Host
from .reuse import StoredResults, check_mode, reusing
from .settings import check_settings
from .tools import Tool, as_tools
from .variants import Variant, names


@dataclass
class Plan:
    """What a replay does: ``turns`` (each the input entries of one turn, its user
    message last), ``tail`` (input after the last turn, appended without a model
    call), ``fork_id`` (the parent of the first replayed entry: the new branch
    hangs there, ``""`` = the root), ``settings`` (per turn, the settings its
    first reply was made with; ``None`` when it got no reply), ``ephemeral``
    (per turn, the origins of the ephemeral input it was sent, never stored)
    and ``skipped`` (what is not replayed, one line each)."""

    turns: list[list[Entry]] = field(default_factory=list)
    tail: list[Entry] = field(default_factory=list)
    fork_id: str = ""
    settings: list[dict | None] = field(default_factory=list)
    ephemeral: list[list[str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def plan(entries: Sequence[Entry], parent_id: str, drop_system: bool = False) -> Plan:
    """Return the :class:`Plan` for replaying ``entries`` (the active path from the starting entry on).

    ``parent_id`` is the parent of ``entries[0]``. Input is copied: user
    messages (meta included), system prompts (left out with
    ``drop_system``: the replay sets its own) and custom entries whose kind
    is replayed (notes; not labels, see :mod:`durable_nb.kinds`). The model's side is not: assistant messages and tool
    results are produced again. A compaction entry is left out (the new
    branch keeps the full history) and said so in ``skipped``. A turn is
    the input up to the model's first message after an ordinary user
    message (input after the user's message, like a meta entry its run
    was given, included); a turn that got no reply ends at its message. The copies' ``ephemeral_context`` marks
    are removed (the replay sends no ephemeral input). O(len(entries)).
    """
    p = Plan(fork_id=parent_id)
    group: list[Entry] = []
    turn_at = -1  # where in group its turn's user message is (-1: none yet)
    turn_marks: list[str] = []  # that message's ephemeral marks
    started = False
    last = parent_id

    def close(end: int) -> list[Entry]:  # group[:end] is a turn; the rest stays for the next
        p.turns.append(group[:end])
        p.settings.append(None)
        p.ephemeral.append(turn_marks)
        return group[end:]

    for e in entries:
        if isinstance(e, MessageEntry) and e.message.role in ("assistant", "tool_result"):
            if turn_at >= 0:  # the model's side: the input before it (also after the user's message) is its turn's
                group, turn_at = close(len(group)), -1
            if p.settings and p.settings[-1] is None and e.message.role == "assistant":
                p.settings[-1] = dict(e.message.settings or {})
            last = e.id
            continue
        if isinstance(e, CompactionEntry):
            p.skipped.append(f"compaction {e.id} is not replayed: the new branch keeps the full history")
            last = e.id
            continue
        if not replayed(e):  # a label: it names the original's entries (durable_nb.kinds)
            last = e.id
            continue
        if isinstance(e, MessageEntry) and e.message.role == "system" and drop_system:
            last = e.id
            continue
        if not started:
            p.fork_id, started = last, True
        if isinstance(e, MessageEntry) and e.message.ephemeral_context:
            marks = list(e.message.ephemeral_context)
            e = msgspec.structs.replace(e, message=msgspec.structs.replace(e.message, ephemeral_context=None))
        else:
            marks = []
        if is_turn_start(e):
            if turn_at >= 0:  # the turn before got no reply: what followed its message goes with this one
                group = close(turn_at + 1)
            turn_at, turn_marks = len(group), marks
        group.append(e)
    if turn_at >= 0:
        group = close(turn_at + 1)
    p.tail = group
    return p


@dataclass
class Replay:
    """What :meth:`~durable_nb.durable.Agent.replay` did.

    ``leaf_id`` is the new branch's last entry, the agent's leaf after the
    replay: the label entry naming its last reply (before the label is
    written, e.g. after a failure: the last entry written), ``fork_id`` the entry it hangs off (``""``: the root; the
    original's first replayed entry is its sibling), ``original_leaf_id``
    the original branch's end (untouched), ``entries`` the new entries in
    order, ``messages`` the model's messages among them (replies, tool
    results), ``turns`` how many turns ran, ``label`` the name given to the
    new end (``""`` if none), ``warnings`` what could not be repeated
    exactly (ephemeral input, compactions), one line each. After a failed
    turn (:class:`~durable_nb.durable.ReplayFailed`) it holds what was
    written until then.
    """

    leaf_id: str = ""
    fork_id: str = ""
    original_leaf_id: str = ""
    entries: list[Entry] = field(default_factory=list)
    messages: list[ai.Message] = field(default_factory=list)
    turns: int = 0
    label: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The last reply's text (``""`` when none)."""
        for m in reversed(self.messages):
            if m.role == "assistant":
                return m.text()
        return ""


class ReplayFailed(DurableError):
    """A replayed turn failed (the model, an interrupt of the provider...): the message says which turn
    and why; ``result`` is the :class:`Replay` so far (the new branch keeps what was written)."""

    def __init__(self, message: str, result: Replay) -> None:
        super().__init__(message)
        self.result = result


def replay(
    agent: Host,
    from_id: str | None = None,
    model: ModelLike = None,
    system: str | None = None,
    tools: Iterable[Callable[..., Any] | Tool] | None = None,
    on_event: Callable[[Event], object] | None = None,
    settings: dict[str, Any] | None = None,
    tool_results: str = "call",
) -> Replay:
    """Run the active path's turns again from ``from_id`` on, with another model, system prompt or settings,
    into a sibling branch; return a :class:`~durable_nb.durable.Replay`.

    ``from_id`` is an entry id, a label or a unique id prefix (see
    :meth:`~durable_nb.durable.Agent.resolve`) of an entry on the active path; ``None`` replays the
    whole path. The input of each turn from there on is copied in order
    (user messages with their meta entries, system prompts, notes; origins
    kept) and the model answers it again, tool loop included (``tools``
    for the replay, else :attr:`~durable_nb.durable.Agent.tools`). The model's side of the original
    (replies, tool results) is not copied, nor are labels and compaction
    entries. ``model`` (``None``: the agent's), ``system`` (replaces
    every system prompt of the replayed part; ``None``: kept) and
    ``settings`` (over the settings each original reply was made with)
    are what changes. The new branch hangs off the parent of the first
    replayed entry, so it is that entry's sibling and the original stays
    as it was; the leaf ends on the new branch's end, which gets a label
    naming what changed (``gpt-4.1@replay2``). Ephemeral input was never
    stored: a turn that had some (its user message's
    ``ephemeral_context``) is replayed without it, and
    :attr:`~durable_nb.durable.Replay.warnings` names it. ``on_event``
    gets every event of every replayed run. ``tool_results="reuse"``
    runs no tool: each call is answered with the stored result of the
    same call (tool and arguments) in the replayed part
    (:mod:`durable_nb.durable.reuse`); ``"call"`` (the default) runs them.

    Raises :class:`DurableError` (one line) before writing anything for
    an unknown entry or label, an entry off the active path, nothing to
    replay (no user message from there on), a model that cannot be built
    or a bad setting; :class:`~durable_nb.durable.ReplayFailed` when a
    turn fails midway (its ``result`` holds what was written; the leaf is
    where it stopped). A ``KeyboardInterrupt`` propagates as is. Cost:
    one run per turn, O(depth) to plan.
    """
    agent._check_open()
    settings = settings or {}
    full = agent.path()
    start = _start(agent, full, from_id)
    pl = plan(full[start:], full[start].parent_id, drop_system=system is not None)
    where = f"from {full[start].id}" if start else "on the active path"
    if not pl.turns:
        raise DurableError(f"nothing to replay {where}: no user message there to send again")
    built = build(model) if model is not None else agent._built_model()
    used = as_tools(agent.tools if tools is None else tools)
    if check_mode(tool_results) == "reuse":
        tools = reusing(used, StoredResults(full[start:]))
    check_settings({**agent.settings, **settings})  # a bad setting fails here, before anything is written
    first_turn = sum(1 for e in full[:start] if is_turn_start(e)) + 1
    result = Replay(fork_id=pl.fork_id, original_leaf_id=agent.leaf_id, warnings=list(pl.skipped))
    result.warnings += [_unsent(first_turn + i, pl.turns[i][-1].id, m) for i, m in enumerate(pl.ephemeral) if m]
    agent.branch(pl.fork_id)
    try:
        if system is not None and system != agent.system:
            result.entries += agent.append(system_entry(system))
        _run_turns(agent, pl, built, tools, settings, on_event, result)
    except Exception as e:
        result.leaf_id = agent.leaf_id
        cause = str(e) if isinstance(e, DurableError) else f"{type(e).__name__}: {e}"
        raise ReplayFailed(
            f"replay stopped at turn {first_turn + result.turns} ({cause}); the new branch keeps "
            f"{result.turns} replayed turn{'s' if result.turns != 1 else ''} (leaf {agent.leaf_id})",
            result,
        ) from e
    keys = [k for k, given in (("model", model is not None), ("system", system is not None)) if given]
    keys += list(settings)
    change = Variant(model=built, system=system, settings=settings, label="" if keys else f"replay{first_turn}")
    (result.label,) = names([change], f"replay{first_turn}", agent.labels(), keys=keys)
    result.entries.append(agent.label(result.label))  # at the new end: the leaf moves onto it
    result.leaf_id = agent.leaf_id
    return result


def _start(agent: Host, full: list[Entry], from_id: str | None) -> int:
    """Return where on the active path ``full`` the replay starts, or raise in one line."""
    start = 0
    if from_id:
        target = agent.resolve(from_id)
        if not agent.on_path(target):
            raise DurableError(
                f"entry {target} is not on the active path: branch to a leaf below it first, "
                "or replay from an entry of the active path"
            )
        start = next(i for i, e in enumerate(full) if e.id == target)
    if not full:
        raise DurableError("nothing to replay: the session has no entries yet")
    return start


def _unsent(turn: int, user_id: str, marks: list[str]) -> str:
    """Return the warning for a turn that was sent ephemeral input (never stored, so not replayed)."""
    n = len(marks)
    said = ", ".join(o or "no origin" for o in marks)
    return (
        f"turn {turn} ({user_id}) was sent {n} ephemeral input{'s' if n != 1 else ''} ({said}) that "
        f"{'was' if n == 1 else 'were'} never stored: replayed without {'it' if n == 1 else 'them'}"
    )


def _run_turns(
    agent: Host,
    pl: Plan,
    model: Model,
    tools: Iterable[Callable[..., Any] | Tool] | None,
    settings: dict[str, Any],
    on_event: Callable[[Event], object] | None,
    result: Replay,
) -> None:
    """Run each planned turn (its settings: the original reply's, under ``settings``), then append the tail."""
    for i, group in enumerate(pl.turns):
        base = agent.settings if pl.settings[i] is None else pl.settings[i]
        for ev in agent._stream(model, group, tools, {**(base or {}), **settings}):
            if ev.type in ("agent_start", "message_end"):
                result.entries += ev.entries
            if ev.type == "message_end" and ev.message is not None:
                result.messages.append(ev.message)
            if on_event is not None:
                on_event(ev)
        result.turns += 1
    if pl.tail:
        result.entries += agent.append(*pl.tail)
