"""Message lines with fields no type declares, decoded in one msgspec pass: their fast path.

The strict entry types refuse a field they do not declare (so nothing is cut
short), and the general path keeps it in ``extra`` by parsing the line to
dicts, sorting each level's fields and converting them (~6 µs a line against
~1.7 for a strict one). A tool that adds fields usually adds the same ones to
every line, so here msgspec decodes a run of lines into *probes*: subclasses
of the real entry, message and tool call that also declare the unknown names
the run's first line has (one at most on each level, the entry's and the
message's) by redeclaring their ``extra`` field under that name, and their
other fields without ``None``. A probe has its real class's layout, so once
a run is decoded, C-speed passes over it make the probes the real classes'
instances in place (``__class__`` set, no copy) with the unknown values
wrapped into ``extra``: no Python call a line. A line of another shape starts
the next run (the lines before it are decoded again, once per change). That
gives exactly the general path's entries, so it is done only where it does,
and the caller takes the general path otherwise:

- the lines are message and compaction entries whose blocks have no unknown
  fields, each line's unknown fields are its run's or fewer (the probe
  refuses any other), no line spells :data:`~durable_nb.ai.EXTRA` (the
  caller checks that first), and the entry's unknown field is not ``meta``
  (pi-go's legacy flag, which readers count on the general path);
- no explicit ``null`` of a declared field (the general path keeps it in
  ``extra``): a probe's fields refuse null, a tool call's ``output`` too
  (the one block field that takes one); no lenient form (a probe field has
  its declared type).

One unknown field a level keeps their order the general path's (a line's
JSON order): two on one level could come in either order. A property test
holds this path to the general one (``tests/core/test_decode_fast.py``).
"""

from __future__ import annotations

import gc
import re
import types
import typing
from collections.abc import Callable
from itertools import repeat
from operator import attrgetter, is_
from typing import Any, Union, cast

import msgspec

from .. import ai
from .compact import become, consume, untrack_all
from .entry import CompactionEntry, Entry, MessageEntry

_UNSET = msgspec.UNSET
_ERRORS = (msgspec.MsgspecError, ValueError, TypeError, RecursionError)
_json = msgspec.json.Decoder().decode
_ENTRY_KEYS = frozenset({"type", "id", "parent_id", "created_at", "message"})
_MESSAGE_FIELDS = [f for f in msgspec.structs.fields(ai.Message) if f.encode_name != ai.EXTRA]
_MESSAGE_KEYS = frozenset(f.encode_name for f in _MESSAGE_FIELDS)
_Probe = tuple[Callable[[Any], list[Any]], Callable[[list[Any]], None]]  # decode lines, finish them
_probes: dict[tuple[str, str], Any] = {}


def extra_lines(chunk: memoryview | bytes) -> list[Entry] | None:
    """Return the entries of whole lines, message entries carrying their unknown fields in ``extra``,
    or ``None`` when the lines are not all such runs (see the module docs). A run takes the shape
    of its first line; a line the run's probe refuses starts the next run (the lines before it
    decoded again: once per change of shape). Decodes ``chunk`` in place (no copy). O(size)."""
    view = memoryview(chunk)
    out: list[Entry] = []
    while view.nbytes:
        probe = _probe(_first_line(view))
        if probe is None:
            return None
        rest = None
        try:
            got = probe[0](view)
        except _ERRORS as e:  # a line of another shape: decode the run before it, then go on from it
            cut = _line_start(view, _refused_at(e))
            if not cut:
                return None
            view, rest = view[:cut], view[cut:]
            try:
                got = probe[0](view)
            except _ERRORS:
                return None
        probe[1](got)
        out += got
        if rest is None:
            break
        view = rest
    return out


def _first_line(view: memoryview) -> bytes:
    """Return ``view``'s first line (all of it when it has no newline)."""
    size = 4096
    while True:
        head = bytes(view[:size])
        end = head.find(b"\n")
        if end >= 0 or len(head) < size:
            return head[: end + 1] if end >= 0 else head
        size *= 4


def _probe(line: bytes) -> _Probe | None:
    """Return the probe of ``line``'s shape (:func:`_shape`), made once per shape; ``None`` when it
    has none or its names cannot be declared (a quote, a control character)."""
    shape = _shape(line)
    if shape is None:
        return None
    probe = _probes.get(shape, _UNSET)
    if probe is _UNSET:
        if len(_probes) > 64:  # shapes come from logs: keep the cache bounded
            _probes.clear()
        try:
            probe = _make_probe(*shape)
        except (ValueError, TypeError):
            probe = None
        _probes[shape] = probe
    return cast("_Probe | None", probe)


_AT = re.compile(r"at `\$\[(\d+)\]")


def _refused_at(e: BaseException) -> int:
    """Return the index of the line msgspec's ``decode_lines`` refused (``0`` when it does not say)."""
    m = _AT.search(str(e))
    return int(m.group(1)) if m else 0


def _line_start(view: memoryview, k: int) -> int:
    """Return the offset of ``view``'s line ``k`` (0-based; ``0`` when it has fewer lines). A blank line
    counts, which msgspec skips: then the cut is too early, and the run before it is refused or short,
    never wrong. Reads windows that grow from 4 KB: O(the lines before it)."""
    at, size, n = 0, 4096, view.nbytes
    while k and at < n:
        block = bytes(view[at : at + size])
        i = block.find(b"\n")
        while i >= 0:
            k -= 1
            if not k:
                return at + i + 1
            i = block.find(b"\n", i + 1)
        at += len(block)
        size = min(size * 4, 1 << 18)
    return 0


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


def _as_call(self: Any) -> None:
    self.__class__ = ai.ToolCall


_ToolCallProbe = msgspec.defstruct(
    "_ToolCallProbe",
    [("output", dict[str, Any], msgspec.field(default=None))],  # refuses a null: the general path keeps it
    bases=(ai.ToolCall,),
    tag="tool_call",
    kw_only=True,
    namespace={"__post_init__": _as_call},
)
_CONTENT = list[Union[ai.Text, ai.Reminder, ai.Image, ai.File, _ToolCallProbe, ai.Thinking]]  # type: ignore[valid-type]


def _make_probe(top: str, inner: str) -> _Probe:
    """Return the decoder and the finish (:func:`_finisher`) of lines with unknown fields ``top`` (on
    the entry) and ``inner`` (on the message), ``""`` for none: the decoder makes subclasses of the
    real entry, message and tool call that redeclare their ``extra`` field under the unknown name and
    their fields without ``None``, so they have the real classes' layout; the finish turns a decoded
    run into the real classes' instances, the unknown values into ``extra``. Raises
    ``TypeError``/``ValueError`` for a name msgspec cannot declare."""
    fields: list[Any] = [
        (f.name, _strict(f.type), msgspec.field(default=f.default, name=f.encode_name))
        for f in _MESSAGE_FIELDS
        if f.default_factory is msgspec.NODEFAULT and f.name != "role"
    ]
    fields.append(("content", _CONTENT, msgspec.field(default_factory=list)))
    if inner:
        fields.append(("extra", Any, msgspec.field(default=_UNSET, name=inner)))
    message = msgspec.defstruct("_MessageProbe", fields, bases=(ai.Message,), kw_only=True)  # checked as a message
    entry_fields: list[Any] = [("message", message)]
    if top:
        entry_fields.append(("extra", Any, msgspec.field(default=_UNSET, name=top)))
    cls = msgspec.defstruct(
        "_EntryProbe",
        entry_fields,
        bases=(MessageEntry,),
        tag="message",
        kw_only=True,
    )
    for probe, real in ((cls, MessageEntry), (message, ai.Message), (_ToolCallProbe, ai.ToolCall)):
        if probe.__basicsize__ != real.__basicsize__:  # msgspec added a slot: never expected
            raise TypeError("a probe must have its real class's layout")
    return msgspec.json.Decoder(Union[cls, CompactionEntry]).decode_lines, _finisher(cls, top, inner)


def _finisher(probe: type, top: str, inner: str) -> Callable[[list[Any]], None]:
    """Return ``finish(entries)``: the entry ``probe``'s instances among ``entries`` and their messages
    become the real classes' (the same layout: ``__class__`` set, no copy), the unknown values
    ``top`` and ``inner`` (if any) wrapped into their ``extra`` dicts (a dict holding a list or a
    dict leaves the cyclic GC's walks, as the content lists do). Each step one pass at C speed over
    the run: no Python call a line (~1 µs a line less than a ``__post_init__`` doing them)."""
    is_probe, message_of = probe.__instancecheck__, attrgetter("message")

    def finish(entries: list[Any]) -> None:
        probes = list(filter(is_probe, entries))
        become(probes, MessageEntry)
        messages = list(map(message_of, probes))
        become(messages, ai.Message)
        if top:
            _wrap(probes, top)
        if inner:
            _wrap(messages, inner)

    return finish


_extra_of = attrgetter("extra")


def _wrap(objs: list[Any], name: str) -> None:
    """Set each of ``objs``' ``extra`` (the unknown value ``name`` decoded into it, or unset) to
    ``{name: value}``, leaving an unset one unset. C-speed passes; a Python step only for the unset."""
    values = list(map(_extra_of, objs))
    wrapped = list(map(dict, zip(zip(repeat(name), values))))  # {name: value} each, no Python call
    consume(map(setattr, objs, repeat("extra"), wrapped))
    if any(map(is_, values, repeat(_UNSET))):  # a line without the run's field: rare
        for obj, value in zip(objs, values):
            if value is _UNSET:
                obj.extra = _UNSET
    untrack_all(filter(gc.is_tracked, wrapped))  # tracked: the value is a list or a dict
