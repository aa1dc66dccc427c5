import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # so tests import reliability_support

from durable_nb.session import open_store  # noqa: E402


@pytest.fixture(params=["jsonl", "sqlite", "postgres"])
def store_spec(request, tmp_path):
    """``(store string, store)`` for each persistent store: the string is what a child process opens."""
    spec = {
        "jsonl": lambda: str(tmp_path / "store"),
        "sqlite": lambda: f"sqlite://{tmp_path / 'store.db'}",
        "postgres": lambda: request.getfixturevalue("pg_dsn"),
    }[request.param]()
    store = open_store(spec)
    yield spec, store
    if hasattr(store, "close"):
        store.close()
