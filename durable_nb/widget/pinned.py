"""A widget pinned to an entry: the session as it was when that entry was written, never later turns.

    from durable_nb.widget import SessionWidget
    SessionWidget.pinned(agent)                      # pinned at the leaf: later turns do not change it
    SessionWidget.pinned(agent, "first-answer", view="model")   # %durable show ENTRY --pinned

For teaching: a notebook read from the top shows, at each widget, the session up to that point,
whatever ran below it. The widget draws a read-only, in-memory copy of the log up to and including
the entry (its header says so); "Continue from here" moves the copy's leaf only, and no turn, sync
or other writer reaches it. Cost: O(entries up to the entry), once (the entries are shared, not copied).
"""

from __future__ import annotations

from typing import Any

from ..errors import DurableError
from ..session import MemoryStore


def pinned_copy(agent: Any, at: str = "") -> Any:
    """Return an Agent over an in-memory copy of ``agent``'s log up to and including entry ``at``
    (an id; ``""``: the leaf), its leaf at ``at``. ``DurableError`` if there is no such entry."""
    from ..durable import Agent

    entries = agent.entries()
    at = at or agent.leaf_id
    k = next((i for i, e in enumerate(entries) if e.id == at), None) if at else -1
    if k is None:
        raise DurableError(f"no entry {at!r} in session {agent.session_id!r}")
    store = MemoryStore()
    store.adopt_session(agent.session_id, entries[: k + 1])  # the entries themselves (immutable), ephemeral ones too
    copy = Agent(store=store, session_id=agent.session_id)
    if at:
        copy.branch(at)
    return copy


def pinned_note(at: str) -> str:
    """What the pinned widget's header says it is a copy of (its ``read_only`` trait): ``read-only
    copy of this session at 1a2b3c4d, pinned · …`` (the session's id follows in the header)."""
    return f"this session {f'at {at[:8]}' if at else '(empty)'}, pinned"
