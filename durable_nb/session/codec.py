"""The codec: entries to JSON and back.

The layout follows the pi-go filesystem store so logs stay readable by both::

    {"type": "message", "id": ..., "parent_id": ..., "created_at": ...,
     "message": {"role": "user", "content": [{"type": "text", "text": ...}],
                 "injected": "meta", "origin": "cell:3f2a"}}
    {"type": "compaction", ..., "summary": ..., "first_kept_id": ..., "tokens_before": 1234}
    {"type": "custom", ..., "kind": "note", "data": {...}}

The entry and message types are ``msgspec`` structs whose fields *are* this
layout: a message leaves out its unset fields (``None``, ``False``, empty
content), binary block data is base64, the header is always written. An
entry never carries an injection flag of its own: a top-level ``"meta"`` key
is the legacy flag (rule R13), read by nothing and never written.

Two decoders, one result. :func:`decode_lines` is the fast path: msgspec
parses a log's bytes straight into the types, strictly. :func:`decode` is the
general path for one JSON object: lenient where the layout allows it (a
null ``parent_id``, ``content`` given as a string, a float
``tokens_before``) and precise in its errors. Whatever the fast path accepts
decodes to the same entry on the general path (a property test holds them
to it); whatever it refuses, the stores hand to the general path.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Union, cast

import msgspec

from .. import ai
from ..errors import DurableError
from .entry import CompactionEntry, CustomEntry, Entry, MessageEntry, custom_class

_CUSTOM_BASE = frozenset({"id", "parent_id", "created_at", "kind", "data"})


class DecodeError(DurableError):
    """A JSON object that is not a valid entry; the message says which part."""


def encode_block(block: ai.Block) -> dict[str, Any]:
    """Return the JSON-ready dict of one content block. Raises ``TypeError`` for a non-block."""
    if not isinstance(block, _BLOCKS):
        raise TypeError(f"not a content block: {block!r}")
    return msgspec.to_builtins(block)


_BLOCKS = (ai.Text, ai.Reminder, ai.ToolCall, ai.Image, ai.File, ai.Thinking)


def decode_block(d: dict[str, Any]) -> ai.Block:
    """Return the content block of a dict made by :func:`encode_block`.

    Raises :class:`DecodeError` for an unknown block type, a missing key or
    a value of the wrong JSON type (text must be a string, tool arguments an
    object, binary data base64).
    """
    t = d.get("type")
    try:
        if t == "text":
            x = d["text"]
            if type(x) is not str:
                raise TypeError(f"'text' must be a string, not {type(x).__name__}")
            return ai.Text(x)
        if t == "reminder":
            x = d["text"]
            if type(x) is not str:
                raise TypeError(f"'text' must be a string, not {type(x).__name__}")
            return ai.Reminder(x)
        if t == "tool_call":
            args = d.get("arguments") or {}
            if type(args) is not dict:
                raise TypeError("'arguments' must be an object")
            call_id, name = _str(d, "id", required=True), _str(d, "name", required=True)
            if call_id is None or name is None:
                raise TypeError("a tool call's 'id' and 'name' must be strings")
            return ai.ToolCall(call_id, name, args)
        if t == "thinking":  # pi-go's layout; every field may be absent
            return ai.Thinking(_str(d, "thinking") or "", _str(d, "signature") or "", _str(d, "redacted") or "")
        if t == "image":
            mime = _str(d, "mime_type")
            return ai.Image(base64.b64decode(d["data"]), "image/png" if mime is None else mime)
        if t == "file":
            mime = _str(d, "mime_type")
            return ai.File(
                base64.b64decode(d["data"]), "application/octet-stream" if mime is None else mime, _str(d, "name") or ""
            )
    except KeyError as e:
        raise DecodeError(f"{t} block is missing {e.args[0]!r}") from None
    except (TypeError, ValueError) as e:
        raise DecodeError(f"bad {t} block: {e}") from None
    raise DecodeError(f"unknown content block type {t!r}")


def _str(d: dict[str, Any], key: str, required: bool = False) -> str | None:
    """Return ``d[key]`` if it is a string, ``None`` if it is absent or null; else raise ``TypeError``.

    With ``required`` an absent key raises ``KeyError``.
    """
    v = d[key] if required else d.get(key)
    if v is None or type(v) is str:
        return v
    raise TypeError(f"{key!r} must be a string, not {type(v).__name__}")


def _dict(d: dict[str, Any], key: str) -> dict[str, Any] | None:
    v = d.get(key)
    if v is None or type(v) is dict:
        return v
    raise TypeError(f"{key!r} must be an object, not {type(v).__name__}")


def encode_message(m: ai.Message) -> dict[str, Any]:
    """Return the JSON-ready dict of a message (unset fields left out)."""
    return msgspec.to_builtins(m)


def decode_message(d: dict[str, Any]) -> ai.Message:
    """Return the message of a dict made by :func:`encode_message`.

    ``content`` may also be a plain string (a shorthand some tools write).
    Raises :class:`DecodeError` for a bad role, injection or block, or a
    field of the wrong JSON type.
    """
    if type(d) is not dict:
        raise DecodeError("message is not an object")
    content = d.get("content") or []
    if type(content) is str:  # tolerate the shorthand some tools write
        content = [{"type": "text", "text": content}]
    elif type(content) is not list:
        raise DecodeError("message content is not a list")
    blocks: list[ai.Block] = []
    for b in content:
        if type(b) is not dict:
            raise DecodeError("content block is not an object")
        if b.get("type") == "text" and type(b.get("text")) is str:  # fast path: the common block
            blocks.append(ai.Text(b["text"]))
        else:
            blocks.append(decode_block(b))
    try:
        if len(d) == 2 and "content" in d:  # role and content only
            return ai.Message(d["role"], blocks)
        usage = d.get("usage")
        if usage is not None and type(usage) is not dict:
            raise DecodeError("message usage is not an object")
        return ai.Message(
            role=d["role"],
            content=blocks,
            injected=d.get("injected"),
            origin=_str(d, "origin"),
            tool_call_id=_str(d, "tool_call_id"),
            tool_name=_str(d, "tool_name"),
            is_error=bool(d.get("is_error", False)),
            usage=usage,
            stop_reason=_str(d, "stop_reason"),
            model=_str(d, "model"),
            settings=_dict(d, "settings"),
            timing=_dict(d, "timing"),
        )
    except KeyError:
        raise DecodeError("message is missing 'role'") from None
    except (TypeError, ValueError) as e:
        raise DecodeError(f"bad message: {e}") from None


def encode(entry: Entry) -> dict[str, Any]:
    """Return the JSON-ready dict of an entry. Raises ``TypeError`` for a non-entry.

    A custom entry's own fields (those a subclass declares) go inside
    ``data``, beside the undeclared ones it carries.
    """
    if isinstance(entry, CustomEntry):
        return _encode_custom(entry)
    if isinstance(entry, (MessageEntry, CompactionEntry)):
        return msgspec.to_builtins(entry)
    raise TypeError(f"not an entry: {entry!r}")


def encode_line(entry: Entry) -> bytes:
    """Return an entry as one line of a log: compact UTF-8 JSON and ``\\n``.

    Raises ``TypeError`` for a non-entry or a value JSON cannot hold, and
    ``UnicodeEncodeError`` for a lone surrogate in a string. O(size of the entry).
    """
    if isinstance(entry, CustomEntry):
        return (json.dumps(_encode_custom(entry), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    if isinstance(entry, (MessageEntry, CompactionEntry)):
        return _encoder.encode(entry) + b"\n"
    raise TypeError(f"not an entry: {entry!r}")


def _encode_custom(entry: CustomEntry) -> dict[str, Any]:
    data = dict(entry.data)
    for name in entry.__struct_fields__:
        if name not in _CUSTOM_BASE:
            data[name] = getattr(entry, name)
    out: dict[str, Any] = {
        "type": "custom",
        "id": entry.id,
        "parent_id": entry.parent_id,
        "created_at": entry.created_at,
        "kind": entry.kind,
    }
    if data:
        out["data"] = data
    return out


_encoder = msgspec.json.Encoder()


def decode(d: dict[str, Any]) -> Entry:
    """Return the entry of a dict made by :func:`encode`.

    A custom entry decodes into the class registered for its kind, or a bare
    :class:`CustomEntry`; fields the class does not declare go to ``data``.
    A missing or null ``parent_id`` makes a root, a missing ``created_at``
    is ``""``. A legacy top-level ``"meta"`` key is ignored (rule R13;
    stores count and report it). Raises :class:`DecodeError` for an unknown
    ``type``, a missing key, or a value of the wrong JSON type (header
    fields must be strings, ``data`` an object, ``tokens_before`` a number).
    """
    if type(d) is not dict:
        raise DecodeError("entry is not a JSON object")
    t = d.get("type")
    try:
        id_ = d["id"]
        parent = d.get("parent_id") or ""
        created = d.get("created_at") or ""
        if type(id_) is not str or type(parent) is not str or type(created) is not str:
            raise DecodeError(f"{t} entry: id, parent_id and created_at must be strings")
        if t == "message":
            return MessageEntry(id=id_, parent_id=parent, created_at=created, message=decode_message(d["message"]))
        if t == "compaction":
            tokens = d.get("tokens_before") or 0
            if type(tokens) not in (int, float):
                raise DecodeError("compaction entry: 'tokens_before' must be a number")
            return CompactionEntry(
                id=id_,
                parent_id=parent,
                created_at=created,
                summary=_str(d, "summary") or "",
                first_kept_id=_str(d, "first_kept_id") or "",
                tokens_before=int(tokens),
            )
        if t == "custom":
            kind = _str(d, "kind") or ""
            data = d.get("data") or {}
            if type(data) is not dict:
                raise DecodeError("custom entry: 'data' must be an object")
            return _registered(CustomEntry(id=id_, parent_id=parent, created_at=created, kind=kind, data=dict(data)))
    except KeyError as e:
        if t in ("message", "compaction", "custom"):
            raise DecodeError(f"{t} entry is missing {e.args[0]!r}") from None
    except (TypeError, ValueError, OverflowError) as e:
        raise DecodeError(f"bad {t} entry: {e}") from None
    if t is None:
        raise DecodeError("entry has no 'type'")
    raise DecodeError(f"unknown entry type {t!r}")


def _registered(e: CustomEntry) -> CustomEntry:
    """Return ``e`` as the class registered for its kind (``e`` itself when none is):
    the class's declared fields are taken out of ``data``."""
    cls = custom_class(e.kind)
    if cls is CustomEntry:
        return e
    data = dict(e.data)
    known = {k: data.pop(k) for k in cls.__struct_fields__ if k not in _CUSTOM_BASE and k in data}
    return cls(id=e.id, parent_id=e.parent_id, created_at=e.created_at, kind=e.kind, data=data, **known)


_decode_lines = msgspec.json.Decoder(Union[MessageEntry, CompactionEntry, CustomEntry]).decode_lines


def decode_lines(buf: bytes | memoryview) -> list[Entry] | None:
    """Return the entries of JSON lines (one entry object per line), or ``None``
    when any part of them is not the strict layout.

    The fast path: msgspec parses the bytes straight into the entry types,
    with no intermediate dicts (2–3× faster than parsing to dicts and
    decoding those). It is strict where :func:`decode` is lenient (a null
    ``parent_id``, string ``content``, a float ``tokens_before``, an empty
    ``id``) and refuses anything invalid, without saying where: on ``None``
    the caller decodes line by line with :func:`decode`, which accepts the
    lenient forms and names what is wrong. Blank lines are skipped and an
    object may span lines, so a caller that numbers lines checks the count.
    Custom entries come back as their registered class. O(size).
    """
    try:
        entries = cast("list[Entry]", _decode_lines(buf))
    except (msgspec.MsgspecError, ValueError, TypeError, RecursionError):
        return None
    for i, e in enumerate(entries):
        if not e.id:
            return None
        if type(e) is CustomEntry:
            entries[i] = _registered(e)
    return entries
