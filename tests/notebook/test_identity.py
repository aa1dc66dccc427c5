"""The notebook's session identity, sent with every execute request as the durable_nb extension sends it.

A real kernel gets ``{"durable_nb": {"session": ..., "fork_of": ...}}`` in its
execute requests' metadata; the name the kernel was started with
(``JPY_SESSION_NAME``) no longer decides the session.
"""

from __future__ import annotations

import json

from kernel import Kernel, new_cell_id

from durable_nb.notebook.identity import Identity, identity


def entries(cwd, sid: str) -> list[dict]:
    return [json.loads(x) for x in (cwd / ".durable" / f"{sid}.jsonl").read_text().splitlines()[1:]]


def test_identity_is_read_from_the_request_and_odd_values_are_ignored():
    assert identity({"durable_nb": {"session": "nb-1", "path": "a.ipynb"}}) == Identity("nb-1")
    assert identity({"durable_nb": {"session": "nb-2", "fork_of": "nb-1"}}) == Identity("nb-2", "nb-1")
    assert identity({"durable_nb": {"session": "nb-1", "fork_of": "nb-1"}}) == Identity("nb-1")
    for md in ({}, {"durable_nb": "nb-1"}, {"durable_nb": {"session": ""}}, {"durable_nb": {"session": 3}}, None):
        assert identity(md) is None
    assert identity({"durable_nb": {"session": "x", "fork_of": ["y"]}}) == Identity("x")


def test_rename_and_restart_keep_the_session_and_a_copy_forks(tmp_path):
    k = Kernel(tmp_path)
    sid = "nb-" + new_cell_id()
    a, b = new_cell_id(), new_cell_id()
    try:
        k.request_metadata = {"durable_nb": {"session": sid, "path": "Untitled.ipynb"}}
        k.ok("%load_ext durable_nb")
        k.ok("%%durable\nfirst question", (), a)
        k.restart()  # as after a rename: the kernel is started again under another name
        k.request_metadata = {"durable_nb": {"session": sid, "path": "prompt_lab.ipynb"}}
        k.ok("%load_ext durable_nb")
        r = k.ok("%durable status")
        assert r.stdout.startswith(f"session  {sid}  (") and "entries  2" in r.stdout
        k.ok("%%durable\nsecond question", (), b)
        log = entries(tmp_path, sid)
        assert [e["message"]["role"] for e in log] == ["user", "assistant"] * 2
        assert log[2]["parent_id"] == log[1]["id"]  # the second turn continues the first
        assert sorted(p.name for p in (tmp_path / ".durable").iterdir()) == [f"{sid}.jsonl"]

        # %durable use picks another session for this kernel; the notebook's id does not pull it back
        k.ok("%durable use scratch")
        assert k.ok("%durable status").stdout.startswith("session  scratch")

        # a copy of the notebook: a new id, forked from the original's active path on first use
        original = (tmp_path / ".durable" / f"{sid}.jsonl").read_bytes()
        copy = "nb-" + new_cell_id()
        k.restart()
        k.request_metadata = {"durable_nb": {"session": copy, "fork_of": sid, "path": "prompt_lab-Copy1.ipynb"}}
        k.ok("%load_ext durable_nb")
        r = k.ok("%%durable\nthird question, in the copy", (), new_cell_id())
        assert r.stdout.startswith(f"this notebook is a copy: its session {copy} starts as a fork of {sid} (4 entries)")
        forked = entries(tmp_path, copy)
        assert [e["message"]["role"] for e in forked] == ["user", "assistant"] * 3
        assert [e["message"]["content"] for e in forked[:4]] == [e["message"]["content"] for e in log]
        assert (tmp_path / ".durable" / f"{sid}.jsonl").read_bytes() == original  # never appended to
        head = json.loads((tmp_path / ".durable" / f"{copy}.jsonl").read_text().splitlines()[0])
        assert head["parent_id"] == sid
        # later runs of the copy continue its own session (no second fork, no message)
        r = k.ok("%%durable\nfourth", (), new_cell_id())
        assert "copy" not in r.stdout and len(entries(tmp_path, copy)) == 8
    finally:
        k.shutdown()


def test_a_new_notebook_never_opens_another_notebooks_session(tmp_path):
    k = Kernel(tmp_path)
    try:
        k.ok("%load_ext durable_nb")  # no identity: named after the notebook, as in front ends without the extension
        k.ok("%%durable\nsecret from an old Untitled notebook", (), new_cell_id())
        old = k.ok("%durable status").stdout.split()[1]
        k.restart()
        fresh = "nb-" + new_cell_id()
        k.request_metadata = {"durable_nb": {"session": fresh}}  # a new notebook with the same name
        k.ok("%load_ext durable_nb")
        r = k.ok("%%durable\nhello", (), new_cell_id())
        assert "secret" not in k.value("_durable") and "hello" in k.value("_durable")
        assert k.ok("%durable status").stdout.startswith(f"session  {fresh}  (") and old != fresh
        assert r.stdout.strip().endswith("2 entries written")
    finally:
        k.shutdown()
