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

One set of types, two ways in. :func:`decode_lines` is the fast path:
msgspec parses a log's bytes straight into the types, strictly.
:func:`decode` is the general path for one JSON object: a small normaliser
makes the lenient forms strict (a null value reads as absent, so a null
``parent_id`` makes a root; ``content`` given as a string; a float
``tokens_before``), then msgspec converts the dict into the same types, so
no field list is written twice and a new field decodes on both paths. Its
errors name the field. Whatever the fast path accepts decodes to the same
entry on the general path (a property test holds them to it); whatever it
refuses, the stores hand to the general path.
"""

from __future__ import annotations

import json
import re
from typing import Any, Union, cast

import msgspec

from .. import ai
from ..errors import DurableError, EphemeralNotStored
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
    """Return the content block of a dict made by :func:`encode_block` (nulls read as absent).

    Raises :class:`DecodeError` for an unknown block type, a missing key or
    a value of the wrong JSON type (text must be a string, tool arguments an
    object, binary data base64).
    """
    if type(d) is not dict:
        raise DecodeError("content block is not an object")
    return _convert(_absent_nulls(d), ai.Block, "content block")


def _absent_nulls(d: dict[str, Any]) -> dict[str, Any]:
    """Return ``d`` without its ``null`` values (a null means the field is absent: its default)."""
    return {k: v for k, v in d.items() if v is not None} if None in d.values() else d


def _lenient_message(d: Any) -> Any:
    """Return the JSON of a message with its lenient forms made strict: nulls dropped, ``content``
    given as a string made one text block, null blocks' fields dropped. Anything else is left for
    msgspec to accept or refuse."""
    if type(d) is not dict:
        return d
    d = _absent_nulls(d)
    content = d.get("content")
    if type(content) is str:  # a shorthand some tools write
        d = {**d, "content": [{"type": "text", "text": content}]}
    elif type(content) is list and any(type(b) is dict and None in b.values() for b in content):
        d = {**d, "content": [_absent_nulls(b) if type(b) is dict else b for b in content]}
    return d


def encode_message(m: ai.Message) -> dict[str, Any]:
    """Return the JSON-ready dict of a message (unset fields left out)."""
    return msgspec.to_builtins(m)


def decode_message(d: dict[str, Any]) -> ai.Message:
    """Return the message of a dict made by :func:`encode_message`.

    ``content`` may also be a plain string (a shorthand some tools write) and
    a null field reads as absent. Raises :class:`DecodeError` for a bad role,
    injection or block, or a field of the wrong JSON type.
    """
    if type(d) is not dict:
        raise DecodeError("message is not an object")
    return _convert(_lenient_message(d), ai.Message, "message")


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

    Every store writes through here, so this is where an ephemeral entry is
    refused: :class:`~durable_nb.errors.EphemeralNotStored` (a store never
    keeps one, rule R8; the agent never sends one). Raises ``TypeError`` for
    a non-entry or a value JSON cannot hold, and ``UnicodeEncodeError`` for a
    lone surrogate in a string. O(size of the entry).
    """
    if isinstance(entry, MessageEntry) and entry.message.injected is ai.Injection.EPHEMERAL:
        raise EphemeralNotStored(
            f"entry {entry.id!r} is ephemeral and a store never keeps an ephemeral entry (it lives for one run, "
            "in the agent's memory only): run it through the agent, or make it durable.meta(...) to keep it"
        )
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


_CLASSES: dict[Any, type[Entry]] = {"message": MessageEntry, "compaction": CompactionEntry, "custom": CustomEntry}


def decode(d: dict[str, Any]) -> Entry:
    """Return the entry of a dict made by :func:`encode`.

    msgspec converts the dict into the entry types, the same types and rules
    as the fast path (:func:`decode_lines`), so a new field decodes on both
    paths alike. A dict it refuses gets the lenient forms a log may hold made
    strict (:func:`_lenient`: a null value reads as absent, so a null
    ``parent_id`` makes a root; ``content`` as a string; a float
    ``tokens_before``) and is converted again. A custom entry decodes into the
    class registered for its kind, or a bare :class:`CustomEntry`; fields the
    class does not declare go to ``data``. A legacy top-level ``"meta"`` key is
    ignored (rule R13; stores count and report it). Raises :class:`DecodeError`
    for an unknown ``type``, a missing key, or a value of the wrong JSON type
    (header fields must be strings, ``data`` an object, ``tokens_before`` a
    number), naming the field. O(size of the entry).
    """
    if type(d) is not dict:
        raise DecodeError("entry is not a JSON object")
    t = d.get("type")
    cls = _CLASSES.get(t) if type(t) is str else None
    if cls is None:
        raise DecodeError("entry has no 'type'" if t is None else f"unknown entry type {t!r}")
    if "id" not in d:
        raise DecodeError(f"{t} entry is missing 'id'")
    try:
        e = msgspec.convert(d, cls)
    except msgspec.ValidationError:
        e = _convert(_lenient(d), cls, f"{t} entry")
    except UnicodeEncodeError:  # a lone surrogate: msgspec takes only strings UTF-8 can hold
        e = _unhide(_convert(_lenient(_hide(d)), cls, f"{t} entry"))
    return _registered(e) if type(e) is CustomEntry else e


_SURROGATE = re.compile("[\ud800-\udfff]")
_HIDDEN = re.compile("\x00surrogate:([0-9a-f]{4})\x00")


def _hide(v: Any) -> Any:
    """Return ``v`` (JSON values) with each lone surrogate written as a marker msgspec accepts."""
    if type(v) is str:
        return _SURROGATE.sub(lambda m: f"\x00surrogate:{ord(m.group()):04x}\x00", v)
    if type(v) is dict:
        return {_hide(k): _hide(x) for k, x in v.items()}
    if type(v) is list:
        return [_hide(x) for x in v]
    return v


def _unhide(v: Any) -> Any:
    """Return ``v`` (decoded entries and their parts) with :func:`_hide`'s markers turned back into surrogates."""
    if type(v) is str:
        return _HIDDEN.sub(lambda m: chr(int(m.group(1), 16)), v) if "\x00surrogate:" in v else v
    if type(v) is dict:
        return {_unhide(k): _unhide(x) for k, x in v.items()}
    if type(v) is list:
        return [_unhide(x) for x in v]
    if isinstance(v, msgspec.Struct):
        for name in v.__struct_fields__:
            setattr(v, name, _unhide(getattr(v, name)))
    return v


def _lenient(d: dict[str, Any]) -> dict[str, Any]:
    """Return an entry's JSON with the lenient forms made strict (see :func:`decode`); checks the header."""
    t = d["type"]
    d = _absent_nulls(d)
    if any(type(d.get(k, "")) is not str for k in ("id", "parent_id", "created_at")):
        raise DecodeError(f"{t} entry: id, parent_id and created_at must be strings")
    if "meta" in d:
        d = {k: v for k, v in d.items() if k != "meta"}
    if t == "message":
        if "message" in d:
            d = {**d, "message": _lenient_message(d["message"])}
    elif t == "compaction":
        tokens = d.get("tokens_before")
        if type(tokens) is float:
            try:
                d = {**d, "tokens_before": int(tokens)}
            except (ValueError, OverflowError):
                raise DecodeError(
                    f"bad compaction entry: 'tokens_before' must be a finite number, not {tokens}"
                ) from None
    return d


_MISSING = re.compile(r"Object missing required field `(\w+)`")
_EXPECTED = re.compile(r"Expected `(\w+)`, got `(\w+)`(?: - at `\$(.*)`)?")
_INVALID_TAG = re.compile(r"Invalid value '(.*)' - at `\$(.*)\.type`")


def _convert(d: Any, into: Any, what: str) -> Any:
    """Return msgspec's conversion of ``d`` into ``into``; its refusal becomes one :class:`DecodeError` line."""
    try:
        return msgspec.convert(d, into)
    except msgspec.ValidationError as e:
        raise DecodeError(f"bad {what}: {_plain(str(e))}") from None


def _plain(msg: str) -> str:
    """Return msgspec's validation message in this codec's words (the field named as in the JSON)."""
    if m := _MISSING.match(msg):
        return f"missing {m.group(1)!r}"
    if m := _EXPECTED.match(msg):
        want, got, where = m.groups()
        field = re.split(r"[.\[]", where or "")[-1].rstrip("]") or "the value"
        noun = {"str": "a string", "object": "an object", "array": "a list", "int": "a number", "float": "a number"}
        return f"{field!r} must be {noun.get(want, want)}, not {got} (at ${where or ''})"
    if m := _INVALID_TAG.match(msg):
        kind = "content block" if ".content[" in m.group(2) else "value"
        return f"unknown {kind} type {m.group(1)!r}"
    return msg


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
