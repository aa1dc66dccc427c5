"""%durable open with no argument lists the logs found in the usual places; an opened log says it is read-only.

HOME points at a temporary folder holding copies of the real fixtures where
each tool keeps its logs, and llm's database written by the real llm package.
The verbs run as the magic runs them, without a kernel.
"""

from __future__ import annotations

import os
import shutil
from types import SimpleNamespace

import pytest
from importer_helpers import FIXTURES
from llm_logs import write_logs

from durable_nb.importers import found
from durable_nb.notebook.args import parse
from durable_nb.notebook.state import NotebookSession
from durable_nb.notebook.verbs import VERBS
from durable_nb.widget import SessionWidget, fallback

CLAUDE = "spotter-tool_heavy.jsonl"
CODEX = "localpush-rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
PI = "pi-current-retained-tail.generated.jsonl"


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "LLM_USER_PATH", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    return h


def _magic(tmp_path, line: str, capsys) -> tuple[SimpleNamespace, str]:
    m = SimpleNamespace(state=NotebookSession(tmp_path / "store", "nb"))
    return m, _run(m, line, capsys)


def _run(m, line: str, capsys) -> str:
    call = parse(line, False)
    out = VERBS[call.verb].run(m, call)
    return capsys.readouterr().out if out is None else out


def _put(home, rel: str, fixture: str, mtime: float):
    p = home / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / fixture, p)
    os.utime(p, (mtime, mtime))
    return p


def test_open_without_an_argument_lists_every_tools_logs_with_sizes_and_dates(home, tmp_path, capsys):
    claude = _put(home, ".claude/projects/-home-me-app/4d5611e5.jsonl", CLAUDE, 1_780_000_000)
    _put(home, ".claude/projects/-home-me-app/older.jsonl", CLAUDE, 1_770_000_000)
    codex = _put(home, ".codex/sessions/2026/02/23/rollout-2026-02-23T20-34-25-x.jsonl", CODEX, 1_780_000_100)
    pi = _put(home, ".pi/agent/sessions/--tmp-demo--/2026-06-01T10-00-00-000Z_7f3c.jsonl", PI, 1_780_000_200)
    db = home / ".config" / "io.datasette.llm" / "logs.db"
    db.parent.mkdir(parents=True)
    ids = write_logs(db)
    logs = found.known_logs()
    assert [f.path for f in logs["claude_code"]][0] == claude and len(logs["claude_code"]) == 2
    assert [f.path for f in logs["codex"]] == [codex] and [f.path for f in logs["pi"]] == [pi]
    assert [f.path for f in logs["llm"]] == [db]
    assert logs["claude_code"][0].size == claude.stat().st_size

    _, out = _magic(tmp_path, "open", capsys)
    lines = out.splitlines()
    assert lines[0].startswith("logs found in the usual places")
    row = next(line for line in lines if "4d5611e5.jsonl" in line)
    assert "~/.claude/projects/-home-me-app/4d5611e5.jsonl" in row and "39.3 KB" in row and "2026-05-28" in row
    # newest first within a tool
    assert out.index("4d5611e5.jsonl") < out.index("older.jsonl")
    assert "~/.codex/sessions/2026/02/23/rollout-2026-02-23T20-34-25-x.jsonl" in out
    assert "~/.pi/agent/sessions/--tmp-demo--/" in out
    assert "~/.config/io.datasette.llm/logs.db" in out and "3 conversation(s)" in out
    assert ids.main in out and ids.fork in out and "(fork of" in out
    assert "nothing found" not in out

    # The database alone: its conversations, no error. With an id: opened read-only, the status says so.
    m, out = _magic(tmp_path, f"open {db}", capsys)
    assert "holds 2 llm conversations" in out and ids.main in out and ids.other in out
    out = _run(m, f"open {db} {ids.main}", capsys)
    assert out.startswith(f"opened {db} read-only (llm, ")
    status = _run(m, "status", capsys)
    assert "mode     READ-ONLY: an opened llm log" in status and f"read-only copy of {db}" in status
    w = _run(m, "show", capsys)
    assert isinstance(w, SessionWidget) and w.read_only == str(db)
    assert fallback.header(w._static_state()).startswith(f"read-only copy of {db} · session ")
    assert m.state.agent.messages()[-1].text() == "echo: It was a dark and stormy night; the rain (+1 attachment)"
    # an entry too (the third argument)
    out = _run(m, f"open {db} {ids.main} {ids.first_answer}", capsys)
    assert m.state.agent.leaf_id == ids.first_answer
    # a JSONL log takes one entry at most
    with pytest.raises(Exception, match="too many arguments"):
        _run(m, f"open {claude} a b", capsys)
    _run(m, "close", capsys)
    assert "READ-ONLY" not in _run(m, "status", capsys)
    assert SessionWidget(m.state.agent).read_only == ""


def test_open_without_an_argument_in_an_empty_home_names_the_places(home, tmp_path, capsys):
    _, out = _magic(tmp_path, "open", capsys)
    assert out.splitlines()[-1] == (
        "nothing found for Claude Code (~/.claude/projects), Codex (~/.codex/sessions), pi (~/.pi/agent/sessions), "
        "llm (~/.config/io.datasette.llm/logs.db)"
    )
