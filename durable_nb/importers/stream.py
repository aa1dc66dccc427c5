"""Read a log for a store: entries encoded as they settle, not held as objects (``copy LOG DST``).

:func:`spool` reads a pi or Codex log with the importer's streaming reader
and returns a :class:`Spool`: the session's entries as the lines a store
writes, in log order, deduplicated and timed exactly as
:func:`~durable_nb.importers.open_session` gives them
(:func:`~durable_nb.importers.common.dedupe`,
:func:`~durable_nb.importers.common.fill_times`). An entry is encoded once
nothing read later can change it and then let go of, so reading holds the
lines (about the log's own size) and an id index, not the entries (2.2-2.7x
the file for these two formats). Nothing is written anywhere: a bad line
anywhere raises as :func:`open_session` does, before a store sees anything.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DurableError
from ..session import DecodeError, Entry, decode_lines, encode_line, is_aside
from ..session.codec import same_line
from ..session.compact import collector_paused
from .common import _ISO, Records, mtime_iso


@dataclass
class Spool:
    """A session read for a store: ``lines`` (each entry's :func:`encode_line`, in order), its id,
    leaf, warnings, ``ids`` (each id's line), the time of its first entry and the id of the last
    entry not an aside (where it resumes). Built by :meth:`add` and :meth:`close`. O(1) an entry beside its encode."""

    source: str
    fallback_time: str
    format: str = ""
    session_id: str = ""
    leaf_id: str | None = None
    warnings: list[str] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)
    resume: str = ""
    first_time: str = ""
    ids: dict[str, int] = field(default_factory=dict)  # id -> its position (in lines, or in untimed after them)
    untimed: list[Entry] = field(default_factory=list)  # entries before the first one with a time
    filled: dict[int, str] = field(default_factory=dict)  # position -> the time it had before filling
    last_time: str = ""
    dropped: int = 0
    renamed: int = 0
    repeated: int = 0  # entries left out of lines by listed() (an id repeated with the same content)

    def add(self, entries: Iterable[Entry]) -> None:
        """Take the next entries in log order: an exact repeat of an earlier id is dropped, a
        different entry under a taken id gets a ``~N`` suffix (as ``dedupe``), an entry without a
        time takes the one before it (those before the first timed entry wait for it)."""
        for e in entries:
            at = self.ids.get(e.id)
            if at is not None:
                if self._raw(at) == encode_line(e):
                    self.dropped += 1
                    continue
                n = 2
                while f"{e.id}~{n}" in self.ids:
                    n += 1
                e.id = f"{e.id}~{n}"
                self.renamed += 1
            self.ids[e.id] = len(self.lines) + len(self.untimed)
            if not self.last_time:
                if not _ISO.match(e.created_at):
                    self.untimed.append(e)
                    continue
                self._fill_untimed(e.created_at)
            self._put(e)

    def close(self) -> None:
        """Finish: entries still waiting for a time take the file's (none had one), ``resume`` is
        found (the trailing asides decoded again), the notes of repeated ids are added to ``warnings``."""
        self._fill_untimed(self.fallback_time)
        for i in range(len(self.lines) - 1, -1, -1):
            e = self.entries([i])[0]
            if not is_aside(e):
                self.resume = e.id
                break
        if self.dropped:
            self.warnings.append(
                f"{self.source}: {self.dropped} record(s) repeat an earlier record exactly (same id); they are shown once"
            )
        if self.renamed:
            self.warnings.append(
                f"{self.source}: {self.renamed} record(s) reuse an id taken by a different record; they get a '~N' suffix"
            )

    def _fill_untimed(self, at: str) -> None:
        waiting, self.untimed = self.untimed, []
        self.last_time = self.last_time or at
        for e in waiting:
            self._put(e)

    def _put(self, e: Entry) -> None:
        if _ISO.match(e.created_at):
            self.last_time = e.created_at
        else:
            self.filled[len(self.lines)] = e.created_at
            e.created_at = self.last_time
        if not self.lines:
            self.first_time = e.created_at
        self.lines.append(encode_line(e))

    def _raw(self, at: int) -> bytes:
        """Return the line of the entry at position ``at`` as it was before its time was filled."""
        if at >= len(self.lines):
            return encode_line(self.untimed[at - len(self.lines)])
        if at not in self.filled:
            return self.lines[at]
        e = self.entries([at])[0]
        e.created_at = self.filled[at]
        return encode_line(e)

    def entries(self, at: Iterable[int]) -> list[Entry]:
        """Return the entries of the lines at positions ``at`` (decoded again). O(their size)."""
        chunk = b"".join([self.lines[i] for i in at])
        out = decode_lines(chunk) if chunk else []
        if out is None:
            raise DecodeError(f"{self.source}: an entry read does not decode again")
        return out


def listed(session_id: str, entries: list[Entry]) -> Spool:
    """Return ``entries`` (an import's, already deduplicated and timed) as a :class:`Spool`, each
    encoded in turn and its slot in the list emptied (``entries`` is used up: hold no other
    reference to them and they are freed as they go). An id repeated with the same content is
    kept once (``repeated`` counts it); with other content it raises :class:`DurableError`, as
    :func:`~durable_nb.transfer.copy_session` does. O(their size)."""
    out = Spool("", "", session_id=session_id)
    lines, ids = out.lines, out.ids
    for i, e in enumerate(entries):
        entries[i] = None  # type: ignore[call-overload]  # let go of it once encoded
        line = encode_line(e)
        at = ids.get(e.id)
        if at is None:
            ids[e.id] = len(lines)
            lines.append(line)
        elif same_line(lines[at], line):
            out.repeated += 1
        else:
            raise DurableError(f"session {session_id!r}: the source holds entry {e.id!r} twice with different content")
    entries.clear()
    return out


def spool(path: Path) -> Spool | None:
    """Return the pi or Codex log at ``path`` read as a :class:`Spool`, or ``None`` when it is
    another format or one the streaming readers hand back (a Codex rollback, a v1 pi compaction
    keeping from a record further on, a lenient line, a leaf that is not where the log resumes, an
    entry that does not encode): read those with :func:`~durable_nb.importers.open_session`.

    Raises :class:`~durable_nb.errors.CorruptLog` / :class:`~durable_nb.errors.DurableError`
    for a bad line, exactly as ``open_session`` does. O(size) time; memory: the lines, an id
    index (~100 bytes an entry) and what waits to settle.
    """
    from . import codex, detect, pi

    with path.open("rb") as f:
        first = b""
        while not first.strip():
            first = f.readline()
            if not first:
                return None
    try:
        head = json.loads(first)
    except (ValueError, RecursionError):
        return None
    fmt = detect(head) if isinstance(head, dict) else None
    module = {"pi": pi, "codex": codex}.get(fmt or "")
    if module is None:
        return None
    records = Records(path)
    out = Spool(path.name, mtime_iso(path), fmt or "")
    try:
        with collector_paused():  # the records and entries are acyclic
            loaded = module.stream(path, records, out.add)
            if loaded is None or records.lenient:
                return None
            out.close()
    except (UnicodeEncodeError, DecodeError, TypeError, RecursionError):  # open_session names these
        return None
    if loaded.leaf_id and loaded.leaf_id != out.resume:
        return None  # the leaf and what hangs off it would have to move last: open_session's order
    out.session_id, out.leaf_id = loaded.session_id, loaded.leaf_id
    out.warnings[:0] = [*records.notes, *loaded.warnings]
    return out
