"""The agent's active path and its model view, kept up to date as the leaf advances."""

from __future__ import annotations

import bisect
import itertools
import operator
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import NoReturn, overload

from .. import ai
from ..session import CompactionEntry, Entry, MessageEntry, ViewBuilder, latest_compaction, path, view_builder
from ..session.compact import untrack


class ActivePath:
    """The entries from the root to ``leaf_id`` and their model view, cached.

    The agent's write path calls :meth:`extend` with each chain it appends at
    the leaf, so a step of a run costs O(1) in the session's size. Moving the
    leaf (:meth:`move_to`: branch, edit, retry, a re-run cell) reuses the
    cache: the next read walks up from the new leaf only until it meets the
    cached path, cuts the cache back there and grows it from there, so it
    costs O(entries left + entries joined); the view is cut back in place
    (or, while a model still holds a view of its list, on a C-speed copy of
    the part kept, so that view stays whole) and regrown from the nearest
    position where nothing dangled (:meth:`~durable_nb.session.ViewBuilder.mark`).
    :meth:`invalidate` (an id that now resolves differently), cutting back
    before the compaction the view applies, or a path that a parent cycle cut
    short make the next read recompute once, O(depth). ``by_id`` is the
    agent's id index, read (never written) here.
    """

    def __init__(self, by_id: Mapping[str, Entry]) -> None:
        self._by_id = by_id
        self.leaf_id = ""
        self._for: str | None = None  # the leaf the cache was computed for; None: stale
        self._entries: list[Entry] = []
        self._index: dict[str, int] | None = {}  # id -> position on the cached path (None: not made yet)
        self._systems: list[int] | None = []  # positions of the system messages on it, ascending (None: idem)
        self._whole = True  # the path runs up to its root (a parent cycle did not cut it short)
        self._view: ViewBuilder | None = None
        self._marks = _no_marks()  # per position: the view's mark right after it (while _view is set)
        self._floor = -1  # position of the compaction the view applies (-1: none)

    def move_to(self, leaf_id: str) -> None:
        """Make ``leaf_id`` the leaf; the cache follows on the next read (see the class docs). O(1)."""
        self.leaf_id = leaf_id

    def invalidate(self) -> None:
        """Drop the cache (an entry remembered since may change what the leaf's path is). O(1)."""
        self._for = None

    def entries(self) -> list[Entry]:
        """Return the path, root first (callers must not mutate it). O(1) at the leaf; see the class docs."""
        if self._for != self.leaf_id:
            if self._for is None or not self._reuse(self.leaf_id):
                chain = _chain(self._by_id, self.leaf_id) if self._for is None else None
                self._fill(chain if chain is not None else path(self._by_id, self.leaf_id))
            self._for = self.leaf_id
        return self._entries

    def __contains__(self, entry_id: object) -> bool:
        path = self.entries()
        if self._index is None and len(path) == len(self._by_id):  # the path is the whole log (its ids distinct)
            return entry_id in self._by_id
        return entry_id in self._positions()

    def __len__(self) -> int:
        return len(self.entries())

    def system(self) -> str | None:
        """Return the system prompt's text on the path, or ``None``. O(1), or O(depth) to build the view."""
        view = self._built()
        return view.system.text() if view.system is not None else None

    @overload
    def view_builder(self) -> ViewBuilder: ...
    @overload
    def view_builder(self, built_only: bool) -> ViewBuilder | None: ...
    def view_builder(self, built_only: bool = False) -> ViewBuilder | None:
        """Return a copy of the path's model view builder (:func:`~durable_nb.session.view_builder` of
        :meth:`entries`), for a caller to extend. O(depth) at C speed for the copy, O(depth) once to build.
        ``built_only``: ``None`` instead of building it (the path cached and its view kept, or not)."""
        if built_only and (self._for != self.leaf_id or self._view is None):
            return None
        return self._built().copy()

    def run_view(self, extra: list[Entry]) -> RunView:
        """Return the model view of a run that starts here with input ``extra`` (ephemeral entries included).

        O(len(extra)) when the cached view holds no dangling call and
        ``extra`` no compaction; otherwise O(depth) once.
        """
        if any(isinstance(e, CompactionEntry) for e in extra):
            return RunView(view_builder(self.entries() + extra), fresh=True)
        rv = RunView(self._built())
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
            self._grow(chain)
            self._for = chain[-1].id
        self.leaf_id = chain[-1].id

    def starts_below(self, entry_id: str) -> bool:
        """True when the cached path's root names ``entry_id`` as its parent (an orphan path's gap)."""
        return bool(self._entries) and self._entries[0].parent_id == entry_id

    # -- the cache -------------------------------------------------------------------------

    def _fill(self, entries: list[Entry]) -> None:
        """Cache ``entries``, a path as :func:`~durable_nb.session.path` gives it, without a view yet
        (its id index and system positions made when first needed). O(1) here."""
        self._entries = entries
        if untrack is not None:  # the collector's walks skip it (session/compact.py)
            untrack(entries)
        self._index = self._systems = None
        root = entries[0] if entries else None
        self._whole = root is None or not root.parent_id or root.parent_id not in self._by_id
        self._drop_view()

    def _positions(self) -> dict[str, int]:
        """Return the id -> position index of the cached path, made now if needed (O(depth) at C speed)."""
        if self._index is None:
            self._index = dict(zip([e.id for e in self._entries], range(len(self._entries))))
        return self._index

    def _system_positions(self) -> list[int]:
        """Return the positions of the cached path's system messages, ascending, found now if needed (O(depth))."""
        if self._systems is None:
            self._systems = [i for i, e in enumerate(self._entries) if _is_system(e)]
        return self._systems

    def _drop_view(self) -> None:
        self._view, self._marks, self._floor = None, _no_marks(), -1

    def _built(self) -> ViewBuilder:
        """Return the path's view, building it if needed (O(depth) then)."""
        entries = self.entries()
        if self._view is None:
            self._marks = _no_marks()
            self._view = view_builder(entries, self._marks)
            if untrack is not None:  # as the path (a list of messages)
                untrack(self._view.out)
            self._floor = latest_compaction(entries)
        return self._view

    def _reuse(self, leaf_id: str) -> bool:
        """Bring the cache to ``leaf_id``'s path: walk up from it to the cached path, cut back there, grow.

        Returns False (changing nothing) when the cached path was cut short by
        a parent cycle or the walk meets one: :func:`path` then decides.
        """
        if not self._whole:
            return False
        chain: list[Entry] = []
        seen: set[str] = set()
        cur = self._by_id.get(leaf_id) if leaf_id else None
        index = self._positions()
        while cur is not None and cur.id not in index:
            if cur.id in seen:
                return False
            seen.add(cur.id)
            chain.append(cur)
            cur = self._by_id.get(cur.parent_id) if cur.parent_id else None
        self._cut(index[cur.id] if cur is not None else -1)
        chain.reverse()
        self._grow(chain)
        return True

    def _cut(self, k: int) -> None:
        """Keep the first ``k + 1`` positions (``-1``: none), and the view as it was right after position ``k``."""
        index, systems = self._positions(), self._system_positions()
        for e in self._entries[k + 1 :]:
            del index[e.id]
        del self._entries[k + 1 :]
        while systems and systems[-1] > k:
            systems.pop()
        if self._view is None:
            return
        if k < self._floor:  # the compaction the view applies is cut off: the view changes wholesale
            self._drop_view()
            return
        j = k
        while j >= 0 and self._marks[j] < 0:
            if j <= self._floor:  # no state after the compaction where nothing dangled
                self._drop_view()
                return
            j -= 1
        cut = ViewBuilder()
        if j >= 0:
            cut.out = _cut_list(self._view, self._marks[j])
            s = bisect.bisect_right(systems, j)
            if s:
                cut.system = self._entries[systems[s - 1]].message  # type: ignore[attr-defined]
        self._view = cut
        del self._marks[j + 1 :]
        for e in self._entries[j + 1 : k + 1]:  # from the clean state back to position k (a few at most)
            self._add_to_view(e)

    def _grow(self, chain: list[Entry]) -> None:
        """Append ``chain`` (each entry the child of the one before, the first a child of the last) to the cache."""
        for e in chain:
            if self._index is not None:
                self._index[e.id] = len(self._entries)
            if self._systems is not None and _is_system(e):
                self._systems.append(len(self._entries))
            self._entries.append(e)
            if self._view is not None:
                self._add_to_view(e)

    def _add_to_view(self, e: Entry) -> None:
        """Add the entry just appended to the path to the view and record its mark."""
        view = self._view
        assert view is not None
        if isinstance(e, CompactionEntry):  # the view changes wholesale: built again when next needed
            self._drop_view()
            return
        if isinstance(e, MessageEntry):
            view.add(e.message)
        self._marks.append(view.mark())


def _no_marks() -> array[int]:
    """Return an empty list of view marks: a C array (8 bytes a position, where a list of ints holds an
    8-byte pointer and a 32-byte int object for every mark above 256: ~29 bytes an entry of a loaded session)."""
    return array("q")


def _cut_list(view: ViewBuilder, n: int) -> list[ai.Message]:
    """Return the first ``n`` messages of ``view.out``: the list itself cut in place when nothing else holds
    it (O(messages removed)), else a copy (O(n) at C speed), so a view a model still holds stays whole.

    "Nothing else holds it" is CPython's reference count: 2 is the builder's attribute and the argument
    of ``sys.getrefcount``; a run's :class:`RunView` or a :class:`Context` adds one each.
    """
    if sys.implementation.name == "cpython" and sys.getrefcount(view.out) <= 2:
        del view.out[n:]
        return view.out
    return view.out[:n]


def _chain(by_id: Mapping[str, Entry], leaf_id: str) -> list[Entry] | None:
    """Return the path to ``leaf_id`` when the whole log ``by_id`` (in log order) is that
    path, one chain from a root (each entry the child of the one before, the first one's parent
    empty or unknown): exactly what :func:`~durable_nb.session.path` walks, at C speed (~30 ns an
    entry instead of ~1 us). ``None`` otherwise (then the walk decides). O(1) when the log's last
    entry is not the leaf (or the index is not a dict), else O(n) at C speed."""
    if not isinstance(by_id, dict) or not by_id or not leaf_id or next(reversed(by_id)) != leaf_id:
        return None
    entries = list(by_id.values())
    first = entries[0].parent_id
    if first and first in by_id:
        return None
    # each parent is the id before it, compared as a stream: no list of parents nor of ids to free after
    if not all(map(operator.eq, map(_PARENT, itertools.islice(entries, 1, None)), by_id)):
        return None
    return entries


_PARENT = operator.attrgetter("parent_id")


def _is_system(e: Entry) -> bool:
    return isinstance(e, MessageEntry) and e.message.role == "system"


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
