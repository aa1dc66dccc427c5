"""The registry of custom-entry kinds: the :class:`Kind` declaration, :func:`register` and the readers.

The kinds themselves are declared in :mod:`durable_nb.kinds`, one file per
kind; they register here when ``durable_nb`` is imported. This module sits
in the session layer (it imports only :mod:`.entry`) so that the session's
rules (:func:`~durable_nb.session.entry_kind`,
:func:`~durable_nb.session.is_aside`) read it without importing upwards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from .entry import CompactionEntry, CustomEntry, Entry, new_id, now

Shown = Literal["row", "chip", "transcript", "hidden"]


@dataclass(frozen=True)
class Kind:
    """How entries of one kind are treated.

    ``name`` is the kind (``"label"``), or for a family of kinds the name
    listings give them all (``"aside"``) with ``matches`` saying which kinds
    belong (exact kinds are looked up first). ``shown``: ``"row"`` (a row of
    the tree with a one-line summary), ``"transcript"`` (a row whose
    :attr:`text` a person reads in transcripts and listings), ``"chip"``
    (drawn on the entry it names, never a row), ``"hidden"`` (never drawn).
    ``off_chain``: hangs off its parent without continuing from it, never a
    branch (an aside). ``target(entry)``: for a bookkeeping kind (``shown``
    ``"chip"`` or ``"hidden"``: labels, verdicts, annotations, leaf moves)
    the id of the entry it names (``""``: none); such an entry is never a
    row or a transcript line and never the leaf a person sees
    (:func:`shown_leaf`). ``chip(entry)``: the chip drawn on that entry
    (a dict with a ``key``: of the chips of one target, the latest per kind
    and key wins; ``None``: no chip of its own, as a label, drawn from the
    session's labels). ``text(entry)`` is what a person reads (``None``:
    the kind name). ``replayed``: a replay copies it to the new branch
    (a label names the original's entries, so it is not). ``fork(copy,
    ids)`` returns the copy with the entry ids it names mapped through
    ``ids`` (old id -> new id; an id not in it maps to ``""``).
    """

    name: str
    shown: Shown = "row"
    matches: Callable[[str], bool] | None = None
    off_chain: bool = False
    text: Callable[[CustomEntry], str] | None = None
    replayed: bool = True
    fork: Callable[[CustomEntry, Mapping[str, str]], CustomEntry] | None = None
    target: Callable[[CustomEntry], str] | None = None
    chip: Callable[[CustomEntry], dict[str, Any]] | None = None


_EXACT: dict[str, Kind] = {}
_FAMILIES: list[Kind] = []


def register(kind: Kind) -> Kind:
    """Register ``kind`` (a later registration of the same name replaces it); return it."""
    if kind.matches is None:
        _EXACT[kind.name] = kind
    else:
        _FAMILIES[:] = [k for k in _FAMILIES if k.name != kind.name] + [kind]
    return kind


def kind_of(entry: Entry) -> Kind | None:
    """Return the registered :class:`Kind` of a custom entry, or ``None`` (not custom, or not registered).

    An exact kind wins over a family. O(1) plus one test per family.
    """
    if not isinstance(entry, CustomEntry):
        return None
    k = _EXACT.get(entry.kind)
    if k is not None:
        return k
    return next((f for f in _FAMILIES if f.matches is not None and f.matches(entry.kind)), None)


def name_of(entry: CustomEntry) -> str:
    """Return the kind a custom entry is listed and counted under: its registered kind's name, else
    its own kind (``"custom"`` when empty). O(1)."""
    k = kind_of(entry)
    return k.name if k is not None else entry.kind or "custom"


def text(entry: Entry) -> str | None:
    """Return what a person reads for a custom entry of a kind with a text of its own (a note's body),
    else ``None`` (show :func:`~durable_nb.session.display_text`). O(size of the text)."""
    k = kind_of(entry)
    return k.text(entry) if k is not None and k.text is not None and isinstance(entry, CustomEntry) else None


def off_chain(entry: Entry) -> bool:
    """True for a custom entry whose kind hangs off its parent, never a branch (an aside). O(1)."""
    k = kind_of(entry)
    return k is not None and k.off_chain


def hidden(entry: Entry) -> bool:
    """True for a custom entry whose kind is never drawn (``shown="hidden"``: a leaf move). O(1)."""
    k = kind_of(entry)
    return k is not None and k.shown == "hidden"


def hidden_kinds() -> frozenset[str]:
    """Return the exact kinds registered as never drawn, for code that holds rows, not entries. O(kinds)."""
    return frozenset(name for name, k in _EXACT.items() if k.shown == "hidden")


def bookkeeping(entry: Entry) -> bool:
    """True for a custom entry of a bookkeeping kind (``shown`` ``"chip"`` or ``"hidden"``: a label, a
    verdict, an annotation, a leaf move): never a row nor a transcript line, never the leaf shown. O(1)."""
    k = kind_of(entry)
    return k is not None and k.shown in ("chip", "hidden")


def bookkeeping_kinds() -> frozenset[str]:
    """Return the exact kinds that are bookkeeping (:func:`bookkeeping`), for code that holds rows. O(kinds)."""
    return frozenset(name for name, k in _EXACT.items() if k.shown in ("chip", "hidden"))


def target_of(entry: Entry) -> str | None:
    """Return the id of the entry a bookkeeping entry names (``""``: none), ``None`` for any other entry. O(1)."""
    k = kind_of(entry)
    if k is None or k.target is None or not isinstance(entry, CustomEntry):
        return None
    return k.target(entry)


def chip_of(entry: Entry) -> tuple[str, dict[str, Any]] | None:
    """Return ``(target id, chip)`` for an entry whose kind draws a chip of its own (a verdict, an
    annotation), else ``None`` (a label's names come from the session's labels). O(size of the chip)."""
    k = kind_of(entry)
    if k is None or k.chip is None or k.target is None or not isinstance(entry, CustomEntry):
        return None
    target = k.target(entry)
    return (target, k.chip(entry)) if target else None


def shown_leaf(leaf_id: str, get: Callable[[str], Entry | None]) -> str:
    """Return the entry a person sees as the leaf: ``leaf_id`` stepped up over bookkeeping entries (a label
    appended at the leaf becomes the agent's leaf and the next turn hangs under it, which no reader can
    tell). ``get(id)`` returns an entry or ``None``; ``""`` when nothing else is above; an unknown id is
    returned as is. O(bookkeeping entries stepped over)."""
    at, seen = leaf_id, set()
    while at and at not in seen:
        e = get(at)
        if e is None or not bookkeeping(e):
            break
        seen.add(at)
        at = e.parent_id
    return at


def replayed(entry: Entry) -> bool:
    """True unless ``entry`` is a custom entry whose kind a replay leaves out (a label). O(1)."""
    k = kind_of(entry)
    return k is None or k.replayed


def fork_copies(entries: Sequence[Entry]) -> list[Entry]:
    """Return copies of ``entries`` (a path, root first) re-chained with fresh ids, for a fork.

    Each copy's parent is the copy before it (the first is a root); every
    field is kept, timestamps too (an entry without one gets the time of the
    fork: pi-go refuses an empty one). The ids an entry names follow their
    entry: a compaction's ``first_kept_id``, and whatever a kind's
    :attr:`Kind.fork` maps (a label's target), wherever in ``entries`` that
    entry is (before or after the one naming it); an id outside ``entries``
    becomes ``""``. The inputs are untouched. O(len(entries)).
    """
    fresh = [new_id() for _ in entries]
    ids = dict(zip([e.id for e in entries], fresh))  # every copy's id first: a name may point further down
    out: list[Entry] = []
    parent = ""
    for e, fresh_id in zip(entries, fresh):
        c = msgspec.structs.replace(e, id=fresh_id, parent_id=parent, created_at=e.created_at or now())
        if isinstance(c, CompactionEntry):
            c.first_kept_id = ids.get(c.first_kept_id, "")
        elif isinstance(c, CustomEntry):
            k = kind_of(c)
            if k is not None and k.fork is not None:
                c = k.fork(c, ids)
        out.append(c)
        parent = c.id
    return out
