import pytest

from durable_nb import session


@pytest.fixture(params=["memory", "jsonl", "sqlite", "postgres"])
def reopenable(request, tmp_path):
    """``(store, reopen)``: a store of each kind and a function giving a fresh object on the same data
    (the memory store: the same object)."""
    if request.param == "memory":
        st = session.MemoryStore()
        yield st, lambda: st
        return
    if request.param == "jsonl":
        yield session.JsonlStore(tmp_path / "s"), lambda: session.JsonlStore(tmp_path / "s")
        return
    opened = []
    if request.param == "sqlite":
        make = lambda: session.SqliteStore(tmp_path / "s.db")
    else:
        dsn = request.getfixturevalue("pg_dsn")
        make = lambda: session.PostgresStore(dsn)

    def reopen():
        opened.append(make())
        return opened[-1]

    yield reopen(), reopen
    for st in opened:
        st.close()
