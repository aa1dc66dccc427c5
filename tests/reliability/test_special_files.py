"""A FIFO or a ``/dev/zero`` symlink in a store folder, or as a SQLite store's file (issue 25 #12).

Real special files (``os.mkfifo``, a symlink to ``/dev/zero``) beside a
good session. Everything runs in a subprocess with a timeout, so a reader
that blocks on the FIFO or reads ``/dev/zero`` forever fails the test
instead of hanging the run. The magics run in IPython's own shell there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from reliability_support import ROOT

from durable_nb import ai, session

MAGICS = textwrap.dedent(
    """
    import json, sys
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "durable_nb")
    out = []
    for line in sys.argv[1:]:
        try:
            sh.run_line_magic("durable", line)
            out.append("ok")
        except UsageError as e:
            out.append("UsageError: " + str(e))
    print("RESULT " + json.dumps(out))
    """
)


def _run(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def _magics(cwd, *lines: str) -> tuple[list[str], str]:
    r = _run("-c", MAGICS, *lines, cwd=cwd)
    assert r.returncode == 0, r.stderr
    marker = r.stdout.rindex("RESULT ")
    return json.loads(r.stdout[marker + 7 :]), r.stdout[:marker]


def _hostile_folder(tmp_path):
    store = tmp_path / "logs"
    good = session.JsonlStore(store)
    good.create_session("good")
    good.append_entries("good", [session.MessageEntry(id="1", message=ai.Message("user", [ai.Text("a zebra")]))])
    os.mkfifo(store / "fifo.jsonl")
    os.symlink("/dev/zero", store / "zero.jsonl")
    (store / "dir.jsonl").mkdir()
    return store


def test_special_files_in_a_jsonl_store_are_listed_as_unreadable_and_never_read(tmp_path):
    store = _hostile_folder(tmp_path)
    results, printed = _magics(
        tmp_path, f"store {store}", "sessions", "search zebra", "open fifo", "open zero", "use good", "status"
    )
    assert results[:3] == ["ok"] * 3 and results[5:] == ["ok"] * 2, results
    for r, name in ((results[3], "fifo"), (results[4], "zero")):
        assert r.startswith("UsageError: ") and f"{name}.jsonl is a" in r and "not a regular file" in r, r
    assert "  good  " in printed and "1 entry with 'zebra'" in printed, printed
    for name, kind in (("fifo", "a FIFO"), ("zero", "a character device"), ("dir", "a folder")):
        assert f"! {name}.jsonl" in printed and f"{name}.jsonl is {kind}, not a regular file" in printed, printed
    r = _run("-m", "durable_nb", "copy", str(store), str(tmp_path / "out"), cwd=tmp_path)
    assert "good: 1 of 1 entries copied" in r.stdout and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert r.returncode == 1 and "fifo.jsonl is a FIFO" in r.stdout and "zero.jsonl is a character device" in r.stdout


def test_a_fifo_or_dev_zero_as_a_sqlite_store_is_one_line(tmp_path):
    session.JsonlStore(tmp_path / "logs").create_session("a")
    os.mkfifo(tmp_path / "fifo.db")
    os.symlink("/dev/zero", tmp_path / "zero.db")
    results, _ = _magics(tmp_path, f"store {tmp_path / 'fifo.db'}", f"store {tmp_path / 'zero.db'}")
    assert "fifo.db is a FIFO, not a regular file" in results[0], results
    assert "/dev/zero is a character device, not a regular file" in results[1], results  # the path resolved
    for src in ("fifo.db", "sqlite:zero.db"):
        r = _run("-m", "durable_nb", "copy", src, "out", cwd=tmp_path)
        assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = _run("-m", "durable_nb", "copy", str(tmp_path / "logs"), "sqlite:fifo.db", cwd=tmp_path)
    assert r.returncode == 1 and "fifo.db is a FIFO" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
