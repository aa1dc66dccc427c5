"""Fixtures every test folder can use: one real PostgreSQL server per test run, IPython's shell.

The server starts the first time a test asks for it and stops when the run
ends (see ``tests/pg_server.py``). Without PostgreSQL installed those tests
are skipped, except under CI (``CI=true``), where that is a failure.

Every test is marked by what it starts (``kernel``, ``browser``, ``pg``; see
``tests/markers.py``), so ``./dev test --fast`` can leave those out.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from markers import (  # noqa: E402, F401  (the hooks that mark each test by what it starts)
    pytest_collection_modifyitems,
    pytest_ignore_collect,
    pytest_runtest_call,
    pytest_runtest_logreport,
    pytest_runtest_makereport,
    pytest_runtest_setup,
    pytest_terminal_summary,
)
from pg_server import PgServer, find_bin  # noqa: E402


@pytest.fixture(scope="session")
def pg_server():
    """The running :class:`PgServer` (started once per test run)."""
    if find_bin() is None:
        msg = "PostgreSQL is not installed (apt-get install postgresql; ./dev test installs it)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.fail("psycopg is not installed: pip install -e '.[test]'")
    server = PgServer().start()
    yield server
    server.stop()


@pytest.fixture
def pg_dsn(pg_server):
    """The DSN (with the ``durable`` role's password) of a fresh, empty schema, dropped afterwards."""
    name = pg_server.new_schema()
    yield pg_server.dsn(name)
    pg_server.drop_schema(name)


@pytest.fixture(scope="module")
def shell():
    """IPython's own shell in this process with the magics loaded (no kernel); after the module,
    tracing off and the store and session set back to their defaults."""
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "durable_nb")
    yield sh
    sh.run_line_magic("durable", "trace off")
    sh.run_line_magic("config", "DurableMagics.store = '.durable'")
    sh.run_line_magic("config", "DurableMagics.session = ''")
