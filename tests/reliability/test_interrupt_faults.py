"""Ctrl-C (a real SIGINT) while the JSONL store writes a batch: nothing of it stays in the log.

Python raises ``KeyboardInterrupt`` as the interrupted ``write`` returns, before its count is
known; the store must still cut its bytes back, or the log keeps an entry the caller was told
was not written (main kept the whole batch: the agent and its reloaded log disagreed).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_CHILD = textwrap.dedent(
    """
    import json, os, signal, sys, threading
    from durable_nb import durable
    from durable_nb.session import JsonlStore

    root = sys.argv[1]
    agent = durable.Agent(store=JsonlStore(root), session_id="s")
    agent.append("acknowledged")
    log = os.path.join(root, "s.jsonl")
    main = threading.get_ident()
    for attempt in range(6):
        base = os.path.getsize(log)

        def watch():  # Ctrl-C once the batch's bytes start to land
            while os.path.getsize(log) == base:
                pass
            signal.pthread_kill(main, signal.SIGINT)

        watcher = threading.Thread(target=watch, daemon=True)
        try:
            watcher.start()
            agent.append("x" * (64 << 20))
        except KeyboardInterrupt:
            watcher.join()
            break
        watcher.join()  # the write outran the watcher: the entry is acknowledged, try again
    else:
        print(json.dumps({"missed": True}))
        sys.exit()
    stored = [e.id for e in JsonlStore(root).load_entries("s")]
    known = [e.id for e in agent.entries()]
    after = agent.append("after the interrupt")[0]
    reloaded = JsonlStore(root).load_entries("s")
    print(json.dumps({
        "stored": stored, "known": known, "after_parent": after.parent_id,
        "reloaded": [e.id for e in reloaded], "after": after.id,
    }))
    """
)


def test_ctrl_c_during_a_big_append_leaves_nothing_of_the_batch(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path / "store")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert not got.get("missed"), "the SIGINT never landed during a write"
    # the log holds exactly what the agent acknowledged: the interrupted batch left no entry behind
    assert got["stored"] == got["known"]
    # and the next append goes on from the last acknowledged entry, on a line of its own
    assert got["reloaded"] == [*got["known"], got["after"]] and got["after_parent"] == got["known"][-1]
