"""An exported or copied Codex import reopens where the import showed its leaf, never on a
bookkeeping aside such as ``codex.turn_context`` (issue 25, item 10)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from importer_helpers import FIXTURES

from durable_nb import durable
from durable_nb.importers import open_session
from durable_nb.session import JsonlStore, is_aside

ROOT = Path(__file__).resolve().parents[2]
ROLLOUT = "localpush-rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "durable_nb", *args], cwd=cwd, capture_output=True, text=True, env=env)


def test_an_exported_or_copied_codex_import_resumes_at_the_imports_leaf(tmp_path):
    log = tmp_path / "rollout-x.jsonl"
    shutil.copy(FIXTURES / ROLLOUT, log)
    with log.open("a") as f:  # Codex writes a turn context after the last turn too
        f.write(
            json.dumps({"timestamp": "2026-02-23T21:00:00Z", "type": "turn_context", "payload": {"cwd": "/"}}) + "\n"
        )
    imported = open_session(log).agent
    leaf = imported.leaf_id
    assert is_aside(imported.entries()[-1]) and imported.entries()[-1].kind == "codex.turn_context"
    assert not is_aside(imported.entry(leaf))

    r = cli("export", str(log), "-o", "out.jsonl", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    back = open_session(tmp_path / "out.jsonl").agent
    assert back.leaf_id == leaf
    assert sorted(e.id for e in back.entries()) == sorted(e.id for e in imported.entries())

    r = cli("copy", str(log), "store", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    store = JsonlStore(tmp_path / "store")
    (sid,) = [s.id for s in store.list_sessions()]
    a = durable.Agent(model=lambda m: "ok", store=store, session_id=sid)
    assert a.leaf_id == leaf
    a.run("one more").wait()  # the next turn continues the conversation, not an aside
    user = [e for e in a.entries() if e.id not in {x.id for x in imported.entries()}][0]
    assert user.parent_id == leaf
    assert a.path()[-3].id == leaf
