"""Issue 27 #2: a leaf moved to without a new turn survives a restart (recorded as a ``leaf_move`` entry).

``%durable branch``, ``%durable rewind`` and the widget's "Continue from here"
append a hidden, off-chain ``leaf_move`` entry naming the entry moved to; a
restarted kernel resumes there and says so in one line; a copy of the
notebook forks the chosen path.
"""

from __future__ import annotations

import json

from kernel import Kernel, new_cell_id


def log(cwd, sid: str) -> list[dict]:
    return [json.loads(x) for x in (cwd / ".durable" / f"{sid}.jsonl").read_text().splitlines()[1:]]


def restart(k: Kernel) -> None:
    k.restart()
    k.ok("%load_ext durable_nb")
    k.ok("from durable_nb.notebook import current")


def test_a_chosen_leaf_survives_a_restart_and_a_copy_forks_it(tmp_path):
    k = Kernel(tmp_path)
    sid = "nb-" + new_cell_id()
    try:
        k.request_metadata = {"durable_nb": {"session": sid}}
        k.ok("%load_ext durable_nb")
        k.ok("from durable_nb.notebook import current")
        for q in ("first", "second", "third"):
            k.ok(f"%%durable\n{q}", (), new_cell_id())
        first_reply = log(tmp_path, sid)[1]["id"]
        last = log(tmp_path, sid)[-1]["id"]

        # %durable branch: recorded; the restarted kernel resumes there and says so
        k.ok(f"%durable branch {first_reply}")
        marks = [e for e in log(tmp_path, sid) if e.get("kind") == "leaf_move"]
        assert [(m["target_id"], m["parent_id"]) for m in marks] == [(first_reply, first_reply)]
        assert k.value("current().agent.leaf_id") == first_reply  # the record is never the leaf
        restart(k)
        r = k.ok("%durable status")
        assert r.stdout.splitlines()[0] == (
            f"resumed session {sid} at the branch last chosen: leaf {first_reply} "
            "(2 entries on the active path), not at the last entry written"
        )
        assert f"leaf     {first_reply}  (2 entries on the active path)" in r.stdout
        assert k.value("current().agent.leaf_id") != last
        assert "resumed" not in k.ok("%durable status").stdout  # said once
        # a turn continues the chosen branch; after it the session resumes at its end, unannounced
        k.ok("%%durable\non the chosen branch", (), new_cell_id())
        turn = log(tmp_path, sid)[-2:]
        assert turn[0]["parent_id"] == first_reply
        restart(k)
        r = k.ok("%durable status")
        assert "resumed" not in r.stdout and f"leaf     {turn[1]['id']}" in r.stdout

        # rewind: recorded the same way
        k.ok("%durable rewind")
        assert k.value("current().agent.leaf_id") == first_reply
        restart(k)
        assert k.ok("%durable status").stdout.startswith(f"resumed session {sid} at the branch last chosen")
        assert k.value("current().agent.leaf_id") == first_reply
        k.ok("%durable branch " + first_reply)  # already where it resumes: nothing more is written
        assert len([e for e in log(tmp_path, sid) if e.get("kind") == "leaf_move"]) == 2

        # the widget's "Continue from here", through its request handler
        k.ok("from durable_nb.widget import SessionWidget\nw = SessionWidget(current().agent)")
        k.ok(f"w._do_branch({{'action': 'branch', 'id': {last!r}}})")
        assert k.value("(w.error, current().agent.leaf_id)") == ("", last)
        restart(k)
        r = k.ok("%durable status")
        assert r.stdout.startswith(f"resumed session {sid} at the branch last chosen: leaf {last} (6 entries")

        # ... then back to the first reply, and a copy of the notebook forks that path
        k.ok(f"%durable branch {first_reply}")
        restart(k)
        copy = "nb-" + new_cell_id()
        k.request_metadata = {"durable_nb": {"session": copy, "fork_of": sid}}
        r = k.ok("%durable status")
        assert r.stdout.startswith(
            f"this notebook is a copy: its session {copy} starts as a fork of {sid} (its branch last chosen) (2 entries)"
        )
        forked = log(tmp_path, copy)
        assert [e["message"]["content"][0]["text"] for e in forked[:1]] == ["first"]
        assert all(e.get("kind") != "leaf_move" for e in forked)
    finally:
        k.shutdown()
