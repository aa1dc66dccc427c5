"""Every store returns the same search hits in the same order, so a ``limit`` keeps the same hits.

The order (``Searchable.search``): sessions oldest first, as ``list_sessions`` lists them (by
``created_at``, then id, in code point order), and each session's entries in append order. The
sessions below are created in another order than their times, appended to in turns, with equal
times whose ids sort differently by code point and by a natural-language collation (``B`` < ``a``),
sibling branches, and more candidates than a SQL store's first page.
"""

from __future__ import annotations

import secrets
import shutil

import pytest
from core_helpers import msg

from durable_nb import session
from durable_nb.session import sqliteopen

SESSIONS = [  # (id, created_at), in the order they are created
    ("late", "2024-03-01T00:00:00.000000Z"),
    ("early", "2024-01-01T00:00:00.000000Z"),
    ("b", "2024-02-01T00:00:00.000000Z"),
    ("B", "2024-02-01T00:00:00.000000Z"),
    ("a", "2024-02-01T00:00:00.000000Z"),
]
ORDER = ["early", "B", "a", "b", "late"]  # oldest first; equal times by id, code point order
ROUNDS = 30  # each round appends one entry to each session, in SESSIONS order


def _text(sid: str, i: int) -> str:
    return f"fox {sid} {i}" if i % 3 else f"dog {sid} {i}"  # a third do not match "fox"


def _fill(store) -> None:
    for sid, at in SESSIONS:
        store.create_session(sid, created_at=at)
    for i in range(ROUNDS):
        for sid, _ in SESSIONS:
            parent = f"{sid}-{i - 2}" if i >= 2 else ""  # two interleaved branches in each session
            store.append_entries(sid, [msg(f"{sid}-{i}", parent, _text(sid, i))])


def _documented(query_word: str = "fox") -> list[tuple[str, str]]:
    return [(sid, f"{sid}-{i}") for sid in ORDER for i in range(ROUNDS) if query_word in _text(sid, i)]


def _read_only_sqlite(tmp_path, monkeypatch) -> session.SqliteStore:
    """A read-only copy of a SQLite store whose index lacks the rows appended after its first search."""
    path = tmp_path / "ro.db"
    st = session.SqliteStore(path)
    for sid, at in SESSIONS:
        st.create_session(sid, created_at=at)
    half = ROUNDS // 2
    for i in range(ROUNDS):
        if i == half:
            st.search("fox")  # the index holds the first half
        for sid, _ in SESSIONS:
            st.append_entries(sid, [msg(f"{sid}-{i}", f"{sid}-{i - 2}" if i >= 2 else "", _text(sid, i))])
    st.close()
    shutil.copy(path, tmp_path / "ro-copy.db")
    with monkeypatch.context() as m:
        m.setattr(sqliteopen.os, "access", lambda p, mode: False)
        ro = session.SqliteStore(path)
    assert ro.read_only
    return ro


def _stores(tmp_path, monkeypatch, dsn: str | None = None) -> dict:
    stores = {
        "memory": session.MemoryStore(),
        "jsonl": session.JsonlStore(tmp_path / "jsonl"),
        "sqlite": session.SqliteStore(tmp_path / "s.db"),
    }
    if dsn is not None:
        stores["postgres"] = session.PostgresStore(dsn)
    for st in stores.values():
        _fill(st)
    stores["sqlite read-only"] = _read_only_sqlite(tmp_path, monkeypatch)
    return stores


def _compare(stores: dict) -> None:
    every = len(_documented())
    for limit in [1, 3, 20, 21, every - 1, every, every + 5, 200]:
        for query, sess in [("fox", None), ("FOX", "a"), ("dog", None), ("fox 7", None)]:
            got = {name: st.search(query, session=sess, limit=limit) for name, st in stores.items()}
            first = got["jsonl"]
            for name, hits in got.items():
                assert hits == first, f"{name} vs jsonl: {query!r} session={sess} limit={limit}"
    assert [(h.session_id, h.entry_id) for h in stores["jsonl"].search("fox", limit=200)] == _documented()
    assert [(h.session_id, h.entry_id) for h in stores["jsonl"].search("fox", limit=4)] == _documented()[:4]


def test_every_store_returns_the_same_hits_in_the_documented_order_for_any_limit(tmp_path, monkeypatch):
    stores = _stores(tmp_path, monkeypatch)
    try:
        _compare(stores)
        assert [r.id for r in stores["memory"].list_sessions()] == ORDER  # oldest first, as the others
        assert [r.id for r in stores["sqlite"].list_sessions()] == ORDER
    finally:
        for st in stores.values():
            getattr(st, "close", lambda: None)()


@pytest.fixture
def icu_dsn(pg_server):
    """The DSN of a fresh database whose default collation is ICU's root locale, which sorts ``a``
    before ``B`` (a code point order puts ``B`` first), dropped afterwards."""
    name = f"icu_{secrets.token_hex(3)}"
    pg_server.admin(
        f"CREATE DATABASE {name} OWNER durable TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C.UTF-8'"
    )
    yield pg_server.dsn().replace("/durable?", f"/{name}?")
    pg_server.admin(f"DROP DATABASE {name} WITH (FORCE)")


def test_postgres_returns_the_same_hits_in_the_same_order_as_the_other_stores(tmp_path, monkeypatch, icu_dsn):
    stores = _stores(tmp_path, monkeypatch, icu_dsn)
    try:
        _compare(stores)
        assert [r.id for r in stores["postgres"].list_sessions()] == ORDER
        assert [r.id for r, _, _ in stores["postgres"].summaries()] == ORDER
        with pytest.raises(session.SessionNotFound, match="nope"):
            stores["postgres"].search("fox", session="nope")
    finally:
        for st in stores.values():
            getattr(st, "close", lambda: None)()


@pytest.mark.parametrize("kind", ["memory", "jsonl", "sqlite"])
def test_a_search_of_a_missing_session_raises_session_not_found_in_every_store(tmp_path, kind):
    st = {"memory": session.MemoryStore, "jsonl": session.JsonlStore, "sqlite": session.SqliteStore}[kind]
    store = st() if kind == "memory" else st(tmp_path / ("s.db" if kind == "sqlite" else "j"))
    store.create_session("here")
    with pytest.raises(session.SessionNotFound, match="nope"):
        store.search("fox", session="nope")
