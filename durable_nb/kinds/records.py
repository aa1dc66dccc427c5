"""How other tools' records read: one line of text for an imported custom entry (pi, Claude Code, Codex).

    record_text(entry)   # "model → anthropic/claude-sonnet-4-5", "hook SessionStart", ...

The importers keep each record whole in ``data`` (the raw JSON line). A
person reads what the record says, not its JSON: :func:`record_text` names
the record's point in a few words, from the fields each tool writes, and
falls back to the record's own ``content``/``text``/``summary``, else its
type. It is the ``text`` of the kinds that hold such records (:mod:`.aside`,
:mod:`.imported`); the tree, the transcript and listings read it through
:func:`durable_nb.kinds.text`. Pure; O(size of the fields read).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..session.entry import CustomEntry

CHARS = 300  # at most this many characters of a record's own text
TAG = re.compile(r"</?[A-Za-z][\w-]*>")  # Claude Code wraps command output in tags: read the text


def _s(d: Any, *keys: str) -> str:
    """Return ``d[k1][k2]...`` when it is a non-empty string, else ``""``."""
    for k in keys:
        d = d.get(k) if isinstance(d, dict) else None
    return d if isinstance(d, str) else ""


def _clip(text: str) -> str:
    text = " ".join(TAG.sub(" ", text).split())
    return text if len(text) <= CHARS else text[: CHARS - 1] + "…"


def _pi(kind: str, d: dict[str, Any]) -> str:
    if kind == "pi.session":
        return "session started" + (f" in {_s(d, 'cwd')}" if _s(d, "cwd") else "")
    if kind == "pi.model_change":
        model = "/".join(x for x in (_s(d, "provider"), _s(d, "modelId")) if x)
        return f"model → {model or '?'}"
    if kind == "pi.thinking_level_change":
        return f"thinking level → {_s(d, 'thinkingLevel') or '?'}"
    if kind == "pi.session_info":
        return f"session named “{_s(d, 'name')}”" if _s(d, "name") else "session info"
    if kind == "pi.custom":
        data = d.get("data")
        shown = json.dumps(data, ensure_ascii=False, default=str) if data not in (None, {}, []) else ""
        return f"{_s(d, 'customType') or 'custom'} extension state" + (f": {shown}" if shown else "")
    if kind == "pi.bash_execution":
        cmd = _s(d, "message", "command")
        return f"ran `{cmd}` (kept out of the model's context)" if cmd else "shell command (kept out of context)"
    return ""


def _claude_code(kind: str, d: dict[str, Any]) -> str:
    t = _s(d, "type")
    if t == "progress":
        data = d.get("data") if isinstance(d.get("data"), dict) else {}
        what = _s(data, "type").replace("_", " ") or "progress"
        name = _s(data, "hookName") or _s(data, "hookEvent") or _s(data, "command")
        return f"{what}{f' · {name}' if name else ''}"
    if t == "file-history-snapshot":
        files = d.get("snapshot", {}).get("trackedFileBackups") if isinstance(d.get("snapshot"), dict) else None
        n = len(files) if isinstance(files, dict) else 0
        return f"file snapshot ({n} file{'s' if n != 1 else ''} tracked)" if n else "file snapshot"
    if t == "queue-operation":
        op = _s(d, "operation") or "queue"
        return f"queued input {op}" + (f": {_clip(_s(d, 'content'))}" if _s(d, "content") else "")
    if kind == "claude_code.system.compact_boundary":
        pre = d.get("compactMetadata", {}).get("preTokens") if isinstance(d.get("compactMetadata"), dict) else None
        return "conversation compacted" + (f" ({pre:,} tokens before)" if isinstance(pre, int) else "")
    if t == "summary":
        return f"summary: {_clip(_s(d, 'summary'))}" if _s(d, "summary") else "summary"
    if kind == "claude_code.sidechain":
        return f"subagent run {_s(d, 'name') or '?'}"
    return ""


def _codex(kind: str, d: dict[str, Any]) -> str:
    p: dict[str, Any] = d["payload"] if isinstance(d.get("payload"), dict) else d
    if kind == "codex.turn_context":
        bits = [x for x in (_s(p, "model"), f"in {_s(p, 'cwd')}" if _s(p, "cwd") else "") if x]
        return "turn context" + (f": {' '.join(bits)}" if bits else "")
    if kind == "codex.session_meta":
        return "session started" + (f" in {_s(p, 'cwd')}" if _s(p, "cwd") else "")
    if kind == "codex.event_msg.thread_rolled_back":
        n = p.get("num_turns")
        return f"rolled back {n} turn{'s' if n != 1 else ''}" if isinstance(n, int) else "rolled back"
    if kind == "codex.response_item.reasoning":
        parts: list[Any] = p["summary"] if isinstance(p.get("summary"), list) else []
        said = " ".join(_s(x, "text") for x in parts if isinstance(x, dict))
        return f"reasoning: {_clip(said)}" if said.strip() else "reasoning (encrypted)"
    if kind.startswith("codex.event_msg."):
        return kind.removeprefix("codex.event_msg.").replace("_", " ")
    return ""


def record_text(entry: CustomEntry) -> str:
    """Return one line a person reads for an imported record: what the record says (see the
    module doc), else its own ``content``/``text``/``summary`` (clipped to :data:`CHARS`), else
    its kind without the tool's prefix (``system.local_command``). Never raises. O(fields read)."""
    kind, d = entry.kind, entry.data if isinstance(entry.data, dict) else {}
    reader = _pi if kind.startswith("pi.") else _codex if kind.startswith("codex.") else _claude_code
    try:
        said = reader(kind, d)
    except (TypeError, ValueError, AttributeError):
        said = ""
    if said:
        return said
    own = next((_s(d, k) for k in ("content", "text", "summary") if _s(d, k)), "")
    name = kind.split(".", 1)[-1].replace("_", " ")
    return f"{name}: {_clip(own)}" if own else name
