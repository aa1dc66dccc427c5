"""The two views of one path: what the model receives, what a person reads.

Both are pure functions of a path (a root-to-leaf list of entries, see
:func:`~durable_nb.session.tree.path`); there is no second copy of the log
to keep in sync.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import ai
from .entry import CompactionEntry, CustomEntry, Entry, MessageEntry
from .rules import kept_from, latest_compaction

INTERRUPTED = "The tool call was interrupted before it returned a result."
SUMMARY_PREFIX = "The conversation before this point was compacted. Summary:\n\n"


def summary_message(entry: CompactionEntry) -> ai.Message:
    """Return the user message that stands in for a compaction's elided entries."""
    return ai.Message(role="user", content=[ai.Text(SUMMARY_PREFIX + entry.summary)], origin=f"compaction:{entry.id}")


def model_view(path: Sequence[Entry]) -> list[ai.Message]:
    """Return the messages a provider receives for ``path``, in order.

    Message entries are in (meta and ephemeral included); custom entries are
    skipped. If the path holds compaction entries the latest one wins: its
    summary becomes a user message first, entries before its
    ``first_kept_id`` are elided and everything from there on is kept
    verbatim (an empty or unknown ``first_kept_id`` keeps only what follows
    the compaction entry). An assistant tool call with no result later in the
    view (the footprint of a crash) gets a synthesized error result right
    after its message. The messages are the entries' own objects, not copies.
    Cost: O(len(path)).
    """
    at = latest_compaction(path)
    head = [summary_message(path[at])] if at >= 0 else []  # type: ignore[arg-type]
    start = kept_from(path, at) if at >= 0 else 0
    msgs = head + [e.message for e in path[start:] if isinstance(e, MessageEntry)]
    return repair_tool_calls(msgs)


def repair_tool_calls(msgs: list[ai.Message]) -> list[ai.Message]:
    """Return ``msgs`` with a synthesized error result for every dangling tool call.

    A call is dangling when no ``tool_result`` message with its id follows it.
    The synthesized results go right after the existing results of the
    assistant message that made the calls. Returns ``msgs`` itself when
    nothing dangles. O(n).
    """
    answered = {m.tool_call_id for m in msgs if m.role == "tool_result"}
    if not any(c.id not in answered for m in msgs if m.role == "assistant" for c in m.tool_calls()):
        return msgs
    out: list[ai.Message] = []
    pending: list[ai.ToolCall] = []
    for m in msgs:
        if pending and m.role != "tool_result":
            out.extend(_interrupted(c) for c in pending)
            pending = []
        out.append(m)
        if m.role == "assistant":
            pending = [c for c in m.tool_calls() if c.id not in answered]
    out.extend(_interrupted(c) for c in pending)
    return out


def _interrupted(call: ai.ToolCall) -> ai.Message:
    return ai.Message(
        role="tool_result", content=[ai.Text(INTERRUPTED)], tool_call_id=call.id, tool_name=call.name, is_error=True
    )


def transcript_view(path: Sequence[Entry]) -> list[Entry]:
    """Return the entries a person reads for ``path``, in order.

    Injected messages (meta and ephemeral) are hidden; custom entries and
    compaction markers are kept (compaction deletes nothing a reader wrote).
    Show a kept message with :func:`display_text`, which leaves out
    :class:`~durable_nb.ai.Reminder` blocks. O(len(path)).
    """
    return [e for e in path if not (isinstance(e, MessageEntry) and e.message.injected is not None)]


def display_text(entry: Entry) -> str:
    """Return the text a person is shown for an entry.

    A message shows its :class:`~durable_nb.ai.Text` blocks only (never a
    ``Reminder``); a compaction shows its summary; a custom entry shows its
    kind. Used by the widget and the notebook alike.
    """
    if isinstance(entry, MessageEntry):
        return entry.message.text()
    if isinstance(entry, CompactionEntry):
        return entry.summary
    if isinstance(entry, CustomEntry):
        return entry.kind
    return ""
