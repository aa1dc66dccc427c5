import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from durable_nb import session  # noqa: E402


@pytest.fixture(params=["memory", "jsonl", "sqlite", "postgres"])
def store(request, tmp_path):
    """Each store under the same contract."""
    if request.param == "memory":
        yield session.MemoryStore()
        return
    if request.param == "sqlite":
        st = session.SqliteStore(tmp_path / "store.db")
        yield st
        st.close()
        return
    if request.param == "postgres":
        st = session.PostgresStore(request.getfixturevalue("pg_dsn"))
        yield st
        st.close()
        return
    yield session.JsonlStore(tmp_path / "store")
