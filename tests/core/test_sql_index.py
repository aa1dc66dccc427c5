"""The SQLite store's search index catches up at the first search after appends: what a search finds
is what it found when every append indexed its rows, in a database made before the change, shared
with a version that indexes as it appends, or read-only."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from core_helpers import msg

from durable_nb import session
from durable_nb.session import sqliteopen
from durable_nb.session.search import search_text
from durable_nb.session.sqliteindex import index_text

# The schema of the databases made before the ``indexed`` table (every append indexed its rows).
OLD_SCHEMA = sqliteopen.SCHEMA.split("CREATE TABLE IF NOT EXISTS indexed")[0]


def _fox(i: int, text: str = "") -> session.MessageEntry:
    return msg(f"e{i}", f"e{i - 1}" if i else "", text or f"the quick fox number {i}")


def _old_append(db: sqlite3.Connection, sid: str, entries) -> None:
    """Append as a version that indexes as it appends does (the row, then its index row)."""
    from durable_nb.session.codec import encode_line

    for e in entries:
        cur = db.execute("INSERT INTO entries VALUES (?, ?, ?)", (sid, e.id, encode_line(e)[:-1].decode()))
        db.execute("INSERT INTO entries_fts(rowid, text) VALUES (?, ?)", (cur.lastrowid, index_text(search_text(e))))


def _indexed(path) -> tuple[int, int]:
    """Return (entry rows, rows in the index)."""
    db = sqlite3.connect(path)
    try:
        return db.execute(
            "SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM entries_fts_docsize)"
        ).fetchone()
    finally:
        db.close()


def _read_only(path, monkeypatch) -> session.SqliteStore:
    """Open ``path`` as a store would open a file it cannot write (``mode=ro``)."""
    with monkeypatch.context() as m:
        m.setattr(sqliteopen.os, "access", lambda p, mode: False)
        st = session.SqliteStore(path)
    assert st.read_only
    return st


def _ids(hits) -> list[str]:
    return [h.entry_id for h in hits]


def test_a_database_made_before_the_lazy_index_opens_read_only_and_read_write_and_finds_the_same(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(OLD_SCHEMA)
    db.execute("INSERT INTO sessions VALUES ('s', '', '')")
    _old_append(db, "s", [_fox(i) for i in range(5)])
    db.close()
    ro = _read_only(path, monkeypatch)
    assert _ids(ro.search("fox")) == [f"e{i}" for i in range(5)] and len(ro.load_entries("s")) == 5
    ro.close()
    st = session.SqliteStore(path)  # read-write: the table is added, with every row indexed
    assert _ids(st.search("fox 3")) == ["e3"]
    st.append_entries("s", [_fox(i) for i in range(5, 8)])
    assert _ids(st.search("fox")) == [f"e{i}" for i in range(8)]
    assert _indexed(path) == (8, 8)
    st.close()


def test_rows_a_version_indexing_as_it_appends_added_are_not_indexed_twice(tmp_path):
    path = tmp_path / "s.db"
    st = session.SqliteStore(path)
    st.create_session("s", entries=[_fox(i) for i in range(3)])
    db = sqlite3.connect(path)
    _old_append(db, "s", [_fox(3, "an older version's fox")])
    db.commit()
    db.close()
    st.append_entries("s", [_fox(4)])
    assert _indexed(path) == (5, 1)
    assert _ids(st.search("fox")) == ["e0", "e1", "e2", "e3", "e4"]
    assert _ids(st.search("older fox")) == ["e3"]
    assert _indexed(path) == (5, 5)
    st.close()


def test_a_search_indexes_each_appended_row_once_and_skips_rows_that_do_not_decode(tmp_path):
    path = tmp_path / "s.db"
    st = session.SqliteStore(path)
    st.create_session("s", entries=[_fox(i) for i in range(3)])
    db = sqlite3.connect(path)
    db.execute("INSERT INTO entries VALUES ('s', 'bad', 'not json { fox')")
    db.commit()
    db.close()
    assert _ids(st.search("fox")) == ["e0", "e1", "e2"]  # the bad row is never found, as before
    assert _indexed(path) == (4, 3)
    st.append_entries("s", [_fox(3)])
    assert _ids(st.search("fox")) == ["e0", "e1", "e2", "e3"] and _indexed(path) == (5, 4)
    st.close()


@pytest.mark.parametrize("limit", [1, 50, 150, 400])
def test_a_read_only_database_finds_the_rows_its_index_lacks_in_order(tmp_path, monkeypatch, limit):
    path = tmp_path / "s.db"
    st = session.SqliteStore(path)
    st.create_session("s", entries=[_fox(i) for i in range(120)])
    st.create_session("t", entries=[msg("t0", text="a fox elsewhere")])
    st.search("fox")  # the first 121 rows indexed; the next ones not
    st.append_entries("s", [_fox(i) for i in range(120, 180)])
    st.append_entries("t", [msg("t1", "t0", text="another fox")])
    st.append_entries("s", [_fox(i, "no match here") for i in range(180, 200)])
    st.append_entries("s", [_fox(i) for i in range(200, 260)])
    st.close()
    shutil.copy(path, tmp_path / "copy.db")
    ro = _read_only(path, monkeypatch)
    got = [(_ids(ro.search("fox", limit=limit)), _ids(ro.search("fox", session="s", limit=limit)))]
    ro.close()
    assert _indexed(path) == (262, 121)  # nothing was written
    rw = session.SqliteStore(tmp_path / "copy.db")
    want = [(_ids(rw.search("fox", limit=limit)), _ids(rw.search("fox", session="s", limit=limit)))]
    rw.close()
    assert got == want
    every = [f"e{i}" for i in range(180)] + [f"e{i}" for i in range(200, 260)] + ["t0", "t1"]  # sessions oldest first
    assert want[0][0] == every[:limit]
