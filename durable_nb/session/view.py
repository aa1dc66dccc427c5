"""The two views of one path: what the model receives, what a person reads.

Both are pure functions of a path (a root-to-leaf list of entries, see
:func:`~durable_nb.session.tree.path`); there is no second copy of the log
to keep in sync.
"""

from __future__ import annotations

import sys
from collections.abc import MutableSequence, Sequence
from typing import cast

from .. import ai
from .entry import CompactionEntry, CustomEntry, Entry, MessageEntry
from .kinds import bookkeeping
from .labels import label_text
from .rules import kept_from, latest_compaction

_CPYTHON = sys.implementation.name == "cpython"  # where sys.getrefcount tells whether a list is shared
INTERRUPTED = "The tool call was interrupted before it returned a result."
SUMMARY_PREFIX = "The conversation before this point was compacted. Summary:\n\n"


def summary_message(entry: CompactionEntry) -> ai.Message:
    """Return the user message that stands in for a compaction's elided entries."""
    return ai.Message(role="user", content=[ai.Text(SUMMARY_PREFIX + entry.summary)], origin=f"compaction:{entry.id}")


def model_view(path: Sequence[Entry]) -> list[ai.Message]:
    """Return the messages a provider receives for ``path``, in order.

    Message entries are in (meta and ephemeral included); custom entries are
    skipped. The system prompt is a message entry whose message has role
    ``"system"``: the latest one on the path is the session's system prompt
    and comes first (even when a compaction elided the part of the path that
    holds it); earlier ones are superseded and left out. If the path holds
    compaction entries the latest one wins: its summary becomes a user
    message, entries before its ``first_kept_id`` are elided and everything
    from there on is kept verbatim (an empty or unknown ``first_kept_id``
    keeps only what follows the compaction entry). Dangling tool calls are
    repaired (see :class:`ViewBuilder`). The messages are the entries' own
    objects, not copies. Cost: O(len(path)).
    """
    return view_builder(path).messages()


def view_builder(path: Sequence[Entry], marks: MutableSequence[int] | None = None) -> ViewBuilder:
    """Return a :class:`ViewBuilder` fed with ``path`` (see :func:`model_view`); extend it with :meth:`ViewBuilder.add`.

    ``marks``, when given, gets one int per position of ``path``: the
    builder's :meth:`~ViewBuilder.mark` right after that position, and -1
    for every position before the latest compaction (leaving the path there
    drops the compaction, so the view must be built again). A caller that
    moves its leaf back to a position with a mark rebuilds nothing (see
    :class:`~durable_nb.durable.active.ActivePath`). O(len(path)).
    """
    builder = ViewBuilder()
    start = 0
    at = latest_compaction(path)
    if at >= 0:
        start = kept_from(path, at)
        for e in path[:start]:  # a system prompt in the elided part still holds
            if isinstance(e, MessageEntry) and e.message.role == "system":
                builder.system = e.message
        builder.add(summary_message(path[at]))  # type: ignore[arg-type]
    if marks is None:
        for e in path[start:] if start else path:
            if isinstance(e, MessageEntry):
                builder.add(e.message)
        return builder
    if at >= 0:
        for e in path[start:at]:  # kept verbatim, but before the compaction: no mark
            if isinstance(e, MessageEntry):
                builder.add(e.message)
        marks.extend([-1] * at)
    for e in path[max(at, 0) :]:
        if isinstance(e, MessageEntry):
            builder.add(e.message)
        marks.append(builder.mark())
    return builder


def repair_tool_calls(msgs: list[ai.Message]) -> list[ai.Message]:
    """Return ``msgs`` with a synthesized error result for every dangling tool call (see :class:`ViewBuilder`).

    A system message goes first. Returns ``msgs`` itself when nothing
    changes. O(n).
    """
    builder = ViewBuilder()
    for m in msgs:
        builder.add(m)
    out = builder.messages()
    return msgs if out is builder.out and len(out) == len(msgs) else out


class ViewBuilder:
    """Builds a model view one message at a time; :func:`model_view` and the agent's cache share it.

    - A ``"system"`` message is not placed where it comes: the latest one
      becomes :attr:`system` and :meth:`messages` puts it first.
    - A tool call is answered by a ``tool_result`` with its id that follows
      its assistant message before the next assistant message. A call left
      unanswered (the footprint of a crash or an interrupt) gets a
      synthesized "interrupted" error result, placed right after the results
      that directly follow its message. Ids are matched per assistant
      message, so a provider reusing an id (``call_0`` in every turn) cannot
      hide a dangling call behind an earlier answer.

    :meth:`add` is O(calls in the message); :meth:`messages` is O(1) when
    nothing dangles and there is no system prompt, O(n) otherwise.
    """

    __slots__ = ("at", "out", "pending", "system")

    def __init__(self) -> None:
        self.out: list[ai.Message] = []
        self.system: ai.Message | None = None
        self.pending: dict[str, ai.ToolCall] = {}  # the latest assistant message's unanswered calls
        self.at = -1  # where their results go; -1: at the end (only results have followed so far)

    def add(self, m: ai.Message) -> None:
        """Append one message of the path (in path order).

        :attr:`out` only ever grows at its end; when a dangling call's result
        must go in the middle, :attr:`out` becomes a new list instead, so a
        caller holding the old list and its length keeps a valid snapshot.
        A list no one else holds (a view being built) takes the results in
        place instead: O(messages after them), not O(view) for each such call.
        """
        role = m.role
        if role == "tool_result":
            if self.pending:
                self.pending.pop(m.tool_call_id or "", None)
                if not self.pending:  # every call answered: nothing is owed a place any more
                    self.at = -1
        elif role == "system":
            self.system = m
            return
        else:
            if self.pending:
                if role == "assistant":
                    if self.at >= 0 and _CPYTHON and sys.getrefcount(self.out) <= 2:  # no one else holds out
                        self.out[self.at : self.at] = [_interrupted(c) for c in self.pending.values()]
                    else:
                        self.out = self._filled(self.out)
                    self.pending = {}
                    self.at = -1
                elif self.at < 0:
                    self.at = len(self.out)
            if role == "assistant":
                for b in m.content:
                    if type(b) is ai.ToolCall:
                        self.pending[b.id] = b
        self.out.append(m)

    def _filled(self, out: list[ai.Message]) -> list[ai.Message]:
        """Return ``out`` with the pending calls' interrupted results (extended in place only at the end)."""
        fill = [_interrupted(c) for c in self.pending.values()]
        if self.at < 0:
            out.extend(fill)
            return out
        return out[: self.at] + fill + out[self.at :]

    def mark(self) -> int:
        """Return ``len(out)`` when nothing dangles (the state is just the first ``len(out)`` messages of
        :attr:`out` and :attr:`system`, so it can be restored from them), else -1. O(1)."""
        return len(self.out) if not self.pending and self.at < 0 else -1

    def copy(self) -> ViewBuilder:
        """Return an independent copy (O(n): the message list is copied)."""
        c = ViewBuilder()
        c.out = list(self.out)
        c.system = self.system
        c.pending = dict(self.pending)
        c.at = self.at
        return c

    def body(self) -> list[ai.Message]:
        """Return the view so far without the system prompt, dangling calls repaired.

        Returns :attr:`out` itself when nothing dangles (copy it before
        changing it); O(1), or O(n) when something dangles.
        """
        return self._filled(list(self.out)) if self.pending else self.out

    def messages(self) -> list[ai.Message]:
        """Return the view so far: the system prompt first, then :meth:`body`.

        May return the builder's own list (see :meth:`body`).
        """
        body = self.body()
        return [self.system, *body] if self.system is not None else body


def split_system(messages: list[ai.Message]) -> tuple[str | None, list[ai.Message]]:
    """Return ``(system prompt text or None, the other messages)`` of a model view. O(1) or O(n)."""
    if messages and messages[0].role == "system":
        return messages[0].text() or None, messages[1:]
    return None, messages


def _interrupted(call: ai.ToolCall) -> ai.Message:
    return ai.Message(
        role="tool_result", content=[ai.Text(INTERRUPTED)], tool_call_id=call.id, tool_name=call.name, is_error=True
    )


def transcript_view(path: Sequence[Entry], plain: bool = False) -> list[Entry]:
    """Return the entries a person reads for ``path``, in order.

    Injected messages (meta and ephemeral) and bookkeeping entries (a label,
    :func:`~durable_nb.session.kinds.bookkeeping`: drawn on the entry it
    names) are hidden; other custom entries and compaction markers are kept
    (compaction deletes nothing a reader wrote). Show a kept message with
    :func:`display_text`, which leaves out :class:`~durable_nb.ai.Reminder`
    blocks. O(len(path)): at C speed for a path of message entries none injected (all kept);
    ``plain``: the caller knows it is one (its log's, :attr:`durable_nb.kept.Shape.plain`), a list copy.
    """
    if plain:
        return list(path)
    if path and set(map(type, path)) == {MessageEntry}:
        if {e.message.injected for e in cast(Sequence[MessageEntry], path)} == {None}:
            return list(path)
    return [e for e in path if (e.message.injected is None if isinstance(e, MessageEntry) else not bookkeeping(e))]


def display_text(entry: Entry) -> str:
    """Return the text a person is shown for an entry.

    A message shows its :class:`~durable_nb.ai.Text` blocks only (never a
    ``Reminder``); a compaction shows its summary; a label entry what it does
    (``label v1 → 3fa9c2d1e0b4``, ``label v1 removed``); another custom entry
    shows its kind. Used by the widget and the notebook alike.
    """
    if isinstance(entry, MessageEntry):
        return entry.message.text()
    if isinstance(entry, CompactionEntry):
        return entry.summary
    if isinstance(entry, CustomEntry):
        return label_text(entry)
    return ""
