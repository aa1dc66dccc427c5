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
        # session id -> [entries handed over by adopt_session (they come before its lines), handed out yet?]
        self._adopted: dict[str, list] = {}
        self._lock = threading.Lock()

    def adopt_session(self, id: str, entries: list[Entry], parent_id: str = "", created_at: str = "") -> SessionRecord:
        """Create session ``id`` holding ``entries``, handing the objects over instead of copying them.

        The first :meth:`load_entries` returns these very objects (no encode,
        no decode: an importer builds an agent from what it has just read);
        the caller must not use them afterwards. Appends go after them as
        usual; a later load encodes them once, to hand out copies.
        ``SessionExists`` if the id is taken. ``parent_id`` and ``created_at`` as for
        :meth:`create_session`. O(1).
        """
        rec = self.create_session(id, parent_id, created_at=created_at)
        with self._lock:
            self._adopted[id] = [entries, False]
        return rec

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
        """Return decoded copies of the session's entries, in append order (for an adopted
        session, the first load returns the handed-over objects themselves). O(n)."""
        with self._lock:
            stored = self._get(id)[1]
            adopted = self._adopted.get(id)
            if adopted is not None:
                if not adopted[1] and not stored:
                    adopted[1] = True
                    return list(adopted[0])
                del self._adopted[id]
                stored[:0] = [encode_line(e) for e in adopted[0]]
            lines = list(stored)
        entries = decode_lines(b"".join(lines))
        if entries is None or len(entries) != len(lines):
            entries = [decode(json.loads(line)) for line in lines]
        return entries

    def append_entries(self, id: str, entries: Sequence[Entry]) -> None:
        encoded = [encode_line(e) for e in entries]
        with self._lock:
            self._get(id)[1].extend(encoded)

    def list_sessions(self) -> list[SessionRecord]:
        """Return every session's record, oldest first (by ``created_at``, then id, as every store)."""
        with self._lock:
            recs = [rec for rec, _ in self._sessions.values()]
        return sorted(recs, key=lambda r: (r.created_at, r.id))

    def search(self, query: str, session: str | None = None, limit: int = 50) -> list[Hit]:
        """Return the entries whose text holds every word of ``query`` (a plain scan), at most ``limit``:
        sessions oldest first (as :meth:`list_sessions`), each session's entries in append order.

        ``session`` limits the search to one session (``SessionNotFound`` if it is missing). O(all entries)."""
        ids = [self._get(session)[0].id] if session is not None else [r.id for r in self.list_sessions()]
        return scan(((sid, self.load_entries(sid)) for sid in ids), query, limit)
