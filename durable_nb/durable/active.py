"""The agent's active path and its model view, kept up to date as the leaf advances."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import NoReturn, overload

from .. import ai
from ..session import CompactionEntry, Entry, MessageEntry, ViewBuilder, path, view_builder


class ActivePath:
    """The entries from the root to ``leaf_id`` and their model view, cached.

    The agent's write path calls :meth:`extend` with each chain it appends at
    the leaf, so a step of a run costs O(1) in the session's size;
    :meth:`move_to` (branch, reopening) and :meth:`invalidate` (an id that
    now resolves differently) make the next read recompute once, O(depth).
    ``by_id`` is the agent's id index, read (never written) here.
    """

    def __init__(self, by_id: Mapping[str, Entry]) -> None:
        self._by_id = by_id
        self.leaf_id = ""
        self._for: str | None = None  # the leaf the cache was computed for; None: stale
        self._entries: list[Entry] = []
        self._ids: set[str] = set()
        self._view: ViewBuilder | None = None

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

    def system(self) -> str | None:
        """Return the system prompt's text on the path, or ``None``. O(1), or O(depth) to refill."""
        self.entries()
        if self._view is None:
            self._view = view_builder(self._entries)
        return self._view.system.text() if self._view.system is not None else None

    def run_view(self, extra: list[Entry]) -> RunView:
        """Return the model view of a run that starts here with input ``extra`` (ephemeral entries included).

        O(len(extra)) when the cached view holds no dangling call and
        ``extra`` no compaction; otherwise O(depth) once.
        """
        base = self.entries()
        if any(isinstance(e, CompactionEntry) for e in extra):
            return RunView(view_builder(base + extra), fresh=True)
        if self._view is None:
            self._view = view_builder(base)
        rv = RunView(self._view)
        for e in extra:
            if isinstance(e, MessageEntry):
                rv.add(e.message)
        return rv

    def extend(self, chain: list[Entry]) -> None:
        """Make the last of ``chain`` (durable entries, each the child of the one before) the leaf.

        If the chain hangs off the leaf and the cache holds the leaf's path,
        the cache and its view grow in place (a compaction entry drops the
        view; it is rebuilt on the next run). An empty chain changes nothing.
        """
        if not chain:
            return
        if self._for == self.leaf_id and chain[0].parent_id == self.leaf_id:
            self._entries.extend(chain)
            self._ids.update(e.id for e in chain)
            if self._view is not None:
                for e in chain:
                    if isinstance(e, MessageEntry):
                        self._view.add(e.message)
                    elif isinstance(e, CompactionEntry):
                        self._view = None
                        break
            self._for = chain[-1].id
        self.leaf_id = chain[-1].id

    def starts_below(self, entry_id: str) -> bool:
        """True when the cached path's root names ``entry_id`` as its parent (an orphan path's gap)."""
        return bool(self._entries) and self._entries[0].parent_id == entry_id


class RunView:
    """The model view as one run sees it: the path's view when the run began, then the run's own messages.

    Ephemeral input stays in it for every step of the run (it is not on the
    path). :meth:`context` is O(messages of this run): the path's part is
    shared, not copied (see :class:`Context`).
    """

    def __init__(self, base: ViewBuilder, fresh: bool = False) -> None:
        if fresh or base.pending:  # a dangling call: its repair may land inside the base, so copy once
            self._base: list[ai.Message] = []
            self._tail = base if fresh else base.copy()
        else:
            self._base = base.out  # only ever grows at its end, so (list, length) is a snapshot
            self._tail = ViewBuilder()
            self._tail.system = base.system
        self._n = len(self._base)

    def add(self, m: ai.Message) -> None:
        """Append a message the run produced or took as input."""
        self._tail.add(m)

    @property
    def system(self) -> str | None:
        """The system prompt's text, or ``None``."""
        return self._tail.system.text() if self._tail.system is not None else None

    def context(self) -> Context:
        """Return the messages for the next model call (no system message: it goes in the request)."""
        tail = self._tail.body()
        return Context(self._base, self._n, tail, len(tail))

    def messages(self) -> list[ai.Message]:
        """Return the whole view as a new list, system message first (for previews)."""
        head = [self._tail.system] if self._tail.system is not None else []
        return head + list(self.context())


class Context(Sequence[ai.Message]):
    """The messages a model receives: a read-only sequence over the agent's cached view. O(1) to make.

    The first ``n`` messages of ``base`` (the active path's model view, shared
    with the agent, never copied per call), then the first ``m`` of ``tail``
    (this run's input and replies so far). Both lists only grow at their end,
    so the snapshot stays valid while the agent goes on. Reading is what a
    list does: ``len``, indexing (a slice gives a new ``list``), iteration,
    ``in``, ``index``, ``count``, ``==`` against any sequence with the same
    messages, and ``context + [m]`` (a new ``list``, O(n)). Changing it is
    refused with :class:`TypeError` naming the remedy (``list(messages)``
    gives a list of one's own, O(n)), so a model cannot change what the
    agent sends next. The messages are the entries' own objects: a model
    must not change them either.
    """

    __slots__ = ("_base", "_m", "_n", "_tail")

    def __init__(self, base: list[ai.Message], n: int, tail: list[ai.Message], m: int) -> None:
        self._base, self._n, self._tail, self._m = base, n, tail, m

    def __len__(self) -> int:
        return self._n + self._m

    @overload
    def __getitem__(self, i: int) -> ai.Message: ...
    @overload
    def __getitem__(self, i: slice) -> list[ai.Message]: ...
    def __getitem__(self, i: int | slice) -> ai.Message | list[ai.Message]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("context index out of range")
        return self._base[i] if i < self._n else self._tail[i - self._n]

    def __iter__(self) -> Iterator[ai.Message]:
        return itertools.chain(itertools.islice(self._base, self._n), itertools.islice(self._tail, self._m))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Iterable[ai.Message]) -> list[ai.Message]:
        """Return a new list: these messages, then ``other``'s. O(n)."""
        return [*self, *other]

    def __radd__(self, other: Iterable[ai.Message]) -> list[ai.Message]:
        return [*other, *self]

    def copy(self) -> list[ai.Message]:
        """Return the messages as a new list of one's own (as ``list.copy`` does). O(n)."""
        return list(self)

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(
            "the messages a model receives are read-only (the agent's own view of the session, shared, "
            "not copied); to change them, copy them first: messages = list(messages)"
        )

    append = extend = insert = pop = remove = clear = sort = reverse = _read_only
    __setitem__ = __delitem__ = _read_only

    def __repr__(self) -> str:
        return f"Context({list(self)!r})"
