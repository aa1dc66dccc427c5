"""The codec: entries to JSON-ready dicts and back.

The layout follows the pi-go filesystem store so logs stay readable by both::

    {"type": "message", "id": ..., "parent_id": ..., "created_at": ...,
     "message": {"role": "user", "content": [{"type": "text", "text": ...}],
                 "injected": "meta", "origin": "cell:3f2a"}}
    {"type": "compaction", ..., "summary": ..., "first_kept_id": ..., "tokens_before": 1234}
    {"type": "custom", ..., "kind": "note", "data": {...}}

Keys whose value is unset (``None``, ``False``, empty) are left out. Binary
block data (images, files) is base64. An entry never carries an injection
flag of its own: a top-level ``"meta"`` key is the legacy flag (rule R13),
read by nothing and never written.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

from .. import ai
from ..errors import DurableError
from .entry import CompactionEntry, CustomEntry, Entry, MessageEntry, custom_class

_HEADER = ("id", "parent_id", "created_at")
_CUSTOM_BASE = {"id", "parent_id", "created_at", "kind", "data"}


class DecodeError(DurableError):
    """A JSON object that is not a valid entry; the message says which part."""


def encode_block(block: ai.Block) -> dict[str, Any]:
    """Return the JSON-ready dict of one content block."""
    if isinstance(block, ai.Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, ai.Reminder):
        return {"type": "reminder", "text": block.text}
    if isinstance(block, ai.ToolCall):
        return {"type": "tool_call", "id": block.id, "name": block.name, "arguments": block.arguments}
    if isinstance(block, ai.Image):
        return {"type": "image", "mime_type": block.mime_type, "data": base64.b64encode(block.data).decode("ascii")}
    if isinstance(block, ai.File):
        out = {"type": "file", "mime_type": block.mime_type, "data": base64.b64encode(block.data).decode("ascii")}
        if block.name:
            out["name"] = block.name
        return out
    raise TypeError(f"not a content block: {block!r}")


def decode_block(d: dict[str, Any]) -> ai.Block:
    """Return the content block of a dict made by :func:`encode_block`.

    Raises :class:`DecodeError` for an unknown block type or a missing key.
    """
    t = d.get("type")
    try:
        if t == "text":
            return ai.Text(d["text"])
        if t == "reminder":
            return ai.Reminder(d["text"])
        if t == "tool_call":
            return ai.ToolCall(d["id"], d["name"], d.get("arguments") or {})
        if t == "image":
            return ai.Image(base64.b64decode(d["data"]), d.get("mime_type", "image/png"))
        if t == "file":
            return ai.File(base64.b64decode(d["data"]), d.get("mime_type", "application/octet-stream"), d.get("name", ""))
    except KeyError as e:
        raise DecodeError(f"{t} block is missing {e.args[0]!r}") from None
    except (TypeError, ValueError) as e:
        raise DecodeError(f"bad {t} block: {e}") from None
    raise DecodeError(f"unknown content block type {t!r}")


def encode_message(m: ai.Message) -> dict[str, Any]:
    """Return the JSON-ready dict of a message (unset fields left out)."""
    out: dict[str, Any] = {"role": m.role, "content": [encode_block(b) for b in m.content]}
    if m.injected is not None:
        out["injected"] = m.injected.value
    if m.origin:
        out["origin"] = m.origin
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    if m.tool_name:
        out["tool_name"] = m.tool_name
    if m.is_error:
        out["is_error"] = True
    if m.usage:
        out["usage"] = m.usage
    if m.stop_reason:
        out["stop_reason"] = m.stop_reason
    if m.model:
        out["model"] = m.model
    return out


def decode_message(d: dict[str, Any]) -> ai.Message:
    """Return the message of a dict made by :func:`encode_message`.

    Raises :class:`DecodeError` for a bad role, injection or block.
    """
    if not isinstance(d, dict):
        raise DecodeError("message is not an object")
    content = d.get("content") or []
    if isinstance(content, str):  # tolerate the shorthand some tools write
        content = [{"type": "text", "text": content}]
    blocks = []
    for b in content:
        if not isinstance(b, dict):
            raise DecodeError("content block is not an object")
        blocks.append(decode_block(b))
    try:
        return ai.Message(
            role=d["role"],
            content=blocks,
            injected=d.get("injected"),
            origin=d.get("origin"),
            tool_call_id=d.get("tool_call_id"),
            tool_name=d.get("tool_name"),
            is_error=bool(d.get("is_error", False)),
            usage=d.get("usage"),
            stop_reason=d.get("stop_reason"),
            model=d.get("model"),
        )
    except KeyError:
        raise DecodeError("message is missing 'role'") from None
    except ValueError as e:
        raise DecodeError(str(e)) from None


def encode(entry: Entry) -> dict[str, Any]:
    """Return the JSON-ready dict of an entry. Raises ``TypeError`` for a non-entry."""
    head = {"id": entry.id, "parent_id": entry.parent_id, "created_at": entry.created_at}
    if isinstance(entry, MessageEntry):
        return {"type": "message", **head, "message": encode_message(entry.message)}
    if isinstance(entry, CompactionEntry):
        return {
            "type": "compaction",
            **head,
            "summary": entry.summary,
            "first_kept_id": entry.first_kept_id,
            "tokens_before": entry.tokens_before,
        }
    if isinstance(entry, CustomEntry):
        data = dict(entry.data)
        for f in dataclasses.fields(entry):
            if f.name not in _CUSTOM_BASE:
                data[f.name] = getattr(entry, f.name)
        out = {"type": "custom", **head, "kind": entry.kind}
        if data:
            out["data"] = data
        return out
    raise TypeError(f"not an entry: {entry!r}")


def decode(d: dict[str, Any]) -> Entry:
    """Return the entry of a dict made by :func:`encode`.

    A custom entry decodes into the class registered for its kind, or a bare
    :class:`CustomEntry`; fields the class does not declare go to ``data``.
    A legacy top-level ``"meta"`` key is ignored (rule R13; stores count and
    report it). Raises :class:`DecodeError` for an unknown ``type`` or a
    missing key.
    """
    if not isinstance(d, dict):
        raise DecodeError("entry is not a JSON object")
    t = d.get("type")
    try:
        if t == "message":
            return MessageEntry(
                id=d["id"], parent_id=d.get("parent_id") or "", created_at=d.get("created_at") or "",
                message=decode_message(d["message"]),
            )
        if t == "compaction":
            return CompactionEntry(
                id=d["id"], parent_id=d.get("parent_id") or "", created_at=d.get("created_at") or "",
                summary=d.get("summary", ""), first_kept_id=d.get("first_kept_id") or "",
                tokens_before=int(d.get("tokens_before") or 0),
            )
        if t == "custom":
            kind = d.get("kind") or ""
            cls = custom_class(kind)
            data = dict(d.get("data") or {})
            names = {f.name for f in dataclasses.fields(cls) if f.init} - _CUSTOM_BASE
            known = {k: data.pop(k) for k in list(data) if k in names}
            return cls(
                id=d["id"], parent_id=d.get("parent_id") or "", created_at=d.get("created_at") or "",
                kind=kind, data=data, **known,
            )
    except KeyError as e:
        raise DecodeError(f"{t} entry is missing {e.args[0]!r}") from None
    except TypeError as e:
        raise DecodeError(f"bad {t} entry: {e}") from None
    if t is None:
        raise DecodeError("entry has no 'type'")
    raise DecodeError(f"unknown entry type {t!r}")
