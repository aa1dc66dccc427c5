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

from collections.abc import Iterable, Mapping

from .entry import CustomEntry, Entry

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
