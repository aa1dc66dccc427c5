"""Constructors for run input: ordinary user entries, meta and ephemeral.

They mirror :func:`durable_nb.ai.user_message` one for one. Ids, parents and
timestamps are left empty: the agent assigns them when it appends.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from .. import ai
from ..errors import DurableError
from ..session import Entry, MessageEntry, is_ephemeral, is_turn_start


def text(s: str) -> MessageEntry:
    """Return an ordinary user entry holding one text block."""
    return MessageEntry(message=ai.user_message(s))


def system(s: str) -> MessageEntry:
    """Return a system-prompt entry: the session's system prompt from here on.

    It is a message entry whose message has role ``"system"``, so it is
    stored on the active path (branch-aware, kept across resume) and the
    transcript shows it. The latest one on the path is the system prompt:
    views put it first and the agent sends it as the request's ``system``,
    never as a message. Pass it to ``Agent.run`` or ``Agent.append``.
    """
    return MessageEntry(message=ai.system_message(s))


def image(s: str, *images: ai.Image) -> MessageEntry:
    """Return an ordinary user entry: text ``s`` (if any), then the images."""
    return MessageEntry(message=ai.Message(role="user", content=[*([ai.Text(s)] if s else []), *images]))


def file(s: str, *files: ai.File) -> MessageEntry:
    """Return an ordinary user entry: text ``s`` (if any), then the files."""
    return MessageEntry(message=ai.Message(role="user", content=[*([ai.Text(s)] if s else []), *files]))


def _inject(entry: MessageEntry | str, how: ai.Injection, origin: str | None) -> MessageEntry:
    if isinstance(entry, str):
        entry = text(entry)
    if not isinstance(entry, MessageEntry):
        raise DurableError(f"only message entries can be {how.value}; got {type(entry).__name__}")
    msg = msgspec.structs.replace(entry.message, injected=how, origin=origin or entry.message.origin)
    return msgspec.structs.replace(entry, message=msg)


def meta(entry: MessageEntry | str, origin: str | None = None) -> MessageEntry:
    """Return a copy of ``entry`` whose message is meta: the model sees it, the
    store keeps it, transcripts hide it. A ``str`` is taken as :func:`text`."""
    return _inject(entry, ai.Injection.META, origin)


def ephemeral(entry: MessageEntry | str, origin: str | None = None) -> MessageEntry:
    """Return a copy of ``entry`` whose message is ephemeral: the model sees it
    for one run; it is never stored and never joins the parent chain."""
    return _inject(entry, ai.Injection.EPHEMERAL, origin)


def mark_ephemeral(entries: list[Entry], before: Sequence[Entry] = ()) -> list[Entry]:
    """Return ``entries`` with the turn's user message marked as sent with the ephemeral input among
    ``before`` + ``entries`` (its ``ephemeral_context``: one origin, or ``""``, per ephemeral entry).

    The message marked is the last ordinary user message of ``entries`` (else
    their last durable message). It is replaced by a marked copy (the entry
    too), so nothing passed in changes; a message already marked so, or no
    ephemeral input, returns ``entries`` as they are. The agent marks every
    run's input, so the model gets the very message the store keeps.
    O(len(before) + len(entries)).
    """
    origins = [e.message.origin or "" for e in (*before, *entries) if isinstance(e, MessageEntry) and is_ephemeral(e)]
    if not origins:
        return entries
    durable = [i for i, e in enumerate(entries) if isinstance(e, MessageEntry) and not is_ephemeral(e)]
    turns = [i for i in durable if is_turn_start(entries[i])]
    at = turns[-1] if turns else (durable[-1] if durable else -1)
    target = entries[at] if at >= 0 else None
    if not isinstance(target, MessageEntry) or target.message.ephemeral_context == origins:
        return entries
    marked = msgspec.structs.replace(target.message, ephemeral_context=origins)
    return [*entries[:at], msgspec.structs.replace(target, message=marked), *entries[at + 1 :]]
