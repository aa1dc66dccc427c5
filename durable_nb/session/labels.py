"""Labels: names for entries, kept in the log as custom entries.

A label is ``CustomEntry(kind="label", data={"name": NAME, "target_id": ID})``
appended like any custom entry (pi's ``label`` entries carry the same two
facts as ``label`` and ``targetId``). The latest label entry for a name wins,
so relabelling moves a name; ``target_id == ""`` removes it. A name points at
one entry; an entry may carry several names. Label entries are never sent to
the model (custom entries are not). Pure functions; nothing here imports
from Jupyter.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from ..errors import DurableError, UnknownEntry, suggest
from .entry import CustomEntry, Entry, is_ephemeral

LABEL_KIND = "label"


def label_entry(name: str, target_id: str) -> CustomEntry:
    """Return an unsaved label entry naming ``target_id`` (``""``: the entry that removes ``name``)."""
    return CustomEntry(kind=LABEL_KIND, data={"name": name, "target_id": target_id})


def label_of(entry: Entry) -> tuple[str, str] | None:
    """Return ``(name, target_id)`` for a label entry, or ``None`` for any other entry.

    A label entry whose ``name`` is missing or not a string is not a label
    (``None``); a missing or non-string ``target_id`` reads as ``""`` (a
    removal). O(1).
    """
    if not isinstance(entry, CustomEntry) or entry.kind != LABEL_KIND:
        return None
    data = entry.data if isinstance(entry.data, dict) else {}
    name, target = data.get("name"), data.get("target_id")
    if not isinstance(name, str) or not name:
        return None
    return name, target if isinstance(target, str) else ""


def label_text(entry: CustomEntry) -> str:
    """Return what a person reads for a label entry: ``label v1 → 3fa9c2d1e0b4``, ``label v1 removed``
    (an entry that is not a label: its kind). O(1)."""
    named = label_of(entry)
    if named is None:
        return entry.kind
    return f"label {named[0]} → {named[1]}" if named[1] else f"label {named[0]} removed"


def labels(entries: Iterable[Entry]) -> dict[str, str]:
    """Return ``{name: target id}`` for the labels in ``entries``, in the order names were first set.

    Entries are read in log order: a later label entry for a name wins (a
    relabelled name keeps its place), a removal (``target_id == ""``) drops
    it. Targets are not checked against the log. O(len(entries)).
    """
    out: dict[str, str] = {}
    for e in entries:
        got = label_of(e)
        if got is None:
            continue
        name, target = got
        if target:
            out[name] = target
        else:
            out.pop(name, None)
    return out


def names_by_target(entries: Iterable[Entry]) -> dict[str, list[str]]:
    """Return ``{target id: [names]}`` for the labels in ``entries`` (see :func:`labels`). O(len(entries))."""
    return by_target(labels(entries))


def by_target(named: Mapping[str, str]) -> dict[str, list[str]]:
    """Return ``{target id: [names, in named's order]}`` for a ``{name: target id}`` map. O(len(named))."""
    out: dict[str, list[str]] = {}
    for name, target in named.items():
        out.setdefault(target, []).append(name)
    return out


def label_problem(name: object) -> str | None:
    """Return why ``name`` cannot be a label (one line), or ``None`` when it can.

    A name is a non-empty string without whitespace. (That it is not an
    entry id of the session is the agent's check: it knows the ids.)
    """
    if not isinstance(name, str) or not name:
        return "a label needs a name (one word, like v1 or before-the-fix)"
    if any(c.isspace() for c in name):
        return f"a label is one word without spaces, not {name!r}: write {'-'.join(name.split())!r}"
    return None


class Labels(Mapping[str, str]):
    """A session's labels as its entries arrive: ``{name: target id}`` in the order names were set,
    plus each name's latest label entry (:meth:`entry`). :meth:`add` takes any entry (only label
    entries change it): the latest for a name wins, a removal drops it. O(1) per entry."""

    def __init__(self) -> None:
        self._by_name: dict[str, tuple[str, CustomEntry]] = {}

    def add(self, entry: Entry) -> None:
        """Take ``entry`` into account (a label entry names, renames or removes; others are ignored)."""
        named = label_of(entry)
        if named is None or not isinstance(entry, CustomEntry):
            return
        name, target = named
        if target:
            self._by_name[name] = (target, entry)
        else:
            self._by_name.pop(name, None)

    def entry(self, name: str) -> CustomEntry:
        """Return the label entry that set ``name`` (``KeyError`` if none does)."""
        return self._by_name[name][1]

    def __getitem__(self, name: str) -> str:
        return self._by_name[name][0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)


def resolve(ref: str, ids: Mapping[str, Entry], named: Mapping[str, str], session_id: str, suggest_ids: int) -> str:
    """Return the entry id ``ref`` names in a session: an exact id of ``ids``, else a label of
    ``named``, else a unique id prefix of at least 4 characters.

    Raises :class:`~durable_nb.errors.UnknownEntry` in one line otherwise: an
    unknown name (the nearest label, or id when the session has at most
    ``suggest_ids`` entries, suggested), a short or ambiguous prefix, a label
    whose entry is not in ``ids``. O(1) for an id or a label; a prefix scans
    the ids, O(entries).
    """
    if not isinstance(ref, str) or not ref:
        raise UnknownEntry("name an entry: an entry id, a label, or 4+ characters of an id")
    if ref in ids:
        return ref
    where = f"in session {session_id!r}"
    if ref in named:
        target = named[ref]
        if target not in ids:
            raise UnknownEntry(f"label {ref!r} names entry {target!r}, which is not {where}")
        return target
    hits = [i for i in ids if i.startswith(ref)] if len(ref) >= 4 else []
    if len(hits) == 1:
        return hits[0]
    if hits:
        shown = ", ".join(sorted(hits)[:3]) + (", ..." if len(hits) > 3 else "")
        raise UnknownEntry(f"{ref!r} starts {len(hits)} entry ids {where} ({shown}): give more characters")
    if 0 < len(ref) < 4 and any(i.startswith(ref) for i in ids):
        raise UnknownEntry(f"{ref!r} is too short to name an entry {where}: give at least 4 characters of its id")
    near = suggest(ref, [*named, *(ids if len(ids) <= suggest_ids else ())])
    raise UnknownEntry(f"no entry or label {ref!r} {where}{near}")


def unlabelled(leaf_id: str, ids: Mapping[str, Entry]) -> str:
    """Return ``leaf_id``, stepping up over label entries (``""`` when nothing else is above). O(labels stepped over)."""
    at = leaf_id
    while at and label_of(ids[at]) is not None:
        at = ids[at].parent_id
    return at


def check_label(name: object, session_id: str, ids: Mapping[str, Entry]) -> None:
    """Raise :class:`~durable_nb.errors.DurableError` (one line, :func:`label_problem`) when ``name`` cannot
    be a label of the session, also when it is one of its entry ids. O(1)."""
    problem = label_problem(name)
    if problem is None and name in ids:
        problem = f"{name!r} is an entry id of session {session_id!r}; a label needs a name of its own"
    if problem is not None:
        raise DurableError(problem)


def check_target(entry: Entry) -> None:
    """Raise :class:`~durable_nb.errors.DurableError` (one line) when ``entry`` cannot carry a label:
    an ephemeral entry (never stored) or a label entry. O(1)."""
    if is_ephemeral(entry):
        raise DurableError(f"cannot label {entry.id!r}: it is ephemeral and never stored")
    if label_of(entry) is not None:
        raise DurableError(f"{entry.id!r} is a label entry; label the entry it names instead")


def no_label(name: str, named: Mapping[str, str]) -> DurableError:
    """Return the error for removing ``name`` when no label has it (the nearest suggested, the labels listed)."""
    known = ", ".join(named) or "none"
    return DurableError(f"no label {name!r}{suggest(name, named)}; the labels are: {known}")
