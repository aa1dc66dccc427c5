import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # so tests import reliability_support

from reliability_support import FSYNC, NOOP_LOCK  # noqa: E402

from durable_nb.session import open_store  # noqa: E402


@pytest.fixture(params=["jsonl", "jsonl-noop-lock", "jsonl-fsync", "sqlite", "postgres"])
def store_spec(request, tmp_path):
    """``(store string, store, env)`` for each persistent store: the string is what a child
    process opens, ``env`` what its environment adds. ``jsonl-noop-lock`` is the JSONL store
    with a lock that does nothing in the children (as ``flock`` on some network file systems);
    ``jsonl-fsync`` the JSONL store with ``fsync=True`` in the children (a flush after the lock)."""
    spec = {
        "jsonl": lambda: str(tmp_path / "store"),
        "jsonl-noop-lock": lambda: str(tmp_path / "store"),
        "jsonl-fsync": lambda: str(tmp_path / "store"),
        "sqlite": lambda: f"sqlite://{tmp_path / 'store.db'}",
        "postgres": lambda: request.getfixturevalue("pg_dsn"),
    }[request.param]()
    store = open_store(spec)
    env = {"jsonl-noop-lock": {NOOP_LOCK: "1"}, "jsonl-fsync": {FSYNC: "1"}}.get(request.param, {})
    yield spec, store, env
    if hasattr(store, "close"):
        store.close()


@pytest.fixture
def readonly_dir():
    """A folder the test child cannot write: mode 0555, and the child runs as ``nobody`` when we are root."""
    d = tempfile.mkdtemp(prefix="durable-ro-")
    os.chmod(d, 0o755)
    yield d
    os.chmod(d, 0o755)
    for name in os.listdir(d):
        os.unlink(os.path.join(d, name))
    os.rmdir(d)
