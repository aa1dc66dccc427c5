"""Walking the tree that parent pointers make: :func:`path` and :func:`tree`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

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
    nodes: dict[str, Node] = {}
    order: list[Node] = []
    for e in entries:
        n = Node(e)
        order.append(n)
        nodes[e.id] = n
    roots: list[Node] = []
    parent_of: dict[int, Node] = {}
    for n in order:
        p = nodes.get(n.entry.parent_id) if n.entry.parent_id else None
        if p is None or p is n:
            roots.append(n)
        else:
            parent_of[id(n)] = p
            p.children.append(n)
    # Entries in a cycle never reach a root: find them and cut each cycle.
    reached: set[int] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        reached.add(id(n))
        stack.extend(n.children)
    if len(reached) < len(order):
        pos = {id(n): i for i, n in enumerate(order)}
        stuck = [i for i, n in enumerate(order) if id(n) not in reached]
        up = {i: pos[id(parent_of[id(order[i])])] for i in stuck}  # an entry no root reaches has its parent
        for i in cycle_cuts(up, stuck):
            cut = order[i]
            parent_of.pop(id(cut)).children.remove(cut)
            roots.append(cut)
        roots.sort(key=lambda n: pos[id(n)])
    for n in order:
        sort_siblings(n.children, _created)
    return sort_siblings(roots, _created)


def _created(n: Node) -> str:
    return n.entry.created_at


def cycle_cuts(pidx: Sequence[int] | Mapping[int, int], stuck: list[int]) -> list[int]:
    """Return where to cut the parent cycles among log positions, ascending: each cycle's first entry in
    log order (its lowest position), once. ``pidx[k]``: the parent's position of each position ``k`` of
    ``stuck``, the entries that reach no root, each on a cycle or hanging below one; one hanging below
    keeps its parent (the walk goes up from it to the cycle). :func:`tree` and the widget's layout cut
    so. O(len(stuck)): each entry is walked up once."""
    walk_of: dict[int, int] = {}  # entry -> the walk up that met it first
    cuts: list[int] = []
    for w, k in enumerate(stuck):
        while k not in walk_of:
            walk_of[k] = w
            k = pidx[k]
        if walk_of[k] == w:  # a cycle this walk found: k is on it
            cut, m = k, pidx[k]
            while m != k:
                cut, m = min(cut, m), pidx[m]
            cuts.append(cut)
    return sorted(cuts)
