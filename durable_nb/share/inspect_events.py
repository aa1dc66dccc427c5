"""The Transcript of an Inspect sample: a ``ModelEvent`` per reply and a ``ToolEvent`` per tool result.

Inspect's viewer draws its Transcript tab from a sample's ``events`` only.
Each reply in the branch's model view becomes a model event whose input is
the view before it, given as a range of the sample's message pool
(``events_data``, the view itself: Inspect's own condensed layout, so a
long branch costs O(view), not O(view²)), and whose output is the reply with
its usage, settings and time; each
tool result a tool event with the call's arguments, the result, its error
and time. A reply a compaction left out of the view has no event, as it has
no message. Needs the ``inspect`` extra.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from inspect_ai.event import Event, ModelEvent, ToolEvent
from inspect_ai.log import EventsData
from inspect_ai.model import ChatMessage, ContentText, GenerateConfig, ModelOutput, ModelUsage
from inspect_ai.tool import ToolCallError, ToolResult
from pydantic import ValidationError

from .. import ai, cost

Viewed = tuple[ai.Message, ChatMessage, str]  # a message of the view, as Inspect's, and when it was made


def events(viewed: list[Viewed]) -> tuple[list[Event], EventsData]:
    """Return the model and tool events of a branch's model view, in order, and the message pool their
    inputs point into (the view's messages). O(view)."""
    out: list[Event] = []
    pool: list[ChatMessage] = []
    calls: dict[str, ai.ToolCall] = {}
    for m, chat, at in viewed:
        when = _time(at)
        if m.role == "assistant":
            out.append(_model_event(m, chat, len(pool), when))
            calls.update((c.id, c) for c in m.tool_calls())
        elif m.role == "tool_result":
            call = calls.get(m.tool_call_id or "")
            out.append(ToolEvent(id=m.tool_call_id or "", function=m.tool_name or (call.name if call else ""),
                                 arguments=call.arguments if call else {}, result=_result(m), error=tool_error(m),
                                 working_time=_seconds(m.timing, "duration_ms"), **when))  # fmt: skip
        pool.append(chat)
    return out, {"messages": pool, "calls": []}


def _result(m: ai.Message) -> ToolResult:
    """What the tool returned: its text blocks (a reminder rode along for the model; the tool did not say
    it), one a plain string, more a part each, never glued."""
    texts = [b.text for b in m.content if isinstance(b, ai.Text)]
    if len(texts) < 2:
        return texts[0] if texts else ""
    return [ContentText(text=t) for t in texts]


def tool_error(m: ai.Message) -> ToolCallError | None:
    """A failed tool result's error: its text blocks, one to a line (Inspect's own joining of text parts)."""
    if not m.is_error:
        return None
    return ToolCallError("unknown", "\n".join(b.text for b in m.content if isinstance(b, ai.Text)))


def _model_event(m: ai.Message, chat: Any, before: int, when: dict[str, Any]) -> ModelEvent:
    """The model event of reply ``m``: its input the pool's first ``before`` messages."""
    counts = cost.tokens(m)
    usage = ModelUsage(input_tokens=counts[0], output_tokens=counts[1], total_tokens=sum(counts)) if counts else None
    output = ModelOutput.from_message(chat, stop_reason="tool_calls" if m.tool_calls() else "stop")
    output.usage = usage
    return ModelEvent(model=m.model or "unknown", input=[], input_refs=[(0, before)] if before else [], tools=[],
                      tool_choice="auto", config=_config(m), output=output,
                      working_time=_seconds(m.timing, "total_ms"), **when)  # fmt: skip


def _config(m: ai.Message) -> GenerateConfig:
    """Return the settings the reply was made with that Inspect's GenerateConfig names (others are left out)."""
    known = {k: v for k, v in (m.settings or {}).items() if k in GenerateConfig.model_fields}
    try:
        return GenerateConfig(**known)
    except ValidationError:
        return GenerateConfig()


def _seconds(timing: dict[str, float] | None, key: str) -> float | None:
    v = (timing or {}).get(key)
    return v / 1000 if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _time(at: str) -> dict[str, Any]:
    """``{"timestamp": ...}`` for an entry's time, ``{}`` when it has none that parses (Inspect's default: now)."""
    try:
        return {"timestamp": datetime.fromisoformat(at.replace("Z", "+00:00"))} if at else {}
    except ValueError:
        return {}
