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

    def create_session(self, id: str, parent_id: str = "", *, created_at: str = "") -> SessionRecord:
        """Create an empty session; raises ``SessionExists`` if the id is taken.

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
    digit or ``_``, at most 200 characters. So ``..``, ``/``, ``\\`` and
    absolute paths are refused.
    """
    if not isinstance(id, str) or not _SAFE_ID.fullmatch(id):
        raise InvalidSessionId(
            f"invalid session id {id!r}: use letters, digits, '_', '.' and '-' "
            "(starting with a letter, digit or '_'; no '/' or '..'; at most 200 characters)"
        )
    return id
