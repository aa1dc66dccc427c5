"""Opening a SQLite store's database: read-write in WAL mode, or read-only where it cannot be written,
its tables checked; and what a SQLite error means, in one line naming the file.

Read-only: a database whose file or folder cannot be written (read-only
media, a read-only mount, permissions) is opened ``mode=ro``, and where
that cannot work either (a WAL database needs its ``-shm`` file, which a
read-only folder cannot hold) ``immutable=1``: then SQLite reads the file
as it is, without locks, which is right for media nobody writes. A
database whose write-ahead log (``-wal``) is not empty is refused there in
one line instead: ``immutable=1`` would not see the writes in it (a writer
killed before checkpointing), and a session would load without its last
entries. Nothing is
created in a read-only database; its writes are refused by the store.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from ..errors import CorruptLog, DurableError, StoreWriteError
from .regular import check_regular

# The tokenizer: words are runs of letters, digits and '_', accents kept (the rule of .search, see there).
TOKENIZER = "unicode61 remove_diacritics 0 tokenchars '_'"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    parent_id TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS entries (
    session TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session, id)
);
CREATE INDEX IF NOT EXISTS entries_by_session ON entries(session);
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(text, content='', tokenize="{TOKENIZER}");
CREATE TABLE IF NOT EXISTS indexed (upto INTEGER NOT NULL);
INSERT INTO indexed SELECT coalesce(max(rowid), 0) FROM entries WHERE NOT EXISTS (SELECT 1 FROM indexed);
"""
# ``indexed``: how far the search index is (see .sqliteindex); a database made before it lacks it (everything indexed).
TABLES = {
    "sessions": ("id", "parent_id", "created_at"),
    "entries": ("session", "id", "body"),
    "entries_fts": ("text",),
    "indexed": ("upto",),
}
_ADDED = frozenset({"indexed"})  # tables a database made before may lack: added when it is opened read-write


def connect(path: Path, timeout: float, fsync: bool) -> tuple[sqlite3.Connection, bool]:
    """Return ``(connection, read_only)`` for the store database ``path`` (created when missing).

    Raises :class:`DurableError` in one line naming the file: not a regular
    file, not a SQLite database, a database of something else (other tables, or ours with other
    columns), a damaged file, a read-only database without the tables, a
    lock held past ``timeout`` seconds."""
    check_regular(path)
    exists = path.exists()
    if exists and not _sqlite_header(path):
        raise DurableError(
            f"{path} is not a SQLite database, so not a store (if it was one, it is damaged: restore it from a "
            "copy): name a folder, a new .db file or a postgresql:// DSN"
        )
    if (exists and not os.access(path, os.W_OK)) or not os.access(path.parent, os.W_OK):
        if not exists:
            raise StoreWriteError(f"cannot create the SQLite store {path}: its folder cannot be written here")
        return _read_only(path, timeout), True
    db = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    try:
        complete = check_tables(db, path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
        if not complete:
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in SCHEMA.split(";\n"):
                    if statement.strip():
                        db.execute(statement)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
    except sqlite3.DatabaseError as e:
        db.close()
        if exists and kind(e) == "readonly":
            return _read_only(path, timeout), True
        raise error(e, path, "open", timeout) from None
    except BaseException:
        db.close()
        raise
    return db, False


def _sqlite_header(path: Path) -> bool:
    """Return whether ``path`` begins as a SQLite database does (an empty file, which SQLite makes one, too;
    a file that cannot be read here too: opening it says why). O(1)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return True
    return not head or head == b"SQLite format 3\x00"


def _read_only(path: Path, timeout: float) -> sqlite3.Connection:
    """Return a read-only connection to ``path`` (``mode=ro``, else ``immutable=1``), its tables checked."""
    uri = "file:" + quote(str(path.resolve()))
    last: sqlite3.DatabaseError | None = None
    for how in ("mode=ro", "mode=ro&immutable=1"):
        if how.endswith("immutable=1"):
            _check_no_wal(path)
        db = sqlite3.connect(f"{uri}?{how}", uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
        try:
            complete = check_tables(db, path)
        except sqlite3.DatabaseError as e:
            db.close()
            last = e
            if kind(e) in ("corrupt", "busy"):
                break
            continue
        except BaseException:
            db.close()
            raise
        if not complete and not readable(db):
            db.close()
            raise DurableError(
                f"cannot open the SQLite store {path}: it is read-only here and has no durable_nb tables to read"
            )
        return db
    assert last is not None
    raise error(last, path, "open", timeout) from None


def _check_no_wal(path: Path) -> None:
    """Raise :class:`DurableError` when ``path`` has a write-ahead log that is not empty: ``immutable=1``
    would read the file without it, and silently miss every write not yet checkpointed into it."""
    wal = path.with_name(path.name + "-wal")
    try:
        pending = wal.stat().st_size > 0
    except OSError:
        return
    if pending:
        raise DurableError(
            f"cannot read the SQLite store {path} here: its write-ahead log {wal.name} holds writes not yet in "
            f"{path.name} (a writer stopped before checkpointing), and read-only it needs {path.name}-shm to read "
            f"them; copy {path.name} and {wal.name} to a folder that can be written and open the copy"
        )


def check_tables(db: sqlite3.Connection, path: Path) -> bool:
    """Return whether the store's tables exist (with their columns); ``False`` when some are missing.

    Raises :class:`DurableError` for a database of something else: tables
    of its own and none of ours, or one of ours with other columns."""
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    ours = [t for t in TABLES if t in names]
    others = sorted(n for n in names if not n.startswith(("sqlite_", "entries_fts_")) and n not in TABLES)
    if not ours and others:
        shown = ", ".join(others[:5]) + (", …" if len(others) > 5 else "")
        raise DurableError(
            f"{path} is a SQLite database of something else (tables {shown}), not a durable_nb store: "
            "give the store a file of its own"
        )
    for t in ours:
        cols = tuple(r[1] for r in db.execute(f"PRAGMA table_info({t})"))
        if cols != TABLES[t]:
            raise DurableError(
                f"{path} is not a durable_nb store: its table {t!r} has the columns ({', '.join(cols)}), "
                f"not ({', '.join(TABLES[t])}); give the store a file of its own"
            )
    return len(ours) == len(TABLES)


def readable(db: sqlite3.Connection) -> bool:
    """Return whether the store's tables, but for those added since (:data:`_ADDED`), exist."""
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return all(t in names for t in TABLES if t not in _ADDED)


def kind(e: sqlite3.DatabaseError) -> str:
    """Return what a SQLite error is: ``"busy"``, ``"readonly"``, ``"corrupt"`` or ``"other"``."""
    name = getattr(e, "sqlite_errorname", "") or ""
    text = str(e).lower()
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return "busy"
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")) or "readonly" in text:
        return "readonly"
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text or "not a database" in text:
        return "corrupt"
    return "other"


def error(e: sqlite3.DatabaseError, path: Path, doing: str, timeout: float) -> DurableError:
    """Return the one-line error for SQLite error ``e`` while ``doing`` something with the store ``path``
    (``doing="open"``: opening it)."""
    k = kind(e)
    head = f"cannot open the SQLite store {path}: it" if doing == "open" else f"cannot {doing}: the SQLite store {path}"
    if k == "busy":
        return DurableError(
            f"{head} stayed locked by another process for {timeout:g} s (the busy timeout); "
            "nothing was written: try again once it is done"
        )
    if k == "readonly":
        return StoreWriteError(f"{head} cannot be written here ({e}); nothing was written")
    if k == "corrupt":
        return CorruptLog(
            f"{head} is damaged ({e}): restore it from a copy (sqlite3 {path.name} .recover may save what is readable)"
        )
    return DurableError(f"{head} fails: {e}")
