"""Tool calls answered from stored results: ``replay(tool_results="reuse")``, ``evals.run(tool_results="reuse")``.

A replay (or an evaluation run) with another model may call the same tools
the original did; with ``"reuse"`` no tool runs: each call is answered with
the stored result of a call to that tool with the same arguments (JSON,
keys sorted), so the new model sees the same tool outputs and nothing
outside the session is touched. The model is offered the same tools
(their schemas), plus any tool the stored calls name that is not among
them. A call with no stored twin gets an ``is_error`` result saying so.
Each reused result records the entry it copies under ``"reused"``.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from .. import ai
from ..errors import DurableError
from ..session import Entry, MessageEntry
from .tools import Tool, ToolArgumentsError, ToolOutput, as_tools

MODES = ("call", "reuse")


def check_mode(mode: object) -> str:
    """Return ``mode`` when it is ``"call"`` or ``"reuse"``; raises :class:`DurableError` (one line) otherwise."""
    if mode not in MODES:
        raise DurableError(f"tool_results must be 'call' (run the tools) or 'reuse' (stored results), not {mode!r}")
    return str(mode)


def _key(name: str, arguments: object) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


class StoredResults:
    """The tool results among ``entries``, by the tool name and arguments of the call each answers.

    ``consume``: a second call with the same arguments gets the next stored
    result (a replay, in order; the last one repeats), else always the first
    (an evaluation run). ``answered`` counts the calls answered. O(entries) to build.
    """

    def __init__(self, entries: Iterable[Entry], consume: bool = True) -> None:
        calls_at: dict[str, dict[str, ai.ToolCall]] = {}  # entry id -> the calls its results answer
        self.by_key: dict[tuple[str, str], list[MessageEntry]] = defaultdict(list)
        self.names: list[str] = []
        for e in entries:  # call ids repeat across branches: a result answers the call above it
            if not isinstance(e, MessageEntry):
                continue
            m = e.message
            if m.role == "assistant" and m.tool_calls():
                calls_at[e.id] = {c.id: c for c in m.tool_calls()}
            elif m.role == "tool_result" and e.parent_id in calls_at:
                calls = calls_at[e.id] = calls_at[e.parent_id]
                c = calls.get(m.tool_call_id or "")
                if c is None:
                    continue
                self.by_key[_key(c.name, c.arguments)].append(e)
                if c.name not in self.names:
                    self.names.append(c.name)
        self.consume = consume
        self.answered = 0
        self._used: dict[tuple[str, str], int] = defaultdict(int)
        self._lock = threading.Lock()

    def answer(self, call: ai.ToolCall) -> ToolOutput:
        """Return the stored result for ``call`` (its content and ``is_error``, reminders left out), or an
        ``is_error`` output saying none is stored. Never runs a tool."""
        k = _key(call.name, call.arguments)
        found = self.by_key.get(k)
        with self._lock:
            self.answered += 1
            if not found:
                text = f"no stored result of {call.name} with these arguments (tools reused: none was run)"
                return ToolOutput([ai.Text(text)], True, {"reused": ""})
            i = min(self._used[k], len(found) - 1) if self.consume else 0
            self._used[k] += 1
        e = found[i]
        m = e.message
        extra = dict(m.extra) if isinstance(m.extra, dict) else {}
        extra["reused"] = e.id
        content: list[ai.Block] = [b for b in m.content if not isinstance(b, ai.Reminder)] or [ai.Text("")]
        return ToolOutput(content, bool(m.is_error), extra)


class ReusedTool(Tool):
    """A tool the model is offered (name, description, schema) whose calls :class:`StoredResults` answers."""

    def __init__(self, name: str, description: str, parameters: dict[str, Any], stored: StoredResults) -> None:
        self.fn = self
        self.name = name
        self.description = description
        self.parameters = parameters
        self._positional = []
        self.stored = stored

    def validate(self, arguments: object) -> dict[str, Any]:
        if not isinstance(arguments, dict):
            raise ToolArgumentsError(f"the arguments of {self.name} must be a JSON object")
        return arguments

    def __call__(self, arguments: object) -> ToolOutput:
        return self.run_call(ai.ToolCall(name=self.name, arguments=self.validate(arguments)))

    def run_call(self, call: ai.ToolCall) -> ToolOutput:
        return self.stored.answer(call)

    def __repr__(self) -> str:
        return f"<durable.ReusedTool {self.name}>"


def reusing(tools: Iterable[Callable[..., Any] | Tool], stored: StoredResults) -> list[Tool]:
    """Return ``tools`` as :class:`ReusedTool` (same names and schemas) answered by ``stored``, plus one
    with an open schema for each tool the stored calls name that ``tools`` lacks. O(tools)."""
    out: list[Tool] = [ReusedTool(t.name, t.description, t.parameters, stored) for t in as_tools(tools)]
    have = {t.name for t in out}
    for name in stored.names:
        if name not in have:
            out.append(ReusedTool(name, "(answered from the session's stored results)", {"type": "object"}, stored))
    return out


__all__ = ["MODES", "ReusedTool", "StoredResults", "check_mode", "reusing"]
