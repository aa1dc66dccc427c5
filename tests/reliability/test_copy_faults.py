"""``copy`` beside damaged logs (issue 25, item 7): one unreadable session never blocks the others."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from durable_nb import durable
from durable_nb.session import JsonlStore

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "durable_nb", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60
    )


def _source(tmp_path: Path) -> JsonlStore:
    """Sessions a, b, c; b's log damaged in the middle; x.jsonl a file whose first line is not a session."""
    src = JsonlStore(tmp_path / "src")
    for sid in ("a", "b", "c"):
        durable.Agent(store=src, session_id=sid).append(f"in {sid}", f"more in {sid}")
    lines = src.file("b").read_bytes().splitlines(keepends=True)
    src.file("b").write_bytes(lines[0] + b'{"type": "message", "id": \n' + b"".join(lines[1:]))
    (tmp_path / "src" / "x.jsonl").write_text("not a log\n")
    return src


def test_copy_of_one_session_reads_only_that_one(tmp_path):
    _source(tmp_path)
    r = cli("copy", "src", "dst", "--session", "c", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"c: 2 of 2 entries copied (new session {tmp_path}/dst)",
        "1 session(s), 2 entries copied",
    ]
    assert [x.id for x in JsonlStore(tmp_path / "dst").list_sessions()] == ["c"]


def test_copy_of_everything_skips_each_unreadable_session_in_one_line_and_says_so(tmp_path):
    _source(tmp_path)
    r = cli("copy", "src", "dst", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr == "", (r.returncode, r.stderr)
    out = r.stdout.splitlines()
    assert len(out) == 5, out
    skipped = sorted(line for line in out if ": skipped, it cannot be read (" in line)
    assert [line.split(":")[0] for line in skipped] == ["b", "x"]
    assert "b.jsonl:2" in skipped[0] and "x.jsonl:1" in skipped[1], skipped
    assert out[-1] == "2 session(s), 4 entries copied; 2 unreadable session(s) skipped"
    assert sorted(x.id for x in JsonlStore(tmp_path / "dst").list_sessions()) == ["a", "c"]
    r = cli("copy", "src", "dst", "--session", "b", cwd=tmp_path)
    assert r.returncode == 1 and r.stdout.splitlines()[0].startswith("b: skipped, it cannot be read ("), r.stdout
