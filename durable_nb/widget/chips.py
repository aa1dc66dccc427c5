"""The chips drawn on an entry: what bookkeeping entries (a verdict, an annotation) say about it.

    chips = Chips.of(agent.entries())   # O(n), one type test per entry
    chips.add(entry)                     # then one at a time: the target whose chips changed, or None
    chips.on(entry_id)                   # [{"kind": "annotation", "by": "ana", "tags": [...], "count": 2}, ...]

Each kind says what its chip holds and who it is per (:attr:`~durable_nb.session.kinds.Kind.chip`,
its ``key``: an annotation's author, a verdict's run and grader); of one entry's chips the
latest per kind and key wins and ``count`` says how many were written (all are kept in the log).
Label names are not here: they are the session's labels (the ``labels`` trait). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..session import CustomEntry, Entry
from ..session.kinds import chip_of


class Chips:
    """``{target id: {(kind, key): chip}}`` of a log, in the order each chip was first written."""

    def __init__(self) -> None:
        self._on: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}

    @classmethod
    def of(cls, entries: Iterable[Entry], types: Iterable[type] | None = None, more: Iterable[Entry] = ()) -> Chips:
        """Return the chips of ``entries`` (a log in append order; ``types``: their classes, when the caller
        knows them or a superset, :attr:`~durable_nb.kept.Shape.types`), then of ``more`` (annotations kept
        elsewhere). O(n), at C speed for a log with no custom entry; O(1) when ``types`` says so."""
        chips = cls()
        entries = entries if isinstance(entries, list) else list(entries)
        if any(issubclass(t, CustomEntry) for t in (set(map(type, entries)) if types is None else types)):
            chips.add_all(e for e in entries if isinstance(e, CustomEntry))
        chips.add_all(more)
        return chips

    def add(self, entry: Entry) -> str | None:
        """Take ``entry`` into account; return the id of the entry whose chips changed, else ``None``. O(1)."""
        got = chip_of(entry) if isinstance(entry, CustomEntry) else None
        if got is None:
            return None
        target, chip = got
        chips = self._on.setdefault(target, {})
        key = (str(chip.get("kind", "")), str(chip.get("key", "")))
        before = chips.get(key)
        chips[key] = {**chip, "count": (before["count"] if before else 0) + 1}
        return target

    def add_all(self, entries: Iterable[Entry]) -> None:
        """Take each of ``entries`` into account (:meth:`add`), in order. O(len(entries))."""
        for e in entries:
            self.add(e)

    def on(self, entry_id: str) -> list[dict[str, Any]]:
        """Return the chips drawn on ``entry_id`` (``[]`` for none). O(its chips)."""
        chips = self._on.get(entry_id)
        return list(chips.values()) if chips else []

    def items(self) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        """Yield ``(entry id, its chips)`` for every entry with chips. O(entries with chips)."""
        for target, chips in self._on.items():
            yield target, list(chips.values())

    def __len__(self) -> int:
        return len(self._on)
