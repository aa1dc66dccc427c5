"""Message lines with fields no type declares, decoded in one msgspec pass: their fast path.

The strict entry types refuse a field they do not declare (so nothing is cut
short), and the general path keeps it in ``extra`` by parsing the line to
dicts, sorting each level's fields and converting them (~6 µs a line against
~1.7 for a strict one). A tool that adds fields usually adds the same ones to
every line, so here msgspec decodes a run of lines into a *probe*: a message
entry and message struct generated with the declared fields plus the unknown
ones the first line has (one at most on each level, the entry's and the
message's), which a constructor compiled once makes into the real entry with
those fields in ``extra``. That gives exactly the general path's entry, so it
is done only where it does, and the caller takes the general path otherwise:

- the run's lines are message and compaction entries whose blocks have no
  unknown fields, and each line's unknown fields are the first line's or
  fewer (the probe refuses any other);
- no explicit ``null`` of a declared field (the general path keeps it in
  ``extra``): the probe's declared fields refuse null; a run whose message is
  not probed (no unknown field on it) or that has a tool call without
  ``output`` (the one block field that takes a null) is left to the general
  path if it spells ``null`` at all (one scan, ~0.4 µs a line); no lenient
  form (a probe field has its declared type), no line spells
  :data:`~durable_nb.ai.EXTRA` (the caller checks that first), and the
  entry's unknown field is not ``meta`` (pi-go's legacy flag, which readers
  count on the general path).

One unknown field a level keeps their order the general path's (a line's
JSON order): two on one level could come in either order. A property test
holds this path to the general one (``tests/core/test_decode_fast.py``).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from operator import attrgetter
from typing import Any, Union

import msgspec

from .. import ai
from .entry import CompactionEntry, Entry, MessageEntry

_UNSET = msgspec.UNSET
_ERRORS = (msgspec.MsgspecError, ValueError, TypeError, RecursionError)
_json = msgspec.json.Decoder().decode
_ENTRY_KEYS = frozenset({"type", "id", "parent_id", "created_at", "message"})
_MESSAGE_FIELDS = [f for f in msgspec.structs.fields(ai.Message) if f.encode_name != ai.EXTRA]
_MESSAGE_KEYS = frozenset(f.encode_name for f in _MESSAGE_FIELDS)
_Probe = tuple[Callable[[Any], list[Any]], type, Callable[[Any], MessageEntry]]
_probes: dict[tuple[str, str], _Probe | None] = {}


def extra_lines(chunk: memoryview | bytes) -> list[Entry] | None:
    """Return the entries of whole lines, message entries carrying the first line's unknown fields
    in ``extra``, or ``None`` when the lines are not all such a run (see the module docs). O(size)."""
    data = bytes(chunk)
    shape = _shape(data[: data.find(b"\n") + 1 or len(data)])
    if shape is None:
        return None
    probe = _probes.get(shape, _UNSET)
    if probe is _UNSET:
        if len(_probes) > 64:  # shapes come from logs: keep the cache bounded
            _probes.clear()
        try:
            probe = _make_probe(*shape)
        except (ValueError, TypeError):  # a name msgspec cannot declare (a quote, a control character)
            probe = None
        _probes[shape] = probe
    if probe is None:
        return None
    decode, cls, make = probe
    try:
        got = decode(data)
    except _ERRORS:
        return None
    if (not shape[1] or _calls_without_output(got, cls)) and b"null" in data:
        return None  # perhaps an explicit null the probe read as absent: the general path keeps it
    return [make(p) if type(p) is cls else p for p in got]


def _calls_without_output(got: list[Any], cls: Any) -> bool:
    """True when a probe's message has a tool call whose ``output`` is ``None`` (the one declared
    field of a block that takes a null, which the probe reads as absent). O(blocks)."""
    call = ai.ToolCall
    return any(type(b) is call and b.output is None for p in got if type(p) is cls for b in p.message.content)


def _shape(line: bytes) -> tuple[str, str] | None:
    """Return the unknown field names of a message entry's line (``""`` where a level has none),
    or ``None`` when it is not a message entry with one at most on each level and none on its blocks."""
    try:
        d = _json(line)
    except _ERRORS:
        return None
    m = d.get("message") if type(d) is dict and d.get("type") == "message" else None
    if type(m) is not dict or type(m.get("content", [])) is not list:
        return None
    top = [k for k in d if k not in _ENTRY_KEYS]
    inner = [k for k in m if k not in _MESSAGE_KEYS]
    if len(top) > 1 or len(inner) > 1 or not (top or inner) or ai.EXTRA in top + inner or "meta" in top:
        return None  # "meta" on the entry: the legacy flag, which the general path counts
    return (top[0] if top else "", inner[0] if inner else "")


def _strict(t: Any) -> Any:
    """Return a declared field's type without ``None`` (the probe refuses an explicit null)."""
    if typing.get_origin(t) in (Union, types.UnionType):
        rest = tuple(a for a in typing.get_args(t) if a is not type(None))
        return Union[rest] if len(rest) > 1 else rest[0]  # noqa: UP007 (a runtime union of a tuple)
    return t


def _make_probe(top: str, inner: str) -> _Probe | None:
    """Return the decoder, probe class and constructor for lines with unknown fields ``top`` (on the
    entry) and ``inner`` (on the message), ``""`` for none."""
    message: Any = ai.Message
    if inner:
        fields: list[Any] = [
            (f.name, _strict(f.type), msgspec.field(default=f.default, name=f.encode_name))
            if f.default_factory is msgspec.NODEFAULT
            else (f.name, f.type, msgspec.field(default_factory=f.default_factory, name=f.encode_name))
            for f in _MESSAGE_FIELDS
        ]
        fields[0] = ("role", _MESSAGE_FIELDS[0].type)  # required, as on the message
        fields.append(("unknown", Any, msgspec.field(default=_UNSET, name=inner)))
        message = msgspec.defstruct("_MessageProbe", fields, forbid_unknown_fields=True, gc=False)
    entry_fields: list[Any] = [("id", str, ""), ("parent_id", str, ""), ("created_at", str, ""), ("message", message)]
    if top:
        entry_fields.append(("unknown", Any, msgspec.field(default=_UNSET, name=top)))
    cls = msgspec.defstruct(
        "_EntryProbe", entry_fields, tag="message", tag_field="type", kw_only=True, forbid_unknown_fields=True, gc=False
    )
    decode = msgspec.json.Decoder(Union[cls, CompactionEntry]).decode_lines
    return decode, cls, _constructor(top, inner)


def _constructor(top: str, inner: str) -> Callable[[Any], MessageEntry]:
    """Return the function making a probe of the shape the real entry (~1 µs a line)."""
    fields = attrgetter(*(f.name for f in _MESSAGE_FIELDS))  # the message's, in order, at C speed
    message, entry = ai.Message, MessageEntry

    def make(p: Any) -> MessageEntry:
        m = p.message
        if inner:
            msg = message(*fields(m))
            if m.unknown is not _UNSET:
                msg.extra = {inner: m.unknown}
        else:
            msg = m
        e = entry(id=p.id, parent_id=p.parent_id, created_at=p.created_at, message=msg)
        if top and p.unknown is not _UNSET:
            e.extra = {top: p.unknown}
        return e

    return make
