"""Custom entries of registered kinds decoded straight from their lines: the fast path of custom entries.

A custom entry's own fields sit at the top level of its line beside the
header (see :mod:`durable_nb.session.codec`), which the strict entry types
refuse, so the general path parses such a line to a dict and builds the
registered class from it (~3.3 µs a line). Here msgspec decodes the line
into a *probe* of the kind: a subclass of its registered class that
redeclares a few fields (``id`` required, ``kind`` required to be that kind,
the class's own fields with JSON types, ``data`` under a name no line reaching
here spells, so a top-level ``"data"`` is refused with any other unknown
field) and so has the class's layout. Once a run of lines is decoded, its
probes become the class's instances in place (``__class__`` set, no copy;
their lists and dicts leave the cyclic GC's walks; then the class's own
``__post_init__``, if any), one C-speed pass over the run for each.
One object a line, as for a strict line. That gives exactly the
general path's entry, so it is done only where it does:

- the class's fields are JSON-native (``str``, ``int``, ``float``,
  ``bool``, ``None``, ``Any``, lists and string-keyed dicts of those,
  unions and string literals), so msgspec returns the JSON value itself
  (a ``float`` field is probed as ``int | float``: a ``3`` stays the
  ``int`` the general path keeps); each field is spelled as it is named,
  none is named ``meta`` (the legacy flag's name), the class refuses
  unknown fields and has the tag every custom entry has;
- the line's top-level ``"kind"`` is the kind (a class's default kind
  does not stand in for a missing one) and it has no top-level ``"data"``
  (that has rules of its own: the nested layout); the probe refuses
  anything else (a null header field, a value of another JSON type than
  declared, a field the class does not declare) and the caller takes the
  general path.

:func:`typed_custom` does one line; :func:`typed_lines` a run of lines in one
msgspec pass when their custom entries are all of one such kind (a log full
of one kind of custom entry). A property test holds both to the general
path's entries. Imports only :mod:`.entry` and :mod:`.compact`.
"""

from __future__ import annotations

import gc
import types
import typing
from collections.abc import Callable
from operator import attrgetter
from typing import Any, Literal, Union, cast

import msgspec

from ..ai import EXTRA
from .compact import become, consume, untrack_all
from .entry import CompactionEntry, CustomEntry, MessageEntry, custom_class

_KIND = b'"kind":'
_CUSTOM_MARK = b'"type":"custom"'
_BASE = ("id", "parent_id", "created_at", "kind")
_ERRORS = (msgspec.MsgspecError, ValueError, TypeError, RecursionError)


_Decoders = tuple[type[CustomEntry], Callable[[Any], Any], Callable[[Any], list[Any]], Callable[[list[Any]], None]]
_probes: dict[tuple[str, type[CustomEntry]], _Decoders | None] = {}


def typed_custom(line: bytes) -> CustomEntry | None:
    """Return the custom entry of one ``line`` decoded through its kind's probe, or ``None`` when the
    line is not certain to give the general path's entry that way (see the module docs). O(len(line))."""
    decoders = _decoders(line)
    if decoders is None:
        return None
    try:
        e = decoders[1](line)
        decoders[3]([e])
    except _ERRORS:
        return None
    return cast(CustomEntry, e) if type(e) is decoders[0] else None


def typed_lines(buf: memoryview) -> list[Any] | None:
    """Return the entries of ``buf``'s lines decoded in one msgspec pass, the custom ones through the probe
    of the first custom line's kind (entries of its class), or ``None`` when that pass refuses a
    line (a custom entry of another kind, a line the strict types refuse). Message and compaction
    entries come out as the strict decode makes them. O(size)."""
    at, data = 0, b""
    while at < buf.nbytes:  # the first custom line, looked for in windows (not a copy of the whole)
        data = bytes(buf[at : at + 65536])
        hit = data.find(_CUSTOM_MARK)
        if hit >= 0:
            data = bytes(buf[at + data.rfind(b"\n", 0, hit) + 1 :][:65536])
            break
        at += 65536 - len(_CUSTOM_MARK)
    else:
        return None
    decoders = _decoders(data[: data.find(b"\n")] if b"\n" in data else data)
    if decoders is None:
        return None
    try:
        entries = decoders[2](buf)
        decoders[3](entries)
    except _ERRORS:
        return None
    return entries


def _decoders(line: bytes) -> _Decoders | None:
    """Return the probe decoders of the kind ``line`` seems to name (the first ``"kind":`` in it: the
    probe checks the top-level one), or ``None``. Cached per kind and registered class."""
    at = line.find(_KIND)
    if at < 0:
        return None
    start = at + len(_KIND)
    while line[start : start + 1] in (b" ", b"\t"):
        start += 1
    if line[start : start + 1] != b'"':
        return None
    start += 1
    raw = line[start : line.find(b'"', start)]
    if b"\\" in raw:
        return None
    try:
        kind = raw.decode()
    except UnicodeDecodeError:
        return None
    cls = custom_class(kind)
    key = (kind, cls)
    if key not in _probes:
        _probes[key] = _make(kind, cls)
    return _probes[key]


def _make(kind: str, cls: type[CustomEntry]) -> _Decoders | None:
    """Return ``(cls, decode one line, decode lines, finish)`` of ``kind``'s probe and the other entry
    types (``finish(entries)`` makes the decoded probes ``cls``'s), ``None`` when ``cls`` is not one
    whose probe gives the general path's values (a bare :class:`CustomEntry` never is: its fields all
    go to ``data``)."""
    if cls is CustomEntry:
        return None
    config = cls.__struct_config__
    if not (config.forbid_unknown_fields and config.tag_field == "type" and config.tag == "custom"):
        return None
    try:
        fields = msgspec.structs.fields(cls)
    except (TypeError, NameError):  # an annotation that does not resolve
        return None
    types_ = {f.name: _as_json(f.type) for f in fields}
    if any(f.encode_name != f.name or f.name == "meta" or types_[f.name] is None for f in fields):
        return None
    own = [f for f in fields if f.name not in _BASE and f.name != "data"]
    spec: list[Any] = [
        ("kind", Literal[kind]),
        ("id", str),
        ("data", dict[str, Any], msgspec.field(default_factory=dict, name=EXTRA)),  # a top-level "data" is refused
    ]
    spec += [(f.name, types_[f.name], _default(f)) for f in own if types_[f.name] != f.type]
    off_gc = () if config.gc else tuple(f.name for f in own if _may_hold_container(types_[f.name]))
    check = getattr(cls, "__post_init__", None)  # run by finish, once the probe is cls's
    try:
        pt = msgspec.defstruct(
            f"_Probe_{cls.__name__}",
            spec,
            bases=(cls,),
            namespace={"__post_init__": _not_yet} if check is not None else {},  # not on the probe as it decodes
            tag="custom",
            kw_only=True,
        )
    except (TypeError, ValueError):  # a field msgspec cannot make a struct of
        return None
    if pt.__basicsize__ != cls.__basicsize__:  # msgspec added a slot: never expected
        return None
    dec = msgspec.json.Decoder(Union[MessageEntry, CompactionEntry, pt])
    finish = _finisher(cls, pt, off_gc, check)
    return cls, dec.decode, dec.decode_lines, finish  # through the union: the tag is required (alone it is not)


def _not_yet(self: Any) -> None:
    """The probe's ``__post_init__`` as msgspec decodes a line: nothing (its class's check runs in finish)."""


def _finisher(
    cls: type[CustomEntry], probe: type, off_gc: tuple[str, ...], check: Callable[[Any], None] | None
) -> Callable[[list[Any]], None]:
    """Return ``finish(entries)``: the ``probe`` instances among ``entries`` become ``cls``'s in place (the
    probe has its layout: ``__class__`` set, no copy), the lists and dicts their fields ``off_gc``
    hold leave the cyclic GC's walks (:data:`~.compact.untrack`; JSON values just decoded hold no
    cycle), then ``cls``'s own ``check`` (its ``__post_init__``, if any) runs on each, in order; each
    step one pass at C speed (~0.1 µs a line less than a ``__post_init__`` doing them)."""
    is_probe, fields = probe.__instancecheck__, [attrgetter(n) for n in off_gc]

    def finish(entries: list[Any]) -> None:
        probes = list(filter(is_probe, entries))
        become(probes, cls)
        for field in fields:  # a tracked value of a JSON-typed field is a list or a dict
            untrack_all(filter(gc.is_tracked, map(field, probes)))
        if check is not None:
            consume(map(check, probes))

    return finish


def _default(f: Any) -> Any:
    """Return the ``msgspec.field`` of a probe field redeclaring ``f`` (its default kept; required stays required)."""
    if f.required:
        return msgspec.field()
    return msgspec.field(default_factory=f.default_factory) if f.default is msgspec.NODEFAULT else f.default


def _may_hold_container(t: Any) -> bool:
    """True when a probe field of type ``t`` (from :func:`_as_json`) may decode to a list or a dict."""
    return (
        t is Any
        or t in (list, dict)
        or any(_may_hold_container(a) for a in typing.get_args(t))
        or (typing.get_origin(t) in (list, dict))
    )


_ATOMS = (str, int, bool, type(None), list, dict)
_NUMBER = Union[int, float]


def _as_json(t: Any) -> Any:
    """Return the type a probe decodes a field of type ``t`` as, so that msgspec returns the JSON value
    itself (or refuses it): ``t`` for JSON-native types, with ``float`` read as ``int | float`` (a
    ``3`` stays the ``int`` the general path keeps); ``None`` when there is none (a struct, a date...)."""
    if t is Any or t in _ATOMS:
        return t
    if t is float:
        return _NUMBER
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is Literal:
        return t if all(type(a) is str for a in args) else None
    inner = [_as_json(a) for a in args]
    if any(a is None for a in inner):
        return None
    if origin is Union or origin is types.UnionType:
        return Union[tuple(inner)]
    if origin is list and len(inner) == 1:
        return list[inner[0]]  # type: ignore[valid-type]
    if origin is dict and len(inner) == 2 and args[0] is str:
        return dict[str, inner[1]]  # type: ignore[valid-type]
    return None
