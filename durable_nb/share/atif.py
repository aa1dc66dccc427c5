"""ATIF, the Agent Trajectory Interchange Format (``.atif.json``): one linear trajectory per leaf branch.

ATIF (harbor-framework/harbor ``rfcs/0001-trajectory-format.md``, v1.8) holds
one linear history, so the file is the trajectory of the session's leaf
branch (the agent's leaf first) and the other leaf branches' trajectories
ride in its ``extra.branches``, each a whole ATIF trajectory of its own.
Steps, in path order (``docs/exports.md`` has the table and what is lost):

- a system prompt → a ``system`` step; a user message → a ``user`` step; meta
  input → a ``user`` step with ``is_copied_context: true`` (context the session
  carried, not something a person said: not training data);
- an assistant message → an ``agent`` step (text, thinking as
  ``reasoning_content``, tool calls, model, token counts and cost as
  ``metrics``) whose ``observation`` holds the tool results answering its calls
  that follow it before any other step;
- a tool result that comes later (after a user message, say: rule R6 allows
  it) or whose call is not on the branch → a ``system`` step where it arrived,
  its call named in ``extra`` (``tool_call_id``, ``call_step_id``);
- a compaction → a ``system`` step with its summary.

Each step's ``extra.entry_ids`` names the entries it came from. Plain data:
imports nothing but this package, writes through ``json``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from .. import __version__, ai, cost
from ..session import CompactionEntry, Entry, MessageEntry
from .branches import branches
from .formats import Job

SCHEMA_VERSION = "ATIF-v1.8"
_IMAGES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def write_atif(job: Job, out: Path) -> None:
    """Write ``job``'s session to ``out`` as ATIF: the leaf branch's trajectory, the others in its
    ``extra.branches``. Raises :class:`~durable_nb.errors.DurableError` for a session with no entries.
    Memory: O(leaves × depth) for the document."""
    from ..errors import DurableError

    agent = job.agent
    found = branches(agent)
    if not found:
        raise DurableError(f"session {agent.session_id!r} has no entries, so no trajectory")
    docs = [trajectory(agent.session_id, leaf, entries) for leaf, entries in found]
    main = docs[0]
    if len(docs) > 1:
        main["extra"]["branches"] = docs[1:]
    with out.open("w", encoding="utf-8") as f:
        json.dump(main, f, ensure_ascii=False, indent=1)
        f.write("\n")


def trajectory(session_id: str, leaf: str, path: list[Entry]) -> dict[str, Any]:
    """Return the ATIF trajectory of one branch: ``path`` from the root to ``leaf``. O(len(path))."""
    steps: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}  # tool call id -> the agent step that made it (its results go there)
    models: list[str] = []
    for e in path:
        if isinstance(e, CompactionEntry):
            steps.append(_step(steps, e, "system", e.summary, extra={"compaction": {
                "first_kept_id": e.first_kept_id, "tokens_before": e.tokens_before}}))  # fmt: skip
        elif isinstance(e, MessageEntry):
            _message(steps, calls, models, e)
    totals = [s["metrics"] for s in steps if "metrics" in s]
    final: dict[str, Any] = {"total_steps": len(steps)}
    for key, total in (("prompt_tokens", "total_prompt_tokens"), ("completion_tokens", "total_completion_tokens"),
                       ("cached_tokens", "total_cached_tokens"), ("cost_usd", "total_cost_usd")):  # fmt: skip
        vals = [m[key] for m in totals if key in m]
        if vals:
            final[total] = sum(vals)
    agent: dict[str, Any] = {"name": "durable_nb", "version": __version__}
    if models:
        agent["model_name"] = max(set(models), key=models.count)
    return {"schema_version": SCHEMA_VERSION, "session_id": session_id, "trajectory_id": leaf, "agent": agent,
            "steps": steps, "final_metrics": final, "extra": {"leaf_id": leaf}}  # fmt: skip


def _step(steps: list[dict[str, Any]], e: Entry, source: str, message: Any, **fields: Any) -> dict[str, Any]:
    extra = {"entry_ids": [e.id], **fields.pop("extra", {})}
    out = {"step_id": len(steps) + 1, "source": source, "message": message, **fields, "extra": extra}
    if e.created_at:
        out["timestamp"] = e.created_at
    return out


def _message(steps: list[dict[str, Any]], calls: dict[str, dict[str, Any]], models: list[str], e: MessageEntry) -> None:
    m = e.message
    if m.role == "tool_result":
        result: dict[str, Any] = {"source_call_id": m.tool_call_id, "content": _content(m.content)}
        if m.is_error:
            result["extra"] = {"is_error": True}
        step = calls.get(m.tool_call_id or "")
        if step is not None and step is steps[-1]:  # no step since its call's: that step's observation
            step.setdefault("observation", {"results": []})["results"].append(result)
            step["extra"]["entry_ids"].append(e.id)
            return
        # late (after a later step: rule R6 allows it) or its call not on the path: a system step where it
        # arrived, so the steps keep the path's order; source_call_id names a call of its own step only
        result.pop("source_call_id")
        named = {"tool_call_id": m.tool_call_id, "tool_name": m.tool_name}
        if step is not None:
            named["call_step_id"] = step["step_id"]
        steps.append(_step(steps, e, "system", "", observation={"results": [result]}, extra=named))
        return
    extra: dict[str, Any] = {}
    if m.injected is not None:
        extra["injected"] = str(m.injected)
    if m.origin:
        extra["origin"] = m.origin
    if m.role == "system":
        steps.append(_step(steps, e, "system", m.text(), extra=extra))
    elif m.role == "user":
        copied = {"is_copied_context": True} if m.injected is not None else {}
        steps.append(_step(steps, e, "user", _content(m.content), extra=extra, **copied))
    else:
        steps.append(_agent_step(steps, e, m, extra))
        for call in m.tool_calls():
            calls[call.id] = steps[-1]
        if m.model:
            models.append(m.model)


def _agent_step(steps: list[dict[str, Any]], e: MessageEntry, m: ai.Message, extra: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if m.model:
        fields["model_name"] = m.model
    thinking = "\n\n".join(b.text for b in m.content if isinstance(b, ai.Thinking) and b.text)
    if thinking:
        fields["reasoning_content"] = thinking
    if m.tool_calls():
        fields["tool_calls"] = [{"tool_call_id": c.id, "function_name": c.name, "arguments": c.arguments}
                                for c in m.tool_calls()]  # fmt: skip
    metrics = _metrics(m)
    if metrics:
        fields["metrics"] = metrics
    for key in ("stop_reason", "settings", "timing", "error"):
        if getattr(m, key):
            extra[key] = getattr(m, key)
    if m.injected is not None:
        fields["is_copied_context"] = True
    return _step(steps, e, "agent", _content([b for b in m.content if not isinstance(b, ai.Thinking)]),
                 extra=extra, **fields)  # fmt: skip


def _metrics(m: ai.Message) -> dict[str, Any]:
    counts = cost.tokens(m)
    if counts is None:
        return {}
    out: dict[str, Any] = {"prompt_tokens": counts[0], "completion_tokens": counts[1]}
    read = (m.usage or {}).get("cache_read_input_tokens")
    if isinstance(read, int) and not isinstance(read, bool) and read > 0:
        out["cached_tokens"] = read
    price = cost.message_cost(m)
    if price is not None:
        out["cost_usd"] = float(price)
    return out


def _content(blocks: list[ai.Block]) -> str | list[dict[str, Any]]:
    """Return a message's text, or ATIF content parts when it holds an image (as a ``data:`` URL)."""
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if isinstance(b, ai.Text):
            parts.append({"type": "text", "text": b.text})
        elif isinstance(b, ai.Reminder):  # a paragraph of its own
            parts.append({"type": "text", "text": ("\n\n" if parts else "") + b.text})
        elif isinstance(b, ai.Image) and b.mime_type in _IMAGES:
            url = f"data:{b.mime_type};base64,{base64.b64encode(b.data).decode('ascii')}"
            parts.append({"type": "image", "source": {"media_type": b.mime_type, "path": url}})
        elif isinstance(b, (ai.Image, ai.File)):
            parts.append({"type": "text", "text": f"[{b.type} {getattr(b, 'name', '') or b.mime_type}]"})
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts
