"""The store contract: create a session, load its entries, append entries.

A store is a flat, append-only log per session. Stores never rewrite or
delete; the agent is the one place that decides what reaches them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
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
