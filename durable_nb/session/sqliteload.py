"""Reading a session's entries from SQLite: the bodies of each chunk of rows joined by SQLite, one query a chunk.

What :meth:`~durable_nb.session.SqliteStore.load_entries` runs inside its
read transaction, holding the store's lock. SQLite joins the bodies of each
:data:`CHUNK` rows into one byte string (no Python string per row) that
msgspec decodes in one pass; chunks keep the buffers small enough to be
reused (a whole session's would be fresh memory, and over SQLite's 1 GB
value limit past ~1.5M entries). A chunk is one query (:data:`JOINED`: its
bound is a subquery), not an index walk and then the join.

The joins are not moved to a second thread: ``sqlite3`` releases the GIL
while SQLite steps, so they could overlap the decode, but measured on 2
shared cores the overlap never paid (the reader waits up to the switch
interval for the GIL each time it gets back from SQLite, and a decode holds
it); see benchmarks/README.md, the SQL stores' fifth pass.
"""

from __future__ import annotations

import sqlite3

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


def joined(db: sqlite3.Connection, id: str) -> list[Entry] | None:
    """Return session ``id``'s entries read :data:`CHUNK` rows at a time as joined lines on ``db`` (inside
    the caller's read transaction, under its lock), or ``None`` when a chunk is refused: a body that is not
    text, bodies joined out of rowid order, lines that do not decode to one entry per row, or a chunk too
    big for one SQLite value (the caller then reads the rows one by one, to name the bad one).

    O(size): one query a chunk."""
    out: list[Entry] = []
    after = 0
    try:
        while True:
            row = db.execute(JOINED, (id, after, CHUNK - 1)).fetchone()
            if _decoded(out, row) is None:
                return None
            if row[0] < CHUNK:
                return out
            after = row[4]
    except sqlite3.DataError:  # SQLITE_TOOBIG: bodies too long to join
        return None


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
