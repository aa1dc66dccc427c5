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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import DurableError, SessionNotFound
from .session import Entry, SessionRecord, Store, describe, encode_line, open_store, store_kind
from .session.codec import same_line
from .session.locate import expand_env, sqlite_path


@dataclass(frozen=True)
class Copied:
    """What copying one session did: ``entries`` in the source, ``added`` to the destination,
    ``created`` whether the destination session was new."""

    session_id: str
    entries: int
    added: int
    created: bool


def sources(src: str) -> tuple[str, Iterator[tuple[SessionRecord, list[Entry]]]]:
    """Return ``(description, iterator of (record, entries))`` for a source string.

    An existing file that is not a SQLite database is read as one session log
    (through the importers); anything else is opened as a store and every
    session is read, oldest first. Raises :class:`DurableError` when it cannot be
    read, or names no folder, database file or log that exists.
    """
    src = expand_env(src)
    p = Path(src).expanduser()
    if p.is_file() and store_kind(src) != "sqlite":
        from .importers import open_session

        imported = open_session(p)
        agent = imported.agent
        entries = agent.entries()
        rec = SessionRecord(agent.session_id, "", entries[0].created_at if entries else "")
        if imported.format == "durable_nb":  # keep the log's own session record
            first = json.loads(p.read_bytes().split(b"\n", 1)[0])
            rec = SessionRecord(agent.session_id, first.get("parent_id") or "", first.get("created_at") or "")
        return f"{p} ({imported.format})", iter([(rec, entries)])
    kind = store_kind(src)
    if (kind == "jsonl" and not p.is_dir()) or (kind == "sqlite" and not Path(sqlite_path(src)).expanduser().is_file()):
        raise DurableError(f"no store folder, SQLite database or session log at {src!r}")
    store = open_store(src)
    return describe(store), ((rec, store.load_entries(rec.id)) for rec in store.list_sessions())


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
    created = False
    try:
        have = {e.id: encode_line(e) for e in dst.load_entries(rec.id)}
    except SessionNotFound:
        dst.create_session(rec.id, rec.parent_id, created_at=rec.created_at)
        have, created = {}, True
    clash = [i for i, line in lines.items() if i in have and not same_line(have[i], line)]
    if clash:
        raise DurableError(
            f"session {rec.id!r}: {describe(dst)} already holds entry {clash[0]!r} with other content; nothing copied"
        )
    seen: set[str] = set()
    missing = []
    for e in entries:
        if e.id not in have and e.id not in seen:
            seen.add(e.id)
            missing.append(e)
    if missing:
        dst.append_entries(rec.id, missing)
    return Copied(rec.id, len(entries), len(missing), created)


def copy(src: str, dst: str, only: list[str] | None = None, echo=print) -> list[Copied]:
    """Copy every session of ``src`` (or those named in ``only``) into the store ``dst``; return what was done.

    ``echo`` gets one line per session. Raises :class:`DurableError` for a
    source or destination that cannot be opened, a session named in
    ``only`` that the source lacks, or a clash (see :func:`copy_session`);
    sessions copied before the error stay copied (re-run to continue).
    """
    where, items = sources(src)
    target = open_store(dst)
    done: list[Copied] = []
    try:
        for rec, entries in items:
            if only and rec.id not in only:
                continue
            c = copy_session(rec, entries, target)
            done.append(c)
            state = "new session" if c.created else ("added to" if c.added else "already complete in")
            echo(f"{c.session_id}: {c.added} of {c.entries} entries copied ({state} {describe(target)})")
    finally:
        if hasattr(target, "close"):
            target.close()
    missing = sorted(set(only or ()) - {c.session_id for c in done})
    if missing:
        raise DurableError(f"no session {missing[0]!r} in {where}")
    return done
