"""Faults injected under the JSONL store: a log truncated or replaced under an open
agent, a full disk (``RLIMIT_FSIZE`` in a forked child: writes stop part-way with
``EFBIG``), a read-only folder (a child running as ``nobody``), unencodable text.

Every test asserts what the store holds afterwards, byte for byte where it matters:
nothing acknowledged lost, nothing of a failed batch kept, no half-made session,
no temporary file left, and a one-line error that names the file, never a temp file.
See README.md in this folder for the list of faults.
"""

from __future__ import annotations

import json
import os
import tempfile

import pytest
from reliability_support import in_child

from durable_nb import ai, durable
from durable_nb.errors import DurableError, LogChanged, SessionExists, StoreWriteError
from durable_nb.session import CustomEntry, JsonlStore, MessageEntry, display_text


def _agent(tmp_path, sid="s", turns=2):
    store = JsonlStore(tmp_path)
    agent = durable.Agent(store=store, session_id=sid)
    for i in range(turns):
        agent.run(f"turn {i}").wait()
    return store, agent


def _leftovers(folder) -> list[str]:
    return sorted(f.name for f in os.scandir(folder) if not f.name.endswith(".jsonl"))


# -- 1. a log truncated or replaced under an open agent ----------------------------------


@pytest.mark.parametrize("how", ["emptied", "cut to its first line", "replaced by an older copy", "cut mid-line"])
def test_a_log_truncated_or_replaced_under_an_open_agent_refuses_the_next_write(tmp_path, how):
    store, agent = _agent(tmp_path)
    f = store.file("s")
    raw = f.read_bytes()
    lines = raw.splitlines(keepends=True)
    if how == "emptied":  # `> file`, an editor, a sync tool
        f.write_bytes(b"")
    elif how == "cut to its first line":
        f.write_bytes(lines[0])
    elif how == "replaced by an older copy":  # same session, fewer entries, a new inode
        (tmp_path / "old").write_bytes(b"".join(lines[:3]))
        os.replace(tmp_path / "old", f)
    else:
        f.write_bytes(raw[:10])
    before = f.read_bytes()
    with pytest.raises(LogChanged, match=r"was .* since this kernel read it; nothing was written") as err:
        agent.run("one more").wait()
    assert "\n" not in str(err.value) and str(f) in str(err.value)
    with pytest.raises(LogChanged):
        agent.append("and a note")
    assert f.read_bytes() == before  # nothing was written into it
    # The agent's path is still in memory: a fork keeps it, in a log that opens.
    rescued = agent.fork("rescued")
    assert [display_text(e) for e in store.load_entries("rescued")] == [display_text(e) for e in agent.path()]
    assert len(rescued.path()) == 4


def test_a_log_deleted_under_an_open_agent_is_not_silently_recreated(tmp_path):
    store, agent = _agent(tmp_path)
    store.file("s").unlink()
    with pytest.raises(LogChanged, match="was deleted since this kernel read it"):
        agent.append("more")
    assert not store.file("s").exists()


def test_a_store_that_never_read_the_log_still_refuses_to_append_to_an_emptied_one(tmp_path):
    _agent(tmp_path)
    (tmp_path / "s.jsonl").write_bytes(b"")
    with pytest.raises(LogChanged, match="emptied"):
        JsonlStore(tmp_path).append_entries("s", [durable.text("x")])
    assert (tmp_path / "s.jsonl").read_bytes() == b""


def test_a_log_with_a_long_foreign_session_init_still_takes_appends(tmp_path):
    init = {"type": "session_init", "id": "written-by-pi-go", "parent_id": "", "created_at": "", "cwd": "/x" * 2_000}
    (tmp_path / "s.jsonl").write_text(json.dumps(init) + "\n")
    durable.Agent(store=JsonlStore(tmp_path), session_id="s").append("fine")  # a store that read it
    JsonlStore(tmp_path).append_entries("s", [durable.text("fine")])  # one that did not
    assert [display_text(e) for e in JsonlStore(tmp_path).load_entries("s")] == ["fine", "fine"]


def test_growth_by_another_writer_is_not_a_change(tmp_path):
    store, agent = _agent(tmp_path)
    durable.Agent(store=JsonlStore(tmp_path), session_id="s").append("from another kernel")
    agent.append("still fine")  # R14: both append; the file only grew
    assert len(store.load_entries("s")) == 6


# -- 5. a batch is all or nothing (full disk) ----------------------------------------------


def test_a_batch_cut_by_a_full_disk_leaves_nothing_of_itself(tmp_path):
    store, agent = _agent(tmp_path)
    f = store.file("s")
    before = f.read_bytes()
    meta = durable.meta("a skill " * 50, origin="skill:x")  # its line fits under the limit
    big = durable.text("x" * 100_000)  # the turn's message does not

    def turn():
        return agent.run(meta, big).wait()

    out = in_child(turn, fsize=len(before) + 2_000)
    assert out.startswith("StoreWriteError: cannot append to session 's': ") and "nothing was written" in out, out
    assert "File too large" in out
    assert f.read_bytes() == before  # not the meta line, not a torn part
    assert len(store.load_entries("s")) == 4


def test_a_fork_that_fails_on_a_full_disk_leaves_no_session_and_no_temp_file(tmp_path):
    store, agent = _agent(tmp_path)
    agent.append("y" * 50_000)
    out = in_child(lambda: agent.fork("copy"), fsize=10_000)
    assert out.startswith("StoreWriteError: cannot create session 'copy': "), out
    assert ".tmp" not in out
    assert _leftovers(tmp_path) == [] and not store.file("copy").exists()
    assert agent.fork("copy").session_id == "copy"  # the id is still free


def test_a_fork_of_a_lone_surrogate_fails_before_creating_anything(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text(
        '{"type":"session_init","id":"s","parent_id":"","created_at":""}\n'
        '{"type":"message","id":"a","parent_id":"","message":{"role":"user","content":"ok"}}\n'
        '{"type":"message","id":"b","parent_id":"a","message":{"role":"user","content":"half \\ud83d of it"}}\n'
    )
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    with pytest.raises(DurableError, match=r"cannot fork into 'copy': .* nothing was written"):
        agent.fork("copy")
    assert not (tmp_path / "copy.jsonl").exists() and _leftovers(tmp_path) == []


def test_a_session_created_on_a_full_disk_leaves_no_temp_file(tmp_path):
    store = JsonlStore(tmp_path)
    out = in_child(lambda: store.create_session("s", entries=[durable.text("z" * 5_000)]), fsize=1_000)
    assert out.startswith("StoreWriteError: cannot create session 's': "), out
    assert os.listdir(tmp_path) == []
    assert store.create_session("s").id == "s"  # the id is free
    with pytest.raises(SessionExists):
        store.create_session("s")


def test_an_append_cut_by_a_full_disk_never_cuts_what_was_there(tmp_path):
    store, _ = _agent(tmp_path)
    f = store.file("s")
    with open(f, "ab") as fh:  # a torn tail left by a crash
        fh.write(b'{"type":"message","id":"torn"')
    before = f.read_bytes()
    out = in_child(
        lambda: store.append_entries("s", [CustomEntry(id="c", kind="k", data={"x": "q" * 9000})]),
        fsize=len(before) + 100,
    )
    assert out.startswith("StoreWriteError"), out
    assert f.read_bytes() == before


# -- 11. a read-only folder --------------------------------------------------------------


def test_a_read_only_folder_gives_one_clear_line_and_leaves_nothing(readonly_dir):
    store = JsonlStore(readonly_dir)
    durable.Agent(store=store, session_id="kept").append("written before the folder became read-only")
    os.chmod(store.file("kept"), 0o644)
    os.chmod(readonly_dir, 0o555)

    def create():
        return store.create_session("new-one")

    def fork():
        return durable.Agent(store=store, session_id="kept").fork("copy")

    def append():
        return durable.Agent(store=store, session_id="kept").append("more")

    for fn, starts in [
        (create, "StoreWriteError: cannot create session 'new-one': "),
        (fork, "StoreWriteError: cannot create session 'copy': "),
        (append, "StoreWriteError: cannot append to session 'kept': "),
    ]:
        out = in_child(fn, as_nobody=True)
        assert out.startswith(starts) and "Permission denied (the folder is read-only here)" in out, out
        assert ".tmp" not in out and "\n" not in out
    assert sorted(os.listdir(readonly_dir)) == ["kept.jsonl"]
    # Reading works there.
    assert in_child(lambda: len(JsonlStore(readonly_dir).load_entries("kept")), as_nobody=True) == "ok 1"


def test_messages_with_lone_surrogates_are_refused_before_a_byte_is_written(tmp_path):
    store, agent = _agent(tmp_path)
    before = store.file("s").read_bytes()
    bad = MessageEntry(message=ai.user_message("half \ud83d"))
    with pytest.raises(UnicodeEncodeError):
        agent.run(durable.meta("fine"), bad).wait()
    assert store.file("s").read_bytes() == before


@pytest.fixture
def small_tmpfs():
    """A 64 KB tmpfs: a real ENOSPC (needs mount privileges; RLIMIT_FSIZE covers the rest everywhere)."""
    import subprocess

    d = tempfile.mkdtemp(prefix="durable-full-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d], capture_output=True, text=True)
    if r.returncode != 0:
        os.rmdir(d)
        pytest.skip(
            f"cannot mount a small tmpfs here ({r.stderr.strip() or r.returncode}); RLIMIT_FSIZE tests cover a full disk"
        )
    yield d
    subprocess.run(["umount", d], check=True)
    os.rmdir(d)


def test_a_real_full_disk_cuts_the_batch_back_and_leaves_no_temp_file(small_tmpfs):
    store = JsonlStore(small_tmpfs)
    agent = durable.Agent(store=store, session_id="s")
    agent.append("kept")
    before = store.file("s").read_bytes()
    with pytest.raises(StoreWriteError, match="No space left on device; nothing was written"):
        agent.run(durable.meta("fits"), durable.text("x" * 200_000)).wait()
    assert store.file("s").read_bytes() == before
    with pytest.raises(StoreWriteError, match="cannot create session 'copy': .*No space left on device"):
        store.create_session("copy", entries=[durable.text("y" * 200_000)])
    assert sorted(os.listdir(small_tmpfs)) == ["s.jsonl"]
    agent.append("still works")  # the disk has room for a small entry: the session goes on
    assert [display_text(e) for e in store.load_entries("s")] == ["kept", "still works"]
