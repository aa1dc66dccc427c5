"""An in-memory store, for tests and throwaway sessions."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

from ..errors import SessionExists, SessionNotFound
from .codec import decode, decode_lines, encode_line
from .entry import Entry, now
from .search import Hit, scan
from .store import SessionRecord, check_session_id


class MemoryStore:
    """A store that keeps sessions in a dict; gone when the process ends.

    Entries are kept as JSON lines and decoded on load, exactly as a file
    store would, so a loaded entry is never the caller's object, custom kinds
    decode through the registry, and unserializable data fails on append.
    Thread-safe.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, tuple[SessionRecord, list[bytes]]] = {}
        self._lock = threading.Lock()

    def create_session(
        self, id: str, parent_id: str = "", *, entries: Sequence[Entry] = (), created_at: str = ""
    ) -> SessionRecord:
        """Create a session holding ``entries`` (all or nothing); ``SessionExists`` if the id is taken.
        ``created_at`` keeps a copied session's time (now when empty)."""
        check_session_id(id)
        encoded = [encode_line(e) for e in entries]
        with self._lock:
            if id in self._sessions:
                raise SessionExists(f"session {id!r} already exists")
            rec = SessionRecord(id, parent_id, created_at or now())
            self._sessions[id] = (rec, encoded)
            return rec

    def _get(self, id: str) -> tuple[SessionRecord, list[bytes]]:
        check_session_id(id)
        try:
            return self._sessions[id]
        except KeyError:
            raise SessionNotFound(f"no session {id!r} in this memory store") from None

    def load_session(self, id: str) -> SessionRecord:
        return self._get(id)[0]

    def load_entries(self, id: str) -> list[Entry]:
        """Return decoded copies of the session's entries, in append order. O(n)."""
        lines = list(self._get(id)[1])
        entries = decode_lines(b"".join(lines))
        if entries is None or len(entries) != len(lines):
            entries = [decode(json.loads(line)) for line in lines]
        return entries

    def append_entries(self, id: str, entries: Sequence[Entry]) -> None:
        encoded = [encode_line(e) for e in entries]
        with self._lock:
            self._get(id)[1].extend(encoded)

    def list_sessions(self) -> list[SessionRecord]:
        return [rec for rec, _ in self._sessions.values()]

    def search(self, query: str, session: str | None = None, limit: int = 50) -> list[Hit]:
        """Return the entries whose text holds every word of ``query`` (a plain scan), at most ``limit``.

        ``session`` limits the search to one session. O(all entries)."""
        ids = [check_session_id(session)] if session is not None else [r.id for r in self.list_sessions()]
        return scan(((sid, self.load_entries(sid)) for sid in ids), query, limit)
