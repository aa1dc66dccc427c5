"""Where other tools keep their logs: find them, with sizes and dates, for ``%durable open``.

The usual places, under the home folder (``home``, by default ``~``):

- Claude Code: ``~/.claude/projects/<project>/<session>.jsonl`` (``$CLAUDE_CONFIG_DIR/projects`` when set);
- Codex CLI: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``$CODEX_HOME/sessions``);
- pi: ``~/.pi/agent/sessions/--<path>--/*.jsonl`` (``$PI_CODING_AGENT_DIR/sessions``);
- llm: its log database, ``llm logs path`` (``$LLM_USER_PATH/logs.db``, else
  ``io.datasette.llm/logs.db`` in the user's config folder);
- Inspect AI: ``*.eval`` in its log folder, ``$INSPECT_LOG_DIR``, else ``logs``
  in the current folder (listed only when it holds some: it is not a home folder's).

Nothing is opened or parsed: only folders are listed and files stat'ed.
Nothing here imports from Jupyter.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# (tool, how people call it)
TOOLS = (("claude_code", "Claude Code"), ("codex", "Codex"), ("pi", "pi"), ("llm", "llm"), ("inspect", "Inspect AI"))


@dataclass(frozen=True)
class FoundLog:
    """A log file found in a usual place: ``tool`` (``claude_code``, ``codex``, ``pi``, ``llm``),
    ``path``, ``size`` in bytes and ``modified`` (ISO 8601 UTC)."""

    tool: str
    path: Path
    size: int
    modified: str


def places(home: Path | None = None, env: dict[str, str] | None = None) -> dict[str, Path]:
    """Return ``{tool: folder or file}`` where each tool keeps its logs (see the module doc)."""
    h = Path(home) if home is not None else Path.home()
    e = os.environ if env is None else env
    claude = Path(e["CLAUDE_CONFIG_DIR"]) if e.get("CLAUDE_CONFIG_DIR") else h / ".claude"
    codex = Path(e["CODEX_HOME"]) if e.get("CODEX_HOME") else h / ".codex"
    pi = Path(e["PI_CODING_AGENT_DIR"]) if e.get("PI_CODING_AGENT_DIR") else h / ".pi" / "agent"
    return {
        "claude_code": claude / "projects",
        "codex": codex / "sessions",
        "pi": pi / "sessions",
        "llm": _llm_dir(h, e) / "logs.db",
        "inspect": Path(e.get("INSPECT_LOG_DIR") or "logs"),
    }


def _llm_dir(home: Path, env: os._Environ[str] | dict[str, str]) -> Path:
    """llm's user folder, as ``llm.user_dir()`` computes it (click's app dir for ``io.datasette.llm``)."""
    if env.get("LLM_USER_PATH"):
        return Path(env["LLM_USER_PATH"])
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "io.datasette.llm"
    if sys.platform.startswith("win"):
        return Path(env.get("APPDATA") or home) / "io.datasette.llm"
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "io.datasette.llm"


def known_logs(home: Path | None = None, env: dict[str, str] | None = None) -> dict[str, list[FoundLog]]:
    """Return, for each tool, the logs found in its usual place, newest first (empty when none).

    Claude Code: every ``*.jsonl`` directly in a project folder (subagent
    files under ``<session>/subagents/`` too); Codex: ``rollout-*.jsonl`` at any
    depth (:func:`_walk`); pi: ``*.jsonl`` in its session folders; llm: the database, when it
    exists. A folder that cannot be read is skipped. Cost: one ``stat`` per
    file found.
    """
    where = places(home, env)
    patterns = {
        "claude_code": ("*/*.jsonl", "*/*/subagents/*.jsonl"),
        "pi": ("*/*.jsonl", "*.jsonl"),
        "inspect": ("*.eval",),
    }
    out: dict[str, list[FoundLog]] = {}
    for tool, _ in TOOLS:
        base = where[tool]
        if tool == "llm":
            files = [base] if base.is_file() else []
        elif tool == "codex":
            files = list(_walk(base, "rollout-", ".jsonl"))
        else:
            files = []
            if base.is_dir():
                for pattern in patterns[tool]:
                    try:
                        files += [p for p in base.glob(pattern) if p.is_file()]
                    except OSError:
                        continue
        found = []
        for p in files:
            try:
                st = p.stat()
            except OSError:
                continue
            when = datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            found.append(FoundLog(tool, p, st.st_size, when))
        out[tool] = sorted(found, key=lambda f: (f.modified, str(f.path)), reverse=True)
    return out


def _walk(base: Path, prefix: str, suffix: str) -> Iterator[Path]:
    """Yield the regular files named ``prefix*suffix`` at any depth under ``base``.

    Iterative (a folder tree thousands of levels deep cannot exhaust the
    stack, as pathlib's ``**`` does); symbolic links to folders are not
    followed (no loop); a folder that cannot be read (or whose path is too
    long) is skipped. O(entries under ``base``).
    """
    todo = [str(base)]
    while todo:
        folder = todo.pop()
        try:
            with os.scandir(folder) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            todo.append(e.path)
                        elif e.name.startswith(prefix) and e.name.endswith(suffix) and e.is_file():
                            yield Path(e.path)
                    except OSError:
                        continue
        except OSError:
            continue


def listing(found: dict[str, list[FoundLog]], home: Path | None = None, per_tool: int = 5) -> list[str]:
    """Return the lines ``%durable open`` prints with no argument: per tool, its newest
    ``per_tool`` logs (path, size, date; llm's database with its newest conversations),
    how many more there are, and the places where nothing was found. O(logs listed)."""
    from .llm_sqlite import conversations

    names = dict(TOOLS)
    where = places(home)
    lines = ["logs found in the usual places (newest first; %durable open PATH opens one read-only):"]
    empty = []
    for tool, logs in found.items():
        if not logs:
            if tool != "inspect":  # a folder of the current one, not a usual place to report as empty
                empty.append(f"{names[tool]} ({tilde(where[tool], home)})")
            continue
        width = max(len(tilde(f.path, home)) for f in logs[:per_tool])
        lines.append(f"{names[tool]}:")
        for f in logs[:per_tool]:
            lines.append(
                f"  {tilde(f.path, home):<{width}}  {human_size(f.size):>8}  {f.modified[:16].replace('T', ' ')}"
            )
            if tool == "llm":
                try:
                    convs = conversations(f.path)
                except Exception as e:  # an unreadable database: say why, list the rest
                    lines.append(f"    cannot list its conversations: {e}")
                    continue
                lines.append(f"    {len(convs)} conversation(s); %durable open {tilde(f.path, home)} ID opens one:")
                lines += [f"    {describe_conversation(c)}" for c in convs[:per_tool]]
                if len(convs) > per_tool:
                    lines.append(f"    ... and {len(convs) - per_tool} more")
        if len(logs) > per_tool:
            lines.append(f"  ... and {len(logs) - per_tool} more in {tilde(where[tool], home)}")
    if empty:
        lines.append("nothing found for " + ", ".join(empty))
    return lines


def describe_conversation(c: Any) -> str:
    """Return one line for an llm conversation: id, date, turns, model, name (a fork says so)."""
    fork = f" (fork of {c.forked_from})" if c.forked_from else ""
    return f"{c.id}  {c.created_at[:16].replace('T', ' ')}  {c.turns} turn(s)  {c.model or '-'}  {c.name[:40]!r}{fork}"


def human_size(n: int) -> str:
    """Return a byte count as people read it: ``812 B``, ``4.2 KB``, ``3.1 MB``, ``1.2 GB``."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"


def tilde(path: Path, home: Path | None = None) -> str:
    """Return ``path`` with the home folder written ``~``."""
    h = str(Path(home) if home is not None else Path.home())
    s = str(path)
    return "~" + s[len(h) :] if s == h or s.startswith(h + os.sep) else s
