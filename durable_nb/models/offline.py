"""The offline default model: deterministic, no key, shows what it received."""

from __future__ import annotations

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


class OfflineModel:
    """A model that answers by listing, in order, the messages it received.

    One line per message: role, injection (``[meta · cell:…]``) and text, so a
    learner *sees* that meta and ephemeral context reached the model. The
    reply streams one line at a time. With more than ``MAX_SHOWN`` messages
    the earlier ones are counted, not listed, so a turn's cost stays bounded.
    Asked to summarise (compaction), the same listing is the summary.
    """

    name = "offline"

    def stream(self, messages: Sequence[ai.Message]) -> Iterator[str | ai.Message]:
        n = len(messages)
        lines = [f"I received {n} message{'s' if n != 1 else ''}:"]
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
