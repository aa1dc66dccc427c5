"""pi's session format (``.pi.jsonl``): the whole tree, for pi itself and the Hugging Face Hub's trace viewer.

A ``session`` header (version 3, ``harness: "durable_nb"``), then one line per durable entry
with pi's ``id`` / ``parentId`` / ``timestamp``, in append order with the leaf (and any asides
under it) last, as pi resumes at the last entry. Mapping (``docs/exports.md`` has the table and
what is lost):

- user, assistant and tool-result messages → pi ``message`` entries (``user`` /
  ``assistant`` / ``toolResult``; text, image, thinking and tool-call blocks; usage as pi's
  ``input`` / ``output`` / ``cacheRead`` / ``cacheWrite`` / ``totalTokens``);
- a meta user message → ``custom_message`` with ``display: false`` (pi sends it, a person is not
  shown it), its origin in ``details``;
- any other message (a system prompt, a meta reply) → ``custom`` ``durable_nb.message`` holding it;
- compactions → ``compaction``; labels → ``label`` (a removed name clears its entry's label);
- every other custom entry → ``custom`` (``customType`` = its kind, ``data`` = its fields), with
  ``display: false`` unless the transcript shows it (notes).
- a pi session opened here goes back as pi wrote it: its header's fields and time, its
  ``pi.<type>`` records whole (an extension's ``custom`` one marked ``durable_nb: "pi"``), branch
  summaries as ``branch_summary``, extension messages as ``custom_message`` (``display: true``).

:mod:`durable_nb.importers.pi` reads a file whose header names this harness back into the same
entries. The writer never builds markup: every value goes through ``json.dumps``.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import ai
from ..importers.pi import BRANCH_PREFIX
from ..session import CompactionEntry, CustomEntry, Entry, MessageEntry, encode, is_ephemeral, leaf_last
from ..session.codec import encode_message
from ..session.kinds import kind_of
from ..session.labels import label_of
from .export import session_record
from .formats import Job

HARNESS = "durable_nb"
MESSAGE_TYPE = "durable_nb.message"  # customType of a message pi has no entry for (a system prompt, meta replies)
META_TYPE = "durable_nb"  # customType of a meta user message (a custom_message)
_HEADER_KEYS = ("type", "id", "parent_id", "created_at", "kind")
_STOP = {
    "end_turn": "stop",
    "stop": "stop",
    "stop_sequence": "stop",
    "tool_use": "toolUse",
    "tool_calls": "toolUse",
    "toolUse": "toolUse",
    "max_tokens": "length",
    "length": "length",
    "error": "error",
    "aborted": "aborted",
}


def write_pi(job: Job, out: Path) -> None:
    """Write ``job``'s session to ``out`` in pi's session format, one line at a time. O(entries)."""
    agent = job.agent
    made = session_record(agent, job.source)
    header = {"type": "session", "version": 3, "harness": HARNESS, "id": agent.session_id,
              "timestamp": made["created_at"], "cwd": ""}  # fmt: skip
    durable = [e for e in agent.entries() if not is_ephemeral(e)]
    root = _pi_header(durable)
    if root is not None:  # a pi session opened here: its own header, not a root entry under ours
        header = {**{k: v for k, v in root.data.items() if k not in ("version", "id")}, **header,
                  "timestamp": root.data.get("timestamp") or made["created_at"], "cwd": root.data.get("cwd", "")}  # fmt: skip
        durable = [e for e in durable if e is not root]
    targets: dict[str, str] = {}  # label name -> the entry it is on (pi clears a label by its entry)
    top = root.id if root is not None else ""
    with out.open("w", encoding="utf-8") as f:
        f.write(_line(header))
        for e in leaf_last(durable, agent.leaf_id):
            record = pi_entry(e, targets)
            if top and record["parentId"] == top:
                record["parentId"] = None
            f.write(_line(record))


def _pi_header(entries: list[Entry]) -> CustomEntry | None:
    """The root a pi session read by :mod:`durable_nb.importers.pi` has (custom ``pi.session``, its header), if any."""
    first = entries[0] if entries else None
    if isinstance(first, CustomEntry) and first.kind == "pi.session" and not first.parent_id:
        return first if isinstance(first.data, dict) and first.data.get("type") == "session" else None
    return None


def _pi_record(e: CustomEntry) -> dict[str, Any] | None:
    """The pi record a custom ``pi.<type>`` entry was read from (the importer keeps it whole), if it is one."""
    d = e.data if isinstance(e.data, dict) else {}
    if e.kind.startswith("pi.") and d.get("type") == e.kind[3:] and d.get("id") == e.id and e.kind != "pi.session":
        return d
    return None


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"


def pi_entry(e: Entry, targets: dict[str, str]) -> dict[str, Any]:
    """Return the pi record of one entry (``targets``: each label name's entry so far, updated)."""
    base = {"id": e.id, "parentId": e.parent_id or None, "timestamp": e.created_at}
    if isinstance(e, MessageEntry):
        return {**_message_record(e.message, e.created_at), **base}
    if isinstance(e, CompactionEntry):
        return {"type": "compaction", **base, "summary": e.summary, "firstKeptEntryId": e.first_kept_id or None,
                "tokensBefore": e.tokens_before}  # fmt: skip
    assert isinstance(e, CustomEntry)
    label = label_of(e)
    if label is not None:
        name, target = label
        if target:
            targets[name] = target
            return {"type": "label", **base, "targetId": target, "label": name}
        return {"type": "label", **base, "targetId": targets.pop(name, "")}  # no label: pi's way to clear one
    raw = _pi_record(e)
    if raw is not None:  # written back as pi wrote it (a model change, session info, an extension's record)
        return {**raw, **base, **({"durable_nb": "pi"} if raw.get("type") == "custom" else {})}
    fields = {k: v for k, v in encode(e).items() if k not in _HEADER_KEYS}
    kind = kind_of(e)
    shown = kind is not None and kind.shown == "transcript"
    return {"type": "custom", **base, "customType": e.kind, "data": fields, "display": shown}


def _message_record(m: ai.Message, created_at: str) -> dict[str, Any]:
    """Return ``{"type": ..., ...}`` for a message: a pi message, a meta custom_message, or a custom entry."""
    ms = _ms(m.timestamp or created_at)
    origin = m.origin or ""
    if m.injected is None and m.role == "user" and origin.startswith("pi:"):  # read from pi's own records
        if origin == "pi:branch_summary" and m.text().startswith(BRANCH_PREFIX):
            return {"type": "branch_summary", "summary": m.text()[len(BRANCH_PREFIX) :]}
        return {"type": "custom_message", "customType": origin[3:], "content": _blocks(m.content), "display": True,
                "details": {"origin": origin}}  # fmt: skip
    if m.injected is None and m.role == "user":
        return {"type": "message", "message": {"role": "user", "content": _blocks(m.content), "timestamp": ms}}
    if m.injected is None and m.role == "assistant":
        msg: dict[str, Any] = {"role": "assistant", "content": _blocks(m.content), "api": m.api or "",
                               "provider": m.provider or "", "model": m.model or "", "usage": _usage(m.usage),
                               "stopReason": _stop(m), "timestamp": ms}  # fmt: skip
        if m.error:
            msg["errorMessage"] = m.error
        return {"type": "message", "message": msg}
    if m.injected is None and m.role == "tool_result":
        return {"type": "message", "message": {"role": "toolResult", "toolCallId": m.tool_call_id or "",
                "toolName": m.tool_name or "", "content": _blocks(m.content), "isError": m.is_error,
                "timestamp": ms}}  # fmt: skip
    if m.injected is ai.Injection.META and m.role == "user":
        out: dict[str, Any] = {"type": "custom_message", "customType": META_TYPE, "content": _blocks(m.content),
                               "display": False}  # fmt: skip
        if m.origin:
            out["details"] = {"origin": m.origin}
        return out
    return {"type": "custom", "customType": MESSAGE_TYPE, "data": encode_message(m), "display": False}


def _blocks(content: list[ai.Block]) -> list[dict[str, Any]]:
    """Return pi's content blocks for ours: a reminder reads as text, a file as a line naming it."""
    out: list[dict[str, Any]] = []
    for b in content:
        if isinstance(b, (ai.Text, ai.Reminder)):
            out.append({"type": "text", "text": b.text})
        elif isinstance(b, ai.Image):
            out.append({"type": "image", "data": base64.b64encode(b.data).decode("ascii"), "mimeType": b.mime_type})
        elif isinstance(b, ai.ToolCall):
            out.append({"type": "toolCall", "id": b.id, "name": b.name, "arguments": b.arguments})
        elif isinstance(b, ai.Thinking):
            if b.redacted:
                out.append({"type": "thinking", "thinking": "", "thinkingSignature": b.redacted, "redacted": True})
            else:
                out.append({"type": "thinking", "thinking": b.text, "thinkingSignature": b.signature})
        elif isinstance(b, ai.File):
            out.append({"type": "text", "text": f"[file {b.name or b.url or b.file_id} ({b.mime_type})]"})
    return out


def _count(u: dict[str, Any], *names: str) -> int:
    for n in names:
        v = u.get(n)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return 0


def _usage(u: dict[str, Any] | None) -> dict[str, Any]:
    """Return pi's usage record of our counts (a cost pi would show is left at 0: we keep none)."""
    u = u or {}
    inp, out = _count(u, "input_tokens", "input", "prompt_tokens"), _count(u, "output_tokens", "output")
    read = _count(u, "cache_read_input_tokens", "cacheRead")
    write = _count(u, "cache_creation_input_tokens", "cacheWrite")
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {"input": inp, "output": out, "cacheRead": read, "cacheWrite": write,
            "totalTokens": inp + out + read + write, "cost": zero}  # fmt: skip


def _stop(m: ai.Message) -> str:
    if m.stop_reason in _STOP:
        return _STOP[m.stop_reason]
    return "toolUse" if m.tool_calls() else "error" if m.error else "stop"


def _ms(at: str) -> int:
    """Return an RFC 3339 time as Unix milliseconds (0 for none or one that does not parse)."""
    try:
        return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)
    except (ValueError, AttributeError):
        return 0
