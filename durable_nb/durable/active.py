"""The agent's active path and its model view, kept up to date as the leaf advances."""

from __future__ import annotations

from collections.abc import Mapping

from .. import ai
from ..session import CustomEntry, Entry, MessageEntry, model_view, path


class ActivePath:
    """The entries from the root to ``leaf_id`` and their model view, cached.

    The agent's write path calls :meth:`extend` with each chain it appends at
    the leaf, so a turn costs O(1) in the session's size; :meth:`move_to`
    (branch, reopening) and :meth:`invalidate` (an id that now resolves
    differently) make the next read recompute once, O(depth). ``by_id`` is
    the agent's id index, read (never written) here.
    """

    def __init__(self, by_id: Mapping[str, Entry]) -> None:
        self._by_id = by_id
        self.leaf_id = ""
        self._for: str | None = None  # the leaf the cache was computed for; None: stale
        self._entries: list[Entry] = []
        self._ids: set[str] = set()
        self._view: list[ai.Message] | None = None

    def move_to(self, leaf_id: str) -> None:
        """Make ``leaf_id`` the leaf; the cache is recomputed on the next read. O(1)."""
        self.leaf_id = leaf_id

    def invalidate(self) -> None:
        """Drop the cache (an entry remembered since may change what the leaf's path is). O(1)."""
        self._for = None

    def entries(self) -> list[Entry]:
        """Return the path, root first (callers must not mutate it). O(1), or O(depth) to refill."""
        if self._for != self.leaf_id:
            self._entries = path(self._by_id, self.leaf_id)
            self._ids = {e.id for e in self._entries}
            self._view = None
            self._for = self.leaf_id
        return self._entries

    def __contains__(self, entry_id: object) -> bool:
        self.entries()
        return entry_id in self._ids

    def __len__(self) -> int:
        return len(self.entries())

    def view_with(self, extra: list[Entry]) -> list[ai.Message]:
        """Return ``model_view(path + extra)`` as a new list.

        Uses the cached view of the path when ``extra`` holds only plain
        messages (no tool calls or results) and custom entries, which is what
        every turn's input is: one list copy, no whole-session work.
        Otherwise computes the view afresh, O(depth).
        """
        base = self.entries()
        if all(isinstance(e, CustomEntry) or (isinstance(e, MessageEntry) and _plain(e.message)) for e in extra):
            if self._view is None:
                self._view = model_view(base)
            return self._view + [e.message for e in extra if isinstance(e, MessageEntry)]
        return model_view(base + extra)

    def extend(self, chain: list[Entry]) -> None:
        """Make the last of ``chain`` (durable entries, each the child of the one before) the leaf.

        If the chain hangs off the leaf and the cache holds the leaf's path,
        the cache grows in place (and its view, while the new entries are
        plain messages or custom entries). An empty chain changes nothing.
        """
        if not chain:
            return
        if self._for == self.leaf_id and chain[0].parent_id == self.leaf_id:
            self._entries.extend(chain)
            self._ids.update(e.id for e in chain)
            if self._view is not None:
                for e in chain:
                    if isinstance(e, MessageEntry) and _plain(e.message):
                        self._view.append(e.message)
                    elif not isinstance(e, CustomEntry):
                        self._view = None
                        break
            self._for = chain[-1].id
        self.leaf_id = chain[-1].id

    def starts_below(self, entry_id: str) -> bool:
        """True when the cached path's root names ``entry_id`` as its parent (an orphan path's gap)."""
        return bool(self._entries) and self._entries[0].parent_id == entry_id


def _plain(m: ai.Message) -> bool:
    """True for a message that cannot change how the view's tool-call repair treats it."""
    return m.role != "tool_result" and not any(isinstance(b, ai.ToolCall) for b in m.content)
