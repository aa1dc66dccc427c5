"""``%durable open`` with no argument beside a Codex folder tree 1,100 levels deep (issue 25,
item 16): the listing finds the logs and raises no RecursionError."""

from __future__ import annotations

import os
from types import SimpleNamespace

from durable_nb.notebook.args import parse
from durable_nb.notebook.state import NotebookSession
from durable_nb.notebook.verbs import VERBS


def _deep_tree(base, levels: int) -> str:
    """Make ``levels`` nested folders ``d`` under ``base`` (one level at a time, as no path
    function copes with that depth) and return the deepest one's path."""
    os.makedirs(base)
    fd = os.open(base, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    return str(base) + "/d" * levels


def _remove_deep_tree(base, levels: int) -> None:
    """Remove what :func:`_deep_tree` made, deepest first (shutil.rmtree, and pytest's own clean-up
    of its temporary folders, recurse per level and fail on it)."""
    for i in range(levels, -1, -1):
        folder = str(base) + "/d" * i
        for name in os.listdir(folder):
            if not os.path.isdir(os.path.join(folder, name)) or os.path.islink(os.path.join(folder, name)):
                os.unlink(os.path.join(folder, name))
        if i:
            os.rmdir(folder)


def test_open_lists_logs_beside_a_folder_tree_thousands_of_levels_deep(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "LLM_USER_PATH", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    sessions = home / ".codex" / "sessions"
    deep = _deep_tree(sessions, 1100)
    (sessions / "rollout-2026-01-01T00-00-00-top.jsonl").write_text("{}\n")
    with open(deep + "/rollout-2026-01-01T00-00-00-deep.jsonl", "w") as f:
        f.write("{}\n")
    os.symlink(sessions, sessions / "d" / "loop")  # a link back up is not followed
    try:
        m = SimpleNamespace(state=NotebookSession(tmp_path / "store", "nb"))
        call = parse("open", False)
        VERBS[call.verb].run(m, call)
        out = capsys.readouterr().out
    finally:
        _remove_deep_tree(sessions, 1100)
    assert "~/.codex/sessions/rollout-2026-01-01T00-00-00-top.jsonl" in out
    assert "rollout-2026-01-01T00-00-00-deep.jsonl" in out and out.count("rollout-") == 2, out
