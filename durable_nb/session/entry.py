"""Entries: the nodes of a session's tree.

Every entry has a header (``id``, ``parent_id``, ``created_at``). The parent
pointer is the whole tree structure; a store is a flat, append-only log of
entries. Three public shapes:

- :class:`MessageEntry` wraps an :class:`~durable_nb.ai.Message` (meta and
  ephemeral inputs are message entries whose *message* is injected);
- :class:`CompactionEntry` summarises everything before ``first_kept_id``;
- :class:`CustomEntry` is subclassed by applications for data that is stored
  but never sent to the model (register the subclass with
  :func:`register_custom` so stores decode it back into its class).

Entries are ``msgspec`` structs tagged by ``"type"``, so a store decodes a
log's bytes straight into them (see :mod:`durable_nb.session.codec`). They
are mutable; copy one with :func:`msgspec.structs.replace`. Entries, like
messages, are not tracked by the cyclic garbage collector (they hold JSON
values: a loaded log of a million entries costs its collections nothing); a
custom entry class that must hold a reference cycle opts back in (see
:class:`CustomEntry`).
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

import msgspec

from ..ai import EXTRA, Extra, Injection, Message


class Entry(msgspec.Struct, tag_field="type", forbid_unknown_fields=True):
    """The header every entry shares. ``parent_id == ""`` marks a root.

    The header fields come first (on the wire too); a subclass's own fields
    are keyword-only. ``created_at`` is an RFC 3339 time (:func:`now`): the
    agent stamps every entry it appends, a fork stamps a copied entry that
    has none, as pi-go refuses an empty one (a missing one it reads as the
    zero time).
    """

    id: str = ""
    parent_id: str = ""
    created_at: str = ""


class MessageEntry(Entry, kw_only=True, tag="message", gc=False, omit_defaults=True):
    """An entry that wraps one message (ordinary, meta or ephemeral).

    On the wire an empty ``parent_id`` (a root) is left out, as pi-go writes
    it. ``extra`` holds fields the log gave that no entry declares (pi-go's
    legacy ``"meta": true`` among them), written back beside the others.
    """

    message: Message
    extra: Extra = msgspec.field(default=msgspec.UNSET, name=EXTRA)

    @property
    def injected(self) -> Injection | None:
        """The message's injection (``None`` for an ordinary message)."""
        return self.message.injected


class CompactionEntry(Entry, kw_only=True, tag="compaction", gc=False):
    """A summary standing in for every entry before ``first_kept_id``.

    ``first_kept_id == ""`` means nothing before the compaction entry is kept
    verbatim. ``tokens_before`` is the (estimated) size of the context it
    replaced. Nothing is deleted: branching to an earlier entry gives the
    uncompacted conversation back.
    """

    summary: str = ""
    first_kept_id: str = ""
    tokens_before: int = 0
    extra: Extra = msgspec.field(default=msgspec.UNSET, name=EXTRA)


class CustomEntry(Entry, kw_only=True, tag="custom", gc=False):
    """Application data: stored, never sent to the model.

    Subclass it with extra fields (each with a default; a plain subclass:
    ``@dataclass`` on it fails, it is a msgspec struct) and call
    :func:`register_custom` once::

        class Note(CustomEntry):
            body: str = ""
        register_custom("note", Note)

    On the wire the fields sit at the top level beside the header, as pi-go
    writes a custom entry: ``{"type": "custom", "id", "parent_id",
    "created_at", "kind": "note", "body": ...}``. ``data`` holds the fields
    the class does not declare (an unregistered kind decodes to a bare
    ``CustomEntry`` whose ``data`` holds all of them), so a round trip
    through a store loses nothing. Fields whose names collide with the
    header are nested under ``"data"`` instead (see
    :func:`durable_nb.session.codec.encode`).

    Like messages, custom entries are not tracked by the cyclic garbage
    collector (``gc=False``, inherited by subclasses), and a store takes the
    lists and dicts it decodes into their fields out of its walks too: a
    custom entry must not be part of a reference cycle, or it is never
    freed. A subclass that needs one opts back in:
    ``class Graph(CustomEntry, gc=True)``.
    """

    kind: str = ""
    data: dict[str, Any] = {}


_CUSTOM: dict[str, type[CustomEntry]] = {}


def register_custom(kind: str, cls: type[CustomEntry]) -> None:
    """Register ``cls`` as the class that stores decode custom entries of ``kind`` into.

    Re-registering a kind replaces the earlier class (notebook cells get
    re-run). Raises ``TypeError`` when ``cls`` is not a ``CustomEntry``
    subclass, ``ValueError`` for an empty kind.
    """
    if not (isinstance(cls, type) and issubclass(cls, CustomEntry)):
        raise TypeError(f"register_custom needs a CustomEntry subclass, got {cls!r}")
    if not kind:
        raise ValueError("register_custom needs a non-empty kind")
    _CUSTOM[kind] = cls


def custom_class(kind: str) -> type[CustomEntry]:
    """Return the class registered for ``kind``, or ``CustomEntry`` if none is."""
    return _CUSTOM.get(kind, CustomEntry)


def new_id() -> str:
    """Return a fresh entry id: 12 random hex digits (48 bits)."""
    return secrets.token_hex(6)


def now() -> str:
    """Return the current UTC time as an ISO 8601 string (microseconds, ``Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def is_ephemeral(entry: Entry) -> bool:
    """True for a message entry whose message is ephemeral."""
    return isinstance(entry, MessageEntry) and entry.message.injected is Injection.EPHEMERAL
