"""The codec: entries to JSON and back.

The layout is pi-go's (``sonnes/pi-go`` ``pkg/session/codec.go`` and
``pkg/ai/message.go``), so logs stay readable by both::

    {"type": "message", "id": ..., "parent_id": ..., "created_at": ...,
     "message": {"role": "user", "content": [{"type": "text", "text": ...}],
                 "injected": "meta", "origin": "cell:3f2a"}}
    {"type": "compaction", ..., "summary": ..., "first_kept_id": ..., "tokens_before": 1234}
    {"type": "custom", ..., "kind": "note", "body": ..., "tags": [...]}

The entry and message types are ``msgspec`` structs whose fields *are* this
layout: unset fields are left out (``None``, ``False``, ``""``, empty
content; a root's ``parent_id``), as pi-go's ``omitempty`` leaves them out,
and a field a log spells out with that empty value reads the same as one
left out (it is written back left out); binary block data is base64. A custom entry's fields sit at the top level
beside the header; a custom entry whose fields would collide with the header,
or whose only field is an object named ``data``, nests them under ``"data"``
instead, so it reads back as it was.

**Nothing read is dropped.** A field no type declares, on an entry, a
message or a block (pi-go's legacy ``"meta": true``, a newer tool's
additions, anything), is kept in that struct's ``extra`` and written back
at the same level; so is an explicit ``null`` of a declared field (pi-go
writes ``"content": null``). A copy, a fork or an upgrade therefore writes
every field it read.

One set of types, two ways in. :func:`decode_lines` is the fast path:
msgspec parses a log's bytes straight into the types, strictly (the types
refuse unknown fields, so a line that has some cannot be silently cut
short). A line it refuses is decoded on the general path, :func:`decode`,
for one JSON object: msgspec converts the dict into the same types; when
that is refused, the dict's fields are sorted at each level into declared
ones and ``extra``, the lenient forms a log may hold are made strict (a
null reads as absent, so a null ``parent_id`` makes a root; ``content``
given as a string; a float ``tokens_before``), and msgspec converts the rest. Errors name
the field. Whatever the fast path accepts decodes to the same entry on the
general path (a property test holds them to it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Union, cast

import msgspec

from .. import ai
from ..ai import EXTRA
from ..errors import DurableError, EphemeralNotStored
from .compact import collector_paused, untrack_all
from .entry import CompactionEntry, CustomEntry, Entry, MessageEntry, custom_class
from .extralines import extra_lines
from .kindlines import typed_custom, typed_lines

_CUSTOM_BASE = frozenset({"id", "parent_id", "created_at", "kind", "data"})
_CUSTOM_HEADER = frozenset({"type", "id", "parent_id", "created_at", "kind"})
_UNSET = msgspec.UNSET


class DecodeError(DurableError):
    """A JSON object that is not a valid entry; the message says which part."""


def _names(cls: Any, tagged: bool = True) -> frozenset[str]:
    """Return the JSON names a struct declares (its tag ``"type"`` included, ``extra`` not)."""
    names = {f.encode_name for f in msgspec.structs.fields(cls) if f.encode_name != EXTRA}
    return frozenset(names | {"type"} if tagged else names)


_BLOCK_CLASSES: dict[Any, Any] = {
    cls.type: cls for cls in (ai.Text, ai.Reminder, ai.Image, ai.File, ai.ToolCall, ai.Thinking)
}
_BLOCK_KEYS = {cls: _names(cls) for cls in _BLOCK_CLASSES.values()}
_MESSAGE_KEYS = _names(ai.Message, tagged=False)
_ENTRY_KEYS: dict[Any, frozenset[str]] = {MessageEntry: _names(MessageEntry), CompactionEntry: _names(CompactionEntry)}
_BLOCKS = tuple(_BLOCK_CLASSES.values())


def has_extra(x: Entry | ai.Message | ai.Block) -> bool:
    """Return whether ``x`` (an entry, a message or a block) or anything in it carries fields
    no type declares (``extra``). O(blocks)."""
    if isinstance(x, MessageEntry):
        return x.extra is not _UNSET or has_extra(x.message)
    if isinstance(x, ai.Message):
        return x.extra is not _UNSET or any(b.extra is not _UNSET for b in x.content)
    return getattr(x, "extra", _UNSET) is not _UNSET


def _merge(out: dict[str, Any], extra: Any) -> dict[str, Any]:
    """Put ``extra`` back into ``out`` (a struct's builtins) at the same level; a declared field that is
    set wins over an ``extra`` of the same name (an explicit null read for a field later set)."""
    if extra is not _UNSET:
        out.pop(EXTRA, None)
        for k, v in extra.items():
            out.setdefault(k, v)
    return out


def encode_block(block: ai.Block) -> dict[str, Any]:
    """Return the JSON-ready dict of one content block, its unknown fields included.
    Raises ``TypeError`` for a non-block."""
    if not isinstance(block, _BLOCKS):
        raise TypeError(f"not a content block: {block!r}")
    return _merge(msgspec.to_builtins(block), block.extra)


def encode_message(m: ai.Message) -> dict[str, Any]:
    """Return the JSON-ready dict of a message (unset fields left out, unknown ones written back)."""
    return _message_builtins(m, msgspec.to_builtins(m))


def _message_builtins(m: ai.Message, d: dict[str, Any]) -> dict[str, Any]:
    if m.extra is not _UNSET:
        _merge(d, m.extra)
    if any(b.extra is not _UNSET for b in m.content):
        for b, bd in zip(m.content, d.get("content", ())):
            _merge(bd, b.extra)
    return d


def encode(entry: Entry) -> dict[str, Any]:
    """Return the JSON-ready dict of an entry (the line a store writes). Raises ``TypeError`` for a non-entry.

    A custom entry's fields (the ones its class declares and those in
    ``data``) sit at the top level beside the header, unless one of them is
    named like a header key (``type``, ``id``, ``parent_id``, ``created_at``,
    ``kind``) or the only one is an object named ``data``: then all of them
    go inside ``"data"``, so they read back unchanged. Fields no type
    declares (``extra``) are written back at their level.
    """
    if isinstance(entry, CustomEntry):
        return _encode_custom(entry)
    if isinstance(entry, (MessageEntry, CompactionEntry)):
        d = msgspec.to_builtins(entry)
        if "id" not in d:  # an empty id is still written: a line without one does not read back
            d = {"type": d.pop("type"), "id": entry.id, **d}
        if isinstance(entry, MessageEntry):
            _message_builtins(entry.message, d["message"])
        elif not entry.parent_id:  # a root: no parent_id, as pi-go writes it (its own fields always are)
            del d["parent_id"]
        return _merge(d, entry.extra)
    raise TypeError(f"not an entry: {entry!r}")


def custom_fields(entry: CustomEntry) -> dict[str, Any]:
    """Return a custom entry's fields: those in ``data`` and those its class declares (the class's win).

    What a reader shows or searches for a custom entry, whatever the layout
    it was stored in. O(fields).
    """
    data = dict(entry.data)
    for name in entry.__struct_fields__:
        if name not in _CUSTOM_BASE:
            data[name] = getattr(entry, name)
    return data


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
    if isinstance(entry, MessageEntry):
        return _encoder.encode(encode(entry) if has_extra(entry) or not entry.id else entry) + b"\n"
    if isinstance(entry, CompactionEntry):
        return _encoder.encode(encode(entry)) + b"\n"
    raise TypeError(f"not an entry: {entry!r}")


def same_line(a: str | bytes, b: str | bytes) -> bool:
    """True when two JSON texts of an entry hold the same value, whatever their key order and spacing.

    What a store keeps may be re-spelled (PostgreSQL's JSONB reorders keys,
    prints ``1e+20`` as an integer); an entry read back is the same entry
    when its value is. Numbers compare by value, ``true`` is not ``1``. Bytes
    that are equal are the same without parsing. O(size)."""
    return a == b or _same(json.loads(a), json.loads(b))


def _same(x: Any, y: Any) -> bool:
    if type(x) is bool or type(y) is bool or x is None or y is None:
        return type(x) is type(y) and x == y
    if type(x) is dict:
        return type(y) is dict and x.keys() == y.keys() and all(_same(v, y[k]) for k, v in x.items())
    if type(x) is list:
        return type(y) is list and len(x) == len(y) and all(_same(v, w) for v, w in zip(x, y))
    if type(x) is str or type(y) is str:
        return x == y and type(x) is type(y)
    return x == y or (x != x and y != y)  # numbers by value; NaN is NaN


def _encode_custom(entry: CustomEntry) -> dict[str, Any]:
    fields = custom_fields(entry)
    out: dict[str, Any] = {"type": "custom", "id": entry.id}
    if entry.parent_id:
        out["parent_id"] = entry.parent_id
    out["created_at"] = entry.created_at
    out["kind"] = entry.kind
    if _CUSTOM_HEADER.isdisjoint(fields) and not _lone_data(fields):
        out.update(fields)
    else:  # read back as it is only nested (see _decode_custom)
        out["data"] = fields
    return out


_encoder = msgspec.json.Encoder()


_CLASSES: dict[Any, type[Entry]] = {"message": MessageEntry, "compaction": CompactionEntry, "custom": CustomEntry}


def decode(d: dict[str, Any], _strict: bool = True) -> Entry:
    """Return the entry of a dict made by :func:`encode`.

    msgspec converts the dict into the entry types, the same types and rules
    as the fast path (:func:`decode_lines`), so a new field decodes on both
    paths alike. A dict it refuses is read field by field (see the module
    docs): fields no type declares go to ``extra`` at their level, explicit
    nulls of declared ones too (read as absent: a null ``parent_id`` makes a
    root), and the lenient forms are made strict (``content`` as a string, a
    float ``tokens_before``). A custom entry's fields
    are every key beside the header (or the keys of a lone ``"data"``
    object, the nested layout :func:`encode` writes for colliding names); it decodes into the class registered for its
    kind, or a bare :class:`CustomEntry`, and fields the class does not
    declare go to ``data``. A legacy top-level ``"meta"`` is kept (in
    ``extra``) and read by nothing (rule R13; stores count and report it).
    Raises :class:`DecodeError` for an unknown ``type``, a missing key, or a
    value of the wrong JSON type (header fields must be strings,
    ``tokens_before`` a number), naming the field. O(size of the entry).
    """
    if type(d) is not dict:
        raise DecodeError("entry is not a JSON object")
    t = d.get("type")
    cls = _CLASSES.get(t) if type(t) is str else None
    if cls is None:
        raise DecodeError("entry has no 'type'" if t is None else f"unknown entry type {t!r}")
    if "id" not in d:
        raise DecodeError(f"{t} entry is missing 'id'")
    if cls is CustomEntry:
        return _decode_custom(d)
    try:
        return _decode_entry(d, cls, str(t), _strict)
    except UnicodeEncodeError:  # a lone surrogate: msgspec takes only strings UTF-8 can hold
        return cast(Entry, _unhide(_decode_entry(_hide(d), cls, str(t), _strict)))


def _decode_entry(d: dict[str, Any], cls: Any, t: str, strict: bool) -> Entry:
    if strict:  # field by field gives the same entry; a strict conversion first is quicker when it takes
        try:
            e = msgspec.convert(d, cls)  # strict: nothing unknown, nothing lenient
            if not has_extra(e):
                return cast(Entry, e)
        except msgspec.ValidationError:
            pass
    kept, extra = _split(d, _ENTRY_KEYS[cls])
    if any(type(kept.get(k, "")) is not str for k in ("id", "parent_id", "created_at")):
        raise DecodeError(f"{t} entry: id, parent_id and created_at must be strings")
    if cls is MessageEntry and "message" in kept:
        kept["message"] = _general_message(kept["message"])
    elif cls is CompactionEntry and type(kept.get("tokens_before")) is float:
        tokens = kept["tokens_before"]
        try:
            kept["tokens_before"] = int(tokens)
        except (ValueError, OverflowError):
            raise DecodeError(f"bad compaction entry: 'tokens_before' must be a finite number, not {tokens}") from None
    e = _convert(kept, cls, f"{t} entry")
    if extra:
        e.extra = extra
    return cast(Entry, e)


def _split(d: dict[str, Any], known: frozenset[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return ``d``'s declared fields that are set, and the rest (unknown fields, explicit nulls): its ``extra``."""
    if known.issuperset(d) and None not in d.values():  # nothing to sort out (C speed)
        return dict(d), {}
    kept: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for k, v in d.items():
        if k in known and v is not None:
            kept[k] = v
        else:
            extra[k] = v
    return kept, extra


def _general_message(d: Any) -> ai.Message:
    if type(d) is not dict:
        raise DecodeError("message is not an object")
    kept, extra = _split(d, _MESSAGE_KEYS)
    content = kept.get("content")
    if type(content) is str:  # a shorthand some tools write
        kept["content"] = [ai.Text(content)]
    elif type(content) is list:
        kept["content"] = [_general_block(b) for b in content]
    m = _convert(kept, ai.Message, "message")
    if extra:
        m.extra = extra
    return cast(ai.Message, m)


def _general_block(b: Any) -> ai.Block:
    if type(b) is not dict:
        raise DecodeError("content block is not an object")
    t = b.get("type")
    cls = _BLOCK_CLASSES.get(t) if type(t) is str else None
    if cls is None:
        raise DecodeError("content block has no 'type'" if t is None else f"unknown content block type {t!r}")
    kept, extra = _split(b, _BLOCK_KEYS[cls])
    block = _convert(kept, cls, "content block")
    if extra:
        block.extra = extra
    return cast(ai.Block, block)


def _lone_data(fields: dict[str, Any]) -> bool:
    """True when a custom entry's only field is an object named ``data``: the nested layout."""
    return len(fields) == 1 and type(fields.get("data")) is dict


def _decode_custom(d: dict[str, Any]) -> CustomEntry:
    """Return the custom entry of ``d``: its header, kind, and every other key as its fields (the keys of a
    lone ``"data"`` object, the nested layout :func:`encode` writes)."""
    head = {k: "" if d.get(k) is None else d[k] for k in ("id", "parent_id", "created_at", "kind")}
    if any(type(v) is not str for v in head.values()):
        raise DecodeError("custom entry: id, parent_id, created_at and kind must be strings")
    fields = {k: v for k, v in d.items() if k not in _CUSTOM_HEADER}
    if _lone_data(fields):
        fields = fields["data"]
    cls = custom_class(head["kind"])
    if cls is CustomEntry:
        return CustomEntry(**head, data=fields)
    data = dict(fields)  # the class's declared fields are taken out (of a copy: ``d`` is the caller's)
    known = {k: data.pop(k) for k in cls.__struct_fields__ if k not in _CUSTOM_BASE and k in data}
    return cls(**head, data=data, **known)


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


_typed = msgspec.json.Decoder(Union[MessageEntry, CompactionEntry, CustomEntry])
_decode_lines, _decode_one = _typed.decode_lines, _typed.decode
_json = msgspec.json.Decoder().decode
_EXTRA_BYTES = EXTRA.encode()


def decode_lines(buf: bytes | memoryview, one_pass: bool = False) -> list[Entry] | None:
    """Return the entries of JSON lines (one entry object per line), or ``None``
    when a line is not an entry the codec reads (bad JSON, a wrong field), so
    the caller can find and name it.

    The fast path: msgspec parses the bytes straight into the entry types,
    with no intermediate dicts (2–3× faster than parsing to dicts and
    decoding those). When some line is more than the strict layout (a field
    no type declares, a custom entry's top-level fields, a null, a lenient
    form), the lines are decoded one by one: each strictly, and the ones
    refused on the general path (:func:`decode`), so unknown fields are kept
    at the cost of only the lines that have them. Blank lines are skipped
    and an object may span lines in the one-pass decode, so a caller that
    numbers lines checks the count. An empty ``id`` gives ``None``. Custom
    entries come back as their registered class. ``one_pass=True`` gives
    ``None`` instead of decoding line by line (a caller with checks of its
    own to make first: the refusal is cheap, at the first line refused). Their content lists are
    out of the cyclic GC's walks (:data:`~durable_nb.session.compact.untrack`),
    and the collector is paused while they are built. The lines are decoded
    ~256 KB at a time; a ``parent_id`` that is the id before it, and a model or
    stop reason repeated from the message before, are then that same string
    (~125 bytes an entry less for a conversation); a run of custom entries of
    one registered kind with JSON-native fields decodes in one pass too
    (:mod:`~durable_nb.session.kindlines`). O(size).
    """
    with collector_paused():  # the entries are acyclic: nothing for the collector to find while they are built
        return _decode_all(buf, one_pass)


def _decode_all(buf: bytes | memoryview, one_pass: bool) -> list[Entry] | None:
    view = memoryview(buf)
    if view.format != "B":
        view = view.cast("B")
    raw = cast(bytes, view.obj)
    spelled = b"\x7f" in raw and _EXTRA_BYTES in raw  # a line spells ai.EXTRA: read every line field by field
    out: list[Entry] = []
    pos, prev = (0, "") if spelled else _in_chunks(view, out, one_pass)
    if prev is None:
        return None
    if pos == view.nbytes:
        return out
    rest = view[pos:]
    try:
        if spelled:
            raise ValueError
        entries = cast("list[Entry]", _decode_lines(rest))  # the chunk refused holds an object over lines
    except (msgspec.MsgspecError, ValueError, TypeError, RecursionError):
        if one_pass:
            return None
        data = bytes(rest)
        some = _line_by_line(data, strict=False) if spelled else _by_runs(data)
        if some is None:
            return None
        entries = some
    if settle(entries, prev) is None:
        return None
    out += entries
    return out


_CHUNK = 1 << 18


def _in_chunks(view: memoryview, out: list[Entry], one_pass: bool) -> tuple[int, str | None]:
    """Decode ``view``'s lines, ~256 KB of lines at a time, into ``out``, each chunk settled
    (:func:`settle`) before the next is decoded: strictly, or else in one pass with its custom entries
    decoded by their kind's class (:func:`~durable_nb.session.kindlines.typed_lines`: a chunk full of
    one kind), or else (not ``one_pass``) by runs of lines (:func:`_by_runs`). Stops at the first chunk
    none of these takes (a line that does not decode, an object over lines cut by the chunk's end)
    and returns where it starts (the end when none is refused) and the last id settled (``None``: an
    entry has no id).

    Settling a chunk frees the strings it replaces by shared ones, and the next chunk's strings
    reuse that memory: that is what makes the sharing cut the resident size (~125 bytes an entry
    of a conversation), not only the traced one. O(size)."""
    n = view.nbytes
    pos, prev = 0, ""
    while pos < n:
        end = _line_end(view, pos + _CHUNK, n)
        part = _chunk(view[pos:end], one_pass)
        if part is None:
            return pos, prev
        got = settle(part, prev)
        if got is None:
            return pos, None
        out += part
        pos, prev = end, got
    return pos, prev


def _chunk(chunk: memoryview, one_pass: bool) -> list[Entry] | None:
    part = strict_chunk(chunk)
    if part is not None:
        return part
    return typed_lines(chunk) if one_pass else lenient_chunk(chunk, False)


def strict_chunk(chunk: memoryview) -> list[Entry] | None:
    """Return the entries of whole lines in one strict msgspec pass (not settled: see :func:`settle`),
    or ``None`` when some line is more than the strict layout (or not an entry). O(size)."""
    try:
        return cast("list[Entry]", _decode_lines(chunk))
    except (msgspec.MsgspecError, ValueError, TypeError, RecursionError):
        return None


def lenient_chunk(chunk: memoryview, spelled: bool, runs_ok: Callable[[], bool] | None = None) -> list[Entry] | None:
    """Return the entries of whole lines the strict pass refused, as :func:`decode_lines` reads them
    (not settled): in one pass with their unknown fields decoded by probes
    (:func:`~durable_nb.session.extralines.extra_lines`) or their custom entries by their kind's class
    (:func:`~durable_nb.session.kindlines.typed_lines`), else by runs of lines, each line the strict
    types refuse on the general path; every line on the general path when ``spelled`` (a line spells
    :data:`~durable_nb.ai.EXTRA`). ``None`` when a line does not decode, or when ``runs_ok()`` says
    no before the runs of lines (the one-pass decoders refuse a line with the legacy ``"meta"``
    flag: only lines read by runs can hold one). O(size)."""
    part = None if spelled else extra_lines(chunk)  # first: it refuses a chunk of custom lines at its first line
    if part is None and not spelled:
        part = typed_lines(chunk)
    if part is not None:
        return part
    if runs_ok is not None and not runs_ok():
        return None
    return _line_by_line(bytes(chunk), strict=False) if spelled else _by_runs(bytes(chunk))


def _line_end(view: memoryview, at: int, n: int) -> int:
    """Return the offset just past the first newline at or after ``at`` in ``view`` (``n``: none)."""
    while at < n:
        hit = bytes(view[at : at + 4096]).find(b"\n")
        if hit >= 0:
            return at + hit + 1
        at += 4096
    return n


def settle(entries: list[Entry], prev: str) -> str | None:
    """Finish decoded entries in place: bare custom ones become their registered class, message content
    lists and custom entries' top-level lists and dicts leave the cyclic GC's walks
    (:data:`~durable_nb.session.compact.untrack`), and repeated
    strings share one object: a ``parent_id`` equal to the entry before's id (``prev`` for the first)
    is that id, a model or stop reason equal to the one before is that one (msgspec makes a string of
    each; the values do not change). Return the last entry's id (``prev`` when there are none), or
    ``None`` when an entry has an empty id. O(len(entries))."""
    model: str | None = None
    stop: str | None = None
    containers: list[Any] = []  # untracked in one pass at the end
    keep = containers.append
    for i, e in enumerate(entries):
        eid = e.id
        if not eid:
            return None
        if e.parent_id == prev:
            e.parent_id = prev
        prev = eid
        t = type(e)
        if t is MessageEntry:
            m = e.message  # type: ignore[attr-defined]
            keep(m.content)
            if m.model is not None:
                if m.model == model:
                    m.model = model
                else:
                    model = m.model
                if m.stop_reason == stop:
                    m.stop_reason = stop
                else:
                    stop = m.stop_reason
        elif t is CustomEntry:
            entries[i] = c = _registered(cast(CustomEntry, e))
            if not c.__struct_config__.gc:
                for name in c.__struct_fields__:  # JSON values just decoded: no cycle to find in them
                    v = getattr(c, name)
                    if type(v) is list or type(v) is dict:
                        keep(v)
    untrack_all(containers)
    return prev


_CUSTOM_MARK = b'"type":"custom"'


def _by_runs(data: bytes) -> list[Entry] | None:
    """Return the entries of ``data``'s lines: each line that may be a custom entry (it holds
    ``"type":"custom"``, which no string value can hold unescaped) on its own, the runs of lines between
    them in one pass each (line by line if a run is refused); ``None`` when a line does not decode.

    A custom entry's fields are top-level keys, which the strict types refuse, so a log with some keeps
    the one-pass speed for everything else. O(size)."""
    view = memoryview(data)
    out: list[Entry] = []
    pos, n = 0, len(data)
    while pos < n:
        hit = data.find(_CUSTOM_MARK, pos)
        if hit < 0:
            start = end = n
        else:
            start = max(pos, data.rfind(b"\n", pos, hit) + 1)
            end = data.find(b"\n", hit)
            end = n if end < 0 else end + 1
        if start > pos:
            try:
                out.extend(cast("list[Entry]", _decode_lines(view[pos:start])))
            except (msgspec.MsgspecError, ValueError, TypeError, RecursionError):
                run = _line_by_line(data[pos:start], strict=True)
                if run is None:
                    return None
                out.extend(run)
        if end > start:  # a custom entry with fields of its own is never strict: its kind's decoder, or general
            line = data[start:end]  # one line (a blank one holds no mark)
            e = typed_custom(line) or _general_line(line)
            if e is None:
                return None
            out.append(e)
        pos = end
    return out


def _line_by_line(data: bytes, strict: bool) -> list[Entry] | None:
    """Return the entries of ``data``'s lines, each decoded strictly (``strict``) or else on the general
    path; ``None`` when a line does not decode at all. Blank lines are skipped."""
    out: list[Entry] = []
    refused = False  # the line before had fields no type declares: this one likely has too
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        if strict and not refused:
            try:
                out.append(cast(Entry, _decode_one(line)))
                continue
            except (msgspec.MsgspecError, TypeError, RecursionError):
                pass
        e = _general_line(line, tried=strict)  # the same entry the strict decode gives, where it takes one
        if e is None:
            return None
        refused = strict and has_extra(e)
        out.append(e)
    return out


def _general_line(line: bytes, tried: bool = False) -> Entry | None:
    """Return the entry of one line on the general path (parsed to dicts, then :func:`decode`), or
    ``None`` when it does not decode; ``tried``: the strict decoder refused this line already."""
    try:
        obj = _json(line)
    except (msgspec.MsgspecError, RecursionError):
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            return None
    if tried and type(obj) is dict and obj.get("type") == "message" and "id" in obj:
        e = _message_in_one(obj)
        if e is not None:
            return e
    try:
        return decode(obj, _strict=not tried)
    except DecodeError:
        return None


def _message_in_one(d: dict[str, Any]) -> MessageEntry | None:
    """Return the message entry of ``d`` (a message entry's dict that has an ``id``) as :func:`decode`
    makes it, its fields split into declared ones and ``extra`` at each level as there (:func:`_split`)
    but converted in one msgspec call, not one per level; ``None`` (decode it) for anything else: no
    message object, content that is not a list of blocks of known types, a refused conversion (whose
    error :func:`decode` words). ~1.4 µs less a line with unknown fields."""
    kept, extra = _split(d, _ENTRY_KEYS[MessageEntry])
    m = kept.get("message")
    if type(m) is not dict:
        return None
    kept["message"], mextra = _split(m, _MESSAGE_KEYS)
    content = kept["message"].get("content")
    bextras: list[dict[str, Any]] = []
    if content is not None:
        if type(content) is not list:
            return None
        blocks = []
        for b in content:
            t = b.get("type") if type(b) is dict else None
            cls = _BLOCK_CLASSES.get(t) if type(t) is str else None
            if cls is None:
                return None
            bk, bx = _split(b, _BLOCK_KEYS[cls])
            blocks.append(bk)
            bextras.append(bx)
        kept["message"]["content"] = blocks
    try:
        e = msgspec.convert(kept, MessageEntry)
    except (msgspec.ValidationError, UnicodeEncodeError):
        return None
    if extra:
        e.extra = extra
    if mextra:
        e.message.extra = mextra
    for block, bx in zip(e.message.content, bextras):
        if bx:
            block.extra = bx
    return e
