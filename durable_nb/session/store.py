"""The store contract: create a session, load its entries, append entries; and what a store may add.

A store is a flat, append-only log per session. Stores never rewrite or
delete; the agent is the one place that decides what reaches them.

Beyond :class:`Store`, a store may declare capabilities, each a
``runtime_checkable`` protocol checked once where it is used
(``isinstance(store, Searchable)``): :class:`Searchable` (its own search),
:class:`Summarising` (counts without decoding), :class:`Subscribable`
(tells of appends by other writers), :class:`Describable` (says where it
is) and :class:`SessionFiles` (a file per session). Code outside
:mod:`durable_nb.session` asks for these, never for a concrete store class.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..errors import InvalidSessionId
from .entry import Entry

_SAFE_ID = re.compile(r"[\w][\w.\-]{0,199}")
MAX_ID_BYTES = 200  # + ".jsonl" and a temp file's ".<id>.jsonl.<8 hex>.tmp" stays under 255 bytes


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A session's identity: ``id``, the ``parent_id`` it was forked from
    (``""`` for none) and ``created_at``."""

    id: str
    parent_id: str = ""
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result (:class:`Searchable`): the entry ``entry_id`` of session ``session_id``,
    its ``created_at`` and a one-line ``snippet`` of its text around the first match."""

    session_id: str
    entry_id: str
    created_at: str
    snippet: str


@runtime_checkable
class Store(Protocol):
    """What the agent needs from a store."""

    def create_session(
        self, id: str, parent_id: str = "", *, entries: Sequence[Entry] = (), created_at: str = ""
    ) -> SessionRecord:
        """Create a session holding ``entries`` (none: an empty one), all or nothing:
        if it fails, no session exists and the id stays free (``fork`` relies on
        it). Raises ``SessionExists`` if the id is taken.

        ``created_at`` keeps a copied session's time (now when empty)."""

    def load_session(self, id: str) -> SessionRecord:
        """Return the session's record; raises ``SessionNotFound``."""

    def load_entries(self, id: str) -> list[Entry]:
        """Return the session's entries in append order; raises ``SessionNotFound``."""

    def append_entries(self, id: str, entries: Sequence[Entry]) -> None:
        """Append entries (all or nothing as far as the store can); raises ``SessionNotFound``."""

    def list_sessions(self) -> list[SessionRecord]:
        """Return every session's record, oldest first."""


@runtime_checkable
class Searchable(Protocol):
    """A store that searches its entries itself (the SQL stores with a full-text index; a scan otherwise)."""

    def search(self, query: str, session: str | None = None, limit: int = 50) -> list[Hit]:
        """Return at most ``limit`` entries whose text holds every word of ``query``: sessions oldest first
        (as ``list_sessions``: by ``created_at``, then id, in code point order), each session's entries
        in append order, so every store keeps the same hits under a limit (``session``: only that one,
        ``SessionNotFound`` if it is missing)."""


@runtime_checkable
class Summarising(Protocol):
    """A store that counts each session's entries in place, decoding nothing (the SQL stores)."""

    def summaries(self, unreadable: list[tuple[str, str]] | None = None) -> list[tuple[SessionRecord, int, str]]:
        """Return ``(record, entry count, last entry's time or "")`` for every session, oldest first;
        a session that cannot be read is left out and added to ``unreadable`` as ``(id, reason)``."""


@runtime_checkable
class Subscribable(Protocol):
    """A store that tells of appends made by other writers (PostgreSQL's LISTEN/NOTIFY)."""

    def subscribe(self, session_id: str, callback: Callable[[str], object]) -> Callable[[], None]:
        """Call ``callback(session_id)`` (on another thread) after each append to the session by anyone;
        return the function that stops it."""


@runtime_checkable
class Describable(Protocol):
    """A store that says where it is, for messages (see :func:`~durable_nb.session.describe`)."""

    def describe(self) -> str:
        """Return its folder, its database file, or its DSN with the password masked."""


@runtime_checkable
class SessionFiles(Protocol):
    """A store that keeps each session in a file of its own (the JSONL store)."""

    def file(self, id: str) -> Path:
        """Return the session's file (checked id; the file may not exist yet)."""


# each capability and the one method that makes it: a wrapper of a store (CreatedOnWrite) offers the same ones
CAPABILITIES: dict[type, str] = {
    Searchable: "search",
    Summarising: "summaries",
    Subscribable: "subscribe",
    Describable: "describe",
    SessionFiles: "file",
}


def check_session_id(id: str) -> str:
    """Return ``id`` if it is safe to use as a file name, else raise :class:`InvalidSessionId`.

    Allowed: letters, digits, ``_``, ``.`` and ``-``, starting with a letter,
    digit or ``_``, at most 200 characters and at most :data:`MAX_ID_BYTES`
    bytes in UTF-8 (so the file names made from it fit the 255-byte limit of
    common filesystems, whatever the script). So ``..``, ``/``, ``\\`` and
    absolute paths are refused.
    """
    if not isinstance(id, str) or not _SAFE_ID.fullmatch(id):
        raise InvalidSessionId(
            f"invalid session id {id!r}: use letters, digits, '_', '.' and '-' "
            "(starting with a letter, digit or '_'; no '/' or '..'; at most 200 characters)"
        )
    size = len(id.encode())
    if size > MAX_ID_BYTES:
        raise InvalidSessionId(
            f"invalid session id {short_id(id)}: it is {size} bytes in UTF-8 and a file name holds at most "
            f"{MAX_ID_BYTES} here; use a shorter id"
        )
    return id


def short_id(id: str) -> str:
    """Return ``repr(id)``, cut to 40 characters with an ellipsis (for messages about very long ids)."""
    return repr(id) if len(id) <= 40 else repr(id[:39]) + "…"
