"""PostgreSQL under a real kernel: a server restarted under the connection pool (issue 25 #17), and
``$DATABASE_URL`` as the store (#3).

The server is one of this test's own (``tests/pg_server.py``), stopped and
started for real (``pg_ctl``). Before, the pool handed out the connections
the restart had killed, so the next turns failed one per pooled
connection although the server was up; and while it was down the pool's
warnings (logged from its worker threads) were printed into the running
cell. Now connections are checked on checkout, and the cell shows only the
store's one line.
"""

from __future__ import annotations

import pytest
from kernel import Kernel
from pg_server import PgServer, find_bin


@pytest.fixture
def own_server():
    if find_bin() is None:
        pytest.skip("PostgreSQL is not installed")
    server = PgServer().start()
    yield server
    server.stop()


def _ctl(server: PgServer, *args: str) -> None:
    server._run("pg_ctl", "-D", str(server.data), "-l", str(server.base / "log"), "-w", *args)


def test_turns_after_a_server_restart_work_and_the_pools_warnings_stay_out_of_cells(own_server, tmp_path):
    k = Kernel(tmp_path)
    try:
        k.ok("%load_ext durable_nb")
        k.ok(f"%durable store {own_server.dsn()}")
        k.ok("%durable use team")
        # several pooled connections: four threads each hold one at once
        k.ok(
            "import threading\n"
            "st = get_ipython().find_magic('durable').__self__.state.store\n"
            "def hold():\n"
            "    with st._pool.connection() as c:\n"
            "        c.execute('SELECT pg_sleep(1.0)')\n"
            "ts = [threading.Thread(target=hold) for _ in range(4)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "assert st._pool.get_stats()['pool_size'] >= 2, st._pool.get_stats()"
        )
        _ctl(own_server, "-m", "fast", "stop")
        r = k.run("%durable sessions\nimport time; time.sleep(2)", timeout=60)  # the pool retries meanwhile
        assert r.status == "error" and r.reply["ename"] == "UsageError", r
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("UsageError: cannot list sessions"), r.stderr
        assert "psycopg" not in r.stdout + r.stderr and own_server.password not in r.stdout + r.stderr
        r = k.run("import time; time.sleep(1.5)")  # a cell while the pool keeps failing in the background
        assert r.stdout == r.stderr == "", (r.stdout, r.stderr)
        _ctl(own_server, "-o", f"-k {own_server.sock} -c listen_addresses=''", "start")
        for i in range(6):  # more turns than pooled connections: every one works
            r = k.run(f"%%durable\nturn {i} after the restart", timeout=60)
            assert r.status == "ok" and "Error" not in r.stderr, (i, r.stderr, r.error)
        assert "12 entries" in k.ok("%durable sessions").shown
    finally:
        k.shutdown()


def test_database_url_from_the_kernels_environment_is_the_store_and_never_shown(
    pg_dsn, pg_server, tmp_path, monkeypatch
):
    """Issue 25 #3 in a real kernel: ``%durable store $DATABASE_URL`` with the DSN (password included)
    in the kernel's environment; nothing of the password in any output, the notebook's cells hold
    only the variable's name."""
    monkeypatch.setenv("DATABASE_URL", pg_dsn)
    k = Kernel(tmp_path)
    try:
        k.ok("%load_ext durable_nb")
        outputs = [k.ok("%durable store $DATABASE_URL"), k.run("%%durable\na turn in the team's database")]
        outputs += [k.ok(line) for line in ("%durable status", "%durable sessions", "%config DurableMagics")]
        assert outputs[0].stdout.startswith("store: PostgreSQL postgresql://durable:***@"), outputs[0].stdout
        assert outputs[1].status == "ok" and "1 session(s)" in outputs[3].shown
        for r in outputs:
            assert pg_server.password not in r.stdout + r.stderr + str(r.displays)
        r = k.run("%durable store ${NOT_SET_IN_THIS_KERNEL}")
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert r.reply["ename"] == "UsageError" and len(lines) == 1 and "$NOT_SET_IN_THIS_KERNEL is not set" in lines[0]
        assert not (tmp_path / "$DATABASE_URL").exists() and not (tmp_path / "${NOT_SET_IN_THIS_KERNEL}").exists()
    finally:
        k.shutdown()
