"""The SQLite reload's reader thread (``session/sqliteload.py``): the chunks after the first are joined on
a thread while the caller decodes; whatever goes wrong there or here ends the thread, raises what the
one-thread reload raised, and leaves the store usable; the store's lock and one snapshot cover it all."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from core_helpers import ids, msg

from durable_nb import session
from durable_nb.errors import CorruptLog, DurableError
from durable_nb.session import pgload, sqliteload

READER = "durable_nb sqlite reader"


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


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == READER]


def _usable(st) -> None:
    """No reader left, no transaction left open, and the next reload whole."""
    assert not _readers()
    assert not st._db.in_transaction
    assert ids(st.load_entries("a")) == [f"a{i}" for i in range(10)]


def _spy(monkeypatch, on_chunk):
    """Call ``on_chunk(n)`` before the n-th chunk (from 1) is decoded."""
    real, seen = sqliteload.decode_lines, []

    def spy(lines):
        seen.append(lines)
        on_chunk(len(seen))
        return real(lines)

    monkeypatch.setattr(sqliteload, "decode_lines", spy)
    return seen


def test_the_later_chunks_are_joined_on_a_reader_thread_holding_the_store_lock(store, monkeypatch):
    during = []
    main = threading.current_thread()

    def on_chunk(n):
        during.append((threading.current_thread() is main, store._lock.locked(), len(_readers())))

    _spy(monkeypatch, on_chunk)
    run: list[tuple[str, str]] = []
    store._db.set_trace_callback(lambda q: run.append((threading.current_thread().name, q)))
    assert ids(store.load_entries("a")) == [f"a{i}" for i in range(10)]
    store._db.set_trace_callback(None)
    assert [d[:2] for d in during] == [(True, True)] * 4  # decoded here, the lock held all along
    assert during[1][2] == 1  # the reader was running while chunk 2 was decoded
    joins = [who for who, q in run if "group_concat" in q]
    assert joins == [main.name, READER, READER, READER]
    _usable(store)


def test_a_session_of_one_chunk_is_read_without_a_thread(tmp_path, monkeypatch):
    monkeypatch.setattr(threading.Thread, "start", lambda self: pytest.fail("a thread was started"))
    st = session.SqliteStore(tmp_path / "s.db")
    st.create_session("a", entries=[msg("a0"), msg("a1", "a0")])
    assert ids(st.load_entries("a")) == ["a0", "a1"]


def test_an_append_from_another_thread_waits_for_the_reload(store, monkeypatch):
    """The store's one connection is the reader's during a reload: another thread's append waits for the
    lock, and the reload returns the session as it was when it began."""
    other: list[threading.Thread] = []

    def on_chunk(n):
        if n == 2:
            t = threading.Thread(target=store.append_entries, args=("a", [msg("late", "a9")]))
            t.start()
            t.join(0.3)
            assert t.is_alive()  # waiting for the lock
            other.append(t)

    _spy(monkeypatch, on_chunk)
    assert ids(store.load_entries("a")) == [f"a{i}" for i in range(10)]
    other[0].join(10)
    assert not other[0].is_alive()
    assert ids(store.load_entries("a"))[-1] == "late"


def test_rows_another_process_appends_mid_reload_are_not_in_it(store, monkeypatch):
    """One read transaction over every chunk, the reader's too: a commit elsewhere after the first chunk
    is not seen (the rows would land in the last chunk, which the reader joins)."""

    def on_chunk(n):
        if n == 1:
            session.SqliteStore(store.path).append_entries("a", [msg("late", "a9")])

    _spy(monkeypatch, on_chunk)
    assert ids(store.load_entries("a")) == [f"a{i}" for i in range(10)]
    monkeypatch.undo()
    monkeypatch.setattr(sqliteload, "CHUNK", 3)
    assert ids(store.load_entries("a"))[-1] == "late"


def test_a_bad_row_in_a_chunk_the_reader_joined_is_named(store):
    db = sqlite3.connect(store.path)
    db.execute("INSERT INTO entries VALUES ('a', 'bad', 'not json {')")  # row 11: the reader's fourth chunk
    db.commit()
    db.close()
    with pytest.raises(CorruptLog, match=r"session 'a': entry 'bad' does not decode"):
        store.load_entries("a")
    assert not _readers() and not store._db.in_transaction


def test_a_chunk_too_big_for_one_value_in_the_reader_falls_back_to_the_rows(store):
    store.append_entries("a", [msg("big1", "a9", "x" * 2000), msg("big2", "big1", "y" * 2000)])  # chunk 4, with a9
    store._db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 3000)  # each body fits, and the first chunks: not chunk 4
    assert ids(store.load_entries("a")) == [f"a{i}" for i in range(10)] + ["big1", "big2"]
    assert not _readers()


def test_a_database_error_in_the_reader_is_raised_here_and_nothing_hangs(store):
    def interrupt():  # SQLite's progress handler: non-zero interrupts the statement, in the reader only
        return threading.current_thread().name == READER

    store._db.set_progress_handler(interrupt, 1)
    with pytest.raises(DurableError, match=r"cannot load session 'a': the SQLite store .* fails: interrupted"):
        store.load_entries("a")
    store._db.set_progress_handler(None, 1)
    _usable(store)


@pytest.mark.parametrize("at", [1, 2, 4])
def test_an_error_while_decoding_stops_the_reader(store, monkeypatch, at):
    def on_chunk(n):
        if n == at:
            raise KeyboardInterrupt

    _spy(monkeypatch, on_chunk)
    with pytest.raises(KeyboardInterrupt):
        store.load_entries("a")
    monkeypatch.undo()
    monkeypatch.setattr(sqliteload, "CHUNK", 3)
    _usable(store)


def test_a_refused_chunk_while_the_reader_is_ahead_stops_it(store, monkeypatch):
    """The second chunk refused: the reader, with chunks queued, stops; the rows are read instead."""
    real, calls = sqliteload.ascending, []

    def second_refused(rowids, count):
        calls.append(rowids)
        return len(calls) != 2 and real(rowids, count)

    monkeypatch.setattr(sqliteload, "ascending", second_refused)
    run: list[str] = []
    store._db.set_trace_callback(run.append)
    assert ids(store.load_entries("a")) == [f"a{i}" for i in range(10)]
    store._db.set_trace_callback(None)
    assert len(calls) == 2 and [q for q in run if "SELECT id, body" in q]
    assert not _readers() and not store._db.in_transaction


PG_READER = "durable_nb postgres reader"


@pytest.fixture
def pg_store(pg_dsn, monkeypatch):
    """A PostgreSQL store holding session ``pa`` of 10 entries, streamed 3 rows a chunk."""
    monkeypatch.setattr(pgload, "CHUNK", 3)
    st = session.PostgresStore(pg_dsn)
    st.create_session("pa", entries=[msg(f"a{i}", f"a{i - 1}" if i else "", f"text {i}") for i in range(10)])
    yield st
    st.close()


def _pg_usable(st) -> None:
    assert not [t for t in threading.enumerate() if t.name == PG_READER]
    assert ids(st.load_entries("pa")) == [f"a{i}" for i in range(10)]


@pytest.mark.pg
def test_postgres_chunks_are_taken_off_the_connection_by_a_reader_thread(pg_store, monkeypatch):
    real, where = pgload.decode_lines, []

    def spy(lines):
        where.append((threading.current_thread() is threading.main_thread(), len(_pg_readers())))
        return real(lines)

    monkeypatch.setattr(pgload, "decode_lines", spy)
    assert ids(pg_store.load_entries("pa")) == [f"a{i}" for i in range(10)]
    assert where[0] == (True, 1) and len(where) == 4  # decoded here while the reader ran
    _pg_usable(pg_store)


def _pg_readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == PG_READER]


@pytest.mark.pg
@pytest.mark.parametrize("at", [1, 3])
def test_an_error_in_the_postgres_reader_is_raised_here_and_the_pool_stays_usable(pg_store, monkeypatch, at):
    real = pgload._chunked

    def failing(rows):
        for n, chunk in enumerate(real(rows), 1):
            if n == at:
                raise RuntimeError("the reader failed")
            yield chunk

    monkeypatch.setattr(pgload, "_chunked", failing)
    with pytest.raises(RuntimeError, match="the reader failed"):
        pg_store.load_entries("pa")
    monkeypatch.setattr(pgload, "_chunked", real)
    _pg_usable(pg_store)


@pytest.mark.pg
@pytest.mark.parametrize("at", [1, 2, 4])
def test_an_interrupt_while_decoding_postgres_rows_leaves_the_stream_and_the_pool_usable(pg_store, monkeypatch, at):
    real, seen = pgload.decode_lines, []

    def interrupted(lines):
        seen.append(lines)
        if len(seen) == at:
            raise KeyboardInterrupt
        return real(lines)

    monkeypatch.setattr(pgload, "decode_lines", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pg_store.load_entries("pa")
    monkeypatch.setattr(pgload, "decode_lines", real)
    _pg_usable(pg_store)
