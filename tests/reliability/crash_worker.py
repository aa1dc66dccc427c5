"""A fork server for the crash test: import durable_nb once, fork one worker per trial.

Reads commands from stdin, one per line: ``<store> <session id> <seed>`` (a JSONL
folder, ``sqlite:///file.db`` or a PostgreSQL DSN, see :func:`open_store`).
For each it forks a worker that resumes the session with a durable.Agent
(offline model, that store) and runs turns and appends until it is killed
(or 10 s pass). The worker writes, with one ``os.write`` per line:

- ``PID <pid>`` first, ``LOADED`` once the session is loaded;
- ``R <entry id> <crc32 of its display text>`` for every entry in a
  persistence receipt (``agent_start`` / ``message_end`` events, or an
  ``append`` that returned), right after it gets the receipt.

The server writes ``DONE <wait status>`` once the worker is gone. Before
the first command it runs a few operations in memory (:func:`_warm_up`).
"""

from __future__ import annotations

import os
import random
import sys
import time
import zlib

from reliability_support import apply_lock_switch

from durable_nb import durable
from durable_nb.session import CustomEntry, display_text, open_store

apply_lock_switch()

try:  # imported once here, not in every forked worker (the PostgreSQL store imports it lazily)
    import psycopg  # noqa: F401
    import psycopg_pool  # noqa: F401
except ImportError:
    pass


def _say(line: str) -> None:
    os.write(1, (line + "\n").encode())


def _receipt(entries) -> None:
    if entries:
        os.write(1, "".join(f"R {e.id} {zlib.crc32(display_text(e).encode())}\n" for e in entries).encode())


def _text(rng: random.Random) -> str:
    # Small texts, or (4 in 10) big ones of 0.9-5 MB in UTF-8: a kill lands inside a write only while
    # the kernel copies a multi-page buffer (~0.3 ms per MB), and the worker's Python work per byte
    # (encoding, the offline model reading the text) is several times that. With 3 in 10 big texts
    # of 0.1-1.5 M characters (and no warm-up) 1 kill in ~150 tore a write under load.
    n = rng.choice([20, 200, 2_000]) if rng.random() < 0.6 else rng.randint(500_000, 3_000_000)
    return f"{rng.random()} " + "é✓ x" * (n // 4)


def _step(agent, rng: random.Random, report=_receipt) -> None:
    """One operation: a turn, an append or a custom entry; ``report`` gets each receipt's entries."""
    op = rng.random()
    if op < 0.6:  # a turn: user entry (agent_start), reply (message_end)
        inputs = [durable.text(_text(rng))]
        if rng.random() < 0.3:
            inputs.insert(0, durable.ephemeral(f"reminder {rng.random()}"))
        if rng.random() < 0.3:
            inputs.insert(0, durable.meta(_text(rng), origin="skill:test"))
        for ev in agent.run(*inputs):
            if ev.type in ("agent_start", "message_end"):
                report(ev.entries)
    elif op < 0.85:  # append without a model
        report(agent.append(_text(rng)))
    else:  # a custom entry with a big payload
        report(agent.append(CustomEntry(kind="blob", data={"x": _text(rng)})))


def work(root: str, session_id: str, seed: int) -> None:
    _say(f"PID {os.getpid()}")
    rng = random.Random(seed)
    agent = durable.Agent(store=open_store(root), session_id=session_id)
    _say("LOADED")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        _step(agent, rng)
    os._exit(0)


def _warm_up() -> None:
    """Run a few operations (turns among them) on an in-memory agent, so what a first turn imports
    (pydantic, for the settings check: ~0.2 s, far longer under load) is imported once here, not in
    every worker before its first write, where most of the test's kills landed instead."""
    agent = durable.Agent()
    rng = random.Random(0)
    for _ in range(10):
        _step(agent, rng, report=lambda entries: None)


def main() -> None:
    _warm_up()
    for line in sys.stdin:
        root, session_id, seed = line.split()
        pid = os.fork()
        if pid == 0:
            try:
                work(root, session_id, int(seed))
            finally:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        _say(f"DONE {status}")


if __name__ == "__main__":
    main()
