"""Faults under the notebook layer: an input that cannot be saved, a read-only
folder, hostile logs beside good ones, and hostile files for every reader.

The read-only folder is real: mode 0555 and a forked child running as
``nobody`` (root ignores permission bits); the full disk is ``RLIMIT_FSIZE``
in a forked child. The magics run in-process through IPython's own shell, so
what a user sees is the ``UsageError`` line IPython would print.
"""

from __future__ import annotations

import os
import tempfile

import pytest
from IPython.core.error import UsageError
from reliability_support import in_child

import durable_nb.importers  # noqa: F401  (imported before any child runs as nobody)
from durable_nb.errors import CorruptLog, DurableError
from durable_nb.importers import open_session
from durable_nb.notebook.magics import TurnFailed
from durable_nb.notebook.state import NotebookSession, Turn
from durable_nb.session import JsonlStore

INIT = '{"type":"session_init","id":"%s","parent_id":"","created_at":"2026-01-01T00:00:00Z"}\n'
USER = (
    '{"type":"message","id":"%s","parent_id":"%s","message":{"role":"user","content":[{"type":"text","text":"%s"}]}}\n'
)


def _staged_notebook(store_dir) -> NotebookSession:
    st = NotebookSession(store_dir, "nb")
    st.run("first turn", "cell:a", Turn())
    st.stage("meta", "a skill", "cell:m")
    st.stage("ephemeral", "the time is 12:00", "cell:e")
    return st


def _sent(st: NotebookSession) -> list[str]:
    msgs, _ = st.preview("next", "cell:n")
    return [m.text() for m in msgs]


# -- 4. an input that cannot be saved leaves the staged entries as they were --------------


def test_an_unsavable_input_does_not_stage_the_ephemeral_context_again(tmp_path):
    st = _staged_notebook(tmp_path)
    before = _sent(st)
    for _ in range(3):  # a lone surrogate (e.g. from a bad paste) cannot be stored in UTF-8
        with pytest.raises(UnicodeEncodeError):
            st.run("half an emoji \ud83d", "cell:b", Turn())
    assert [s.message.text() for s in st.staged] == ["a skill", "the time is 12:00"]
    assert _sent(st) == before and before.count("the time is 12:00") == 1


def test_a_full_disk_does_not_stage_the_ephemeral_context_again(tmp_path):
    st = _staged_notebook(tmp_path)
    size = st.store.file("nb").stat().st_size

    def twice():
        for _ in range(2):
            try:
                st.run("x" * 50_000, "cell:b", Turn())
            except DurableError:
                pass
        return [s.message.text() for s in st.staged], _sent(st).count("the time is 12:00")

    assert in_child(twice, fsize=size + 1_000) == "ok (['a skill', 'the time is 12:00'], 1)"
    assert st.store.file("nb").stat().st_size == size


def test_a_log_emptied_under_the_notebook_refuses_the_turn_and_the_path_can_be_forked(tmp_path):
    st = _staged_notebook(tmp_path)
    path = [e.id for e in st.own.path()]
    st.store.file("nb").write_bytes(b"")  # an editor, a sync tool, `> file`
    with pytest.raises(
        DurableError, match=r"nb\.jsonl was truncated \(0 bytes now, \d+ before\) since this kernel read it"
    ):
        st.run("next", "cell:b", Turn())
    assert st.store.file("nb").read_bytes() == b""
    assert [s.message.text() for s in st.staged] == ["a skill", "the time is 12:00"]
    st.fork("rescued")
    assert len(JsonlStore(tmp_path).load_entries("rescued")) == len(path)


# -- 11. a read-only folder ---------------------------------------------------------------------


def test_a_read_only_folder_opens_reads_and_refuses_writes_in_one_line(shell, readonly_dir, tmp_path):
    other = os.path.join(readonly_dir, "elsewhere.log")  # a log from elsewhere, opened read-only
    with open(other, "w") as fh:
        fh.write(INIT % "other" + USER % ("a", "", "hello"))
    store = JsonlStore(readonly_dir)
    store.create_session("kept")
    os.chmod(store.file("kept"), 0o644)
    os.chmod(readonly_dir, 0o555)
    shell.run_line_magic("config", f"DurableMagics.store = {readonly_dir!r}")
    shell.run_line_magic("config", "DurableMagics.session = 'nb'")

    def session(*lines: str):
        out = []
        for line in lines:
            try:
                shell.run_line_magic("durable", line)
                out.append("ok")
            except UsageError as e:
                out.append(str(e))
        try:
            shell.run_cell_magic("durable", "", "a first turn")
            out.append("ok")
        except TurnFailed as e:  # shown as this one line (no traceback)
            out.append("".join(e._render_traceback_()))
        return out

    got = in_child(
        lambda: session("status", "sessions", f"open {other}", "close", "open kept", "close", "new x", "fork y"),
        as_nobody=True,
    )
    assert got.startswith("ok ["), got
    results = eval(got[3:])
    assert results[:6] == ["ok"] * 6, results  # reading works: nothing is created on the way
    for line in results[6:]:
        assert "could not be written: Permission denied (the folder is read-only here); nothing was written" in line, (
            line
        )
        assert ".tmp" not in line and "\n" not in line and "Traceback" not in line
    assert "cannot create session 'x'" in results[6] and "cannot create session 'y'" in results[7]
    assert "TurnFailed\x1b[0m: cannot create session 'nb'" in results[8]  # the first turn's first write
    assert results[8].endswith("the turn failed before anything was written; re-run the cell to try again")
    assert sorted(os.listdir(readonly_dir)) == ["elsewhere.log", "kept.jsonl"]


@pytest.fixture
def readonly_mount():
    """A tmpfs holding one session, remounted read-only: ``EROFS`` even for root (skipped, saying so,
    where mounting is not permitted; the ``nobody`` test covers permission bits everywhere)."""
    import subprocess

    d = tempfile.mkdtemp(prefix="durable-rofs-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", d], capture_output=True, text=True)
    if r.returncode != 0:
        os.rmdir(d)
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip() or r.returncode})")
    try:
        JsonlStore(d).create_session("kept")
        subprocess.run(["mount", "-o", "remount,ro", d], check=True)
        yield d
    finally:
        subprocess.run(["umount", d], check=True)
        os.rmdir(d)


def test_a_read_only_file_system_reads_and_refuses_writes_in_one_line(shell, readonly_mount):
    shell.run_line_magic("config", f"DurableMagics.store = {readonly_mount!r}")
    shell.run_line_magic("config", "DurableMagics.session = 'nb'")
    for line in ("status", "sessions", "open kept", "close"):
        shell.run_line_magic("durable", line)
    for line, sid in (("new x", "x"), ("fork y", "y")):
        with pytest.raises(UsageError) as err:
            shell.run_line_magic("durable", line)
        assert str(err.value) == (
            f"cannot create session {sid!r}: {readonly_mount}/{sid}.jsonl could not be written: "
            "Read-only file system; nothing was written"
        )
    with pytest.raises(TurnFailed, match="cannot create session 'nb': .*Read-only file system; nothing was written"):
        shell.run_cell_magic("durable", "", "a first turn")
    assert os.listdir(readonly_mount) == ["kept.jsonl"]


def test_the_default_session_is_created_by_the_first_write_not_by_opening(tmp_path):
    st = NotebookSession(tmp_path / ".durable", "nb")
    st.preview("hi", "cell:a")
    st.sessions()
    assert not (tmp_path / ".durable").exists()
    st.note("a note", "c1")
    assert [e.body for e in JsonlStore(tmp_path / ".durable").load_entries("nb")] == ["a note"]


# -- 10. hostile logs: every reader names file:line; one bad log never hides the others -----------

HOSTILE = {
    "deep.jsonl": INIT % "deep"
    + '{"type":"custom","id":"c","kind":"k","data":'
    + "[" * 100_000
    + "]" * 100_000
    + "}\n",
    "deep-init.jsonl": '{"type":"session_init","id":"deep-init","x":' + "[" * 100_000 + "]" * 100_000 + "}\n",
    "int-time.jsonl": '{"type":"session_init","id":"int-time","parent_id":"","created_at":5}\n',
    "huge.jsonl": INIT % "huge" + '{"type":"compaction","id":"c","tokens_before":1e400}\n',
}


def test_hostile_logs_are_listed_as_unreadable_beside_the_good_ones(tmp_path):
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    (store_dir / "good.jsonl").write_text(INIT % "good" + USER % ("a", "", "hi"))
    for name, text in HOSTILE.items():
        (store_dir / name).write_text(text)
    store = JsonlStore(store_dir)
    unreadable: list = []
    assert {r.id for r in store.list_sessions(unreadable)} == {"good", "deep", "huge"}
    assert {n for n, _ in unreadable} == {"deep-init.jsonl", "int-time.jsonl"}
    assert all(":1: the first line is not a session_init record" in why for _, why in unreadable)
    with pytest.raises(CorruptLog, match=r"deep\.jsonl:2: JSON nested too deeply"):
        store.load_entries("deep")
    with pytest.raises(CorruptLog, match=r"huge\.jsonl:2: bad compaction entry"):
        store.load_entries("huge")

    rows = NotebookSession(store_dir, "good").sessions()
    assert [(r.id, r.entries) for r in rows if r.entries is not None] == [("good", 1)]
    bad = {r.id: r.problem for r in rows if r.entries is None}
    assert set(bad) == {"deep", "huge", "deep-init.jsonl", "int-time.jsonl"}
    assert all(f"{store_dir}/" in why for why in bad.values())


PI_HEAD = '{"type":"session","version":3,"id":"p1","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n'
CLAUDE = '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":%s}}\n'
CODEX_HEAD = '{"type":"session_meta","timestamp":"2026-01-01T00:00:00Z","payload":{"id":"c1","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}}\n'
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        (
            "pi-overflow.jsonl",
            PI_HEAD
            + '{"type":"compaction","id":"c","parentId":null,"timestamp":"t","summary":"s","firstKeptEntryId":"","tokensBefore":1e400}\n',
            2,
        ),
        (
            "pi-deep.jsonl",
            PI_HEAD + '{"type":"message","id":"m","parentId":null,"timestamp":"t","message":' + DEEP + "}\n",
            2,
        ),
        ("claude-deep.jsonl", CLAUDE % '"hi"' + CLAUDE.replace('"u1"', '"u2"') % DEEP, 2),
        ("codex-deep.jsonl", CODEX_HEAD + '{"type":"response_item","timestamp":"t","payload":' + DEEP + "}\n", 2),
        ("durable-deep.jsonl", INIT % "d" + '{"type":"message","id":"m","message":' + DEEP + "}\n", 2),
        ("deep-first.jsonl", DEEP + "\n", 1),
        ("durable-surrogate.jsonl", INIT % "d" + USER % ("a", "", "ok") + USER % ("b", "a", "half \\ud83d"), 3),
    ],
)
def test_every_reader_names_file_and_line_for_hostile_json(tmp_path, name, text, line):
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(CorruptLog) as err:
        open_session(f)
    assert f"{f}:{line}:" in str(err.value) and "\n" not in str(err.value)


def test_a_store_session_holding_an_escaped_lone_surrogate_opens_in_one_line_and_forks_nothing(tmp_path):
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    (store_dir / "s.jsonl").write_text(INIT % "s" + USER % ("a", "", "ok") + USER % ("b", "a", "half \\ud83d"))
    st = NotebookSession(store_dir, "nb")
    with pytest.raises(CorruptLog, match=r"s\.jsonl:3: a string holds a lone surrogate escape"):
        st.open("s")
    st.use("s")  # it loads: the text is shown as it is
    with pytest.raises(DurableError, match=r"cannot fork into 't': .* nothing was written"):
        st.fork("t")
    assert sorted(f.name for f in store_dir.iterdir()) == ["s.jsonl"]
