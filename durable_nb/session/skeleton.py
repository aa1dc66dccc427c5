"""A session's skeleton: per entry only what a listing counts, read without decoding any text.

    for rec, bones, size, problem in skeletons(store):   # every session of a store
        turns = sum(b.role == "user" and not b.injected for b in bones)

A :class:`Bone` holds an entry's ids, type, custom kind, role, injection, model and usage: what
``%durable sessions`` counts (turns, branches, models, tokens, cost). A store that keeps a file
per session (:class:`~.store.SessionFiles`: the JSONL store) is read file by file and parsed, in
one msgspec pass per file, into structs that name only those fields, so texts, tool arguments and
results, images (a log's bulk) are skipped by the parser, never built. Any other store (SQLite,
PostgreSQL, memory) is read through ``load_entries`` (as fast there: msgspec decodes their rows in
one pass too). A file the skeleton parser refuses goes through ``load_entries``, whose rules (torn
writes, legacy meta, ``file:line`` errors) hold.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import msgspec

from ..errors import DurableError
from . import kinds
from .codec import encode_line
from .entry import CustomEntry, Entry, MessageEntry
from .jsonlstore import JsonlStore
from .regular import open_regular
from .store import SessionFiles, SessionRecord, Store, Summarising


class BoneMessage(msgspec.Struct, gc=False):
    """What a listing reads of a message: ``role``, ``injected``, ``model``, ``usage``."""

    role: str = ""
    injected: str | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None


class Bone(msgspec.Struct, gc=False):
    """What a listing counts of one entry: ``type`` (``message``, ``compaction``, ``custom``; a log's
    ``session_init`` line too), ``id``, ``parent_id``, ``created_at``, ``kind`` (a custom entry's),
    ``meta`` (pi-go's legacy flag of a meta message) and ``message`` (a :class:`BoneMessage`)."""

    type: str = ""
    id: str = ""
    parent_id: str = ""
    created_at: str = ""
    kind: str = ""
    meta: Any = None
    message: BoneMessage | None = None

    @property
    def role(self) -> str:
        return self.message.role if self.message is not None else ""

    @property
    def injected(self) -> str:
        """``"meta"``, ``"ephemeral"`` or ``""``."""
        m = self.message
        if m is None:
            return ""
        return m.injected or ("meta" if self.meta is True else "")


_parse = msgspec.json.Decoder(list[Bone]).decode


def bones_of_lines(lines: Sequence[bytes]) -> list[Bone] | None:
    """Return the bones of encoded entry lines (blank lines and ``session_init`` lines left out),
    parsed in one pass at C speed, or ``None`` when one of them does not parse. O(size)."""
    body = b",".join(x for x in lines if x.strip())
    try:
        bones = _parse(b"[" + body + b"]")
    except (msgspec.DecodeError, ValueError):
        return None
    return [b for b in bones if b.type != "session_init"]


def bone_of_entry(e: Entry) -> Bone:
    """Return the :class:`Bone` of a decoded entry. O(1)."""
    if isinstance(e, MessageEntry):
        m = e.message
        inj = m.injected.value if m.injected is not None else None
        return Bone("message", e.id, e.parent_id, e.created_at, message=BoneMessage(m.role, inj, m.model, m.usage))
    if isinstance(e, CustomEntry):
        return Bone("custom", e.id, e.parent_id, e.created_at, e.kind)
    return Bone("compaction", e.id, e.parent_id, e.created_at)


Skeleton = tuple[SessionRecord, list[Bone] | None, int | None, str]


def skeletons(store: Store) -> list[Skeleton]:
    """Return ``(record, bones, size, problem)`` for every session of ``store``, oldest first: its
    entries' :class:`Bone` s in append order and its size in bytes (the file, or its lines), or
    ``bones=None`` and the ``problem`` (naming ``file:line``) for a session that cannot be read,
    which never hides the others; a JSONL file that is not a session is one of those, by file name.

    Cost: one read of every log; a JSONL file parsed for the bones only (about 65 ms for 100
    sessions of 250 entries), any other store's sessions loaded (plus one encode each for the size).
    """
    unreadable: list[tuple[str, str]] = []
    if isinstance(store, Summarising):  # one query first: a damaged database fails here, in one line
        recs = [r for r, _, _ in store.summaries(unreadable)]
    else:
        recs = store.list_sessions(unreadable) if isinstance(store, JsonlStore) else store.list_sessions()
    out: list[Skeleton] = []
    for rec in recs:
        bones: list[Bone] | None = None
        size: int | None = None
        try:
            if isinstance(store, SessionFiles):
                with os.fdopen(open_regular(store.file(rec.id)), "rb") as fh:  # never a FIFO's open
                    data = fh.read()
                size, bones = len(data), bones_of_lines(data.split(b"\n"))
            if bones is None:
                entries = store.load_entries(rec.id)
                bones = [bone_of_entry(e) for e in entries]
                if size is None:
                    size = sum(len(encode_line(e)) for e in entries)
        except (DurableError, OSError) as e:
            out.append((rec, None, None, str(e)))
            continue
        out.append((rec, bones, size, ""))
    return out + [(SessionRecord(name), None, None, why) for name, why in unreadable]


def leaves(bones: Sequence[Bone]) -> int:
    """Return how many branch tips ``bones`` have: entries no other entry continues from, leaving out
    those that hang off their parent and never make a branch (an ephemeral message, and custom
    entries of a kind registered off the chain or never drawn: asides, annotations, verdicts, leaf
    moves). O(n)."""
    ids, parents = set(), set()
    off: dict[str, bool] = {}
    for b in bones:
        if b.type == "message" and b.injected == "ephemeral":
            continue
        if b.type == "custom":
            if b.kind not in off:
                e = CustomEntry(kind=b.kind)
                off[b.kind] = kinds.off_chain(e) or kinds.hidden(e)
            if off[b.kind]:
                continue
        ids.add(b.id)
        parents.add(b.parent_id)
    return len(ids - parents)
