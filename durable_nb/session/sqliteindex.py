"""The SQLite store's full-text index, brought up to date by the first search after appends.

``entries_fts`` (FTS5, contentless, its rowid the entry row's) is a cache
derived from the entries: each row's search text. Appends insert the entry
rows only (indexing a row's text costs about as much as inserting it); a
search first indexes the rows not indexed yet (:func:`catch_up`, one write
transaction, in chunks), so what it finds is what it found when every
append indexed its rows.

What is indexed is kept in the table ``indexed(upto)``: every entry row with
a rowid up to ``upto`` has been indexed (a row that does not decode is left
out of the index, as it always was). Rows above it that are in the index
already (a version of durable_nb that indexes as it appends, sharing the
file) are skipped: FTS5's ``entries_fts_docsize`` table holds a row for each
indexed rowid. A database made before the table had every row indexed as it
was appended: opening it read-write adds the table with ``upto`` at its last
row (:mod:`.sqliteopen`); read-only, the missing table means the same.
A read-only database cannot be indexed: a search there also checks the
rows above ``upto`` by decoding them (:func:`unindexed`: same hits, at the
cost of those rows). An older durable_nb searching a file this one wrote
does not see the rows not yet indexed.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from ..errors import CorruptLog
from .entry import Entry
from .search import search_text
from .sqlrows import decode_rows

_CHUNK = 2_000
_NON_WORD = re.compile(r"\W+")
_ABOVE = "e.rowid > ? AND NOT EXISTS (SELECT 1 FROM entries_fts_docsize d WHERE d.id = e.rowid)"
_UNINDEXED = f"SELECT e.session, e.id, e.body, e.rowid FROM entries e WHERE {_ABOVE}"
_UNINDEXED_HITS = (  # with each row's session's created_at: a search's order
    "SELECT e.session, e.id, e.body, e.rowid, s.created_at FROM entries e "
    f"JOIN sessions s ON s.id = e.session WHERE {_ABOVE}"
)


def index_text(text: str) -> str:
    """Return what the FTS5 index gets for an entry's search ``text``: case-folded, each run of
    non-word characters made one space, so the index's tokens are the rule's
    :func:`~durable_nb.session.search.words` (FTS5 would keep a combining accent inside a token, the
    rule does not); ASCII text is already that way. O(len(text))."""
    folded = text.casefold()
    return folded if folded.isascii() else _NON_WORD.sub(" ", folded)


def watermark(db: sqlite3.Connection) -> int | None:
    """Return ``upto`` (see the module docs), or ``None`` for a database made before the table
    (every row indexed)."""
    try:
        row = db.execute("SELECT upto FROM indexed").fetchone()
    except sqlite3.OperationalError:  # no such table: a read-only database made before it
        return None
    return row[0] if row else 0


def behind(db: sqlite3.Connection) -> bool:
    """Return whether rows were appended above the watermark (one read; O(log rows))."""
    upto = watermark(db)
    if upto is None:
        return False
    (last,) = db.execute("SELECT coalesce(max(rowid), 0) FROM entries").fetchone()
    return last > upto


def catch_up(db: sqlite3.Connection) -> int:
    """Index every row above the watermark not in the index yet, then move the watermark to the last
    row; inside the caller's write transaction. Returns how many rows were indexed.

    Rows are decoded :data:`_CHUNK` at a time (one that does not decode is left out). Cost: O(the
    rows' size), ~8 µs a row (FTS5's insert ~3.6 µs of it, the decode and the search text the rest), once."""
    upto = watermark(db) or 0
    (last,) = db.execute("SELECT coalesce(max(rowid), 0) FROM entries").fetchone()
    done = 0
    while upto < last:
        rows = db.execute(f"{_UNINDEXED} AND e.rowid <= ? ORDER BY e.rowid LIMIT {_CHUNK}", (upto, last)).fetchall()
        if not rows:
            break
        texts = [(rowid, index_text(search_text(e))) for rowid, e in _decodable(rows)]
        db.executemany("INSERT INTO entries_fts(rowid, text) VALUES (?, ?)", texts)
        done += len(texts)
        upto = rows[-1][3]
    db.execute("UPDATE indexed SET upto = ?", (last,))
    return done


def _decodable(rows: Sequence[tuple]) -> list[tuple[int, Entry]]:
    """Return ``(rowid, entry)`` for each ``(session, id, body, rowid)`` row that decodes: all in one
    pass, else one by one."""
    try:
        entries = decode_rows([(r[1], r[2]) for r in rows], "")
        return [(r[3], e) for r, e in zip(rows, entries)]
    except CorruptLog:
        pass
    out = []
    for r in rows:
        try:
            (e,) = decode_rows([(r[1], r[2])], "")
        except CorruptLog:
            continue
        out.append((r[3], e))
    return out


def unindexed(db: sqlite3.Connection, session: str | None) -> list[tuple[str, str, str, int, str]]:
    """Return the ``(session id, entry id, body, rowid, session's created_at)`` rows above the
    watermark not in the index (``session``: that session's only), in rowid order: what a search of a
    database it cannot index checks by decoding them (those that do not decode are left out).
    O(those rows)."""
    upto = watermark(db)
    if upto is None:
        return []
    sql = _UNINDEXED_HITS
    args: list[object] = [upto]
    if session is not None:
        sql += " AND e.session = ?"
        args.append(session)
    rows = db.execute(sql + " ORDER BY e.rowid", args).fetchall()
    good = {rowid for rowid, _ in _decodable(rows)}  # one that does not decode is never found, as in the index
    return [r for r in rows if r[3] in good]
