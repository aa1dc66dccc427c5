"""Events: what a run streams, and the lifecycle events a publisher receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .. import ai
from ..session import Entry

EventType = Literal[
    "agent_start",
    "text_delta",
    "message_end",
    "tool_start",
    "tool_end",
    "agent_end",
    "session_init",
    "session_branched",
    "session_forked",
    "session_compacted",
]


@dataclass(frozen=True)
class Event:
    """One event.

    - ``agent_start``: the run's input was persisted; ``entries`` are the
      persisted (durable) input entries, ``leaf_id`` the new leaf.
    - ``text_delta``: ``delta`` is the next piece of the reply.
    - ``message_end``: ``entries`` holds the persisted entry of a message
      the run produced (an assistant reply or a tool result), ``message``
      its message; sent only after the store append succeeded.
    - ``tool_start``: ``call`` (an :class:`~durable_nb.ai.ToolCall`) is
      about to run.
    - ``tool_end``: ``call`` ran; ``result`` is its persisted tool-result
      message (``is_error`` when it raised, its arguments did not fit or the
      tool is unknown), ``entries`` its entry, ``duration_ms`` the time it
      took. Sent after the result's ``message_end``.
    - ``agent_end``: the run is over; ``messages`` are the produced messages;
      ``stop_reason`` says why it stopped (the model's own, such as
      ``end_turn``, or ``max_steps``); ``error`` is set when it failed (then
      ``partial`` holds any text that streamed before the failure and was
      not persisted).
    - lifecycle (to the publisher, after success), as pi-go's:
      ``session_init`` when an agent binds a session, new or resumed
      (``leaf_id``: where it resumes, ``""`` for a new one; a fork's child
      publishes one too); ``session_branched`` (``from_id``: the leaf before
      the move, ``leaf_id``: after it); ``session_forked`` (published by the
      source: ``session_id`` of the new session, ``parent_id`` the source's,
      ``leaf_id`` the copy's leaf, ``entries`` the copies), followed by the
      child's ``session_init``; ``session_compacted`` (``entries`` holds the
      compaction entry).

    ``entries`` never holds an ephemeral entry: a receipt attests that data
    survived, and an ephemeral entry has nothing to attest to.
    """

    type: EventType
    session_id: str = ""
    leaf_id: str = ""
    from_id: str = ""
    parent_id: str = ""
    entries: tuple[Entry, ...] = ()
    delta: str = ""
    message: ai.Message | None = None
    messages: tuple[ai.Message, ...] = field(default=())
    error: BaseException | None = None
    partial: str = ""
    call: ai.ToolCall | None = None
    result: ai.Message | None = None
    duration_ms: float = 0.0
    stop_reason: str = ""
