"""The SQL stores' reload in chunks: a session spanning many chunks comes back whole and in order,
and a bad row in any chunk is still named, as when the rows were read one by one."""

from __future__ import annotations

import sqlite3

import pytest
from core_helpers import ids, msg

from durable_nb import session
from durable_nb.errors import CorruptLog
from durable_nb.session import pgload, sqliteload
from tests.support import store_opener


@pytest.fixture(params=["sqlite", "postgres"])
def reopen(request, tmp_path, monkeypatch):
    """Another store object on one SQLite file / PostgreSQL schema, reading 3 rows a chunk."""
    monkeypatch.setattr(sqliteload, "CHUNK", 3)
    monkeypatch.setattr(pgload, "CHUNK", 3)
    with store_opener(request.param, tmp_path, request) as (open_store, _):
        yield open_store


def _two_sessions(st, n: int = 10) -> list[session.Entry]:
    """Interleave the rows of sessions ``a`` and ``b`` (custom entries among them); return a's entries."""
    st.create_session("a")
    st.create_session("b")
    written = []
    for i in range(n):
        e = msg(f"a{i}", f"a{i - 1}" if i else "", f"text {i}")
        if i % 4 == 1:
            e = session.CustomEntry(id=f"a{i}", parent_id=f"a{i - 1}", kind="reload_tally", data={"n": i})
        st.append_entries("a", [e])
        st.append_entries("b", [msg(f"b{i}")])
        written.append(e)
    return written


@pytest.mark.parametrize("n", [0, 1, 3, 7, 9, 10])
def test_a_session_of_many_chunks_reloads_whole_and_in_order(reopen, n):
    written = _two_sessions(reopen(), n)
    got = reopen().load_entries("a")
    assert ids(got) == ids(written) and got == written
    assert ids(reopen().load_entries("b")) == [f"b{i}" for i in range(n)]


def test_a_bad_row_in_a_later_chunk_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(sqliteload, "CHUNK", 3)
    path = tmp_path / "s.db"
    _two_sessions(session.SqliteStore(path), 7)
    db = sqlite3.connect(path)
    db.execute("INSERT INTO entries VALUES ('a', 'bad', 'not json {')")
    db.execute("INSERT INTO entries VALUES ('b', 'blob', x'7b7d')")
    db.execute("INSERT INTO entries VALUES ('b', 'blank', '')")
    db.commit()
    db.close()
    st = session.SqliteStore(path)
    with pytest.raises(CorruptLog, match=r"session 'a': entry 'bad' does not decode"):
        st.load_entries("a")
    with pytest.raises(CorruptLog, match=r"session 'b': entry 'blob' is not JSON text"):
        st.load_entries("b")


def test_a_session_too_big_for_one_sqlite_value_still_loads(tmp_path):
    st = session.SqliteStore(tmp_path / "s.db")
    written = _two_sessions(st, 30)
    st._db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1000)  # a chunk's joined bodies exceed it: rows one by one
    assert st.load_entries("a") == written


@pytest.mark.pg
def test_a_bad_postgres_row_in_a_later_chunk_is_named(pg_dsn, monkeypatch):
    import psycopg

    monkeypatch.setattr(pgload, "CHUNK", 3)
    st = session.PostgresStore(pg_dsn)
    _two_sessions(st, 7)
    with psycopg.connect(pg_dsn) as c:
        c.execute(
            "INSERT INTO durable_entries (session, id, body, words) VALUES "
            """('a', 'bad', '{"durable_nb_line": "not json {"}', ''), ('b', 'none', '{"x": 1}', '')"""
        )
    with pytest.raises(CorruptLog, match=r"session 'a': entry 'bad' does not decode"):
        st.load_entries("a")
    with pytest.raises(CorruptLog, match=r"session 'b': entry 'none' is not JSON text"):
        st.load_entries("b")
    st.close()


def test_a_sqlite_reload_joins_a_chunk_a_query(tmp_path, monkeypatch):
    """Pins the speed of a reload: the bodies come joined, one query (and one index walk) a chunk of
    rows, never a fetch of every row (which costs a Python tuple and two strings a row)."""
    monkeypatch.setattr(sqliteload, "CHUNK", 3)
    path = tmp_path / "s.db"
    written = _two_sessions(session.SqliteStore(path), 10)
    st = session.SqliteStore(path)
    run: list[str] = []
    st._db.set_trace_callback(run.append)
    assert st.load_entries("a") == written
    joined = [q for q in run if "group_concat" in q]
    assert len(joined) == 4  # rows 1-3, 4-6, 7-9, 10
    assert not [q for q in run if "SELECT id, body" in q]


def test_bodies_joined_out_of_rowid_order_are_read_as_rows(tmp_path, monkeypatch):
    """group_concat's order is not documented (before SQLite 3.44): a chunk whose rowids do not ascend
    is not trusted, and the session is read row by row in rowid order instead."""
    monkeypatch.setattr(sqliteload, "CHUNK", 3)
    monkeypatch.setattr(
        sqliteload,
        "JOINED",
        "SELECT count(*), total(typeof(body) != 'text'), CAST(group_concat(body, char(10)) AS BLOB), group_concat(r),"
        " max(r) FROM (SELECT rowid AS r, body FROM entries WHERE session = ?1 AND rowid > ?2 AND rowid <= coalesce("
        "(SELECT rowid FROM entries WHERE session = ?1 AND rowid > ?2 ORDER BY rowid LIMIT 1 OFFSET ?3),"
        " 9223372036854775807) ORDER BY rowid DESC)",
    )
    path = tmp_path / "s.db"
    written = _two_sessions(session.SqliteStore(path), 7)
    st = session.SqliteStore(path)
    run: list[str] = []
    st._db.set_trace_callback(run.append)
    assert st.load_entries("a") == written
    assert [q for q in run if "SELECT id, body" in q]  # the rows, after the first chunk came reversed


def test_ascending_rowids():
    assert sqliteload.ascending("1,5,9", 3)
    assert not sqliteload.ascending("1,9,5", 3)
    assert not sqliteload.ascending("1,5", 3)


@pytest.mark.pg
def test_a_postgres_reload_reads_in_the_index_order_never_sorting_on_disk(pg_server, pg_dsn):
    """A reload reads the rows in the order the (session, seq) index holds them, as they stream: never a
    sort of the whole session first, which spills to disk past ``work_mem`` (a 100k-entry session wrote
    ~70 MB of temporary files before its first row). Here no temporary file is allowed (superuser only,
    hence the ``postgres`` login) and work memory is 64 kB: the sort the planner picked before fails."""
    st = session.PostgresStore(pg_dsn)
    written = _two_sessions(st, 2_000)
    st.close()
    schema = pg_dsn.rsplit("%3D", 1)[1]
    tight = pg_server.dsn(schema, user="postgres", password="") + "%20-cwork_mem%3D64kB%20-ctemp_file_limit%3D0"
    st = session.PostgresStore(tight)
    assert st.load_entries("a") == written
    st.close()
