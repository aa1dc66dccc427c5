"""Two processes append 1,000 entries each to one session (rule R14).

Each has its own durable.Agent resumed from the same leaf, so each grows its
own branch from that leaf. Afterwards every entry is there, every parent
resolves, and the tree is the root with two chains; in the JSONL store every
line is whole. On every persistent store: JSONL, SQLite and PostgreSQL; and
JSONL once more with a lock that does nothing (as on some network file
systems), where only ``O_APPEND`` keeps the writers apart and a writer must
never cut the other's half-written line; and JSONL with ``fsync=True``, where
each writer flushes after releasing the lock while the other appends.
"""

from __future__ import annotations

import json
import subprocess
import sys

from reliability_support import FSYNC, HERE, NOOP_LOCK, child_env

from durable_nb import durable
from durable_nb.session import JsonlStore, display_text, tree

N = 1000


def _head(text: str) -> str:
    return " ".join(text.split()[:2])  # "<tag> <i>" without the long tail some entries carry


def test_two_writers_grow_two_branches(store_spec):
    spec, store, env = store_spec
    root_entry = durable.Agent(store=store, session_id="shared").append("root")[0]
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "append_worker.py"), spec, "shared", tag, str(N)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=child_env(**env),
            text=True,
        )
        for tag in ("A", "B")
    ]
    try:
        for p in procs:
            fsync = str(FSYNC in env) if isinstance(store, JsonlStore) else "-"  # the children use fsync=True
            assert p.stdout.readline().split() == ["READY", root_entry.id, fsync]
        for p in procs:  # release both at once
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            out, _ = p.communicate(timeout=60)
            assert p.returncode == 0 and out.strip() == "DONE"
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()

    entries = store.load_entries("shared")
    texts = [_head(display_text(e)) for e in entries]
    assert len(entries) == 1 + 2 * N, f"{1 + 2 * N - len(entries)} of {1 + 2 * N} entries lost"
    if isinstance(store, JsonlStore):
        raw = store.file("shared").read_bytes()
        assert raw.endswith(b"\n")
        if (
            NOOP_LOCK not in env
        ):  # (with a no-op lock, a writer that saw the other's line half-written adds a blank line)
            assert b"\n\n" not in raw
        lines = [line for line in raw.split(b"\n")[1:-1] if line]
        assert [_head(json.loads(line)["message"]["content"][0]["text"]) for line in lines] == texts  # none interleaved
    by_id = {e.id: e for e in entries}
    assert len(by_id) == len(entries)
    assert all(e.parent_id in by_id for e in entries[1:])

    roots = tree(entries)
    assert len(roots) == 1 and roots[0].entry.id == root_entry.id
    branches = {}
    for child in roots[0].children:
        chain, node = [], child
        while node is not None:
            chain.append(_head(display_text(node.entry)))
            assert len(node.children) <= 1
            node = node.children[0] if node.children else None
        branches[chain[0].split()[0]] = chain
    assert branches == {tag: [f"{tag} {i}" for i in range(N)] for tag in ("A", "B")}
    # The writers really overlapped (otherwise the test proved nothing about concurrency).
    switches = sum(1 for a, b in zip(texts[1:], texts[2:]) if a[0] != b[0])
    assert switches > 1, "the two writers did not overlap"
