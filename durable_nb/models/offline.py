"""The offline default model: deterministic, no key, shows what it received."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .. import ai

MAX_SHOWN = 40  # messages listed in full; earlier ones are counted
MAX_CHARS = 300  # characters shown of one message's text


def describe(m: ai.Message) -> str:
    """Return one line for a message: role, injection badge, origin, text.

    Every block is described: text and reminder blocks by their text (a
    reminder marked ``reminder:``), tool calls by name and arguments,
    images and files by type and size; :class:`~durable_nb.ai.Thinking` is
    left out (a reply's reasoning is not something this model reads). Long
    text is cut to ``MAX_CHARS``.
    """
    badge = ai.badge(m)
    if m.role == "tool_result":
        badge += f" (for {m.tool_call_id}{', error' if m.is_error else ''})"
    parts = [ai.describe_block(b) for b in m.content if not isinstance(b, ai.Thinking)]
    text = " | ".join(parts).replace("\n", " ⏎ ")
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + f"… (+{len(text) - MAX_CHARS} chars)"
    return f"{m.role}{badge}: {text}"


CALL = re.compile(r"^call ([A-Za-z0-9_-]+)[ \t]*(.*)$", re.MULTILINE)


def scripted_calls(m: ai.Message) -> list[ai.ToolCall]:
    """Return the tool calls a user message scripts for the offline model: one per ``call NAME {json}`` line.

    The JSON (optional: ``call now`` passes no arguments) is read with
    :func:`~durable_nb.ai.tool_arguments`, so malformed JSON is kept raw, as
    a provider would keep it. Ids are ``call_0``, ``call_1``… in every reply,
    as some providers number them. Only lines that start with ``call `` count.
    """
    return [
        ai.ToolCall(f"call_{i}", name, ai.tool_arguments(raw.strip()))
        for i, (name, raw) in enumerate(CALL.findall(m.text()))
    ]


class OfflineModel:
    """A model that answers by listing, in order, what it received; deterministic, no key.

    One line per message: role, injection (``[meta · cell:…]``) and text, so a
    learner *sees* that meta and ephemeral context reached the model; the
    system prompt and the names of the tools it was offered come first. The
    reply streams one line at a time. With more than ``MAX_SHOWN`` messages
    the earlier ones are counted, not listed, so a turn's cost stays bounded.
    Asked to summarise (compaction), the same listing is the summary.

    Tool calls, scripted: when the last message is a user message with lines
    ``call NAME {json}`` (e.g. ``call add {"a": 2, "b": 3}``), the reply is
    those tool calls (see :func:`scripted_calls`) and the agent runs them;
    after their results come back, the next reply is the usual listing, so
    it shows what each tool returned.
    """

    name = "offline"

    def stream(self, messages: Sequence[ai.Message], request: ai.Request | None = None) -> Iterator[str | ai.Message]:
        calls = scripted_calls(messages[-1]) if messages and messages[-1].role == "user" else []
        if calls:
            said = "".join(f"Calling {c.name}.\n" for c in calls)
            yield said
            yield ai.Message(
                role="assistant",
                content=[ai.Text(said.rstrip("\n")), *calls],
                model="offline",
                stop_reason="tool_use",
            )
            return
        n = len(messages)
        lines = []
        if request is not None and request.system:
            lines.append(f"System prompt: {_cut(request.system)}")
        if request is not None and request.tools:
            lines.append(f"Tools: {', '.join(t.name for t in request.tools)}")
        lines.append(f"I received {n} message{'s' if n != 1 else ''}:")
        skipped = max(0, n - MAX_SHOWN)
        if skipped:
            lines.append(f"- … {skipped} earlier messages not listed")
        for i in range(skipped, n):
            lines.append(f"{i + 1}. {describe(messages[i])}")
        chunks = [line + "\n" for line in lines]
        yield from chunks
        yield ai.Message(
            role="assistant", content=[ai.Text("".join(chunks).rstrip("\n"))], model="offline", stop_reason="end_turn"
        )


def _cut(text: str) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f"… (+{len(text) - MAX_CHARS} chars)"
