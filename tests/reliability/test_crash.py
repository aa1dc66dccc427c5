"""Crash test: SIGKILL a child mid-turn, over and over; nothing acknowledged is lost.

A fork server (``crash_worker.py``) imports durable_nb once and forks one
worker per trial. The worker resumes a session (durable.Agent, offline model,
JsonlStore) and runs turns and appends, printing each persistence receipt as
it gets it; the test SIGKILLs it after a random delay. After every kill:

- the store loads (no CorruptLog);
- every entry whose receipt was reported is present, with the same text;
- (JSONL) every whole line in the file loads, and only torn writes are
  dropped: a torn final line, or one a later append closed with a blank line
  (the store never cuts bytes it did not write);
- the next append works, and the next trial's agent resumes from what is there.

PostgreSQL finishes what a client sent before it died: a COMMIT already in the
server's socket is carried out after the worker is reaped (on a loaded machine its
backend may wait for a CPU), adding an entry no receipt reported. So each check
waits until the server has closed the worker's connections (``PGAPPNAME`` marks
them); only then is the store settled, as a file store is once the worker is dead.

On every persistent store: JSONL, SQLite (a kill mid-transaction) and PostgreSQL
(a kill mid-transaction, the server sees the connection drop); and JSONL once
more with a lock that does nothing (``$DURABLE_NB_TEST_NOOP_LOCK``, as on some
network file systems).
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import subprocess
import threading
import time
import zlib

import pytest
from reliability_support import HERE, child_env

from durable_nb.errors import SessionNotFound
from durable_nb.session import CustomEntry, JsonlStore, display_text, open_store
from durable_nb.session.jsonlstore import is_torn
from durable_nb.session.pgstore import PostgresStore

SESSIONS = 20
TRIALS_PER_SESSION = 5  # 100 kills in all; JSONL: more (up to MAX_KILLS) until one landed mid-write
MAX_KILLS = 400
SEED = int(os.environ.get("CRASH_SEED", "20261130"))
WORKER_APP = "durable-nb-crash-worker"  # the application_name of the workers' PostgreSQL connections
SETTLE_S = 60  # a killed worker's server connections are gone within this (seconds)

pytestmark = pytest.mark.slow  # 100-400 kills per store: minutes, not seconds


class Server:
    def __init__(self, **env: str) -> None:
        self.proc = subprocess.Popen(
            [os.sys.executable, str(HERE / "crash_worker.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=child_env(**env),
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("EOF")

    def next(self, timeout: float = 20) -> str:
        line = self.lines.get(timeout=timeout)
        assert line != "EOF", "the fork server died"
        return line

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _check_file(store: JsonlStore, sid: str) -> tuple[list, bool]:
    """Load the session and check it against the raw file; return (entries, torn tail seen)."""
    raw = store.file(sid).read_bytes()
    *whole, tail = raw.split(b"\n")
    loaded = store.load_entries(sid)
    ids = []
    for i, line in enumerate(whole[1:], start=1):  # every whole line parses, but a closed torn write
        if not line:
            continue
        try:
            ids.append(json.loads(line)["id"])
        except ValueError:
            assert is_torn(line) and whole[i + 1] == b"", f"line {i + 1} is neither an entry nor a closed torn write"
    torn = False
    if tail:
        try:
            ids.append(json.loads(tail)["id"])  # a whole line that only lacks its newline
        except ValueError:
            torn = True
    assert [e.id for e in loaded] == ids, "load dropped or invented an entry before the tail"
    return loaded, torn


def _load(store, sid: str) -> tuple[list, bool] | None:
    """Return (entries, torn tail seen) of the session, or ``None`` when it does not exist."""
    if isinstance(store, JsonlStore):
        return _check_file(store, sid) if store.file(sid).exists() else None
    try:
        return store.load_entries(sid), False
    except SessionNotFound:
        return None


def _cpu_s(pid: int) -> float:
    """Return the CPU time process ``pid`` has run, in seconds (``/proc/<pid>/schedstat``);
    infinity once it is gone."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError):
        return float("inf")


def _run_for(pid: int, seconds: float) -> None:
    """Return once process ``pid`` has run ``seconds`` more of CPU time (or is gone, or 1 s has
    passed). Polls every millisecond."""
    until, deadline = _cpu_s(pid) + seconds, time.monotonic() + 1
    while _cpu_s(pid) < until and time.monotonic() < deadline:
        time.sleep(0.001)


class Settled:
    """Waits until the PostgreSQL server has closed every connection of a killed worker."""

    def __init__(self, dsn: str) -> None:
        import psycopg

        self.conn = psycopg.connect(dsn, autocommit=True)

    def wait(self) -> None:
        """Return once no backend of :data:`WORKER_APP` is left (its last COMMIT, if any, is done);
        fail after :data:`SETTLE_S` seconds. One query per 10 ms (each its own transaction: fresh)."""
        deadline = time.monotonic() + SETTLE_S
        sql = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
        while n := self.conn.execute(sql, (WORKER_APP,)).fetchone()[0]:
            assert time.monotonic() < deadline, f"{n} connection(s) of a killed worker still open after {SETTLE_S} s"
            time.sleep(0.01)

    def close(self) -> None:
        self.conn.close()


def test_sigkill_mid_turn_loses_nothing_acknowledged(store_spec, tmp_path):
    rng = random.Random(SEED)
    spec, store, env = store_spec
    jsonl = isinstance(store, JsonlStore)
    # Opening a SQL store costs a connection: kills are delayed by that much more, so they land mid-work.
    t0 = time.monotonic()
    if not jsonl:
        open_store(spec).close()
    opening = time.monotonic() - t0
    settled = Settled(spec) if isinstance(store, PostgresStore) else None
    server = Server(**env, **({"PGAPPNAME": WORKER_APP} if settled else {}))
    receipts: dict[str, dict[str, int]] = {f"s{i}": {} for i in range(SESSIONS)}
    kills = torn_tails = 0
    try:
        trial = -1
        while (trial := trial + 1) < SESSIONS * TRIALS_PER_SESSION or (jsonl and not torn_tails and trial < MAX_KILLS):
            sid = f"s{trial % SESSIONS}"
            server.proc.stdin.write(f"{spec} {sid} {rng.randrange(2**32)}\n")
            first = server.next()
            assert first.startswith("PID "), first
            pid = int(first.split()[1])
            # Some kills land while the worker loads or makes its first append, most mid-stream
            # (loading a grown log takes longer than the sleep: wait until it is loaded).
            if rng.random() < 0.8:
                assert (loaded := server.next()) == "LOADED", loaded
            # Half the kills come within 10 ms. The rest: SQL stores 0-150 ms after the connection's cost;
            # a JSONL worker (its fork server ran a turn before: no import is left to wait for) once it
            # has run 0-30 ms of CPU time, so a kill lands as far into its writes under load as without.
            if rng.random() < 0.5:
                time.sleep(rng.uniform(0, 0.01))
            elif jsonl:
                _run_for(pid, rng.uniform(0, 0.03))
            else:
                time.sleep(opening + rng.uniform(0, 0.15))
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            while True:
                line = server.next()
                if line.startswith("DONE"):
                    status = int(line.split()[1])
                    break
                if line == "LOADED":
                    continue
                _, eid, crc = line.split()
                receipts[sid][eid] = int(crc)
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (trial, status)
            kills += 1
            if settled is not None:
                settled.wait()

            found = _load(store, sid)
            if found is None:  # killed before it created the session
                assert not receipts[sid]
                continue
            loaded, torn = found
            torn_tails += torn
            by_id = {e.id: e for e in loaded}
            missing = set(receipts[sid]) - set(by_id)
            assert not missing, f"trial {trial} (seed {SEED}): acknowledged entries lost: {sorted(missing)}"
            for eid, crc in receipts[sid].items():
                assert zlib.crc32(display_text(by_id[eid]).encode()) == crc, f"entry {eid} changed"
            for e in loaded:  # one writer: every parent pointer resolves
                assert e.parent_id == "" or e.parent_id in by_id
            assert sum(1 for e in loaded if not e.parent_id) <= 1

            # The next append works: the torn tail is closed (never cut), the new line loads.
            probe = CustomEntry(id=f"probe{trial}", parent_id=loaded[-1].id if loaded else "", kind="probe")
            store.append_entries(sid, [probe])
            after, torn_after = _load(store, sid)
            assert not torn_after and [e.id for e in after] == [e.id for e in loaded] + [probe.id]
            receipts[sid][probe.id] = zlib.crc32(b"probe")
    finally:
        server.close()
        if settled is not None:
            settled.close()
    assert kills >= SESSIONS * TRIALS_PER_SESSION
    # A kill during create_session leaves no half-made session: every one is listed and opens.
    listed = {r.id for r in store.list_sessions()}
    assert all(store.load_entries(sid) is not None for sid in listed)
    checked = sum(map(len, receipts.values()))
    print(f"{kills} kills, {torn_tails} torn tails, {checked} receipts checked")
    assert checked > SESSIONS * TRIALS_PER_SESSION // 2, "too few acknowledged entries to check: kills came too early"
    if jsonl:
        logs = {f.stem for f in store.root.glob("*.jsonl")}
        assert listed == logs
        assert all(f.name.endswith(".tmp") for f in store.root.iterdir() if f.suffix != ".jsonl")
        assert torn_tails > 0, f"no kill of {kills} landed mid-write: the test did not exercise a torn tail"
