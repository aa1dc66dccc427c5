"""Replay: which entries of the active path a replay sends again, and what it returns.

:func:`plan` is pure: given the active path from the entry a replay starts
at, it returns the turns to run again (their input entries: meta, system,
notes and the user's message), what comes after the last turn, and what it
leaves out. :meth:`durable_nb.durable.Agent.replay` runs the plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from .. import ai
from ..errors import DurableError
from ..kinds import replayed
from ..session import CompactionEntry, Entry, MessageEntry, is_turn_start


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
    branch keeps the full history) and said so in ``skipped``. A turn ends
    at each ordinary user message. The copies' ``ephemeral_context`` marks
    are removed (the replay sends no ephemeral input). O(len(entries)).
    """
    p = Plan(fork_id=parent_id)
    group: list[Entry] = []
    started = False
    last = parent_id
    for e in entries:
        if isinstance(e, MessageEntry) and e.message.role in ("assistant", "tool_result"):
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
        group.append(e)
        if is_turn_start(e):
            p.turns.append(group)
            p.settings.append(None)
            p.ephemeral.append(marks)
            group = []
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
