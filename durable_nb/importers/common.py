"""What every importer shares: reading a JSONL file strictly, safe ids, custom entries, blocks.

Each format module turns ``(line number, JSON object)`` records into
entries and returns a :class:`Loaded`. Nothing here imports from Jupyter.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from sys import intern
from typing import Any

import msgspec

from .. import ai
from ..errors import CorruptLog, DurableError
from ..session import CustomEntry, Entry, MessageEntry, encode
from ..session.entry import now
from ..session.jsonlstore import json_object, torn_tail

Record = tuple[int, dict[str, Any]]


@dataclass
class Loaded:
    """What a format module returns: a session id, entries in log order, the leaf and notes."""

    session_id: str
    entries: list[Entry]
    leaf_id: str | None = None
    warnings: list[str] = field(default_factory=list)
    lenient: bool = False  # the entries may hold what no store can keep: encode and decode them before use


class Records:
    """The JSON objects of a JSONL file with their 1-based line numbers, read line by line.

    Iterating yields ``(line number, dict)``; the file is never held whole and
    each line is decoded once (msgspec; a line msgspec refuses is tried with
    ``json`` so lenient JSON such as ``NaN`` or a lone surrogate escape reads
    as before, and a bad one raises with its line; ``lenient`` then says so). Blank lines are skipped. A
    last line without a newline that does not parse is a torn write: it is
    dropped and ``notes`` says so (line number and size). Any other line that
    is not a JSON object raises :class:`CorruptLog` naming the file and line;
    a file with no record raises :class:`DurableError` at the end of the
    iteration. Iterate once. O(size) time, O(longest line) memory.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.notes: list[str] = []
        self.lenient = False  # some line was read by json, not msgspec: check what it became before trusting it

    def __iter__(self) -> Iterator[Record]:
        decode = msgspec.json.Decoder().decode
        found = False
        with self.path.open("rb") as f:
            lineno = 0
            for lineno, line in enumerate(f, start=1):  # noqa: B007 (lineno is read after the loop)
                try:
                    obj = decode(line)
                except (ValueError, RecursionError):
                    if not line.strip():
                        continue
                    if not line.endswith(b"\n") and lineno > 1 and torn_tail(b"\n" + line):
                        self.notes.append(
                            f"{self.path.name}:{lineno}: dropped a torn last line ({len(line)} bytes, no newline, "
                            "not valid JSON)"
                        )
                        break
                    obj = json_object(self.path, lineno, line)
                    self.lenient = True
                if not isinstance(obj, dict):
                    raise CorruptLog(f"{self.path}:{lineno}: not a JSON object")
                found = True
                yield lineno, obj
        if not found:
            raise DurableError(f"{self.path}: the file holds no records (empty session log)")


def guarded(path: Path, lineno: int, fn: Callable[[], Any]) -> Any:
    """Return ``fn()``; a shape error inside it (a wrong type, a number too big for an
    integer, nesting too deep) becomes a :class:`CorruptLog` naming file and line."""
    try:
        return fn()
    except DurableError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as e:
        raise CorruptLog(f"{path}:{lineno}: unexpected record shape ({type(e).__name__}: {e})") from None
    except RecursionError:
        raise CorruptLog(f"{path}:{lineno}: JSON nested too deeply to read") from None


def share_strings(value: Any, seen: dict[str, str]) -> None:
    """Make the equal string values inside ``value`` (nested dicts and lists, changed in place)
    one object each, through ``seen`` (a reader's cache: string -> the object kept).

    An aside keeps its raw record whole, and a log repeats most of its strings record after
    record (a Codex ``turn_context``'s instructions and paths, event type names): held once,
    they cost once. Keys need nothing (msgspec already shares them). Values stay equal, so the
    entry is the same. O(nodes)."""
    if type(value) is dict:
        for k, v in value.items():
            t = type(v)
            if t is str:
                s = seen.setdefault(v, v)
                if s is not v:
                    value[k] = s  # same key: the dict does not change size while iterated
            elif t is dict or t is list:
                share_strings(v, seen)
    elif type(value) is list:
        for i, v in enumerate(value):
            t = type(v)
            if t is str:
                s = seen.setdefault(v, v)
                if s is not v:
                    value[i] = s
            elif t is dict or t is list:
                share_strings(v, seen)


def custom(kind: str, raw: dict[str, Any], id: str, parent_id: str, created_at: Any = "") -> CustomEntry:
    """Return a custom entry that keeps a source record whole (``data`` is the raw record)."""
    return CustomEntry(id=id, parent_id=parent_id or "", created_at=_at(created_at), kind=kind, data=raw)


def _at(v: Any) -> str:
    return v if isinstance(v, str) else ""


def message(id: str, parent_id: str, created_at: Any, msg: ai.Message) -> MessageEntry:
    """Return a message entry (``created_at`` that is not a string becomes ``""``)."""
    return MessageEntry(id=id, parent_id=parent_id or "", created_at=_at(created_at), message=msg)


def need_str(v: Any, what: str, empty_ok: bool = False) -> str:
    """Return ``v`` if it is a (non-empty, unless ``empty_ok``) string; else raise ``ValueError`` (a bad record)."""
    if not isinstance(v, str) or not (v or empty_ok):
        raise ValueError(f"{what} is {v!r}, not a {'' if empty_ok else 'non-empty '}string")
    return v


def text(v: Any) -> ai.Text:
    """Return a text block; raises ``ValueError`` (a bad record) when ``v`` is not a string."""
    if not isinstance(v, str):
        raise ValueError(f"text is {type(v).__name__}, not a string")
    return ai.Text(v)


def tool_call(id: Any, name: Any, arguments: Any, wrap: str = "arguments") -> ai.ToolCall:
    """Return a tool call; ``arguments`` that are not an object are kept as ``{wrap: arguments}``.

    Raises ``ValueError`` (a bad record) when ``id`` or ``name`` is not a non-empty string.
    """
    if not isinstance(id, str) or not id or not isinstance(name, str) or not name:
        raise ValueError("a tool call needs a string id and name")
    return ai.ToolCall(id, intern(name), arguments if isinstance(arguments, dict) else {wrap: arguments})


def image_block(data: Any, mime_type: Any) -> ai.Block:
    """Return an :class:`~durable_nb.ai.Image` of base64 ``data``, or a text placeholder
    naming the image when the data is missing or not base64 (the model view shows the placeholder)."""
    mt = mime_type if isinstance(mime_type, str) and mime_type else "image/png"
    if isinstance(data, str) and data:
        try:
            return ai.Image(base64.b64decode(data, validate=True), mt)
        except (binascii.Error, ValueError):
            pass
    return ai.Text(f"[image {mt}: data not stored in the log]")


def data_url_image(url: Any) -> ai.Block:
    """Return the image of a ``data:<mime>;base64,...`` URL, else a text placeholder."""
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        head, _, b64 = url.partition(";base64,")
        return image_block(b64, head[5:])
    shown = url if isinstance(url, str) and url and len(url) < 200 else "not stored in the log"
    return ai.Text(f"[image: {shown}]")


def int_usage(u: Any) -> dict[str, int] | None:
    """Return the integer fields of a usage dict (nested objects such as costs are left out)."""
    if not isinstance(u, dict):
        return None
    out = {k: v for k, v in u.items() if isinstance(v, int) and not isinstance(v, bool)}
    return out or None


def text_of(content: Any) -> str:
    """Return the text of a string or a list of ``{"type": ..., "text": ...}`` blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


def fill_times(entries: list[Entry], fallback: str) -> int:
    """Give every entry a valid ``created_at`` (an ISO 8601 time; pi-go refuses an empty one) and
    return how many were filled.

    An entry without one (a record with no timestamp, such as a Claude Code
    file snapshot) takes the time of the entry before it in log order; those
    before the first timed entry take its time; with none at all, ``fallback``
    (the file's modification time). O(n).
    """
    first = next((e.created_at for e in entries if _ISO.match(e.created_at)), fallback)
    last = first
    filled = 0
    for e in entries:
        if _ISO.match(e.created_at):
            last = e.created_at
        else:
            e.created_at = last
            filled += 1
    return filled


def mtime_iso(path: Path) -> str:
    """Return the file's modification time as an ISO 8601 UTC string (``Z``), or now when it cannot be read."""
    try:
        t = path.stat().st_mtime
    except OSError:
        return now()
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def dedupe(entries: list[Entry], notes: list[str], source: str) -> list[Entry]:
    """Return ``entries`` with repeated ids resolved: an exact repeat is dropped,
    a different entry under a taken id gets a ``~N`` suffix. One note counts each.
    An entry's ``parent_id`` becomes its parent's ``id`` object when the parent comes first
    (an equal string held once). O(n); entries are encoded only where ids collide."""
    seen: dict[str, Entry] = {}
    out: list[Entry] = []
    dropped = renamed = 0
    for e in entries:
        parent = seen.get(e.parent_id)
        if parent is not None:
            e.parent_id = parent.id
        if e.id in seen:  # rare: only then are the two encoded and compared
            if encode(seen[e.id]) == encode(e):
                dropped += 1
                continue
            n = 2
            while f"{e.id}~{n}" in seen:
                n += 1
            e.id = f"{e.id}~{n}"
            renamed += 1
        seen[e.id] = e
        out.append(e)
    if dropped:
        notes.append(f"{source}: {dropped} record(s) repeat an earlier record exactly (same id); they are shown once")
    if renamed:
        notes.append(f"{source}: {renamed} record(s) reuse an id taken by a different record; they get a '~N' suffix")
    return out


_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogate_line(data: bytes) -> int | str:
    """Return the 1-based line of the first lone surrogate escape in JSON ``data`` (a high
    half ``\\ud800``–``\\udbff`` not directly followed by a low half, or a low half
    on its own), or ``"?"`` when there is none. O(size)."""
    pending = None
    for m in _SURROGATE.finditer(data):
        high = m.group()[3:4].lower() in b"89ab"
        if pending is not None and not high and m.start() == pending.end():
            pending = None  # a proper pair
            continue
        lone = pending if pending is not None else (None if high else m)
        if lone is not None:
            return data.count(b"\n", 0, lone.start()) + 1
        pending = m
    return data.count(b"\n", 0, pending.start()) + 1 if pending is not None else "?"


def lone_surrogate_error(where: str) -> CorruptLog:
    """Return the one-line error for a log at ``where`` (``file:line``, or a session) holding an
    escaped lone surrogate: it reads, but no entry of it can be stored or copied."""
    return CorruptLog(
        f"{where}: a string holds a lone surrogate escape (half of a UTF-16 pair), which no UTF-8 log can store"
    )
