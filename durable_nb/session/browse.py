"""Reading across a store's sessions: one row per session, and search; each through the store's capabilities.

A store that counts (:class:`~.store.Summarising`) or searches
(:class:`~.store.Searchable`) itself is asked to; any other store is read
through the plain contract.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import DurableError
from .jsonlstore import JsonlStore
from .search import scan
from .store import Hit, Searchable, Store, Summarising


class SessionRow(NamedTuple):
    """One session of a store: its ``id`` (a file name when unreadable), its number of ``entries``
    (``None`` when unreadable), its ``last`` activity and the ``problem`` that makes it unreadable
    (``""`` when it reads)."""

    id: str
    entries: int | None
    last: str
    problem: str = ""


def session_rows(store: Store) -> list[SessionRow]:
    """Return a :class:`SessionRow` for each session of ``store``, oldest first, then one for each log
    that cannot be read (``entries`` is ``None`` and ``problem`` says why, naming ``file:line``): one
    bad log never hides the others.

    Last activity is the last entry's time (the creation time for an empty session). Cost: one query
    on a store that counts itself (SQLite, PostgreSQL), else reads every log.
    """
    unreadable: list[tuple[str, str]] = []
    if isinstance(store, Summarising):  # the SQL stores count in the database, decoding nothing
        rows = [SessionRow(r.id, n, last or r.created_at, "") for r, n, last in store.summaries(unreadable)]
        return rows + [SessionRow(name, None, "", why) for name, why in unreadable]
    out, bad = [], []
    recs = store.list_sessions(unreadable) if isinstance(store, JsonlStore) else store.list_sessions()
    for rec in recs:
        try:
            entries = store.load_entries(rec.id)
        except (DurableError, OSError) as e:
            bad.append(SessionRow(rec.id, None, "", str(e)))
            continue
        out.append(SessionRow(rec.id, len(entries), entries[-1].created_at if entries else rec.created_at))
    bad += [SessionRow(name, None, "", why) for name, why in unreadable]
    return out + bad


def search_store(store: Store, text: str, session: str | None = None, limit: int = 50) -> list[Hit]:
    """Return the entries of ``store`` whose text holds every word of ``text``, across sessions and
    branches (``session`` limits it to one), at most ``limit``. The SQL stores use their full-text
    index; JSONL and memory stores, and a store of one's own, scan. O(size of the logs) for a scan."""
    if isinstance(store, Searchable):
        return store.search(text, session=session, limit=limit)
    ids = [session] if session is not None else [r.id for r in store.list_sessions()]
    return scan(((i, store.load_entries(i)) for i in ids), text, limit)
