"""The leaf branches of a session: what the linear formats (ATIF, Inspect samples) write one of each.

A leaf is a stored entry no other stored entry continues from (an aside, a
verdict, an annotation or a leaf move hangs off an entry without continuing
from it, so it is never a leaf and never makes its entry a non-leaf).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..session import Entry, is_aside, is_ephemeral
from ..session.tree import index, path


def leaves(entries: Sequence[Entry], active: str = "") -> list[str]:
    """Return the ids of the leaves of ``entries`` (ephemeral ones and asides left out): ``active``
    first when it is one, the others in append order. O(n)."""
    kept = [e for e in entries if not is_ephemeral(e) and not is_aside(e)]
    parents = {e.parent_id for e in kept}
    out = [e.id for e in kept if e.id not in parents]
    if active in out:
        out.remove(active)
        out.insert(0, active)
    return out


def branches(agent: Any) -> list[tuple[str, list[Entry]]]:
    """Return ``(leaf id, the path from the root to it)`` for each leaf of ``agent``'s session, the
    agent's leaf first. O(n + leaves × depth)."""
    entries = [e for e in agent.entries() if not is_ephemeral(e)]
    by_id = index(entries)
    return [(leaf, path(by_id, leaf)) for leaf in leaves(entries, agent.leaf_id)]
