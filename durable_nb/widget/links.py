"""The drawn parent and the drawn children of each entry of a tree of ids (the children as linked
lists, no list per entry): what :meth:`~durable_nb.widget.layout.Layout._rebuild` walks. Pure."""

from __future__ import annotations

from ..session.tree import cycle_cuts

ORPHAN = -2  # a drawn parent: the parent id is not in the log
CUT = -3  # a drawn parent: the entry is where a parent cycle is cut (or hangs below a hidden such entry)


def drawn_parents(raw: list[str], index: dict[str, int], hidden: list[bool]) -> list[int]:
    """Return each entry's drawn parent by log index, from its parent ids ``raw`` and the id index:
    ``-1`` for none (root-level), :data:`ORPHAN` for an unknown one, :data:`CUT` where a parent cycle
    is cut; a hidden entry's children hang off its nearest drawn ancestor. Cycles are cut among all
    entries, hidden ones too, where :func:`~durable_nb.session.tree.tree` cuts them
    (:func:`~durable_nb.session.tree.cycle_cuts`), before hidden entries are passed over, so the
    drawn parents hold no cycle. O(n)."""
    get = index.get
    pidx = [get(p, ORPHAN) if p else -1 for p in raw]
    for k in cycle_cuts(pidx):
        pidx[k] = CUT
    if any(hidden):  # a hidden entry stands for its nearest drawn ancestor
        for k in range(len(pidx)):
            pk = pidx[k]
            chain = {k}
            while pk >= 0 and hidden[pk] and pk not in chain:
                chain.add(pk)
                pk = pidx[pk]
            pidx[k] = -1 if pk >= 0 and hidden[pk] else pk
    return pidx


def children(
    pidx: list[int], off: list[bool], hidden: list[bool] | None
) -> tuple[list[int], list[int], list[int], list[int], list[int], list[int]]:
    """Return the drawn children of each entry as linked lists in log order (no list per entry):
    ``(head of the durable ones, head of the off-chain ones, next sibling, durable count,
    off-chain count, roots)`` by log index, from the drawn parents ``pidx`` (``hidden``: entries
    left out, or ``None``). O(n)."""
    n = len(pidx)
    head_d, head_e, nxt, nk, ne = [-1] * n, [-1] * n, [-1] * n, [0] * n, [0] * n
    roots: list[int] = []
    for k in range(n - 1, -1, -1):  # heads filled from the end
        p = pidx[k]
        if p < 0 or p == k:
            if not (hidden and hidden[k]):
                roots.append(k)
        elif hidden and hidden[k]:
            continue
        elif off[k]:
            nxt[k] = head_e[p]
            head_e[p] = k
            ne[p] += 1
        else:
            nxt[k] = head_d[p]
            head_d[p] = k
            nk[p] += 1
    roots.reverse()
    return head_d, head_e, nxt, nk, ne, roots
