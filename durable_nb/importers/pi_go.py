"""durable_nb / pi-go JSONL logs: ``session_init`` first line, then one entry per line.

The layout is the project's own (see :mod:`durable_nb.session.codec`), so
entries load as they are. A log written before the injection flag moved onto
the message carries a top-level ``"meta": true`` on the entry; nothing reads
it (rule R13), so those entries load as ordinary messages and a warning names
the session and their count. :func:`upgrade_legacy_meta` is the explicit,
opt-in fix: it writes a *new* session whose copies carry
``injected="meta"`` on the message; the original file is never rewritten.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from .. import ai
from ..durable import Agent
from ..session import MessageEntry, Store, is_legacy_meta, safe_session_id
from ..session.jsonlstore import read_entries, session_record, torn_note
from ..session.rules import legacy_meta_warning
from .common import Loaded, lone_surrogate_line

LEGACY_ORIGIN = "legacy-meta"


def load(path: Path) -> Loaded:
    """Return the log's entries (leaf: the last one, as on resume).

    The session id is the ``session_init`` id, else the file name, made
    safe (:func:`~durable_nb.importers.common.safe_session_id`). A torn final
    line is dropped with a warning; any other bad line raises
    :class:`CorruptLog` naming file and line. Legacy-flagged entries give one
    warning with their count. O(size).
    """
    data = path.read_bytes()
    sid = safe_session_id(session_record(path, data).id, path.stem)
    entries, legacy = read_entries(path, data)
    notes = [n for n in [torn_note(path, data)] if n]
    if legacy:
        notes.append(legacy_meta_warning(sid, len(legacy)))
    return Loaded(sid, entries, None, notes, lenient=lone_surrogate_line(data) != "?")


def upgrade_legacy_meta(path: str | Path, store: Store, new_session_id: str) -> Agent:
    """Write a new session ``new_session_id`` in ``store``: a copy of the log at
    ``path`` in which every message entry with the legacy top-level
    ``"meta": true`` carries ``injected="meta"`` (origin ``"legacy-meta"``
    unless it had one) on its message. Returns an agent on the new session.

    Ids, parents and timestamps are kept, so the tree is the same, and so is
    every other field (a custom entry's, fields no type declares); the flag
    itself is moved, so the copy carries no ``"meta"`` key. The new
    session's parent is the source session. The source file is only read.
    Raises ``SessionExists`` if ``new_session_id`` is taken (so it can never
    overwrite the source), :class:`CorruptLog` for a bad log. O(size).
    """
    p = Path(path)
    data = p.read_bytes()
    entries, legacy = read_entries(p, data)
    flagged = _flagged_lines(data)
    for i in legacy:
        e = entries[i]
        if isinstance(e, MessageEntry) and e.id in flagged and e.message.injected is None:
            origin = e.message.origin or LEGACY_ORIGIN
            e.message = msgspec.structs.replace(e.message, injected=ai.Injection.META, origin=origin)
            if e.extra is not msgspec.UNSET:  # the flag, kept as an unknown field on load, is moved, not copied
                e.extra = {k: v for k, v in e.extra.items() if k != "meta"} or msgspec.UNSET
    src = safe_session_id(session_record(p, data).id, p.stem)
    store.create_session(new_session_id, parent_id=src)
    store.append_entries(new_session_id, entries)
    return Agent(store=store, session_id=new_session_id)


def _flagged_lines(data: bytes) -> set[str]:
    """Return the ids of entry lines whose top-level ``"meta"`` is ``true``."""
    out = set()
    for line in data.split(b"\n")[1:]:
        if b'"meta"' not in line:
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and is_legacy_meta(obj) and isinstance(obj.get("id"), str):
            out.add(obj["id"])
    return out
