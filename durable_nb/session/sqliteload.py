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
ahead. A session of one chunk is read without a thread. The thread is a
:class:`~.readahead.ReadAhead`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator

from .codec import decode_lines
from .entry import Entry
from .readahead import ReadAhead

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
    out = _decoded([], row)
    if row[0] < CHUNK or out is None:
        return out
    reader = ReadAhead(lambda: _chunks(db, id, row[4]), "durable_nb sqlite reader")
    try:
        for later in reader:
            if _decoded(out, later) is None:
                return None
        return out
    except sqlite3.DataError:
        return None
    finally:
        reader.stop()


def _chunks(db: sqlite3.Connection, id: str, after: int) -> Generator[tuple, None, None]:
    """Yield the :data:`JOINED` rows of session ``id``'s chunks after rowid ``after``, in order."""
    while True:
        row = db.execute(JOINED, (id, after, CHUNK - 1)).fetchone()
        yield row
        if row[0] < CHUNK:
            return
        after = row[4]


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
