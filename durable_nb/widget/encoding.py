"""How entries travel to the page: a tree row, a line of the tree, a view's item, an entry in full.

    row(entry)                       # the small dict the tree draws for an entry
    tree_line(agent, layout, id, e)  # a line as the page fetches it: row, depth, mark, kids, ...
    view_message(m, entry_id), view_entry(e), elide_blobs(encoded)

The shapes are declared in :mod:`durable_nb.widget.protocol` (``Row``, ``Line``). Pure
functions of the entries (and, for a line, of the agent's tree); O(size of the entry) each.
"""

from __future__ import annotations

import json
from typing import Any

from ..cost import format_cost, message_cost, tokens
from ..session import (
    CompactionEntry,
    CustomEntry,
    Entry,
    MessageEntry,
    codec,
    display_text,
    is_aside,
    is_turn_start,
    kept_from,
)
from ..session.kinds import text as kind_text
from ..session.labels import label_of
from .chips import Chips
from .layout import START, Layout

START_PREVIEW = "start of the session: the first entries branch here"
PREVIEW_CHARS = 160  # characters of text a tree row carries
DATA_CHARS = 4000  # characters of a custom entry's data shown in a view
# The row drawn above several root-level entries: the session's start, where they branch.
START_ROW: dict[str, Any] = {"id": "", "parent_id": "", "type": "start", "what": "start", "preview": START_PREVIEW}


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def elide_blobs(d: Any) -> Any:
    """Return an encoded message/entry with base64 ``data`` of images and files replaced by its size
    (a file's name, ``filename`` on the wire, is also given as ``name``, as the page reads it)."""
    if isinstance(d, dict):
        out = {k: elide_blobs(v) for k, v in d.items()}
        if d.get("type") in ("image", "file") and isinstance(d.get("data"), str):
            out["data"] = None
            out["bytes"] = len(d["data"]) * 3 // 4
        if d.get("type") == "file" and d.get("filename"):
            out["name"] = d["filename"]
        return out
    if isinstance(d, list):
        return [elide_blobs(v) for v in d]
    return d


def shown_kind(entry: Entry) -> str:
    """Return what the page labels ``entry`` as on its row and transcript card: a message's role,
    ``custom · <kind>`` (``?`` for an empty kind), ``compaction``, or the entry's type. O(1)."""
    if isinstance(entry, MessageEntry):
        return entry.message.role
    if isinstance(entry, CustomEntry):
        return f"custom · {entry.kind or '?'}"
    return "compaction" if isinstance(entry, CompactionEntry) else type(entry).__name__


def entry_title(entry: Entry) -> str:
    """Return the heading of ``entry``'s details: ``user message``, ``custom entry · <kind>``, ``compaction entry``. O(1)."""
    if isinstance(entry, MessageEntry):
        return f"{entry.message.role} message"
    if isinstance(entry, CustomEntry):
        return f"custom entry · {entry.kind}"
    return f"{'compaction' if isinstance(entry, CompactionEntry) else type(entry).__name__} entry"


def row(entry: Entry, elided: tuple[str, str, int] | None = None) -> dict[str, Any]:
    """Return the small dict the tree draws for ``entry`` (keys with empty values left out).

    Always ``id``, ``parent_id``, ``created_at``, ``type`` (``message``,
    ``compaction``, ``custom``), ``preview`` (:func:`display_text`, one
    line, at most ``PREVIEW_CHARS``) and ``what`` (:func:`shown_kind`); ``turn``
    (true for a user message that starts a turn, :func:`~durable_nb.session.is_turn_start`:
    the page marks one that no entry answers "no reply"). Messages add ``role``, ``injected``,
    ``origin``, ``tools`` (tool-call names; a message with calls and no text
    previews them as ``name({arguments})``), ``bad_arguments`` (calls whose
    arguments were not a JSON object), ``thinking`` (count of Thinking
    blocks), ``reminders`` (count of Reminder blocks), ``tool_call_id``,
    ``is_error``, ``duration_ms`` (a tool result's ``timing``); an assistant message adds
    ``tokens`` (``[input, output]`` from its usage, :func:`durable_nb.cost.tokens`; absent without
    usage) and ``cost`` (:func:`~durable_nb.cost.format_cost`: ``"$0.00045"`` or ``"cost unknown"``,
    never $0 for unknown); a custom entry adds ``kind``,
    ``aside`` (true for another tool's bookkeeping record, :func:`~durable_nb.session.is_aside`:
    drawn off the chain like an ephemeral entry, never a branch) and
    previews what its kind says it reads as (:func:`durable_nb.kinds.text`: a note's body, ``label v1 →
    <id>``, ``model → anthropic/…``), else its data as JSON; a compaction adds
    ``first_kept_id``, ``tokens_before`` and ``elides`` = ``[first, last,
    count]`` of the entries before ``first_kept_id`` on its path.
    O(size of the entry's text), plus pricing an assistant message (~0.2 ms the first time, cached).
    """
    r: dict[str, Any] = {
        "id": entry.id,
        "parent_id": entry.parent_id,
        "created_at": entry.created_at,
        "preview": _preview(display_text(entry)),
        "what": shown_kind(entry),
        "turn": is_turn_start(entry),
    }
    if isinstance(entry, MessageEntry):
        m = entry.message
        r["type"] = "message"
        r["role"] = m.role
        if m.injected is not None:
            r["injected"] = m.injected.value
        if m.origin:
            r["origin"] = m.origin
        calls = m.tool_calls()
        if calls:
            r["tools"] = [c.name for c in calls]
            r["bad_arguments"] = sum(1 for c in calls if c.malformed() is not None)
            if not r["preview"]:
                r["preview"] = _preview(" ".join(_call_text(c) for c in calls))
        thinking = sum(1 for b in m.content if b.type == "thinking")
        if thinking:
            r["thinking"] = thinking
        if m.timing and isinstance(m.timing.get("duration_ms"), (int, float)):
            r["duration_ms"] = m.timing["duration_ms"]
        reminders = sum(1 for b in m.content if b.type == "reminder")
        if reminders:
            r["reminders"] = reminders
        other = [b.type for b in m.content if b.type in ("image", "file")]
        if other:
            r["attachments"] = other
        if m.tool_call_id:
            r["tool_call_id"] = m.tool_call_id
        if m.is_error:
            r["is_error"] = True
        if m.role == "assistant":
            counted = tokens(m)
            if counted is not None:
                r["tokens"] = list(counted)
            r["cost"] = format_cost(message_cost(m))
    elif isinstance(entry, CompactionEntry):
        r["type"] = "compaction"
        r["first_kept_id"] = entry.first_kept_id
        r["tokens_before"] = entry.tokens_before
        if elided:
            r["elides"] = list(elided)
    elif isinstance(entry, CustomEntry):
        r["type"] = "custom"
        r["kind"] = entry.kind
        r["aside"] = is_aside(entry)
        data = codec.custom_fields(entry)
        own = kind_text(entry)  # a kind that says how it reads (a note's body, a pi record's point)
        if own is not None:
            r["preview"] = _preview(own)
        elif data and label_of(entry) is None:  # a label entry previews as what it does (display_text)
            r["preview"] = _preview(json.dumps(data, ensure_ascii=False, default=str))
    else:
        r["type"] = type(entry).__name__
    return {k: v for k, v in r.items() if v not in (None, "", [], False) or k in ("parent_id", "preview")}


def _call_text(c: Any) -> str:
    """Return a tool call as one line: ``name({"q": "x"})``, or ``name(<raw text>)`` for malformed arguments."""
    args = c.arguments["_raw"] if c.malformed() is not None else json.dumps(c.arguments, ensure_ascii=False)
    return f"{c.name}({args})"


def view_message(m: Any, entry_id: str) -> dict[str, Any]:
    """Return message ``m`` as a view item: encoded, blobs elided, with the ``entry_id`` it comes from."""
    d = elide_blobs(codec.encode_message(m))
    d["entry_id"] = entry_id  # "" for a message the view synthesized (summary, interrupted result)
    return d


def view_entry(e: Entry) -> dict[str, Any]:
    """Return entry ``e`` as a transcript item: ``id``, ``type``, ``text``, and what a reader sees of it.

    A custom entry whose kind says how it reads (:func:`durable_nb.kinds.text`) has that as
    ``text`` and ``readable`` true (the page shows the text, its record folded away); another
    shows its kind as ``text`` and its ``data`` as JSON (cut at :data:`DATA_CHARS`)."""
    d: dict[str, Any] = {"id": e.id, "type": row(e)["type"], "text": display_text(e), "what": shown_kind(e)}
    if isinstance(e, MessageEntry):
        m = e.message
        d["role"] = m.role
        # A reader sees what was done, too: the calls, the result's tool, error flag and
        # duration, and that the model reasoned (drawn collapsed). Never a Reminder block.
        blocks = [codec.encode_block(b) for b in m.content if b.type in ("tool_call", "thinking")]
        if blocks:
            d["blocks"] = blocks
        for key in ("tool_call_id", "tool_name", "is_error", "timing"):
            if getattr(m, key):
                d[key] = getattr(m, key)
    elif isinstance(e, CustomEntry):
        d["kind"] = e.kind
        own = kind_text(e)
        if own is not None:
            d["text"], d["readable"] = own, True
        data = codec.custom_fields(e)
        if data:
            s = json.dumps(data, ensure_ascii=False, indent=1, default=str)
            d["data"] = s if len(s) <= DATA_CHARS else s[:DATA_CHARS] + "…"
    return d


def agent_row(agent: Any, e: Entry) -> dict[str, Any]:
    """Return :func:`row` for entry ``e`` of ``agent``, with what a compaction elides.

    A compaction's ``elided`` range is the entries on its path before its
    ``first_kept_id`` (all of them if that id is not on the path).
    O(size of ``e``), plus O(depth) for a compaction.
    """
    elided = None
    if isinstance(e, CompactionEntry):
        before = agent.path(e.parent_id) if e.parent_id else []
        cut = kept_from([*before, e], len(before))
        if cut:
            elided = (before[0].id, before[cut - 1].id, cut)
    return row(e, elided)


def tree_line(
    agent: Any, layout: Layout, entry_id: str, elided: set[str] | frozenset[str], chips: Chips | None = None
) -> dict[str, Any]:
    """Return the line the page draws for ``entry_id`` of ``layout`` (``""``: the START row).

    Keys: ``row`` (:func:`agent_row`), ``depth``, ``mark``, ``rails`` (its lanes,
    :meth:`~durable_nb.widget.layout.Layout.rails`), ``kids`` (durable
    children), ``on`` (on ``agent``'s active path), ``elided`` (in ``elided``:
    the ids its latest compaction elides) and ``chips``
    (:meth:`Chips.on <durable_nb.widget.chips.Chips.on>`: its verdicts and
    annotations, usually ``[]``). O(size of the entry), plus O(depth) for a compaction.
    """
    depth, mark = layout.info(entry_id)
    if entry_id == START:
        return {
            "row": dict(START_ROW),
            "depth": 0,
            "mark": "root",
            "rails": [],
            "kids": layout.kids_of(START),
            "on": False,
            "elided": False,
            "chips": [],
        }
    line = {
        "row": agent_row(agent, agent.entry(entry_id)),
        "depth": depth,
        "mark": mark,
        "rails": layout.rails(entry_id),
        "kids": layout.kids_of(entry_id),
        "on": agent.on_path(entry_id),
        "elided": entry_id in elided,
    }
    line["chips"] = chips.on(entry_id) if chips is not None else []
    return line
