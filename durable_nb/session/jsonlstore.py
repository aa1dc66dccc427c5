"""The JSONL store: one append-only file per session, beside the notebook.

``<root>/<id>.jsonl`` holds a ``session_init`` line, then one JSON object per
entry (see :mod:`durable_nb.session.codec`). A batch of entries is one
``write`` to a file opened ``O_APPEND``, made under an exclusive lock
(:mod:`.lock`); the lock is a courtesy, not a requirement: where it does
nothing, ``O_APPEND`` still puts each batch whole after the others on one
machine (NFS clients on different machines do not share ``O_APPEND``: use a
SQL store there).

The store never truncates bytes it did not write. A crash mid-write leaves at
most a torn final line (a cut-off JSON object): load drops it; the next append
starts with a blank line (``"\n\n"`` after the torn bytes), which closes the
torn line without touching it, and load drops such a closed torn line too. A
batch that fails part-way (full disk) or is interrupted (Ctrl-C) is cut
back to where it began, so a batch is all or nothing. An append to a log
that was truncated or replaced since this store read it is refused
(:class:`~durable_nb.errors.LogChanged`) instead of writing entries into a
file that lost its ``session_init`` line.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..errors import CorruptLog, LogChanged, SessionExists, SessionNotFound, StoreWriteError
from .codec import DecodeError, decode, decode_lines, encode_line
from .compact import collector_paused
from .entry import Entry, now
from .lock import exclusive
from .logstream import stream_entries
from .regular import open_regular
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
    as it returns. Writes that fail (read-only folder, full disk) raise
    :class:`~durable_nb.errors.StoreWriteError` naming the file and the
    system's reason, with nothing of the write kept.
    """

    def __init__(self, root: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.root = Path(root)
        self.fsync = fsync
        # id -> (device, inode, size) of the log as this store last read or wrote it
        self._seen: dict[str, tuple[int, int, int]] = {}
        # id -> the session_init line (its bytes, newline included) this store last checked in that log
        self._heads: dict[str, bytes] = {}
        self._files: dict[str, Path] = {}  # id -> its checked path (an append does not rebuild it)

    def describe(self) -> str:
        """Return the folder's path."""
        return str(self.root)

    def file(self, id: str) -> Path:
        """Return the log file's path for session ``id`` (checked, may not exist)."""
        f = self._files.get(id)
        if f is None:
            f = self._files[id] = self.root / f"{check_session_id(id)}.jsonl"
        return f

    def create_session(
        self, id: str, parent_id: str = "", *, entries: Sequence[Entry] = (), created_at: str = ""
    ) -> SessionRecord:
        """Create ``<id>.jsonl`` with its ``session_init`` line and ``entries`` after it.

        All or nothing: the file appears whole (written to a hidden temporary
        file, then hard-linked into place) or not at all, so a crash or a full
        disk never leaves an empty or half-written log, nor takes the id; the
        temporary file is removed whatever happens (a crash can leave one
        ``.<id>.jsonl.*.tmp`` behind). ``entries`` are encoded before
        anything is written (an unencodable entry, e.g. a lone surrogate,
        raises ``UnicodeEncodeError`` and creates nothing). Raises
        ``SessionExists`` if the file exists (atomic: two creators racing get
        one success and one ``SessionExists``) and
        :class:`~durable_nb.errors.StoreWriteError` when the folder cannot be
        written. Where the file system has no hard links, the file is created
        and then written (and removed again if that write fails).
        """
        f = self.file(id)
        rec = SessionRecord(id, parent_id, created_at or now())
        line = _line({"type": "session_init", "id": id, "parent_id": parent_id, "created_at": rec.created_at})
        data = line + b"".join(encode_line(e) for e in entries)
        tmp = self.root / f".{id}.jsonl.{secrets.token_hex(4)}.tmp"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            try:
                self._write_new(tmp, data)
                os.link(tmp, f)
            except FileExistsError:
                raise SessionExists(f"session {id!r} already exists in {self.root}") from None
            except OSError as e:
                if e.errno not in (errno.EPERM, errno.EXDEV, errno.EOPNOTSUPP, errno.EMLINK) or not tmp.exists():
                    raise
                try:  # no hard links here: create, then write
                    self._write_new(f, data, remove_on_failure=True)
                except FileExistsError:
                    raise SessionExists(f"session {id!r} already exists in {self.root}") from None
            finally:
                _unlink(tmp)
            if self.fsync:
                dfd = os.open(self.root, os.O_RDONLY)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)
        except OSError as e:
            raise _write_error(f"cannot create session {id!r}", f, e) from None
        st = f.stat()
        self._seen[id] = (st.st_dev, st.st_ino, len(data))
        self._heads[id] = line
        return rec

    def _write_new(self, f: Path, data: bytes, remove_on_failure: bool = False) -> None:
        """Create ``f`` (``FileExistsError`` if it exists) holding ``data``; with
        ``remove_on_failure`` a failed write removes the file again (this call
        created it). A temporary file is left to the caller, which removes it."""
        fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _write_all(fd, data)
            if self.fsync:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            if remove_on_failure:
                _unlink(f)
            raise
        os.close(fd)

    def load_session(self, id: str) -> SessionRecord:
        """Return the record from the ``session_init`` line. Reads only that line."""
        f = self.file(id)
        try:
            with os.fdopen(open_regular(f), "rb") as fh:
                first = fh.readline()
        except FileNotFoundError:
            raise SessionNotFound(f"no session {id!r} in {self.root} (no file {f.name})") from None
        return _record(f, first)

    def load_entries(self, id: str) -> list[Entry]:
        """Return the session's entries in append order, exactly as written.

        Errors: a first line that is not a ``session_init`` record, a line
        that is not valid JSON or not an object, JSON nested too deeply, an
        unknown entry type, a missing key or a value of the wrong JSON type
        raise :class:`CorruptLog` naming ``file:line`` (nothing is skipped
        silently). Recoveries: a torn write (a cut-off JSON object: a crash
        mid-write) is dropped, whether it is the final line or a line a later
        append closed with a blank line; blank lines are skipped; a missing
        ``parent_id`` makes a root. The tree is not checked here: orphans,
        parent cycles and duplicate ids load as written, and
        :func:`~durable_nb.session.path` / :func:`~durable_nb.session.tree`
        say how they walk them. Entries with the legacy top-level ``"meta"``
        flag load as ordinary messages and one :class:`LegacyMetaWarning`
        names the session and their count. Cost: one read of the file and one
        JSON parse, O(size); the cyclic garbage collector is paused meanwhile.
        """
        f = self.file(id)
        try:
            fd = open_regular(f)
        except FileNotFoundError:
            raise SessionNotFound(f"no session {id!r} in {self.root} (no file {f.name})") from None
        with os.fdopen(fd, "rb", buffering=0) as fh:
            st = os.fstat(fd)
            got = None
            if st.st_size and os.pread(fd, 1, st.st_size - 1) == b"\n":  # else a torn tail: the general path
                got = stream_entries(fd, lambda first: _record(f, first), may_carry_legacy_meta)
            if got is not None:
                self._seen[id] = (st.st_dev, st.st_ino, got[1])
                return got[0]
            fh.seek(0)
            data = fh.read()
        self._seen[id] = (st.st_dev, st.st_ino, len(data))
        entries, legacy = read_entries(f, data)
        if legacy:
            warnings.warn(legacy_meta_warning(id, len(legacy)), LegacyMetaWarning, stacklevel=2)
        return entries

    def append_entries(self, id: str, entries: Sequence[Entry]) -> None:
        """Append entries as whole lines, all or nothing.

        Everything is encoded before anything is written (an unencodable
        entry writes nothing). The batch is one ``write`` (``O_APPEND``, under
        an exclusive lock when the file system has one); if it fails part-way
        (full disk) the file is cut back to where the batch began, as long as
        nothing was written after it, and :class:`StoreWriteError` is raised.
        A torn final line left by a crash is closed with a blank line, never
        cut (it may be another writer's line still being written where locks
        do nothing). Raises ``SessionNotFound`` when the file does not exist
        and :class:`~durable_nb.errors.LogChanged` (writing nothing) when it
        no longer starts with this session's ``session_init`` line, or was
        truncated, replaced or deleted since this store last read or wrote it.
        With ``fsync=True`` the file is flushed to disk after the lock is
        released (the lines are whole and in place by then), and this returns
        only once they are durable: writers do not wait for each other's
        flush, and concurrent flushes can share one disk commit. A failed
        flush raises :class:`StoreWriteError`; its lines stay in the file
        (other writers may have appended after them), as they would after a
        power cut before the flush.
        Cost: O(size of the new lines), independent of the log's size.
        """
        if not entries:
            self.file(id)
            return
        payload = b"".join(encode_line(e) for e in entries)
        f = self.file(id)
        try:
            fd = open_regular(f, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            if id in self._seen:  # this store read or wrote it: deleted under us, not "not created yet"
                raise _changed(id, f, "deleted") from None
            raise SessionNotFound(f"no session {id!r} in {self.root} (no file {f.name})") from None
        except OSError as e:
            raise _write_error(f"cannot append to session {id!r}", f, e) from None
        try:
            with exclusive(fd):
                st = os.fstat(fd)
                self._check_unchanged(id, f, fd, st)
                if st.st_size and os.pread(fd, 1, st.st_size - 1) != b"\n":
                    payload = b"\n\n" + payload  # close a torn line (never cut it); see the module docs
                try:
                    end = _append_batch(fd, payload, st.st_size)
                except OSError as e:
                    raise _write_error(f"cannot append to session {id!r}", f, e) from None
                self._seen[id] = (st.st_dev, st.st_ino, end)
            if self.fsync:  # after the lock: another writer appends while this one waits for the disk
                try:
                    os.fsync(fd)
                except OSError as e:
                    raise StoreWriteError(
                        f"cannot make the append to session {id!r} durable: {f} could not be flushed to disk: "
                        f"{e.strerror or e}; the lines are in the file but may not survive a power cut"
                    ) from None
        finally:
            os.close(fd)

    def _check_unchanged(self, id: str, f: Path, fd: int, st: os.stat_result) -> None:
        """Raise :class:`LogChanged` unless the open log ``fd`` still starts with a
        ``session_init`` line and, if this store read or wrote it before, is the
        same file and not shorter. Reads the first line only."""
        seen = self._seen.get(id)
        what = ""
        if seen is not None and (st.st_dev, st.st_ino) != seen[:2]:
            what = "replaced by another file"
        elif seen is not None and st.st_size < seen[2]:
            what = f"truncated ({st.st_size} bytes now, {seen[2]} before)"
        elif (known := self._heads.get(id)) is not None and seen is not None and os.pread(fd, len(known), 0) == known:
            pass  # the very line checked before (one read, no parse)
        else:
            n = 1024
            head = os.pread(fd, n, 0)
            while b"\n" not in head and len(head) == n:  # a long first line: read on
                n *= 4
                head = os.pread(fd, n, 0)
            first, newline, _ = head.partition(b"\n")
            try:
                _record(f, first)
            except CorruptLog:
                what = "emptied" if not head else "truncated or replaced: its first line is no longer a session_init"
            else:
                if newline:
                    self._heads[id] = first + newline
        if what:
            raise _changed(id, f, what)

    def list_sessions(self, unreadable: list[tuple[str, str]] | None = None) -> list[SessionRecord]:
        """Return the records of every ``*.jsonl`` session in ``root``, oldest first.

                Files whose first line is not a valid ``session_init`` record (or that
                cannot be read) are skipped; with an ``unreadable`` list, each is
                added to it as ``(file name, reason)`` (the reason names ``file:1``),
                so one bad file never hides the others; a FIFO, a device or anything but a
        regular file is one of them (never opened for reading, see :mod:`.regular`).
        Reads the first line of each file.
        """
        out: list[SessionRecord] = []
        if not self.root.is_dir():
            return out
        for f in sorted(self.root.glob("*.jsonl")):
            try:
                with os.fdopen(open_regular(f), "rb") as fh:
                    out.append(_record(f, fh.readline()))
            except (CorruptLog, OSError) as e:
                if unreadable is not None:
                    unreadable.append((f.name, str(e)))
        out.sort(key=lambda r: (r.created_at, r.id))
        return out

    def search(self, query: str, session: str | None = None, limit: int = 50) -> list[Hit]:
        """Return the entries whose text holds every word of ``query`` (a plain scan of the logs),
        at most ``limit``: sessions oldest first (as :meth:`list_sessions`), each log in append order.

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
    """Return the record of a ``session_init`` line; :class:`CorruptLog` naming ``f:1`` when it is not one
    (not JSON, nested too deeply, not an object, no string ``id``, a non-string ``parent_id``/``created_at``)."""
    bad = f"{f}:1: the first line is not a session_init record"
    try:
        init = json.loads(first)
    except (ValueError, RecursionError):
        raise CorruptLog(bad) from None
    if not isinstance(init, dict) or init.get("type") != "session_init" or type(init.get("id")) is not str:
        raise CorruptLog(bad)
    parent, created = init.get("parent_id") or "", init.get("created_at") or ""
    if type(parent) is not str or type(created) is not str:
        raise CorruptLog(f"{bad} (parent_id and created_at must be strings)")
    return SessionRecord(init["id"], parent, created)


def _changed(id: str, f: Path, what: str) -> LogChanged:
    """Return the one-line error for an append refused because the log changed under this store."""
    return LogChanged(
        f"session {id!r}: its log {f} was {what} since this kernel read it; nothing was written. "
        "Fork the session (its active path is still in memory) to keep it in a new log, "
        "or open the session again to continue from what the file holds now"
    )


def _write_error(what: str, f: Path, e: OSError) -> StoreWriteError:
    """Return the one-line error for a failed write of ``f`` (the system's reason, never a temp file's name)."""
    reason = e.strerror or str(e)
    if e.errno in (errno.EACCES, errno.EPERM):
        reason += " (the folder is read-only here)"
    return StoreWriteError(f"{what}: {f} could not be written: {reason}; nothing was written")


def _unlink(f: Path) -> None:
    try:
        os.unlink(f)
    except FileNotFoundError:
        pass


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
    its first record). Readers drop a torn tail; appends close it with a blank
    line and never cut it (see the module docs). O(length of the last line).
    """
    cut = data.rfind(b"\n")
    last = data[cut + 1 :]
    if cut < 0 or not last.strip():
        return b""
    try:
        json.loads(last)
    except (ValueError, RecursionError):
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
    with collector_paused():
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
    return entries, legacy


def _strict_entries(f: Path, data: bytes) -> list[Entry] | None:
    """Return the entries of a well-formed log in one msgspec pass, or ``None``
    to send it down the general path.

    ``None`` when the file does not end with a newline (a torn tail), when
    the strict one-pass decode refuses it and it may carry the legacy
    ``"meta"`` flag (:func:`may_carry_legacy_meta`: the general path finds
    out; a line with the flag never passes the strict decode), when
    :func:`~durable_nb.session.codec.decode_lines` refuses the lines, or
    when the entries do not come one per line. Checks the ``session_init``
    line. O(size): the decode, one scan for ``"meta"`` and one count of lines.
    """
    if not data.endswith(b"\n"):
        return None
    first = data.find(b"\n")
    _record(f, data[:first])
    body = memoryview(data)[first + 1 :]
    # One strict pass first: it refuses any line with a field no type declares, the legacy flag among them.
    entries = decode_lines(body, one_pass=True)
    if entries is None:
        if may_carry_legacy_meta(data):
            return None
        entries = decode_lines(body)
    if entries is None or len(entries) != data.count(b"\n") - 1:
        return None
    return entries


_META = b'"meta"'
_INJECTED = b'"injected":'


def may_carry_legacy_meta(data: bytes) -> bool:
    """Return whether a log's bytes may hold the legacy top-level ``"meta"`` flag (rule R13).

    True when some ``"meta"`` in ``data`` is not the value of an
    ``"injected":`` key written compactly (as this project writes it): a
    legacy flag, or a ``"meta"`` key or value elsewhere (custom data, a
    spaced ``"injected": "meta"``), which the caller sorts out on the general
    path. False means no entry can carry the flag. One scan of ``data``
    (each ``"meta"`` found is checked against the bytes just before it), not
    one per pattern: O(size).
    """
    find, n = data.find, len(_INJECTED)
    i = find(_META)
    while i >= 0:
        if i < n or not data.startswith(_INJECTED, i - n):
            return True
        i = find(_META, i + len(_META))
    return False


def parse_lines(f: Path, data: bytes) -> tuple[list[dict[str, Any]], Sequence[int]]:
    """Return the JSON objects of a log's entry lines (after ``session_init``)
    and their 1-based line numbers.

    Blank lines are skipped; a final line without a newline that does not
    parse is a torn write and is dropped, and so is a torn write that a later
    append closed (a cut-off JSON object, :func:`is_torn`, followed by a blank
    line); any other bad line raises :class:`CorruptLog` naming ``f`` and the
    line number (JSON nested too deeply to parse included). The values are
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
        except (msgspec.MsgspecError, RecursionError):
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
        if not line.strip():
            continue
        try:
            objs.append(json_object(f, i, line))
        except CorruptLog:
            if i - 1 < len(body) and body[i - 1] == b"" and is_torn(line):
                continue  # a torn write a later append closed with a blank line
            raise
        linenos.append(i)
    return objs, linenos


_NUMBER_REST = re.compile(r"-?\d*(?:\.\d*)?(?:[eE][-+]?\d*)?")


def is_torn(line: bytes) -> bool:
    """True when ``line`` is a cut-off JSON object: a proper prefix of some JSON
    object text, which is what a write stopped part-way leaves (cut anywhere,
    even inside a UTF-8 character, a string escape, a number or a literal).

    False for a whole JSON value and for bytes no JSON object starts with
    (a syntax error before the end, invalid UTF-8 before the last character).
    Cost: one JSON parse of ``line``.
    """
    if not line.startswith(b"{"):
        return False
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.end != len(line) or e.reason != "unexpected end of data":
            return False
        text = line[: e.start].decode("utf-8", "replace")
    try:
        json.loads(text)
    except RecursionError:
        return False
    except json.JSONDecodeError as e:
        rest = text[e.pos :]
        if not rest or e.msg.startswith("Unterminated string"):
            return True  # the parser ran out of input
        if e.msg.startswith("Invalid \\uXXXX escape"):
            return len(rest) < 6 and all(c in "0123456789abcdefABCDEF" for c in rest[2:])
        if e.msg.startswith(("Expecting value", "Expecting ',' delimiter")):
            return any(lit.startswith(rest) for lit in ("true", "false", "null")) or bool(_NUMBER_REST.fullmatch(rest))
        return False
    return False


_decoder = msgspec.json.Decoder()
_decode, _decode_lines = _decoder.decode, _decoder.decode_lines


def loads(data: bytes) -> Any:
    """Return ``json.loads(data)``, parsed by msgspec when it can (about 2.8× faster).

    msgspec refuses a few things ``json`` accepts (``NaN``, ``Infinity``,
    numbers beyond a double's range, lone surrogate escapes); those fall back
    to ``json``, so the result is always what ``json.loads`` gives. Raises
    ``ValueError`` for invalid JSON, and for JSON nested too deeply to parse.
    """
    try:
        return _decode(data)
    except (msgspec.MsgspecError, RecursionError):
        pass
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def json_object(f: Path, lineno: int, line: bytes) -> dict[str, Any]:
    """Return the JSON object on ``line``; raises :class:`CorruptLog` naming ``f:lineno``
    when it is not valid JSON (or nested too deeply to parse) or not an object."""
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise CorruptLog(f"{f}:{lineno}: not valid JSON ({e})") from None
    except RecursionError:
        raise CorruptLog(f"{f}:{lineno}: JSON nested too deeply to read") from None
    if not isinstance(obj, dict):
        raise CorruptLog(f"{f}:{lineno}: not a JSON object")
    return obj


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _append_batch(fd: int, data: bytes, expect: int) -> int:
    """Write ``data`` at the end of the ``O_APPEND`` file ``fd``, all or nothing; return the offset just past it.

    One ``write`` normally does it all. If it fails or is interrupted after
    some bytes went in (a full disk; a Ctrl-C, whose ``KeyboardInterrupt``
    comes as the ``write`` returns, before its count is known), the file is
    cut back to where ``data`` began (``expect``, the file's size under the
    lock, until a write says where it landed), but only when the bytes from
    there to the file's end are a prefix of ``data`` (nothing of another
    writer is ever cut); then the error is raised.
    """
    view = memoryview(data)
    start = end = -1
    try:
        while view:
            n = os.write(fd, view)
            pos = os.lseek(fd, 0, os.SEEK_CUR)  # O_APPEND: just past the bytes written now
            if start < 0:
                start = pos - n
            elif pos - n != end:  # another writer got in between: our bytes are not one run
                start = -2
            end = pos
            view = view[n:]
    except BaseException:
        begin = expect if start == -1 else start
        if _ours(fd, begin, data):
            os.ftruncate(fd, begin)
        raise
    return end


def _ours(fd: int, begin: int, data: bytes) -> bool:
    """Whether the bytes of ``fd`` from ``begin`` to its end are a non-empty prefix of ``data``
    (read back a MB at a time: only a failed append pays for it)."""
    size = os.fstat(fd).st_size
    if not 0 < size - begin <= len(data):
        return False
    view, at, step = memoryview(data), begin, 1 << 20
    while at < size:
        k = min(step, size - at)
        if os.pread(fd, k, at) != view[at - begin : at - begin + k]:
            return False
        at += k
    return True
