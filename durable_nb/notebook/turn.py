"""One turn of a cell: the entries it sends, and :class:`Turn`, the record of what it did so far."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ai, durable
from ..durable import Event
from ..session import Entry, MessageEntry


def user_entry(body: str, origin: str | None) -> MessageEntry:
    """Return the ordinary user entry for a turn cell, recording the cell as its origin."""
    entry = durable.text(body)
    entry.message.origin = origin
    return entry


def injected_entry(kind: str, body: str, origin: str | None) -> MessageEntry:
    """Return a staged ``meta`` or ``ephemeral`` entry for a tagged cell (``kind`` names which)."""
    return {"meta": durable.meta, "ephemeral": durable.ephemeral}[kind](body, origin=origin)


def cell_input(staged: list[MessageEntry], kind: str, body: str | None, origin: str | None) -> list[Entry]:
    """Return what the next turn sends when the cell ``body`` of ``kind`` runs (``body=None``: no cell).

    ``"turn"``: the staged entries in staging order, then the cell's message;
    ``"system"``: the cell as the system prompt, then the staged entries;
    ``"meta"`` / ``"ephemeral"``: the staged entries with the cell's own
    staged version replaced by this one. Pure.
    """
    if kind == "turn":
        return [*staged, *([user_entry(body, origin)] if body is not None else [])]
    if kind == "system":
        return [durable.system(body or ""), *staged]
    return [
        *(s for s in staged if not (origin and s.message.origin == origin)),
        injected_entry(kind, body or "", origin),
    ]


@dataclass
class Turn:
    """What one turn did so far; filled while it runs, so it is meaningful after a failure.

    ``input_ids`` are the persisted input entries, ``written`` counts stored
    entries, ``text`` is the reply (the step streaming now, or the last
    stored reply), ``reply`` the last stored assistant message (``None``
    until one is stored), ``replies`` every stored assistant message of the
    run (one per model call), ``leaf_id`` the leaf after, ``stop_reason``
    why the run stopped (``max_steps`` when the loop ran out of steps).
    """

    input_ids: list[str] = field(default_factory=list)
    written: int = 0
    deltas: list[str] = field(default_factory=list)
    reply: ai.Message | None = None
    replies: list[ai.Message] = field(default_factory=list)
    leaf_id: str = ""
    stop_reason: str = ""

    @property
    def text(self) -> str:
        if self.deltas or self.reply is None:
            return "".join(self.deltas)
        return self.reply.text()

    def record(self, ev: Event) -> None:
        """Take in one event of the turn's run: its stored input (``agent_start``), a text delta, a stored
        message (``message_end``), the end (``agent_end``: why it stopped). O(1)."""
        if ev.type == "agent_start":
            self.input_ids = [e.id for e in ev.entries]
            self.written += len(ev.entries)
            self.leaf_id = ev.leaf_id
        elif ev.type == "text_delta":
            self.deltas.append(ev.delta)
        elif ev.type == "message_end":
            self.written += len(ev.entries)
            if ev.message is not None and ev.message.role == "assistant":
                self.reply = ev.message
                self.replies.append(ev.message)
                self.deltas = []
            self.leaf_id = ev.leaf_id
        elif ev.type == "agent_end":
            self.stop_reason = ev.stop_reason
