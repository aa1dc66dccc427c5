"""Copy sessions between stores, losslessly and idempotently (``python -m durable_nb copy SRC DST``).

A source is a store string (a JSONL folder, ``sqlite:///file.db``, a
PostgreSQL DSN; see :func:`~durable_nb.session.open_store`) or one session
log file any importer reads (this project's, pi-go, pi, Claude Code, Codex).
The destination is a store string. Each session keeps its id, parent and
creation time; each entry its id, parent, time and every field, as the codec
writes it (the same JSON in every store). Re-running a copy appends only the
entries the destination lacks, so an interrupted copy is finished by running
it again, and a finished one changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import DurableError, SessionNotFound
from .session import (
    Entry,
    JsonlStore,
    SessionRecord,
    Store,
    describe,
    encode_line,
    leaf_last,
    open_store,
    store_kind,
)
from .session.codec import same_line
from .session.locate import expand_env, sqlite_path

if TYPE_CHECKING:
    from .importers.stream import Spool


@dataclass(frozen=True)
class Copied:
    """What copying one session did: ``entries`` in the source, ``added`` to the destination,
    ``created`` whether the destination session was new."""

    session_id: str
    entries: int
    added: int
    created: bool


def sources(src: str, only: Collection[str] = ()) -> tuple[str, Iterator[tuple[SessionRecord, list[Entry] | str]]]:
    """Return ``(description, iterator of (record, entries or why they cannot be read))`` for a source.

    An existing file that is not a SQLite database is read as one session log
    (through the importers); anything else is opened as a store and its
    sessions (those in ``only`` when given, else all) are read one at a time,
    oldest first. A session that cannot be read (a damaged log, a bad first
    line) comes with the one-line reason instead of its entries, so it never
    stops the others. A store it opens is closed once the iterator is used up
    or closed. Raises :class:`DurableError` when the source cannot be
    opened, or names no folder, database file or log that exists.
    """
    src = expand_env(src)
    p = Path(src).expanduser()
    if p.is_file() and store_kind(src) != "sqlite":
        where, rec, entries = _read_log(p)
        return where, iter([(rec, entries)])
    kind = store_kind(src)
    if (kind == "jsonl" and not p.is_dir()) or (kind == "sqlite" and not Path(sqlite_path(src)).expanduser().is_file()):
        raise DurableError(f"no store folder, SQLite database or session log at {src!r}")
    store = open_store(src)
    unreadable: list[tuple[str, str]] = []
    records = store.list_sessions(unreadable) if isinstance(store, JsonlStore) else store.list_sessions()
    wanted = set(only)

    def items() -> Iterator[tuple[SessionRecord, list[Entry] | str]]:
        try:
            for name, why in unreadable:  # a log whose first line cannot be read: its id is its file name
                sid = name.removesuffix(".jsonl")
                if not wanted or sid in wanted:
                    yield SessionRecord(sid), why
            for rec in records:
                if wanted and rec.id not in wanted:
                    continue  # never read a session nobody asked for
                try:
                    yield rec, store.load_entries(rec.id)
                except DurableError as e:
                    yield rec, " ".join(str(e).split())
        finally:  # used up or closed: the source's connections go now, not when the collector finds them
            if hasattr(store, "close"):
                store.close()

    return describe(store), items()


def _read_log(p: Path) -> tuple[str, SessionRecord, list[Entry]]:
    """Return the description, session record and entries (leaf last) of the log at ``p``, read by
    :func:`~durable_nb.importers.open_session`; the agent it made is let go of."""
    from .importers import open_session

    imported = open_session(p)
    agent = imported.agent
    entries = leaf_last(agent.entries(), agent.leaf_id)  # the copy resumes where the import shows its leaf
    rec = SessionRecord(agent.session_id, "", agent.entries()[0].created_at if entries else "")
    if imported.format == "durable_nb":  # keep the log's own session record
        first = json.loads(p.read_bytes().split(b"\n", 1)[0])
        rec = SessionRecord(agent.session_id, first.get("parent_id") or "", first.get("created_at") or "")
    return f"{p} ({imported.format})", rec, entries


def copy_session(rec: SessionRecord, entries: list[Entry], dst: Store) -> Copied:
    """Copy one session into ``dst``: create it if missing (same id, parent, time), then append the
    entries it lacks, in source order, in one append.

    Raises :class:`DurableError`, writing nothing, when the destination or the
    source holds an entry id twice with different content (a copy never
    overwrites or picks one). Content is compared by value
    (:func:`~durable_nb.session.codec.same_line`): a store that re-spells what
    it keeps (PostgreSQL's JSONB reorders keys) still holds the same entry. Cost: one load of the destination session and one append.
    """
    lines: dict[str, bytes] = {}
    for e in entries:
        line = encode_line(e)
        if not same_line(lines.setdefault(e.id, line), line):
            raise DurableError(f"session {rec.id!r}: the source holds entry {e.id!r} twice with different content")
    have, created = _destination(rec, dst, lines.items())
    seen: set[str] = set()
    missing = []
    for e in entries:
        if e.id not in have and e.id not in seen:
            seen.add(e.id)
            missing.append(e)
    if missing:
        dst.append_entries(rec.id, missing)
    return Copied(rec.id, len(entries), len(missing), created)


def _destination(rec: SessionRecord, dst: Store, lines: Iterable[tuple[str, bytes]]) -> tuple[dict[str, bytes], bool]:
    """Return the lines ``dst`` holds of session ``rec`` by entry id, and whether the session was
    created here (then none are). Raises :class:`DurableError`, having written nothing, when one of
    ``lines`` (the source's ``(id, line)`` pairs, read only when the session exists) differs from the
    destination's. Cost: one load of the destination session."""
    try:
        have = {e.id: encode_line(e) for e in dst.load_entries(rec.id)}
    except SessionNotFound:
        dst.create_session(rec.id, rec.parent_id, created_at=rec.created_at)
        return {}, True
    clash = next((i for i, line in lines if i in have and not same_line(have[i], line)), None)
    if clash is not None:
        raise DurableError(
            f"session {rec.id!r}: {describe(dst)} already holds entry {clash!r} with other content; nothing copied"
        )
    return have, False


def copy_spool(rec: SessionRecord, spool: Spool, dst: Store, batch: int = 1_000_000) -> Copied:
    """:func:`copy_session` for a log read as a :class:`~durable_nb.importers.stream.Spool`: the
    same checks and result, the entries the destination lacks appended about ``batch`` bytes of
    lines at a time, each batch decoded from its lines just before its append and its lines let
    go of after it (so the entries are never all held; ``spool`` is used up).

    Everything is checked before anything is written, as there; an append that fails part-way
    leaves the batches before it, which re-running the copy completes. Cost: one load of the
    destination session, a decode and an append per batch."""
    lines = spool.lines
    have, created = _destination(rec, dst, ((i, lines[at]) for i, at in spool.ids.items()))
    missing = [at for i, at in spool.ids.items() if i not in have] if have else range(len(lines))
    chunk: list[int] = []
    size = 0
    for n, at in enumerate(missing, start=1):
        chunk.append(at)
        size += len(lines[at])
        if size >= batch or n == len(missing):
            dst.append_entries(rec.id, spool.entries(chunk))
            for i in chunk:
                lines[i] = b""
            chunk, size = [], 0
    return Copied(rec.id, len(lines) + spool.repeated, len(missing), created)


def _spooled(src: str) -> tuple[str, Iterator[tuple[SessionRecord, list[Entry] | str | Spool]]] | None:
    """Return :func:`sources` for a log file as a :class:`~durable_nb.importers.stream.Spool`: a pi or
    Codex log read by :func:`~durable_nb.importers.stream.spool`, any other (or one that reader hands
    back) read whole and its entries encoded one by one as they are let go of
    (:func:`~durable_nb.importers.stream.listed`); ``None`` for a source that is not a log file."""
    p = Path(expand_env(src)).expanduser()
    if not p.is_file() or store_kind(src) == "sqlite":
        return None
    from .importers.stream import listed, spool

    try:
        spooled = spool(p)
    except OSError:
        return None  # sources() names it
    if spooled is None:
        where, rec, entries = _read_log(p)
        return where, iter([(rec, listed(rec.id, entries))])
    rec = SessionRecord(spooled.session_id, "", spooled.first_time)
    return f"{p} ({spooled.format})", iter([(rec, spooled)])


class Copies(list[Copied]):
    """What :func:`copy` did: a list of :class:`Copied`, one per session copied, and ``skipped``:
    ``(session id, why)`` for each session that could not be read (nothing of it was copied)."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped: list[tuple[str, str]] = []


def copy(src: str, dst: str, only: list[str] | None = None, echo=print) -> Copies:
    """Copy every session of ``src`` (or those named in ``only``) into the store ``dst``; return what was done.

    ``echo`` gets one line per session, a session that cannot be read
    included (it is skipped, listed in ``skipped``, and the copy goes on;
    only the sessions asked for are read). Raises :class:`DurableError` for
    a source or destination that cannot be opened, a session named in
    ``only`` that the source lacks, or a clash (see :func:`copy_session`);
    sessions copied before the error stay copied (re-run to continue).
    """
    streamed = _spooled(src)
    where, items = sources(src, only or ()) if streamed is None else streamed
    target = open_store(dst)
    done = Copies()
    try:
        for rec, entries in items:
            if only and rec.id not in only:
                continue
            if isinstance(entries, str):
                done.skipped.append((rec.id, entries))
                echo(f"{rec.id}: skipped, it cannot be read ({entries})")
                continue
            c = copy_session(rec, entries, target) if isinstance(entries, list) else copy_spool(rec, entries, target)
            done.append(c)
            state = "new session" if c.created else ("added to" if c.added else "already complete in")
            echo(f"{c.session_id}: {c.added} of {c.entries} entries copied ({state} {describe(target)})")
    finally:
        if hasattr(items, "close"):  # the source's store, when sources() opened one
            items.close()
        if hasattr(target, "close"):
            target.close()
    missing = sorted(set(only or ()) - {c.session_id for c in done} - {sid for sid, _ in done.skipped})
    if missing:
        raise DurableError(f"no session {missing[0]!r} in {where}")
    return done
