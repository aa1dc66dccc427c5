"""Message lines with fields no type declares, decoded in one msgspec pass: their fast path.

The strict entry types refuse a field they do not declare (so nothing is cut
short), and the general path keeps it in ``extra`` by parsing the line to
dicts, sorting each level's fields and converting them (~6 µs a line against
~1.7 for a strict one). A tool that adds fields usually adds the same ones to
every line, so here msgspec decodes a run of lines into *probes*: subclasses
of the real entry, message and tool call that also declare the unknown names
the run's first line has (one at most on each level, the entry's and the
message's) by redeclaring their ``extra`` field under that name, and their
other fields without ``None``. A probe has its real class's layout, so its
``__post_init__`` (msgspec calls it as it decodes) makes it the real class's
instance in place (``__class__`` set, no copy) with the unknown value in
``extra``: ~0.5 µs a line over a strict one. A line of another shape starts
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

import re
import types
import typing
from collections.abc import Callable
from typing import Any, Union, cast

import msgspec

from .. import ai
from .compact import untrack
from .entry import CompactionEntry, Entry, MessageEntry

_UNSET = msgspec.UNSET
_ERRORS = (msgspec.MsgspecError, ValueError, TypeError, RecursionError)
_json = msgspec.json.Decoder().decode
_ENTRY_KEYS = frozenset({"type", "id", "parent_id", "created_at", "message"})
_MESSAGE_FIELDS = [f for f in msgspec.structs.fields(ai.Message) if f.encode_name != ai.EXTRA]
_MESSAGE_KEYS = frozenset(f.encode_name for f in _MESSAGE_FIELDS)
_Probe = tuple[Callable[[Any], list[Any]], type]  # the decoder, the entry probe class
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


def _make_probe(top: str, inner: str) -> tuple[Callable[[Any], list[Any]], type]:
    """Return the decoder and entry probe class for lines with unknown fields ``top`` (on the entry)
    and ``inner`` (on the message), ``""`` for none: subclasses of the real entry, message and tool
    call that redeclare their ``extra`` field under the unknown name and their fields without
    ``None``, so they have the real classes' layout, and whose ``__post_init__`` (msgspec calls it
    as it decodes each) turns each into the real class's instance, the unknown value into ``extra``.
    Raises ``TypeError``/``ValueError`` for a name msgspec cannot declare."""
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
        namespace={"__post_init__": _post(top, inner)},
    )
    for probe, real in ((cls, MessageEntry), (message, ai.Message), (_ToolCallProbe, ai.ToolCall)):
        if probe.__basicsize__ != real.__basicsize__:  # msgspec added a slot: never expected
            raise TypeError("a probe must have its real class's layout")
    return msgspec.json.Decoder(Union[cls, CompactionEntry]).decode_lines, cls


def _post(top: str, inner: str) -> Callable[[Any], None]:
    """Return the entry probe's ``__post_init__``: the entry and its message become the real classes'
    instances (the same layout: no copy, ~0.1 µs each), the unknown values ``top`` and ``inner`` (if
    any) put in their ``extra`` (a dict holding a list or a dict leaves the cyclic GC's walks, as
    the content lists do). One call a line: msgspec calls it once the entry is decoded."""
    entry, message, off_gc = MessageEntry, ai.Message, untrack

    def post(self: Any) -> None:
        self.__class__ = entry
        m = self.message
        m.__class__ = message
        if top and (v := self.extra) is not _UNSET:
            self.extra = d = {top: v}
            if (type(v) is dict or type(v) is list) and off_gc is not None:
                off_gc(d)  # a JSON value just decoded, as the content lists (see .compact)
        if inner and (v := m.extra) is not _UNSET:
            m.extra = d = {inner: v}
            if (type(v) is dict or type(v) is list) and off_gc is not None:
                off_gc(d)

    return post
