"""Compare branches: what each side sent the model, what came back, and how the requests differ.

    from durable_nb import durable
    c = durable.compare(agent, "a1b2c3d4", "e5f6a7b8")   # entry ids, labels or id prefixes
    c.sides[0].messages, c.sides[0].reply, c.diffs[0].messages

A **side** is one entry's request and reply (:func:`side`). Its *reply* is
the entry itself when that is an assistant message, else the nearest
assistant message above it with only custom entries in between (a label or
note hung under a reply still names that reply); anything else (a user
message whose turn failed, a tool result cut off by ``max_steps``) has no
reply. Its *request* is the model view of the path before the reply (what
the provider received for it), or, without a reply, the model view at the
entry (what the next model call there would receive): the system prompt
apart, as the agent sends it, then the messages; a request that was sent
shows the ephemeral input its run was sent (:func:`with_ephemeral`: by
origin, since the text was never stored).

A **diff** (:func:`diff`) says what a second request changes against a
first: messages removed, added and changed, aligned with
:class:`difflib.SequenceMatcher` over :func:`request_key` (the part of a
message the provider receives: role, content, injection, tool-call fields;
not origin, usage, model, settings, timing or pi's api/provider/timestamp, which are bookkeeping), plus
the system prompt, the settings and the model, each only when they differ.
Nothing here imports Jupyter; nothing writes.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from .. import ai
from ..cost import Tally, tally
from ..errors import DurableError
from ..session import CustomEntry, Entry, MessageEntry, codec, model_view
from ..session.view import split_system

if TYPE_CHECKING:
    from .agent import Agent


@dataclass(frozen=True)
class Side:
    """One compared entry: ``ref`` as given, ``entry_id``, the request (``system``
    prompt text or ``None``, ``messages`` without it), the ``reply`` (``None``
    when the entry has none) and its entry id ``reply_id``, the reply's
    ``model``, ``settings``, ``usage``, ``created_at`` and ``total_ms`` (the
    model call's duration; ``None`` when not recorded); ``cost``: the reply's
    tokens and cost (:func:`durable_nb.cost.tally`; empty without a reply),
    ``branch_cost``: those of every reply on the path to the entry."""

    ref: str
    entry_id: str
    system: str | None
    messages: list[ai.Message]
    reply: ai.Message | None
    reply_id: str = ""
    model: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    created_at: str = ""
    total_ms: float | None = None
    cost: Tally = Tally()
    branch_cost: Tally = Tally()


@dataclass(frozen=True)
class MessageChange:
    """One difference between two requests' messages: ``op`` is ``"removed"``
    (``a`` indexes the first side's messages, ``b`` is ``None``), ``"added"``
    (``b`` indexes the second's) or ``"changed"`` (both: the message at ``a``
    became the one at ``b``)."""

    op: str
    a: int | None
    b: int | None


@dataclass(frozen=True)
class RequestDiff:
    """What request ``b`` (a side index) changes against request ``a``.

    ``messages``: the changes in order; ``same``: how many messages are equal
    on both; ``system``, ``model``: ``(a's, b's)`` when they differ, else
    ``None``; ``settings``: ``{key: (a's, b's)}`` for each setting that
    differs (``None`` for a side that does not set it)."""

    a: int
    b: int
    messages: list[MessageChange]
    same: int
    system: tuple[str | None, str | None] | None = None
    settings: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    model: tuple[str | None, str | None] | None = None

    @property
    def identical(self) -> bool:
        """True when the two requests are the same in every compared part."""
        return not (self.messages or self.system or self.settings or self.model)


@dataclass(frozen=True)
class Comparison:
    """Two or more ``sides`` and, for each side after the first, its ``diffs``
    entry against the first (``diffs[i - 1]`` compares ``sides[0]`` with ``sides[i]``)."""

    sides: list[Side]
    diffs: list[RequestDiff]


_BOOKKEEPING = {
    "origin": None,
    "usage": None,
    "stop_reason": None,
    "model": None,
    "settings": None,
    "timing": None,
    "ephemeral_context": None,  # the mark a replay reads; providers are not sent it
    "api": None,  # pi's own fields (an imported reply's): which API made it, and when
    "provider": None,
    "timestamp": None,
}


def request_key(message: ai.Message) -> bytes:
    """Return the part of ``message`` a provider receives, as canonical JSON bytes: two messages
    with equal keys were sent the same. Role, content blocks (images and files by their bytes),
    injection, tool-call id and name, error flag; not origin, usage, stop reason, model, settings,
    timing, the ephemeral-context mark, nor pi's api, provider and timestamp. O(size of the message)."""
    bare = msgspec.structs.replace(message, **_BOOKKEEPING)
    return msgspec.json.encode(codec.encode_message(bare), order="sorted")


def _reply_at(path: Sequence[Entry]) -> int:
    """Return the index of the reply of ``path[-1]`` in ``path`` (see the module docs), or ``-1``."""
    for i in range(len(path) - 1, -1, -1):
        e = path[i]
        if isinstance(e, CustomEntry):
            continue
        if isinstance(e, MessageEntry) and e.message.role == "assistant":
            return i
        return -1
    return -1


def with_ephemeral(messages: Sequence[ai.Message]) -> list[ai.Message]:
    """Return a sent request's ``messages`` with a stand-in for the ephemeral input its run was sent:
    before the run's user message (the last ordinary one), one ephemeral message per origin in its
    ``ephemeral_context``, since the text was never stored. Earlier turns' ephemeral input was not
    sent again, so it gets none. Two requests sent the same cell's input compare it as the same.
    O(len(messages))."""
    at = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user" and not messages[i].injected), -1
    )
    if at < 0 or not messages[at].ephemeral_context:
        return list(messages)
    stand_ins = [
        ai.Message(
            role="user",
            content=[ai.Text(f"(ephemeral input from {origin or 'no origin'}: sent, its text never stored)")],
            injected=ai.Injection.EPHEMERAL,
            origin=origin or None,
        )
        for origin in messages[at].ephemeral_context or ()
    ]
    return [*messages[:at], *stand_ins, *messages[at:]]


def side(path: Sequence[Entry], ref: str = "") -> Side:
    """Return the :class:`Side` of ``path[-1]``; ``path`` is its root-to-entry path.

    ``ref`` is kept as the side's name (``""``: the entry id). ``DurableError``
    for an empty path. O(len(path)).
    """
    if not path:
        raise DurableError("nothing to compare: the path is empty")
    at = _reply_at(path)
    reply_entry = path[at] if at >= 0 else None
    system, messages = split_system(model_view(path[:at] if at >= 0 else path))
    if at >= 0:  # a request that was sent: with the ephemeral input it was sent (a next call would not be)
        messages = with_ephemeral(messages)
    entry_id = path[-1].id
    branch_cost = tally(e.message for e in path if isinstance(e, MessageEntry))
    if not isinstance(reply_entry, MessageEntry):
        return Side(ref or entry_id, entry_id, system, messages, None, branch_cost=branch_cost)
    reply = reply_entry.message
    total = (reply.timing or {}).get("total_ms")
    return Side(
        ref or entry_id,
        entry_id,
        system,
        messages,
        reply,
        reply_id=reply_entry.id,
        model=reply.model,
        settings=dict(reply.settings or {}),
        usage=reply.usage,
        created_at=reply_entry.created_at,
        total_ms=float(total) if isinstance(total, (int, float)) else None,
        cost=tally([reply]),
        branch_cost=branch_cost,
    )


def diff(a: Side, b: Side, ia: int = 0, ib: int = 1) -> RequestDiff:
    """Return what ``b``'s request changes against ``a``'s (``ia``, ``ib``: their side indexes).

    Messages are aligned by :func:`request_key` with
    :class:`difflib.SequenceMatcher` (no junk heuristic). Inside a run that
    differs, messages of the same role and injection are aligned the same
    way and paired, in order, as ``changed``; the others are ``removed`` (from
    ``a``) or ``added`` (in ``b``). O(n * m) at worst in the two message
    counts, near O(n + m) when the requests share most messages.
    """
    ka = [request_key(m) for m in a.messages]
    kb = [request_key(m) for m in b.messages]
    changes: list[MessageChange] = []
    same = 0
    for op, i1, i2, j1, j2 in _opcodes(ka, kb):
        if op == "equal":
            same += i2 - i1
            continue
        # a replaced run: messages of the same role and injection pair up, in order, as changed
        kinds_a = [(m.role, m.injected) for m in a.messages[i1:i2]]
        kinds_b = [(m.role, m.injected) for m in b.messages[j1:j2]]
        for kop, x1, x2, y1, y2 in _opcodes(kinds_a, kinds_b):
            if kop == "equal":
                changes += [MessageChange("changed", i1 + x1 + k, j1 + y1 + k) for k in range(x2 - x1)]
                continue
            changes += [MessageChange("removed", i1 + x, None) for x in range(x1, x2)]
            changes += [MessageChange("added", None, j1 + y) for y in range(y1, y2)]
    settings = {
        k: (a.settings.get(k), b.settings.get(k))
        for k in [*a.settings, *(k for k in b.settings if k not in a.settings)]
        if k not in a.settings or k not in b.settings or a.settings[k] != b.settings[k]
    }
    return RequestDiff(
        ia,
        ib,
        changes,
        same,
        system=(a.system, b.system) if a.system != b.system else None,
        settings=settings,
        model=(a.model, b.model) if a.model != b.model else None,
    )


def _opcodes(a: list, b: list) -> Sequence[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def comparison(sides: Sequence[Side]) -> Comparison:
    """Return the :class:`Comparison` of ``sides``: each side after the first diffed against the first.

    ``DurableError`` with fewer than two sides. O(sum of the diffs)."""
    if len(sides) < 2:
        raise DurableError(f"compare needs two or more entries (got {len(sides)})")
    return Comparison(list(sides), [diff(sides[0], s, 0, i) for i, s in enumerate(sides[1:], 1)])


def compare(agent: Agent, *refs: str) -> Comparison:
    """Return the comparison of the entries ``refs`` name in ``agent``'s session (ids, labels or
    unique id prefixes, as :meth:`~durable_nb.durable.Agent.resolve` takes them), in that order.

    ``DurableError`` (one line) for fewer than two refs or one that names no entry.
    Writes nothing. O(sum of the paths' depths + the diffs).
    """
    if len(refs) < 2:
        raise DurableError(f"compare needs two or more entries (got {len(refs)}): give entry ids or labels")
    return comparison([side(agent.path(agent.resolve(r)), r) for r in refs])
