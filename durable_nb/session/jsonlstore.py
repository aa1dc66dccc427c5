"""The JSONL store: one append-only file per session, beside the notebook.

``<root>/<id>.jsonl`` holds a ``session_init`` line, then one JSON object per
entry (see :mod:`durable_nb.session.codec`). Writes are whole lines, made
under an exclusive lock (:mod:`.lock`) so two kernels appending to one session never
interleave. A crash mid-write leaves at most one torn final line: load drops
it, and the next append discards its bytes first, so the log keeps loading.
"""

from __future__ import annotations

import gc
import json
import os
import secrets
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..errors import CorruptLog, SessionExists, SessionNotFound
from .codec import DecodeError, decode, decode_lines, encode_line
from .entry import Entry, now
from .lock import exclusive
from .rules import is_legacy_meta, legacy_meta_warning
from .search import Hit, scan
from .store import SessionRecord, check_session_id


class LegacyMetaWarning(UserWarning):
    """A log carries the legacy top-level ``"meta": true`` flag that nothing reads (rule R13)."""


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


class JsonlStore:
    """A store of ``<root>/<session id>.jsonl`` files.

    ``root`` is created on first write. ``fsync=True`` makes every append
    reach the disk before it returns (survives power loss, costs a flush per
    append); without it an append survives the process being killed as soon
    as it returns.
    """

    def __init__(self, root: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.root = Path(root)
        self.fsync = fsync

    def file(self, id: str) -> Path:
        """Return the log file's path for session ``id`` (checked, may not exist)."""
        return self.root / f"{check_session_id(id)}.jsonl"

    def create_session(self, id: str, parent_id: str = "", *, created_at: str = "") -> SessionRecord:
        """Create ``<id>.jsonl`` with its ``session_init`` line.

        Raises ``SessionExists`` if the file exists (atomic: two creators
        racing get one success and one ``SessionExists``). The file appears
        with its ``session_init`` line already in it (written to a hidden
        temporary file, then hard-linked into place), so a crash never
        leaves an empty or half-written log that no one could open; at
        worst a ``.<id>.jsonl.*.tmp`` file stays behind. Where the file
        system has no hard links, the file is created and then written.
        """
        f = self.file(id)
        self.root.mkdir(parents=True, exist_ok=True)
        rec = SessionRecord(id, parent_id, created_at or now())
        line = _line({"type": "session_init", "id": id, "parent_id": parent_id, "created_at": rec.created_at})
        tmp = self.root / f".{id}.jsonl.{secrets.token_hex(4)}.tmp"
        self._write_new(tmp, line)
        try:
            os.link(tmp, f)
        except FileExistsError:
            raise SessionExists(f"session {id!r} already exists in {self.root}") from None
        except OSError:  # no hard links here: create, then write
            try:
                self._write_new(f, line)
            except FileExistsError:
                raise SessionExists(f"session {id!r} already exists in {self.root}") from None
        finally:
            os.unlink(tmp)
        if self.fsync:
            dfd = os.open(self.root, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        return rec

    def _write_new(self, f: Path, line: bytes) -> None:
        """Create ``f`` (``FileExistsError`` if it exists) holding ``line``."""
        fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _write_all(fd, line)
            if self.fsync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def _read(self, id: str) -> tuple[Path, bytes]:
        f = self.file(id)
        try:
            return f, f.read_bytes()
        except FileNotFoundError:
            raise SessionNotFound(f"no session {id!r} in {self.root} (no file {f.name})") from None

    def load_session(self, id: str) -> SessionRecord:
        """Return the record from the ``session_init`` line. Reads only that line."""
        f = self.file(id)
        try:
            with open(f, "rb") as fh:
                first = fh.readline()
        except FileNotFoundError:
            raise SessionNotFound(f"no session {id!r} in {self.root} (no file {f.name})") from None
        return _record(f, first)

    def load_entries(self, id: str) -> list[Entry]:
        """Return the session's entries in append order, exactly as written.

        Errors: a first line that is not a ``session_init`` record, a line
        that is not valid JSON or not an object, an unknown entry type, a
        missing key or a value of the wrong JSON type raise
        :class:`CorruptLog` naming ``file:line`` (nothing is skipped
        silently). Recoveries: a torn final line (no newline, not valid
        JSON: a crash mid-write) is dropped and nothing before it; blank
        lines are skipped; a missing ``parent_id`` makes a root. The tree is
        not checked here: orphans, parent cycles and duplicate ids load as
        written, and :func:`~durable_nb.session.path` /
        :func:`~durable_nb.session.tree` say how they walk them. Entries with
        the legacy top-level ``"meta"`` flag load as ordinary messages and
        one :class:`LegacyMetaWarning` names the session and their count.
        Cost: one read of the file and one JSON parse, O(size); the cyclic
        garbage collector is paused meanwhile.
        """
        f, data = self._read(id)
        entries, legacy = read_entries(f, data)
        if legacy:
            warnings.warn(legacy_meta_warning(id, len(legacy)), LegacyMetaWarning, stacklevel=2)
        return entries

    def append_entries(self, id: str, entries: Sequence[Entry]) -> None:
        """Append entries as whole lines, under an exclusive lock.

        Everything is encoded before anything is written (an unencodable
        entry writes nothing). A torn tail left by a crash is discarded
        first. Raises ``SessionNotFound`` when the file does not exist.
        Cost: O(size of the new lines), independent of the log's size.
        """
        if not entries:
            self.file(id)
            return
        payload = b"".join(encode_line(e) for e in entries)
        f = self.file(id)
        try:
            fd = os.open(f, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            raise SessionNotFound(f"no session {id!r} in {self.root} (no file {f.name})") from None
        try:
            with exclusive(fd):
                _mend_tail(fd)
                _write_all(fd, payload)
                if self.fsync:
                    os.fsync(fd)
        finally:
            os.close(fd)  # releases the lock

    def list_sessions(self) -> list[SessionRecord]:
        """Return the records of every ``*.jsonl`` session in ``root``, oldest first.

        Files whose first line is not a ``session_init`` record are skipped.
        """
        out: list[SessionRecord] = []
        if not self.root.is_dir():
            return out
        for f in self.root.glob("*.jsonl"):
            try:
                with open(f, "rb") as fh:
                    out.append(_record(f, fh.readline()))
            except (CorruptLog, OSError):
                continue
        out.sort(key=lambda r: (r.created_at, r.id))
        return out

    def search(self, query: str, session: str | None = None, limit: int = 50) -> list[Hit]:
        """Return the entries whose text holds every word of ``query`` (a plain scan of the logs),
        at most ``limit``, sessions oldest first.

        ``session`` limits the search to one session (``SessionNotFound`` if
        it is missing); a log that does not load is skipped. O(size of all logs).
        """

        def logs():
            for sid in [session] if session is not None else [r.id for r in self.list_sessions()]:
                try:
                    yield sid, self.load_entries(sid)
                except CorruptLog:
                    continue

        return scan(logs(), query, limit)


def _record(f: Path, first: bytes) -> SessionRecord:
    try:
        init = json.loads(first)
    except ValueError:
        raise CorruptLog(f"{f}:1: the first line is not a session_init record") from None
    if not isinstance(init, dict) or init.get("type") != "session_init" or "id" not in init:
        raise CorruptLog(f"{f}:1: the first line is not a session_init record")
    return SessionRecord(init["id"], init.get("parent_id") or "", init.get("created_at") or "")


def session_record(f: Path, data: bytes) -> SessionRecord:
    """Return the record of a log's ``session_init`` line (the first line of ``data``).

    Raises :class:`CorruptLog` naming ``f`` when that line is not a
    ``session_init`` record. O(length of the first line).
    """
    return _record(f, data.split(b"\n", 1)[0])


def torn_tail(data: bytes) -> bytes:
    """Return a log's torn final line: what follows the last newline when it is
    not blank and does not parse as JSON (a crash mid-write); ``b""`` otherwise.

    A file of one line without a newline has no torn tail here (that line is
    its first record). Readers drop a torn tail; appends discard it first.
    O(length of the last line).
    """
    cut = data.rfind(b"\n")
    last = data[cut + 1 :]
    if cut < 0 or not last.strip():
        return b""
    try:
        json.loads(last)
    except ValueError:
        return last
    return b""


def torn_note(f: Path, data: bytes) -> str | None:
    """Return the one warning for a log whose torn final line is dropped on load, or ``None`` when it has none."""
    last = torn_tail(data)
    if not last:
        return None
    lineno = data.count(b"\n") + 1
    return f"{f.name}:{lineno}: dropped a torn last line ({len(last)} bytes, no newline, not valid JSON)"


def read_entries(f: Path, data: bytes) -> tuple[list[Entry], list[int]]:
    """Return the entries of a log's bytes and the indices (into that list)
    of the entries that carry the legacy top-level ``"meta"`` flag.

    ``f`` only names the file in errors. Raises :class:`CorruptLog` naming
    file and line for a bad line or an undecodable entry (a torn final line
    is dropped, see :func:`parse_lines`). O(size); the cyclic garbage
    collector is paused meanwhile.

    A well-formed log (ends with a newline, nothing lenient or legacy in
    it) is decoded in one pass straight into entries (:func:`_strict_entries`);
    anything else is parsed into dicts and decoded line by line, which is
    where recoveries happen and errors get their line numbers.
    """
    # The entries are acyclic, so the cyclic GC has nothing to find while they are
    # built; pausing it avoids repeated full collections over a growing heap
    # (about 2x faster for 100k entries).
    paused = gc.isenabled()
    gc.disable()
    try:
        strict = _strict_entries(f, data)
        if strict is not None:
            return strict, []
        objs, linenos = parse_lines(f, data)
        entries: list[Entry] = []
        legacy: list[int] = []
        for lineno, obj in zip(linenos, objs):
            if is_legacy_meta(obj):
                legacy.append(len(entries))
            try:
                entries.append(decode(obj))
            except DecodeError as e:
                raise CorruptLog(f"{f}:{lineno}: {e}") from None
    finally:
        if paused:
            gc.enable()
    return entries, legacy


def _strict_entries(f: Path, data: bytes) -> list[Entry] | None:
    """Return the entries of a well-formed log in one msgspec pass, or ``None``
    to send it down the general path.

    ``None`` when the file does not end with a newline (a torn tail), when it
    may carry the legacy ``"meta"`` flag (any ``"meta"`` that is not an
    ``"injected":"meta"`` value: the general path finds out), when
    :func:`~durable_nb.session.codec.decode_lines` refuses the lines, or
    when the entries do not come one per line. Checks the ``session_init``
    line. O(size).
    """
    if not data.endswith(b"\n") or data.count(b'"meta"') != data.count(b'"injected":"meta"'):
        return None
    first = data.find(b"\n")
    _record(f, data[:first])
    entries = decode_lines(memoryview(data)[first + 1 :])
    if entries is None or len(entries) != data.count(b"\n") - 1:
        return None
    return entries


def parse_lines(f: Path, data: bytes) -> tuple[list[dict[str, Any]], Sequence[int]]:
    """Return the JSON objects of a log's entry lines (after ``session_init``)
    and their 1-based line numbers.

    Blank lines are skipped; a final line without a newline that does not
    parse is a torn write and is dropped; any other bad line raises
    :class:`CorruptLog` naming ``f`` and the line number. The values are
    always what ``json.loads`` gives (see :func:`loads`). The common case (a
    file that ends with a newline and has no blank line) is one msgspec
    decode of all lines, accepted when it yields one object per line; else
    the lines are joined as one array and parsed, and if that does not give
    one object per line either, each line is parsed on its own, which finds
    the bad line. Known leniency: a crafted file that packs two objects into
    one line and splits another object across two lines can still read as
    the objects its lines form together.
    """
    if data.endswith(b"\n") and b"\n\n" not in data:  # the common case: one decode of all lines
        try:
            objs = _decode_lines(data)
        except msgspec.MsgspecError:
            objs = None
        if objs is not None and len(objs) == data.count(b"\n") and all(type(o) is dict for o in objs):
            _record(f, data[: data.index(b"\n")])
            return objs[1:], range(2, 1 + len(objs))
    lines = data.split(b"\n")
    _record(f, lines[0])
    tail = lines.pop()  # b"" when the file ends with a newline
    body = lines[1:]
    if tail and not torn_tail(data):  # a torn final line is dropped
        body.append(tail)
    try:
        objs = loads(b"[" + b",".join(body) + b"]")
        if len(objs) == len(body) and all(type(o) is dict for o in objs):
            return objs, range(2, 2 + len(objs))
    except ValueError:
        pass
    objs, linenos = [], []
    for i, line in enumerate(body, start=2):
        if line.strip():
            objs.append(json_object(f, i, line))
            linenos.append(i)
    return objs, linenos


_decoder = msgspec.json.Decoder()
_decode, _decode_lines = _decoder.decode, _decoder.decode_lines


def loads(data: bytes) -> Any:
    """Return ``json.loads(data)``, parsed by msgspec when it can (about 2.8× faster).

    msgspec refuses a few things ``json`` accepts (``NaN``, ``Infinity``,
    numbers beyond a double's range, lone surrogate escapes); those fall back
    to ``json``, so the result is always what ``json.loads`` gives. Raises
    ``ValueError`` for invalid JSON.
    """
    try:
        return _decode(data)
    except msgspec.MsgspecError:
        return json.loads(data)


def json_object(f: Path, lineno: int, line: bytes) -> dict[str, Any]:
    """Return the JSON object on ``line``; raises :class:`CorruptLog` naming ``f:lineno``
    when it is not valid JSON or not an object."""
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise CorruptLog(f"{f}:{lineno}: not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise CorruptLog(f"{f}:{lineno}: not a JSON object")
    return obj


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _mend_tail(fd: int) -> None:
    """Make the file end with a newline: complete a whole last line, cut a torn one."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    pos = size
    chunk = 4096
    while pos > 0:
        start = max(0, pos - chunk)
        block = os.pread(fd, pos - start, start)
        k = block.rfind(b"\n")
        if k >= 0:
            cut = start + k + 1
            break
        pos = start
    else:
        cut = 0
    tail = os.pread(fd, size - cut, cut)
    try:
        json.loads(tail)
        _write_all(fd, b"\n")
    except ValueError:
        os.ftruncate(fd, cut)
