"""Reading a session's entries from SQLite: SQLite joins the next chunk on a thread while this one decodes.

What :meth:`~durable_nb.session.SqliteStore.load_entries` runs inside its
read transaction, holding the store's lock. SQLite joins the bodies of each
:data:`CHUNK` rows into one byte string (no Python string per row) that
msgspec decodes in one pass; chunks keep the buffers small enough to be
reused (a whole session's would be fresh memory, and over SQLite's 1 GB
value limit past ~1.5M entries).

The two halves overlap: Python's ``sqlite3`` releases the GIL while SQLite
steps a statement, and a chunk's whole join is one step of one query
(:data:`JOINED`), so a reader thread has SQLite join chunk k+1 on the
connection while this thread decodes chunk k (msgspec holds the GIL). Wall
time tends to the larger half instead of their sum when a second core is
free; CPU time is the sum, as before. One query a chunk matters: each time
the reader gets back from SQLite it must wait for the GIL, which a decode
gives up only between its pieces, so few returns a chunk keep the reader
ahead. A session of one chunk is read without a thread.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from typing import cast

from .codec import decode_lines
from .entry import Entry

CHUNK = 2_000
"""Rows joined per query (~1.3 MB of bodies here: still in cache when decoded, and reused)."""

# A chunk's rows: their count, how many bodies are not text, the bodies as one byte string of lines, their
# rowids, the last rowid. The chunk is the CHUNK rows after rowid ?2 (its last rowid found by an index walk:
# LIMIT and OFFSET follow ORDER BY, which is defined; the rest of the session when fewer are left). The
# order of a group_concat is arbitrary in SQLite's documentation (an ORDER BY inside it needs 3.44; Python's
# sqlite3 here is 3.40): the rowids are joined in the same pass as the bodies (one step of both aggregates a
# row), so the bodies are in rowid order exactly when the rowids ascend (:func:`ascending`).
JOINED = (
    "SELECT count(*), total(typeof(body) != 'text'), CAST(group_concat(body, char(10)) AS BLOB),"
    " group_concat(rowid), max(rowid) FROM entries WHERE session = ?1 AND rowid > ?2 AND rowid <= coalesce("
    "(SELECT rowid FROM entries WHERE session = ?1 AND rowid > ?2 ORDER BY rowid LIMIT 1 OFFSET ?3),"
    " 9223372036854775807)"
)

_DONE = object()  # the reader's last item: every chunk was queued


def joined(db: sqlite3.Connection, id: str) -> list[Entry] | None:
    """Return session ``id``'s entries read :data:`CHUNK` rows at a time as joined lines on ``db`` (inside
    the caller's read transaction, under its lock), or ``None`` when a chunk is refused: a body that is not
    text, bodies joined out of rowid order, lines that do not decode to one entry per row, or a chunk too
    big for one SQLite value (the caller then reads the rows one by one, to name the bad one).

    The chunks after the first are joined by a reader thread (module docs), which has stopped using
    ``db`` when this returns or raises; a database error in it is raised here. O(size)."""
    try:
        row = db.execute(JOINED, (id, 0, CHUNK - 1)).fetchone()
    except sqlite3.DataError:  # SQLITE_TOOBIG: bodies too long to join
        return None
    if row[0] < CHUNK:
        return _decoded([], row)
    reader = _Reader(db, id, row[4])
    try:
        out = _decoded([], row)
        while out is not None:
            item = reader.next()
            if item is _DONE:
                return out
            if isinstance(item, sqlite3.DataError):
                return None
            if isinstance(item, BaseException):
                raise item
            out = _decoded(out, cast(tuple, item))
        return None
    finally:
        reader.stop()


def _decoded(out: list[Entry], row: tuple) -> list[Entry] | None:
    """Return ``out`` extended by the entries of a :data:`JOINED` row, or ``None`` when the chunk is refused."""
    count, other, lines, rowids, _ = row
    if not count:
        return out
    if other or not ascending(rowids, count):
        return None
    some = decode_lines(lines)
    if some is None or len(some) != count:
        return None
    out += some
    return out


def ascending(rowids: str, count: int) -> bool:
    """Return whether ``rowids`` (``count`` integers joined by commas) ascend. O(count)."""
    r = list(map(int, rowids.split(",")))
    return len(r) == count and r == sorted(r)


class _Reader:
    """A thread running :data:`JOINED` for the chunks after rowid ``after``, each row queued (two at most
    ahead of the decode), then :data:`_DONE`, or the exception that stopped it."""

    def __init__(self, db: sqlite3.Connection, id: str, after: int) -> None:
        self._items: queue.Queue = queue.Queue(2)
        self._stopping = self._ended = False
        self._thread = threading.Thread(
            target=self._run, args=(db, id, after), name="durable_nb sqlite reader", daemon=True
        )
        self._thread.start()

    def _run(self, db: sqlite3.Connection, id: str, after: int) -> None:
        end: object = _DONE
        try:
            while not self._stopping:
                row = db.execute(JOINED, (id, after, CHUNK - 1)).fetchone()
                self._items.put(row)
                if row[0] < CHUNK:
                    break
                after = row[4]
        except BaseException as e:  # raised by the decoding thread
            end = e
        finally:
            self._items.put(end)

    def next(self) -> object:
        """Return the next queued item, waiting for it: a row, :data:`_DONE` or an exception (the last)."""
        item = self._items.get()
        self._ended = item is _DONE or isinstance(item, BaseException)
        return item

    def stop(self) -> None:
        """Stop after the query under way (its rows are dropped) and wait for the thread: ``db`` is
        then the caller's alone. The queue is drained to its last item, so the thread never waits on it."""
        self._stopping = True
        while not self._ended:
            self.next()
        self._thread.join()
