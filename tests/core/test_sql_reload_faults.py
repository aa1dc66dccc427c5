"""The SQL reloads in chunks when something goes wrong midway: one snapshot over every chunk, the store's
lock held throughout, a later chunk refused or too big read as rows, and a database error or an interrupt
midway leaves no transaction open and the store usable (PostgreSQL: the pool's connection too)."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from core_helpers import ids, msg

from durable_nb import session
from durable_nb.errors import DurableError
from durable_nb.session import pgload, sqliteload

TEN = [f"a{i}" for i in range(10)]


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A SQLite store holding session ``a`` of 10 entries, read 3 rows a chunk (four chunks)."""
    monkeypatch.setattr(sqliteload, "CHUNK", 3)
    st = session.SqliteStore(tmp_path / "s.db")
    st.create_session("a")
    for i in range(10):
        st.append_entries("a", [msg(f"a{i}", f"a{i - 1}" if i else "", f"text {i}")])
    yield st
    st.close()


def _usable(st) -> None:
    """No transaction left open, and the next reload whole."""
    assert not st._db.in_transaction
    assert ids(st.load_entries("a")) == TEN


def _spy(monkeypatch, module, on_chunk):
    """Call ``on_chunk(n)`` before the n-th chunk (from 1) of ``module``'s reload is decoded."""
    real, seen = module.decode_lines, []

    def spy(lines):
        seen.append(lines)
        on_chunk(len(seen))
        return real(lines)

    monkeypatch.setattr(module, "decode_lines", spy)
    return seen


def test_an_append_from_another_thread_waits_for_the_reload(store, monkeypatch):
    """The store's one connection is the reload's until it ends: another thread's append waits for the
    lock, and the reload returns the session as it was when it began."""
    other: list[threading.Thread] = []

    def on_chunk(n):
        if n == 2:
            t = threading.Thread(target=store.append_entries, args=("a", [msg("late", "a9")]))
            t.start()
            t.join(0.3)
            assert t.is_alive()  # waiting for the lock
            other.append(t)

    _spy(monkeypatch, sqliteload, on_chunk)
    assert ids(store.load_entries("a")) == TEN
    other[0].join(10)
    assert not other[0].is_alive()
    assert ids(store.load_entries("a"))[-1] == "late"


def test_rows_another_process_appends_mid_reload_are_not_in_it(store, monkeypatch):
    """One read transaction over every chunk: a commit elsewhere after the first chunk is not seen (its
    row would land in the last chunk)."""

    def on_chunk(n):
        if n == 1:
            session.SqliteStore(store.path).append_entries("a", [msg("late", "a9")])

    _spy(monkeypatch, sqliteload, on_chunk)
    assert ids(store.load_entries("a")) == TEN
    monkeypatch.undo()
    monkeypatch.setattr(sqliteload, "CHUNK", 3)
    assert ids(store.load_entries("a"))[-1] == "late"


def test_a_later_chunk_too_big_for_one_value_falls_back_to_the_rows(store):
    store.append_entries("a", [msg("big1", "a9", "x" * 2000), msg("big2", "big1", "y" * 2000)])  # chunk 4, with a9
    store._db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 3000)  # each body fits, and the first chunks: not chunk 4
    assert ids(store.load_entries("a")) == [*TEN, "big1", "big2"]
    assert not store._db.in_transaction


def test_a_refused_later_chunk_reads_the_rows(store, monkeypatch):
    real, calls = sqliteload.ascending, []

    def second_refused(rowids, count):
        calls.append(rowids)
        return len(calls) != 2 and real(rowids, count)

    monkeypatch.setattr(sqliteload, "ascending", second_refused)
    run: list[str] = []
    store._db.set_trace_callback(run.append)
    assert ids(store.load_entries("a")) == TEN
    store._db.set_trace_callback(None)
    assert len(calls) == 2 and [q for q in run if "SELECT id, body" in q]
    assert not store._db.in_transaction


def test_a_database_error_in_a_later_chunk_is_one_line_and_leaves_the_store_usable(store):
    joins: list[str] = []
    now = [""]

    def started(q):
        now[0] = q
        joins.extend([q] if "group_concat" in q else [])

    store._db.set_trace_callback(started)
    # SQLite's progress handler: non-zero interrupts the statement under way, here the second join only
    store._db.set_progress_handler(lambda: len(joins) == 2 and "group_concat" in now[0], 1)
    with pytest.raises(DurableError, match=r"cannot load session 'a': the SQLite store .* fails: interrupted"):
        store.load_entries("a")
    store._db.set_progress_handler(None, 1)
    store._db.set_trace_callback(None)
    _usable(store)


@pytest.mark.parametrize("at", [1, 2, 4])
def test_an_interrupt_while_decoding_leaves_the_store_usable(store, monkeypatch, at):
    def on_chunk(n):
        if n == at:
            raise KeyboardInterrupt

    _spy(monkeypatch, sqliteload, on_chunk)
    with pytest.raises(KeyboardInterrupt):
        store.load_entries("a")
    monkeypatch.undo()
    monkeypatch.setattr(sqliteload, "CHUNK", 3)
    _usable(store)


@pytest.fixture
def pg_store(pg_dsn, monkeypatch):
    """A PostgreSQL store holding session ``pa`` of 10 entries, streamed 3 rows a chunk."""
    monkeypatch.setattr(pgload, "CHUNK", 3)
    st = session.PostgresStore(pg_dsn)
    st.create_session("pa", entries=[msg(f"a{i}", f"a{i - 1}" if i else "", f"text {i}") for i in range(10)])
    yield st
    st.close()


@pytest.mark.pg
@pytest.mark.parametrize("at", [1, 2, 4])
def test_an_interrupt_while_decoding_postgres_rows_leaves_the_pool_usable(pg_store, monkeypatch, at):
    """The stream left midway is closed at once (psycopg's stream holds the connection's lock until it
    is: a traceback keeping it alive would hang the transaction's end)."""

    def on_chunk(n):
        if n == at:
            raise KeyboardInterrupt

    _spy(monkeypatch, pgload, on_chunk)
    with pytest.raises(KeyboardInterrupt):
        pg_store.load_entries("pa")
    monkeypatch.undo()
    assert ids(pg_store.load_entries("pa")) == TEN
