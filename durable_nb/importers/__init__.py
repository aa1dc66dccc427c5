"""Open saved sessions read-only: this project's own logs and other agent tools' logs.

:func:`open_session` detects the format, reads the file (never modifying it)
and returns an :class:`Imported`: a :class:`~durable_nb.durable.Agent` on an
in-memory copy (so the widget, the views and even further turns work without
touching the source), the format's name and any warnings.
"""

from __future__ import annotations

import warnings as _warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..durable import Agent
from ..errors import DurableError
from ..session import Entry, JsonlStore, MemoryStore


@dataclass
class Imported:
    """A saved session opened read-only.

    ``agent`` works on an in-memory copy (its store is a MemoryStore);
    ``format`` names the detected format; ``warnings`` are what the reader
    should know (e.g. legacy flags); ``source`` is the file read.
    """

    agent: Agent
    format: str
    source: Path
    warnings: list[str] = field(default_factory=list)


def in_memory(session_id: str, entries: list[Entry], leaf_id: str | None = None) -> Agent:
    """Return an agent on a fresh MemoryStore holding ``entries`` (in order), leaf at ``leaf_id``.

    ``leaf_id=None`` keeps the default (the last entry). Nothing is written
    anywhere but the memory store.
    """
    store = MemoryStore()
    store.create_session(session_id)
    store.append_entries(session_id, entries)
    agent = Agent(store=store, session_id=session_id)
    if leaf_id is not None and leaf_id != agent.leaf_id:
        agent.branch(leaf_id)
    return agent


def open_session(path: str | Path) -> Imported:
    """Open the session log at ``path`` read-only and return an :class:`Imported`.

    Supported: durable_nb / pi-go JSONL logs (``session_init`` first line).
    Raises :class:`DurableError` for a missing file or an unrecognised format;
    a corrupt log raises :class:`~durable_nb.errors.CorruptLog` naming file
    and line. Cost: one read of the file.
    """
    p = Path(path)
    if not p.is_file():
        raise DurableError(f"no session log at {p}")
    with open(p, "rb") as fh:
        first = fh.readline()
    if b'"session_init"' in first:
        store = JsonlStore(p.parent)
        sid = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem
        with _warnings.catch_warnings(record=True) as caught:
            _warnings.simplefilter("always")
            entries = store.load_entries(sid)
        notes = [str(w.message) for w in caught]
        return Imported(in_memory(sid, entries), "durable_nb", p, notes)
    raise DurableError(f"{p}: unrecognised session log format (expected a durable_nb/pi-go JSONL log)")
