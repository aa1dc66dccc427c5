"""Leaf moves: a deliberate move of the leaf without a new turn, recorded so a reopened notebook resumes there.

The library resumes a reopened session at its last appended entry (rule R9);
a move made with "Continue from here", ``%durable branch`` or ``%durable
rewind`` writes nothing, so a restart would forget it. :func:`move_leaf`
makes the move and appends a ``leaf_move`` entry naming the entry moved to
(``target_id``; ``""`` is the root): it hangs off that entry without
continuing from it (off the chain, like a verdict), so it is never a branch,
never the leaf, never sent and never a transcript line; it is hidden, since
the leaf badge already shows where the leaf is. :func:`resume_point` reads it
back. A replay leaves it out; a fork never copies it (it is off the copied
path), so a fork resumes at its own last entry, the chosen leaf's copy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..session.entry import CustomEntry, Entry, register_custom
from ..session.kinds import Kind, off_chain, register

LEAF_MOVE_KIND = "leaf_move"


class LeafMove(CustomEntry):
    """The leaf was moved to ``target_id`` (``""``: before the first entry) on purpose."""

    kind: str = LEAF_MOVE_KIND
    target_id: str = ""


register_custom(LEAF_MOVE_KIND, LeafMove)


def resume_point(entries: Sequence[Entry]) -> str:
    """Return where the notebook resumes ``entries`` (append order): the target of a leaf move appended
    after the last entry that continues the chain, else that entry (the library's rule R9), ``""`` when
    there is neither. Other off-chain entries (asides, verdicts) are stepped over. O(trailing entries)."""
    for e in reversed(entries):
        if isinstance(e, LeafMove):
            return e.target_id
        if not off_chain(e):
            return e.id
    return ""


def move_leaf(agent: Any, entry_id: str) -> None:
    """Move ``agent``'s leaf to ``entry_id`` (anything :meth:`~durable_nb.durable.Agent.branch` takes) and,
    unless a reopened session would resume there anyway, append a :class:`LeafMove` recording it.

    Raises what :meth:`~durable_nb.durable.Agent.branch` raises (nothing is written then) and the store's
    error for the append (the leaf has moved; only the record is missing). O(trailing entries) beyond one append.
    """
    agent.branch(entry_id)
    target = agent.leaf_id
    if resume_point(agent.entries()) == target:
        return
    agent.append(LeafMove(target_id=target), move=False)  # hung under the leaf; never the leaf itself


def _text(entry: CustomEntry) -> str:
    return f"leaf moved to {getattr(entry, 'target_id', '') or 'the root'}"


def _fork(copy: CustomEntry, ids: Mapping[str, str]) -> CustomEntry:
    if isinstance(copy, LeafMove):
        copy.target_id = ids.get(copy.target_id, "")
    return copy


KIND = register(
    Kind(
        LEAF_MOVE_KIND,
        shown="hidden",
        off_chain=True,
        text=_text,
        replayed=False,
        fork=_fork,
        target=lambda e: str(getattr(e, "target_id", "") or ""),
    )
)
