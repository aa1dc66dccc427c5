"""pi coding-agent sessions (badlogic/pi-mono): a ``session`` header line, then entries.

v1 files have no ids (each entry follows the previous one; a compaction
names its first kept entry by line index, ``firstKeptEntryIndex``); v2/v3
files are trees (``id``/``parentId``; v2 spells the custom role
``hookMessage``). Mapping:

- header → custom ``pi.session`` (the root; entries with no parent hang off it);
- ``message`` user / assistant / toolResult → message entries (thinking
  blocks → :class:`~durable_nb.ai.Thinking` blocks of the message, the
  signature kept; a redacted one keeps its encrypted data);
- ``bashExecution`` messages (``!cmd``) → a user message (custom
  ``pi.bash_execution`` when ``excludeFromContext``);
- ``custom_message`` (and custom/hookMessage roles) → a user message,
  injected ``meta`` when ``display`` is false; origin ``pi:<customType>``;
- ``branch_summary`` → a user message with origin ``pi:branch_summary``;
- ``compaction`` → a compaction entry (``firstKeptEntryId``, ``tokensBefore``);
- everything else (``model_change``, ``thinking_level_change``, ``custom``,
  ``label``, ``session_info``, unknown types) → custom ``pi.<type>`` keeping
  the raw record in ``data``.

The leaf is the last entry, as pi resumes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import ai
from ..session import CompactionEntry, Entry, safe_session_id
from .common import (
    Loaded,
    Record,
    custom,
    dedupe,
    guarded,
    image_block,
    int_usage,
    message,
    need_str,
    text,
    tool_call,
)

BRANCH_PREFIX = "Summary of a branch this conversation came back from:\n\n"


def blocks(content: Any) -> list[ai.Block]:
    """Return the text, image, tool-call and thinking blocks of pi message content (a string or a block list)."""
    if isinstance(content, str):
        return [ai.Text(content)]
    if not isinstance(content, list):
        raise ValueError(f"message content is {type(content).__name__}, not a string or a list")
    out: list[ai.Block] = []
    for b in content or []:
        t = b.get("type")
        if t == "text":
            out.append(text(b["text"]))
        elif t == "image":
            out.append(image_block(b.get("data"), b.get("mimeType")))
        elif t == "toolCall":
            out.append(tool_call(b.get("id"), b.get("name"), b.get("arguments")))
        elif t in ("thinking", "redactedThinking"):
            out.append(_thinking(b))
    return out


def _thinking(b: dict[str, Any]) -> ai.Thinking:
    """Return pi's thinking block as a Thinking: pi keeps a redacted block's encrypted data in
    ``thinkingSignature`` (with ``redacted: true``); the older ``redactedThinking`` type in ``data``."""
    sig = b.get("thinkingSignature") if isinstance(b.get("thinkingSignature"), str) else ""
    if b.get("type") == "redactedThinking" or b.get("redacted") is True:
        data = b.get("data") if isinstance(b.get("data"), str) else sig
        return ai.Thinking(redacted=data)
    return ai.Thinking(b.get("thinking") if isinstance(b.get("thinking"), str) else "", sig)


def load(path: Path, records: list[Record]) -> Loaded:
    """Return the session's entries; raises :class:`CorruptLog` naming file and line
    for a record of an unexpected shape. O(records)."""
    head_line, header = records[0]
    version = header.get("version") if isinstance(header.get("version"), int) else 1
    sid = safe_session_id(header.get("id"), path.stem)
    root_id = header.get("id") if isinstance(header.get("id"), str) and header.get("id") else "session"
    entries: list[Entry] = [custom("pi.session", header, root_id, "", header.get("timestamp"))]
    notes: list[str] = []
    body = records[1:]
    if version < 2:
        # v1: no ids. Each entry follows the previous one; ids come from line numbers.
        ids = {i: f"L{lineno}" for i, (lineno, _) in enumerate(records)}
        ids[0] = root_id
        for i, (lineno, obj) in enumerate(body, start=1):
            obj = dict(obj, id=ids[i], parentId=ids[i - 1])
            if obj.get("type") == "compaction" and isinstance(obj.get("firstKeptEntryIndex"), int):
                obj["firstKeptEntryId"] = ids.get(obj["firstKeptEntryIndex"], "")
            body[i - 1] = (lineno, obj)
    last = root_id
    for lineno, obj in body:
        out = guarded(path, lineno, lambda: _entry(obj, root_id))
        entries.extend(out)
        last = out[-1].id
    entries = dedupe(entries, notes, path.name)
    return Loaded(sid, entries, last, notes)


def _entry(obj: dict[str, Any], root_id: str) -> list[Entry]:
    t = need_str(obj.get("type"), "type")
    id = need_str(obj.get("id"), "id")
    parent = need_str(obj.get("parentId") or root_id, "parentId")
    at = obj.get("timestamp")
    if t == "message":
        return _message(obj, id, parent, at)
    if t == "custom_message":
        return [_custom_message(id, parent, at, obj.get("customType"), obj.get("content"), obj.get("display"))]
    if t == "compaction":
        return [
            CompactionEntry(
                id=id,
                parent_id=parent,
                created_at=at if isinstance(at, str) else "",
                summary=str(obj.get("summary") or ""),
                first_kept_id=str(obj.get("firstKeptEntryId") or ""),
                tokens_before=int(obj.get("tokensBefore") or 0),
            )
        ]
    if t == "branch_summary" and obj.get("summary"):
        summary = ai.Text(BRANCH_PREFIX + str(obj["summary"]))
        msg = ai.Message(role="user", content=[summary], origin="pi:branch_summary")
        return [message(id, parent, at, msg)]
    return [custom(f"pi.{t}", obj, id, parent, at)]


def _custom_message(id: str, parent: str, at: Any, ctype: Any, content: Any, display: Any) -> Entry:
    msg = ai.Message(
        role="user",
        content=blocks(content),
        origin=f"pi:{ctype or 'custom'}",
        injected=None if display else ai.Injection.META,
    )
    return message(id, parent, at, msg)


def _message(obj: dict[str, Any], id: str, parent: str, at: Any) -> list[Entry]:
    m = obj["message"]
    role = m["role"]
    if role == "user":
        return [message(id, parent, at, ai.Message(role="user", content=blocks(m.get("content"))))]
    if role == "assistant":
        out: list[Entry] = []
        content = m.get("content") or []
        msg = ai.Message(
            role="assistant",
            content=blocks(content),
            usage=int_usage(m.get("usage")),
            stop_reason=m.get("stopReason") if isinstance(m.get("stopReason"), str) else None,
            model=m.get("model") if isinstance(m.get("model"), str) else None,
        )
        out.append(message(id, parent, at, msg))
        return out
    if role == "toolResult":
        msg = ai.Message(
            role="tool_result",
            content=blocks(m.get("content")),
            is_error=bool(m.get("isError")),
            tool_call_id=need_str(m.get("toolCallId"), "toolCallId"),
            tool_name=m.get("toolName") if isinstance(m.get("toolName"), str) else None,
        )
        return [message(id, parent, at, msg)]
    if role in ("custom", "hookMessage"):
        return [_custom_message(id, parent, at, m.get("customType"), m.get("content"), m.get("display"))]
    if role == "bashExecution" and not m.get("excludeFromContext"):
        text = f"Ran `{m.get('command', '')}`\n" + (f"```\n{m['output']}\n```" if m.get("output") else "(no output)")
        if isinstance(m.get("exitCode"), int) and m["exitCode"] != 0:
            text += f"\n\nExit code {m['exitCode']}"
        return [message(id, parent, at, ai.Message(role="user", content=[ai.Text(text)], origin="pi:bash"))]
    return [custom(f"pi.{'bash_execution' if role == 'bashExecution' else 'message'}", obj, id, parent, at)]
