"""A store seen through a session that does not exist yet: it reads as empty and its first append creates it."""

from __future__ import annotations

from ..errors import SessionExists, SessionNotFound
from .entry import Entry
from .store import CAPABILITIES, SessionRecord, Store


class CreatedOnWrite:
    """A store as a notebook's own agent sees it: a missing session reads as
    empty and is created by its first append (with those entries, in one step),
    so opening a notebook, and every verb that only reads, writes nothing and
    works in a read-only folder.

    Wraps ``store``; everything else (``root``, ``close``, ...) passes
    through, and it has the capabilities ``store`` has (:data:`~.store.CAPABILITIES`:
    ``isinstance(wrapper, Searchable)`` is true when the store searches).
    Two kernels making the same session's first write: one creates it, the
    other appends.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        for capability, method in CAPABILITIES.items():  # on the instance, where a protocol check looks
            if isinstance(store, capability):
                setattr(self, method, getattr(store, method))

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def create_session(self, id: str, parent_id: str = "", *, entries=(), created_at: str = "") -> SessionRecord:
        return self.store.create_session(id, parent_id, entries=entries, created_at=created_at)

    def load_session(self, id: str) -> SessionRecord:
        return self.store.load_session(id)

    def load_entries(self, id: str) -> list[Entry]:
        """The session's entries; ``[]`` for a session not created yet."""
        try:
            return self.store.load_entries(id)
        except SessionNotFound:
            return []

    def append_entries(self, id: str, entries) -> None:
        """Append, creating the session with these entries if it does not exist yet."""
        try:
            return self.store.append_entries(id, entries)
        except SessionNotFound:
            pass
        try:
            self.store.create_session(id, entries=entries)
        except SessionExists:  # another kernel made the first write in between
            self.store.append_entries(id, entries)

    def list_sessions(self) -> list[SessionRecord]:
        return self.store.list_sessions()
