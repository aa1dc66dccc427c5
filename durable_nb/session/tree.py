"""Walking the tree that parent pointers make: :func:`path` and :func:`tree`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import ge

from .entry import Entry
from .rules import sort_siblings


def index(entries: Iterable[Entry]) -> dict[str, Entry]:
    """Return ``{id: entry}``; with duplicate ids the later entry wins. O(n)."""
    return {e.id: e for e in entries}


def path(entries: Iterable[Entry] | Mapping[str, Entry], leaf_id: str) -> list[Entry]:
    """Return the entries from the root down to ``leaf_id``, root first.

    ``entries`` is a list of entries or an ``{id: entry}`` mapping (pass a
    mapping you keep up to date to skip the O(n) indexing). An empty or
    unknown ``leaf_id`` gives ``[]``. The walk stops at a parent it cannot
    resolve (an orphan: the result starts below the gap) and at a cycle
    (each entry appears once). With duplicate ids the later entry wins (see
    :func:`index`). Cost: O(depth) with a mapping, O(n) otherwise.
    """
    by_id = entries if isinstance(entries, Mapping) else index(entries)
    out: list[Entry] = []
    seen: set[str] = set()
    cur = by_id.get(leaf_id) if leaf_id else None
    while cur is not None and cur.id not in seen:
        seen.add(cur.id)
        out.append(cur)
        cur = by_id.get(cur.parent_id) if cur.parent_id else None
    out.reverse()
    return out


@dataclass(eq=False)
class Node:
    """One entry of :func:`tree` and its children, in sibling order (oldest first)."""

    entry: Entry
    children: list[Node] = field(default_factory=list)


def tree(entries: Iterable[Entry]) -> list[Node]:
    """Return the forest of ``entries``: its root nodes, in sibling order.

    Roots and the children of each node are in sibling order
    (:func:`~durable_nb.session.rules.sort_siblings`: oldest ``created_at``
    first, equal times in log order), as pi-go orders them. An entry whose
    parent is missing (an orphan) becomes a root. Entries caught in a parent
    cycle are reached by cutting the cycle at its first entry in log order,
    which becomes a root (an entry hanging below a cycle stays under its
    parent, even when it comes first in the log). With duplicate ids the later entry wins, as in
    :func:`index` and :func:`path`: children name it as their parent, while
    the earlier one stays in the forest without children. O(n).
    """
    entries = list(entries)
    where = {e.id: i for i, e in enumerate(entries)}  # with duplicate ids the later entry wins
    pidx = [where.get(e.parent_id, -1) if e.parent_id else -1 for e in entries]
    for i in cycle_cuts(pidx):
        pidx[i] = -1
    order = [Node(e) for e in entries]
    roots: list[Node] = []
    for i, (n, j) in enumerate(zip(order, pidx)):
        if j < 0 or j == i:  # no parent, a missing one, itself, or a cycle cut here
            roots.append(n)
        else:
            order[j].children.append(n)
    for n in order:
        sort_siblings(n.children, _created)
    return sort_siblings(roots, _created)


def _created(n: Node) -> str:
    return n.entry.created_at


def cycle_cuts(pidx: Sequence[int]) -> list[int]:
    """Return where to cut the parent cycles of a log, ascending: each cycle's first entry in log order
    (its lowest position), once. ``pidx[k]``: the position of entry ``k``'s parent, negative for none (or
    ``k`` itself: a root too). An entry hanging below a cycle keeps its parent (the walk goes up from it
    to the cycle). :func:`tree` and the widget's layout cut so. O(n): at C speed when every parent comes
    before its child in the log (then there is no cycle), else each entry is walked up once."""
    n = len(pidx)
    if not any(map(ge, pidx, range(n))):
        return []
    walk_of = [-1] * n  # entry -> the walk up that met it first
    cuts: list[int] = []
    for w in range(n):
        k = w
        while k >= 0 and walk_of[k] < 0:
            walk_of[k] = w
            p = pidx[k]
            k = -1 if p == k else p
        if k >= 0 and walk_of[k] == w:  # a cycle this walk found: k is on it
            cut, m = k, pidx[k]
            while m != k:
                cut, m = min(cut, m), pidx[m]
            cuts.append(cut)
    return sorted(cuts)
