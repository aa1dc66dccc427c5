"""A session as OpenTelemetry spans: which traces, turns and calls, with their ids and times.

:func:`session_spans` yields a session's spans one turn at a time (so a
writer or sender holds one turn, never the session): one trace per branch
that reached a leaf, its root span ``session <id>``, under it an
``invoke_agent <agent>`` span per turn, under that a ``chat <model>`` span
per model call and an ``execute_tool <tool>`` span per tool call.
:func:`turn_spans` gives one turn as its own trace (the live publisher).

Ids are derived from entry ids (SHA-256), so exporting again gives the same
trace and span ids. A span's end is its entry's ``created_at``, its start
that less the recorded duration (a reply's ``total_ms``, a tool result's
``duration_ms``). Pure; imports nothing from Jupyter or OpenTelemetry;
:mod:`durable_nb.otlp.wire` turns these records into OTLP.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .. import ai
from ..session import CompactionEntry, Entry, MessageEntry, ViewBuilder, is_ephemeral, is_turn_start, path
from ..session.view import view_builder
from .attributes import Attributes, MessageCache, agent_attributes, chat_attributes, clean, tool_attributes

AGENT = "durable_nb"  # gen_ai.agent.name when the caller names none


@dataclass(slots=True)
class SpanRecord:
    """One span: ids as ints (trace 128 bits, span 64; ``parent == 0``: a root), times in ns since the
    epoch, attributes as OpenTelemetry takes them; ``error`` set makes its status ERROR."""

    name: str
    trace_id: int
    span_id: int
    parent: int
    start_ns: int
    end_ns: int
    attributes: Attributes = field(default_factory=dict)
    error: str = ""


def _hash(*parts: str, size: int) -> int:
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:size], "big") or 1  # an all-zero id is invalid in OTLP


def _ns(created_at: str) -> int | None:
    try:
        t = datetime.fromisoformat(created_at)
    except (TypeError, ValueError):
        return None
    t = t if t.tzinfo is not None else t.replace(tzinfo=UTC)
    return int(t.timestamp() * 1_000_000) * 1000


def branch_ends(entries: Sequence[Entry]) -> list[str]:
    """Return the ids of the entries that end a branch, in log order: message (not ephemeral) or
    compaction entries with no such entry below them (bookkeeping entries hanging under the end,
    labels and annotations, do not make a branch). O(n)."""
    by_id = {e.id: e for e in entries}
    below: set[str] = set()
    content = [e for e in entries if _is_content(e)]
    for e in content:
        p = e.parent_id
        while p and p not in below:
            below.add(p)
            parent = by_id.get(p)
            p = parent.parent_id if parent is not None else ""
    seen: set[str] = set()
    out = []
    for e in content:
        if e.id not in below and e.id not in seen:
            seen.add(e.id)
            out.append(e.id)
    return out


def _is_content(e: Entry) -> bool:
    return (isinstance(e, MessageEntry) and not is_ephemeral(e)) or isinstance(e, CompactionEntry)


def ephemeral_inputs(entries: Sequence[Entry]) -> dict[str, list[MessageEntry]]:
    """Return ``{durable entry id: the ephemeral entries committed with it}``: each ephemeral entry of
    an in-memory log (a store never holds one) goes with the next durable entry in log order, which
    is its run's input or first reply (the last ones, with the one before). O(n)."""
    out: dict[str, list[MessageEntry]] = {}
    waiting: list[MessageEntry] = []
    last = ""
    for e in entries:
        if isinstance(e, MessageEntry) and is_ephemeral(e):
            waiting.append(e)
        elif waiting:
            out.setdefault(e.id, []).extend(waiting)
            waiting = []
        last = e.id if not (isinstance(e, MessageEntry) and is_ephemeral(e)) else last
    if waiting and last:
        out.setdefault(last, []).extend(waiting)
    return out


@dataclass
class Turn:
    """A turn of a path: its input entries (system, meta, user, compaction, bookkeeping), then its
    replies and tool results; ``start`` is the index of its first entry on the path."""

    start: int
    entries: list[Entry] = field(default_factory=list)
    answered: bool = False  # a reply or a tool result came


def turns(p: Sequence[Entry]) -> list[Turn]:
    """Split path ``p`` into turns: a new turn starts at input (a user or system message, a
    compaction) that follows a reply, or at a second ordinary user message. O(len(p))."""
    out: list[Turn] = []
    cur: Turn | None = None
    has_user = False
    for i, e in enumerate(p):
        reply = isinstance(e, MessageEntry) and e.message.role in ("assistant", "tool_result")
        opens = not reply and _is_content(e) and (cur is None or cur.answered or (has_user and is_turn_start(e)))
        if cur is None or opens:
            cur = Turn(i)
            out.append(cur)
            has_user = False
        cur.entries.append(e)
        has_user = has_user or is_turn_start(e)
        cur.answered = cur.answered or reply
    return out


class _Views:
    """The model view as the path is walked: ``base`` the durable messages; a turn with ephemeral input
    gets a copy of its own with that input where it was sent (it is seen for that turn only)."""

    def __init__(self, p: Sequence[Entry]) -> None:
        self.path = p
        self.base = ViewBuilder()
        self.turn: ViewBuilder | None = None

    def begin(self, ephemeral: bool) -> None:
        self.turn = self.base.copy() if ephemeral else None

    def add(self, i: int, e: Entry) -> None:
        if isinstance(e, CompactionEntry):
            self.base = view_builder(self.path[: i + 1])
            self.turn = self.base.copy() if self.turn is not None else None
        elif isinstance(e, MessageEntry):
            self.base.add(e.message)
            if self.turn is not None:
                self.turn.add(e.message)

    def add_ephemeral(self, e: MessageEntry) -> None:
        if self.turn is not None:
            self.turn.add(e.message)

    def request(self) -> list[ai.Message]:
        return (self.turn or self.base).messages()


@dataclass
class Context:
    """What every span of an export shares: the session, the agent's name, the tools when known."""

    session_id: str
    agent: str = AGENT
    tools: Sequence[ai.ToolSpec] | None = None
    ephemeral: dict[str, list[MessageEntry]] = field(default_factory=dict)
    cache: MessageCache = field(default_factory=MessageCache)

    def common(self) -> Attributes:
        sid = clean(self.session_id)
        return {"gen_ai.conversation.id": sid, "session.id": sid}


def _sent_input(turn: Turn, ctx: Context) -> tuple[list[tuple[int, Entry]], list[MessageEntry]]:
    """Return the turn's entries with its ephemeral input placed where it was sent (index -1 marks an
    ephemeral entry), and that ephemeral input."""
    own = [e for x in turn.entries for e in ctx.ephemeral.get(x.id, ())]
    if not own:
        return [(turn.start + k, e) for k, e in enumerate(turn.entries)], []
    ids = {e.id for e in turn.entries}
    after: dict[str, list[MessageEntry]] = {}
    for eph in own:
        after.setdefault(eph.parent_id if eph.parent_id in ids else "", []).append(eph)
    seq: list[tuple[int, Entry]] = [(-1, x) for x in after.get("", [])]
    for k, e in enumerate(turn.entries):
        seq.append((turn.start + k, e))
        seq.extend((-1, x) for x in after.get(e.id, []))
    return seq, own


def _turn_spans(turn: Turn, views: _Views, ctx: Context, trace_id: int, parent: int) -> list[SpanRecord]:
    """Return the spans of one turn (its ``invoke_agent`` span first), walking ``views`` through it."""
    trace = f"{trace_id:032x}"
    agent_id = _hash(trace, "turn", turn.entries[0].id, size=8)
    seq, own = _sent_input(turn, ctx)
    views.begin(bool(own))
    spans: list[SpanRecord] = []
    replies: list[ai.Message] = []
    calls: dict[str, tuple[ai.ToolCall, MessageEntry]] = {}
    prev = _ns(turn.entries[0].created_at) or 0
    common = ctx.common()
    for i, e in seq:
        if isinstance(e, MessageEntry) and e.message.role == "assistant":
            request = views.request()
            end = _ns(e.created_at) or prev
            took = (e.message.timing or {}).get("total_ms")
            start = end - int(took * 1e6) if isinstance(took, int | float) and took >= 0 else prev
            attrs = {**common, **chat_attributes(request, e.message, ctx.tools, ctx.cache), "durable_nb.entry.id": e.id}
            name = f"chat {clean(e.message.model or 'unknown')}"
            spans.append(SpanRecord(name, trace_id, _hash(trace, "chat", e.id, size=8), agent_id, start, end, attrs))
            spans[-1].error = clean(e.message.error or "")
            replies.append(e.message)
            calls.update({c.id: (c, e) for c in e.message.tool_calls()})
        elif isinstance(e, MessageEntry) and e.message.role == "tool_result" and not is_ephemeral(e):
            spans.append(_tool_span(e, calls.pop(e.message.tool_call_id or "", None), trace, trace_id, agent_id, prev))
            spans[-1].attributes.update(common)
        if i >= 0:
            views.add(i, e)
        elif isinstance(e, MessageEntry):
            views.add_ephemeral(e)
        prev = _ns(e.created_at) or prev
    for call, reply in calls.values():  # never answered: the model was told it was interrupted
        at = _ns(reply.created_at) or prev
        s = SpanRecord(
            f"execute_tool {clean(call.name)}",
            trace_id,
            _hash(trace, "call", reply.id, call.id, size=8),
            agent_id,
            at,
            at,
        )
        s.attributes = {**common, **tool_attributes(call, None), "durable_nb.entry.id": reply.id}
        s.error = "the tool call was interrupted before it returned a result"
        spans.append(s)
    inputs = [e.message for e in turn.entries if isinstance(e, MessageEntry) and e.message.role in ("user", "system")]
    first = _ns(turn.entries[0].created_at) or prev
    start = min([first, *(s.start_ns for s in spans)])
    end = max([prev, *(s.end_ns for s in spans)])
    attrs = {
        **common,
        **agent_attributes(ctx.agent, inputs, replies),
        "durable_nb.entry.ids": [e.id for e in turn.entries],
    }
    dropped = sum(len(e.message.ephemeral_context or ()) for e in turn.entries if isinstance(e, MessageEntry))
    if dropped > len(own):
        attrs["durable_nb.ephemeral.unknown"] = dropped - len(own)  # sent, never stored: not in the requests
    head = SpanRecord(f"invoke_agent {clean(ctx.agent)}", trace_id, agent_id, parent, start, end, attrs)
    return [head, *spans]


def _tool_span(
    e: MessageEntry, found: tuple[ai.ToolCall, MessageEntry] | None, trace: str, trace_id: int, parent: int, prev: int
) -> SpanRecord:
    m = e.message
    call = found[0] if found is not None else ai.ToolCall(id=m.tool_call_id or "", name=m.tool_name or "unknown")
    end = _ns(e.created_at) or prev
    took = (m.timing or {}).get("duration_ms")
    start = end - int(took * 1e6) if isinstance(took, int | float) and took >= 0 else prev
    s = SpanRecord(f"execute_tool {clean(call.name)}", trace_id, _hash(trace, "tool", e.id, size=8), parent, start, end)
    s.attributes = {**tool_attributes(call, m), "durable_nb.entry.id": e.id}
    if found is not None:
        s.attributes["durable_nb.call.entry.id"] = found[1].id
    if m.is_error:
        s.error = clean(m.text()[:200])
    return s


def branch_spans(p: Sequence[Entry], ctx: Context) -> Iterator[list[SpanRecord]]:
    """Yield the spans of the branch ``p`` (a root-to-leaf path) as one trace: its root ``session`` span
    first (alone), then each turn's spans. O(size of the requests): each call's request is the view so far."""
    if not p:
        return
    leaf = p[-1].id
    trace_id = _hash(ctx.session_id, "branch", leaf, size=16)
    root = _hash(f"{trace_id:032x}", "branch", leaf, size=8)
    ts = turns(p)
    views = _Views(p)
    first_user = next((e.message.text() for e in p if is_turn_start(e)), "")
    last_reply = next(
        (e.message.text() for e in reversed(p) if isinstance(e, MessageEntry) and e.message.role == "assistant"), ""
    )
    attrs: Attributes = {
        **ctx.common(),
        "openinference.span.kind": "CHAIN",
        "durable_nb.leaf.id": leaf,
        "input.value": clean(first_user),
        "output.value": clean(last_reply),
    }
    start, end = _extent(p)
    yield [SpanRecord(f"session {clean(ctx.session_id)}", trace_id, root, 0, start, end, attrs)]
    for t in ts:
        yield _turn_spans(t, views, ctx, trace_id, root)


def _extent(p: Sequence[Entry]) -> tuple[int, int]:
    """Return ``(start, end)`` in ns covering every span of path ``p``: its entries' times, each reply
    and tool result's less the time it took (``(0, 0)`` when no entry has a readable time). O(len(p))."""
    lo: int | None = None
    hi: int | None = None
    for e in p:
        t = _ns(e.created_at)
        if t is None:
            continue
        timing = (e.message.timing or {}) if isinstance(e, MessageEntry) else {}
        took = timing.get("total_ms", timing.get("duration_ms", 0))
        s = t - int(took * 1e6) if isinstance(took, int | float) and took > 0 else t
        lo = s if lo is None else min(lo, s)
        hi = t if hi is None else max(hi, t)
    return (lo or 0, hi or 0)


def session_spans(
    entries: Sequence[Entry], session_id: str, agent: str = AGENT, tools: Sequence[ai.ToolSpec] | None = None
) -> Iterator[list[SpanRecord]]:
    """Yield a session's spans, a list at a time (a branch's root, then its turns): one trace per branch
    that reached a leaf (:func:`branch_ends`), in log order. ``entries`` is a session's log (an agent's
    in-memory one also has the ephemeral input, placed in the requests as it was sent). A session with
    no message yields nothing. Cost: O(n) to find the branches, then each branch's requests."""
    by_id = {e.id: e for e in entries}
    ctx = Context(session_id, agent, tools, ephemeral_inputs(entries))
    for end in branch_ends(entries):
        yield from branch_spans(path(by_id, end), ctx)


def turn_spans(
    entries: Sequence[Entry],
    session_id: str,
    leaf_id: str,
    agent: str = AGENT,
    tools: Sequence[ai.ToolSpec] | None = None,
) -> list[SpanRecord]:
    """Return the last turn of the path to ``leaf_id`` as a trace of its own (its ``invoke_agent`` span
    the root, the trace id derived from the turn's first and last entries: fan-out variants share their
    input): what the live publisher sends when a turn ends. ``[]`` when the path is empty.
    O(depth + size of the turn's requests)."""
    by_id: dict[str, Any] = {e.id: e for e in entries}
    p = path(by_id, leaf_id)
    ts = turns(p)
    if not ts:
        return []
    last = ts[-1]
    ctx = Context(session_id, agent, tools, ephemeral_inputs(entries))
    views = _Views(p)
    base = view_builder(p[: last.start])
    views.base = base
    trace_id = _hash(
        session_id, "turn", last.entries[0].id, last.entries[-1].id, size=16
    )  # fan-out variants share a start
    return _turn_spans(last, views, ctx, trace_id, 0)
