"""The run loop: one run's model calls and tool calls, each persisted before its event.

:func:`run_loop` is the generator behind :meth:`durable_nb.durable.Agent.run`
(and each replayed turn and fanned-out variant); :class:`RunStream` is what a
caller iterates. :class:`Host` is what the loop, :mod:`.replay` and
:mod:`.fanout` need from the agent that owns them (the agent passes itself),
so none of them imports the agent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import Any, Protocol

import msgspec

from .. import ai
from ..errors import ModelError
from ..models import Model, model_name, open_stream
from ..models.surrogates import repair_message
from ..session import CustomEntry, Entry, MessageEntry, new_id, now
from .active import RunView
from .events import Event
from .log import Log
from .tools import Tool, ToolOutput, error_text, result_text

_Tools = Iterable[Callable[..., Any] | Tool] | None
_Settings = dict[str, Any] | None


class Host(Protocol):
    """What the loop, a replay and a fan-out use of their :class:`~durable_nb.durable.Agent`."""

    max_steps: int
    settings: dict[str, Any]
    tools: list[Callable[..., Any] | Tool]
    tool_reminder: Callable[[ai.ToolCall, ai.Message], str | None] | None
    _log: Log

    @property
    def session_id(self) -> str: ...
    @property
    def leaf_id(self) -> str: ...
    @property
    def system(self) -> str | None: ...
    def path(self, leaf_id: str | None = None) -> list[Entry]: ...
    def labels(self) -> dict[str, str]: ...
    def resolve(self, ref: str) -> str: ...
    def on_path(self, entry_id: str) -> bool: ...
    def branch(self, entry_id: str) -> None: ...
    def append(self, *entries: Entry | str) -> list[Entry]: ...
    def label(self, name: str, entry_id: str | None = None) -> CustomEntry: ...
    def _check_open(self) -> None: ...
    def _built_model(self) -> Model: ...
    def _stream(
        self, model: Model, entries: Sequence[Entry | str], tools: _Tools, settings: _Settings
    ) -> RunStream: ...


class RunStream:
    """The events of one run. Iterating drives the run; :meth:`wait` finishes it.

    Iteration raises the run's error after yielding the ``agent_end`` event
    that carries it. ``messages`` holds what the run produced so far.
    """

    def __init__(self, events: Iterator[Event]) -> None:
        self._events = events
        self.messages: list[ai.Message] = []
        self.error: BaseException | None = None
        self.stop_reason = ""
        self.done = False

    def __iter__(self) -> RunStream:
        return self

    def __next__(self) -> Event:
        if self.done:
            raise StopIteration
        try:
            ev = next(self._events)
        except StopIteration:
            self.done = True
            raise
        except BaseException as e:
            self.done = True
            self.error = e
            raise
        if ev.type == "message_end" and ev.message is not None:
            self.messages.append(ev.message)
        elif ev.type == "agent_end":
            self.stop_reason = ev.stop_reason
        return ev

    def wait(self) -> list[ai.Message]:
        """Drive the rest of the run; return the produced messages or raise the run's error."""
        for _ in self:
            pass
        if self.error is not None:
            raise self.error
        return self.messages

    def close(self) -> None:
        """Stop the run where it is: what was persisted stays, a reply still streaming is not stored."""
        self.done = True
        close = getattr(self._events, "close", None)
        if close is not None:
            close()


def run_loop(
    agent: Host,
    model: Model,
    view: RunView,
    prepared: list[Entry],
    tools: list[Tool],
    settings: dict[str, Any],
    parent: str,
    move: bool = True,
    halt: threading.Event | None = None,
) -> Iterator[Event]:
    """Yield the events of one run on its own chain (see :meth:`~durable_nb.durable.Agent.run`).

    Each entry's parent is the run's previous entry (``parent`` first),
    whatever the leaf does meanwhile; ``move=False`` (a fan-out's variants)
    leaves the leaf alone; once ``halt`` is set, the run's next commit
    raises ``KeyboardInterrupt`` instead of writing. Every event follows the
    commit it reports. O(what the run adds) beyond the model and the tools.
    """
    durable = agent._log.commit(prepared, move, halt)
    at = durable[-1].id if durable else parent  # the run's own end
    sid = agent.session_id
    yield Event("agent_start", session_id=sid, leaf_id=at, entries=tuple(durable))
    by_name = {t.name: t for t in tools}
    specs = [t.spec() for t in tools]
    produced: list[ai.Message] = []
    partial: list[str] = []  # the deltas of the reply under way (not stored if the run stops)
    stop = ""
    try:
        for step in range(1, agent.max_steps + 1):
            partial.clear()
            request = ai.Request(system=view.system, tools=specs, settings=settings)
            final = yield from _reply(model, view, request, sid, partial)
            final = _stamp_calls(final, by_name)
            reply = _message_entry(final, at)
            agent._log.commit([reply], move, halt)
            at = reply.id
            view.add(final)
            produced.append(final)
            partial.clear()
            yield Event("message_end", session_id=sid, leaf_id=reply.id, entries=(reply,), message=final)
            calls = final.tool_calls()
            stop = final.stop_reason or ""
            if not calls:
                break
            for call in calls:
                yield Event("tool_start", session_id=sid, leaf_id=at, call=call)
                result, duration = call_tool(call, by_name, agent.tool_reminder)
                entry = _message_entry(result, at)
                agent._log.commit([entry], move, halt)
                at = entry.id
                view.add(result)
                produced.append(result)
                yield Event("message_end", session_id=sid, leaf_id=entry.id, entries=(entry,), message=result)
                yield Event(
                    "tool_end", session_id=sid, leaf_id=entry.id, entries=(entry,), call=call, result=result,
                    duration_ms=duration,
                )  # fmt: skip
            if step == agent.max_steps:
                stop = "max_steps"
    except GeneratorExit:
        raise
    except BaseException as e:
        yield Event("agent_end", session_id=sid, leaf_id=at, error=e, partial="".join(partial))
        raise
    yield Event("agent_end", session_id=sid, leaf_id=at, messages=tuple(produced), stop_reason=stop)


def _reply(
    model: Model, view: RunView, request: ai.Request, sid: str, partial: list[str]
) -> Generator[Event, None, ai.Message]:
    """Stream one model call (``text_delta`` events, its deltas kept in ``partial``); return the reply,
    stamped with the model, the settings and its timing (the caller stores it)."""
    start = time.perf_counter()
    first: float | None = None
    final = None
    for item in open_stream(model, view.context(), request):
        if first is None:
            first = time.perf_counter()
        if isinstance(item, str):
            if item:
                partial.append(item)
                yield Event("text_delta", session_id=sid, delta=item)
        elif isinstance(item, ai.Message):
            final = item
        else:
            raise ModelError(f"model {model_name(model)} yielded {type(item).__name__}; yield str or ai.Message")
    end = time.perf_counter()
    if final is None:
        final = ai.assistant_message("".join(partial))
    return msgspec.structs.replace(
        repair_message(final),  # surrogate halves a model's chunks left apart
        role="assistant",
        injected=None,
        model=final.model or model_name(model),
        settings=request.settings or None,
        timing={"ttft_ms": _ms(start, first or end), "total_ms": _ms(start, end)},
    )


def _stamp_calls(message: ai.Message, tools: dict[str, Tool]) -> ai.Message:
    """Return ``message`` with each call to a tool that has a ``provenance`` (an MCP tool) recording it
    under ``"mcp"`` beside its declared fields; the message itself when there is none. O(blocks)."""
    if not any(isinstance(b, ai.ToolCall) and hasattr(tools.get(b.name), "provenance") for b in message.content):
        return message
    content: list[ai.Block] = []
    for b in message.content:
        tool = tools.get(b.name) if isinstance(b, ai.ToolCall) else None
        if tool is not None and hasattr(tool, "provenance"):
            b = msgspec.structs.replace(
                b, extra={**(b.extra if isinstance(b.extra, dict) else {}), "mcp": tool.provenance}
            )
        content.append(b)
    return msgspec.structs.replace(message, content=content)


def _message_entry(message: ai.Message, parent: str) -> MessageEntry:
    return MessageEntry(id=new_id(), parent_id=parent, created_at=now(), message=message)


def call_tool(
    call: ai.ToolCall,
    tools: dict[str, Tool],
    reminder: Callable[[ai.ToolCall, ai.Message], str | None] | None = None,
) -> tuple[ai.Message, float]:
    """Run one tool call; return its tool-result message and the time it took in ms.

    Unknown tool, malformed or unfitting arguments, or an exception in the
    tool give an ``is_error`` result (the model reads why); a
    ``KeyboardInterrupt`` (or any ``BaseException`` that is not an
    ``Exception``) propagates and stops the run. A text ``reminder(call,
    result)`` returns is attached as a :class:`~durable_nb.ai.Reminder`.
    """
    start = time.perf_counter()
    error = False
    extra: dict[str, Any] | None = None
    content: list[ai.Block] | None = None
    tool = tools.get(call.name)
    malformed = call.malformed()
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        text_, error = f"unknown tool {call.name!r}; the tools are: {known}", True
    elif malformed:
        text_, error = f"the arguments of {call.name} could not be read: {malformed}", True
    else:
        try:
            run = getattr(tool, "run_call", None)  # a tool that wants the whole call (an MCP tool's approval)
            out = run(call) if run is not None else tool(call.arguments)
            if isinstance(out, ToolOutput):
                content, error, extra = out.content, out.is_error, out.extra
                text_ = ""
            else:
                text_ = result_text(out)
        except Exception as e:  # noqa: BLE001 - the model reads the error and the run goes on
            text_, error = error_text(e), True
    duration = _ms(start, time.perf_counter())
    result = ai.Message(
        role="tool_result",
        content=[ai.Text(text_)] if content is None else content,
        tool_call_id=call.id,
        tool_name=call.name,
        is_error=error,
        timing={"duration_ms": duration},
        extra=extra or msgspec.UNSET,
    )
    if reminder is not None:
        note = reminder(call, result)
        if note:
            result = msgspec.structs.replace(result, content=[*result.content, ai.Reminder(note)])
    return result, duration


def collect(model: Model, messages: list[ai.Message], request: ai.Request) -> str:
    """Run ``model`` to completion and return its reply text (no events, nothing stored)."""
    deltas, final = [], None
    for item in open_stream(model, messages, request):
        if isinstance(item, str):
            deltas.append(item)
        elif isinstance(item, ai.Message):
            final = item
    return final.text() if final is not None else "".join(deltas)


def estimate_tokens(messages: Sequence[ai.Message]) -> int:
    """Return a rough token count (characters / 4) of the messages' text and reminders."""
    chars = sum(len(getattr(b, "text", "")) for m in messages for b in m.content)
    return (chars + 3) // 4


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 3)
