"""The SQLite store: many sessions in one database file, with full-text search.

For one machine with many kernels (JupyterHub on one host, several
notebooks on a laptop) and for searching every session at once. Standard
library ``sqlite3`` in WAL mode; two tables and a search index::

    sessions(id PRIMARY KEY, parent_id, created_at)
    entries(session, id, body, PRIMARY KEY (session, id))   -- append order = rowid
    entries_fts USING fts5(text)                            -- rowid = entries.rowid
    indexed(upto)                                           -- how far entries_fts is

The index is brought up to date by the first search after appends
(:mod:`.sqliteindex`).

``body`` is the entry exactly as a JSONL log line holds it (the codec's
:func:`~durable_nb.session.codec.encode_line` without the newline), so a
session moves between the stores losslessly. Rows are only ever inserted.

SQLite's locking needs a local file system: on NFS, SMB/CIFS, sshfs and
similar, WAL mode can corrupt the database. Opening a database there is
refused (the file system type is read from ``/proc/mounts``; where that file
does not exist, e.g. macOS, nothing can be checked: keep the file on a local
disk, or use :class:`~durable_nb.session.PostgresStore` to share sessions
between machines).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from ..errors import DurableError, SessionExists, SessionNotFound, StoreWriteError
from .codec import encode_line, same_line
from .compact import collector_paused
from .entry import Entry, now
from .search import Hit, words
from .sqliteindex import behind, catch_up, unindexed
from .sqliteload import joined
from .sqliteopen import connect, error
from .sqlrows import decode_rows, hits_of
from .store import SessionRecord, check_session_id

# File system types on which SQLite's locks (and WAL's shared memory) are unsafe.
NETWORK_FS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb",
        "smb3",
        "smbfs",
        "ncpfs",
        "afs",
        "9p",
        "fuse.sshfs",
        "fuse.s3fs",
        "fuse.gcsfuse",
        "fuse.rclone",
        "fuse.glusterfs",
        "glusterfs",
        "fuse.davfs",
        "davfs",
    }
)


def filesystem_type(path: str | os.PathLike[str], mounts: str | None = None) -> str | None:
    """Return the type of the file system holding ``path`` (``"ext4"``, ``"nfs4"``, ...), or ``None``
    when it cannot be told (no ``/proc/mounts``).

    ``mounts`` is the text of ``/proc/mounts`` (read when ``None``); the
    mount point that is the longest prefix of ``path``'s resolved folder
    wins. O(mounts).
    """
    if mounts is None:
        try:
            mounts = Path("/proc/mounts").read_text()
        except OSError:
            return None
    p = os.path.realpath(path)
    best, kind = -1, None
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        if (p == point or p.startswith(point.rstrip("/") + "/")) and len(point) > best:
            best, kind = len(point), parts[2]
    return kind


def check_local(path: str | os.PathLike[str], mounts: str | None = None) -> None:
    """Raise :class:`DurableError` when ``path`` is on a network file system (see :data:`NETWORK_FS`)."""
    kind = filesystem_type(path, mounts)
    if kind in NETWORK_FS:
        raise DurableError(
            f"{path} is on a {kind} network file system, where SQLite's locking is unsafe "
            "(the database can be corrupted): keep the SQLite file on a local disk, "
            "or share sessions through PostgreSQL (postgresql://...)"
        )


def _fts_query(query: str) -> str:
    """Return an FTS5 query that matches every word of ``query`` (each quoted, so nothing is syntax)."""
    return " ".join('"' + w.replace('"', '""') + '"' for w in words(query))


class SqliteStore:
    """A store of many sessions in the SQLite database ``path`` (created, with its folder, if missing).

    Opening refuses a database on a network file system (see the module
    docs). ``fsync=True`` syncs every commit to disk (survives power loss);
    without it a committed append survives the process being killed, as
    in the JSONL store. One connection per store object, shared by its
    threads under a lock; other processes open their own and wait up to
    ``timeout`` seconds for a writer's lock.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False, timeout: float = 30.0) -> None:
        self.path = Path(path).expanduser()
        self._timeout = timeout
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreWriteError(
                f"cannot create the folder of the SQLite store {self.path}: {e.strerror or e}"
            ) from None
        check_local(self.path.parent)
        self._lock = threading.Lock()
        self._db, self.read_only = connect(self.path, timeout, fsync)

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"

    def describe(self) -> str:
        """Return the database file's path."""
        return str(self.path)

    def close(self) -> None:
        """Close the connection (the store cannot be used afterwards)."""
        self._db.close()

    def _write(self, doing: str):
        """``with``: one write transaction (see :class:`_Transaction`); refused in one line when read-only."""
        if self.read_only:
            raise StoreWriteError(
                f"cannot {doing}: the SQLite store {self.path} is open read-only (its file or folder cannot be "
                "written here); nothing was written"
            )
        return _Transaction(self, doing)

    def _errors(self, doing: str) -> _Errors:
        """``with``: turn a SQLite error while ``doing`` something into one line naming the file
        (:func:`.sqliteopen.error`)."""
        return _Errors(self, doing)

    def create_session(
        self, id: str, parent_id: str = "", *, entries: Sequence[Entry] = (), created_at: str = ""
    ) -> SessionRecord:
        """Create a session holding ``entries`` in one transaction (all or nothing); raises
        ``SessionExists`` when the id is taken (atomic across processes). ``created_at``
        keeps a copied session's time (now when empty)."""
        check_session_id(id)
        rec = SessionRecord(id, parent_id, created_at or now())
        rows = _rows(entries)
        with self._errors(f"create session {id!r}"), self._write(f"create session {id!r}"):
            try:
                self._db.execute("INSERT INTO sessions VALUES (?, ?, ?)", (id, parent_id, rec.created_at))
            except sqlite3.IntegrityError:
                raise SessionExists(f"session {id!r} already exists in {self.path}") from None
            self._insert(id, rows)
        return rec

    def load_session(self, id: str) -> SessionRecord:
        check_session_id(id)
        with self._errors(f"load session {id!r}"), self._lock:
            row = self._db.execute("SELECT id, parent_id, created_at FROM sessions WHERE id = ?", (id,)).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {id!r} in {self.path}")
        return SessionRecord(*row)

    def load_entries(self, id: str) -> list[Entry]:
        """Return the session's entries in append order, decoded as the JSONL store decodes its lines.

        Raises ``SessionNotFound``; a row that does not decode raises
        :class:`~durable_nb.errors.CorruptLog` naming the session and entry.
        Cost: one indexed read, O(entries), in one read transaction. SQLite
        joins the bodies of each chunk of rows into one byte string that
        msgspec decodes in one pass, one query a chunk (:mod:`.sqliteload`);
        the order of a join is checked, not assumed. Only when a chunk is refused (a row that is not
        JSON text of an entry, or out of order) are the rows read one by one,
        to name the bad one.
        """
        check_session_id(id)
        with self._errors(f"load session {id!r}"), self._lock:
            self._db.execute("BEGIN")
            try:
                found = self._db.execute("SELECT 1 FROM sessions WHERE id = ?", (id,)).fetchone()
                with collector_paused():
                    entries = joined(self._db, id) if found is not None else []
                rows: list = []
                if entries is None:
                    rows = self._db.execute(
                        "SELECT id, body FROM entries WHERE session = ? ORDER BY rowid", (id,)
                    ).fetchall()
            finally:
                self._db.execute("COMMIT")
        if found is None:
            raise SessionNotFound(f"no session {id!r} in {self.path}")
        return decode_rows(rows, f"{self.path} session {id!r}") if entries is None else entries

    def append_entries(self, id: str, entries: Sequence[Entry]) -> None:
        """Append entries in one transaction (all or nothing).

        Everything is encoded first (an unencodable entry writes nothing).
        Idempotent: an entry whose id the session already holds with the
        same content is skipped (a retried append); the same id with other
        content raises :class:`DurableError` and writes nothing. Raises
        ``SessionNotFound``. Cost: O(size of the new entries) plus an index
        update each.
        """
        check_session_id(id)
        rows = _rows(entries)
        doing = f"append to session {id!r}"
        with self._errors(doing), self._write(doing):
            self._insert(id, rows)

    def _insert(self, id: str, rows: list[tuple[str, str]]) -> None:
        """Insert encoded entry rows into session ``id`` (inside the caller's transaction); see
        :meth:`append_entries`. Raises ``SessionNotFound`` (the insert stores nothing into a missing
        session: one statement a row, no query before it). The search index catches up at the next
        search (:mod:`.sqliteindex`)."""
        if len(rows) == 1:  # a turn's append: one statement (executemany's setup costs ~1 µs)
            cur = self._db.execute(_INSERT, (id, *rows[0]))
        else:
            cur = self._db.executemany(_INSERT, [(id, i, b) for i, b in rows])
        if rows and cur.rowcount == len(rows):
            return
        if self._db.execute("SELECT 1 FROM sessions WHERE id = ?", (id,)).fetchone() is None:
            raise SessionNotFound(f"no session {id!r} in {self.path}")
        for eid, body in rows:  # some were stored already (or twice in this batch): each must be the same
            (old,) = self._db.execute("SELECT body FROM entries WHERE session = ? AND id = ?", (id, eid)).fetchone()
            if not same_line(old, body):
                raise DurableError(
                    f"session {id!r} already holds an entry {eid!r} with other content; nothing was appended"
                )

    def list_sessions(self) -> list[SessionRecord]:
        """Return every session's record, oldest first."""
        with self._errors("list sessions"), self._lock:
            rows = self._db.execute("SELECT id, parent_id, created_at FROM sessions ORDER BY created_at, id").fetchall()
        return [SessionRecord(*r) for r in rows]

    def summaries(self, unreadable: list[tuple[str, str]] | None = None) -> list[tuple[SessionRecord, int, str]]:
        """Return ``(record, entry count, last entry's created_at or "")`` for every session, oldest
        first, without decoding an entry: what ``%durable sessions`` lists.

        Each session's last row is parsed for its time (NaN and Infinity,
        which the codec writes and SQLite's JSON functions refuse, are
        fine). A session whose last row is not a JSON object is left out
        and, with an ``unreadable`` list, added to it as ``(session id,
        reason naming the file and the entry)``: one bad row never hides
        the other sessions (a bad row further back is named when the
        session is opened). Cost: one query, O(entries) in the index, and
        one parse of each session's last row.
        """
        last = "FROM entries e WHERE e.session = s.id ORDER BY e.rowid DESC LIMIT 1"
        with self._errors("list sessions"), self._lock:
            rows = self._db.execute(
                "SELECT s.id, s.parent_id, s.created_at, (SELECT count(*) FROM entries e WHERE e.session = s.id), "
                f"(SELECT e.id {last}), (SELECT e.body {last}) FROM sessions s ORDER BY s.created_at, s.id"
            ).fetchall()
        out = []
        for a, b, c, n, eid, body in rows:
            obj = _json_object(body) if n else {}
            if obj is None:
                if unreadable is not None:
                    unreadable.append(
                        (a, f"{self.path} session {a!r}: entry {eid!r} is not a JSON object (a damaged row)")
                    )
                continue
            at = obj.get("created_at", "")
            out.append((SessionRecord(a, b, c), n, at if type(at) is str else ""))
        return out

    def search(self, query: str, session: str | None = None, limit: int = 50) -> list[Hit]:
        """Return the entries whose text holds every word of ``query``, at most ``limit``: sessions
        oldest first (as :meth:`list_sessions`), each session's entries in append order, the order of
        every store.

        The rule of :mod:`.search` (every store matches the same way): FTS5
        finds the candidates (its tokens are the words, accents kept, in a
        database made since; an older one's index folds accents and splits at
        ``_``, so it finds more), and each candidate's text is checked against
        the rule. ``session`` limits the search to one session. An empty query
        finds nothing. The index first catches up with the rows appended since
        the last search (:mod:`.sqliteindex`; a read-only database's are
        checked one by one). Cost: FTS5 lookups, sorting the candidates by
        session, plus decoding a page of them.
        """
        q = _fts_query(query)
        if not q:
            return []
        if session is not None:
            self.load_session(session)  # SessionNotFound, as in every store
        tail = self._catch_up(session)
        sql = (
            "SELECT e.session, e.id, e.body, e.rowid, s.created_at FROM entries_fts f "
            "JOIN entries e ON e.rowid = f.rowid JOIN sessions s ON s.id = e.session "
            "WHERE entries_fts MATCH ? AND (s.created_at, e.session, e.rowid) > (?, ?, ?)"
        )
        if session is not None:
            sql += " AND e.session = ?"
        sql += " ORDER BY s.created_at, e.session, e.rowid LIMIT ?"
        page = max(limit, 100)
        out: list[Hit] = []
        after: tuple[str, str, int] = ("", "", 0)
        while len(out) < limit:
            with self._errors("search"), self._lock:
                rows = self._db.execute(sql, [q, *after, *([session] if session is not None else []), page]).fetchall()
            full = len(rows) == page
            if tail:  # the rows the index lacks (read-only), merged in order up to this page's last
                end = _order(rows[-1]) if full else None
                rows = sorted(rows + [r for r in tail if end is None or _order(r) <= end], key=_order)
                tail = [r for r in tail if end is not None and _order(r) > end]
            out += hits_of([r[:3] for r in rows], query, str(self.path))
            if not full:
                break
            after = _order(rows[-1])
        return out[:limit]

    def _catch_up(self, session: str | None) -> list[tuple[str, str, str, int, str]]:
        """Index the rows appended since the last search (:func:`.sqliteindex.catch_up`); return ``[]``,
        or, in a database that cannot be written, the rows the index lacks (``session``'s only)."""
        with self._errors("search"), self._lock:
            if not behind(self._db):
                return []
            if self.read_only:
                return unindexed(self._db, session)
        with self._errors("index the entries appended since the last search"), self._write("search"):
            with collector_paused():
                catch_up(self._db)
        return []


def _order(row: tuple) -> tuple[str, str, int]:
    """The order of a search's ``(session, id, body, rowid, session's created_at)`` rows: sessions
    oldest first, then by id, then append order."""
    return (row[4], row[0], row[3])


# A row into session ?1, stored only when the session exists (no row: the caller tells a missing session
# from an id stored already); OR IGNORE: an id the session holds is compared by the caller.
_INSERT = "INSERT OR IGNORE INTO entries SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?1)"


class _Errors:
    """``with``: a SQLite error raised inside becomes :func:`.sqliteopen.error`'s one line (see
    :meth:`SqliteStore._errors`; a class, not a generator: ~0.6 µs less on every append)."""

    def __init__(self, store: SqliteStore, doing: str) -> None:
        self.store = store
        self.doing = doing

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None and issubclass(exc_type, sqlite3.DatabaseError):
            st = self.store
            raise error(exc, st.path, self.doing, st._timeout) from None


class _Transaction:
    """``with``: hold the store's lock inside ``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error)."""

    def __init__(self, store: SqliteStore, doing: str) -> None:
        self.store = store
        self.doing = doing

    def __enter__(self) -> None:
        self.store._lock.acquire()
        try:
            self.store._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.store._lock.release()
            raise

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.store._db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.store._lock.release()


def _rows(entries: Sequence[Entry]) -> list[tuple[str, str]]:
    """Return ``(id, JSON body)`` for each entry: everything encoded before any write."""
    return [(e.id, encode_line(e)[:-1].decode("utf-8")) for e in entries]


def _json_object(body: object) -> dict | None:
    """Return the JSON object a row's body holds (NaN and Infinity allowed), or ``None`` when it holds none."""
    if type(body) is not str:
        return None
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return obj if type(obj) is dict else None
