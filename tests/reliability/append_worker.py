"""One of two concurrent writers: ``append_worker.py <store> <session id> <tag> <n>``.

``<store>`` is a JSONL folder, ``sqlite:///file.db`` or a PostgreSQL DSN (:func:`open_store`).

Opens the session with a durable.Agent (leaf = the last entry it loaded),
prints ``READY <leaf id> <the store's fsync flag>``, waits for a line on stdin, appends ``n`` entries
one at a time and prints ``DONE``. Entry ``i`` reads ``"<tag> <i>"``; every
tenth carries a 200 KB tail after a space, so some writes take long enough
for the other writer to see them half-done (which matters where the lock does
nothing: ``$DURABLE_NB_TEST_NOOP_LOCK``, see reliability_support).
"""

import sys

from reliability_support import apply_lock_switch

from durable_nb import durable
from durable_nb.session import open_store

apply_lock_switch()

root, session_id, tag, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
agent = durable.Agent(store=open_store(root), session_id=session_id)
print("READY", agent.leaf_id, getattr(agent.store, "fsync", "-"), flush=True)
sys.stdin.readline()
for i in range(n):
    agent.append(f"{tag} {i}" + (" " + "é" * 100_000 if i % 10 == 0 else ""))
print("DONE", flush=True)
