"""Open saved sessions read-only: this project's own logs and other agent tools' logs.

:func:`open_session` detects the format, reads the file (never modifying it)
and returns an :class:`Imported`: a :class:`~durable_nb.durable.Agent` on an
in-memory copy (so the widget, the views and even further turns work without
touching the source), the format's name and any warnings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..durable import Agent
from ..errors import CorruptLog, DurableError
from ..session import DecodeError, Entry, MemoryStore, SessionFiles, Store, describe, safe_session_id
from ..session.compact import collector_paused
from . import claude_code, codex, inspect_eval, llm_sqlite, pi, pi_go
from .common import Records, fill_times, lone_surrogate_error, lone_surrogate_line, mtime_iso
from .pi_go import upgrade_legacy_meta


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


def in_memory(session_id: str, entries: list[Entry], leaf_id: str | None = None, adopt: bool = False) -> Agent:
    """Return an agent on a fresh MemoryStore holding ``entries`` (in order), leaf at ``leaf_id``.

    ``leaf_id=None`` keeps the default (the last entry). Nothing is written
    anywhere but the memory store. ``adopt=True`` hands the entry objects
    over (:meth:`~durable_nb.session.MemoryStore.adopt_session`: the agent
    gets them as they are, with no encode and decode; the caller must not use
    them afterwards); otherwise the store keeps encoded copies.
    """
    store = MemoryStore()
    if adopt:
        store.adopt_session(session_id, entries)
    else:
        store.create_session(session_id)
        store.append_entries(session_id, entries)
    agent = Agent(store=store, session_id=session_id)
    if leaf_id is not None and leaf_id != agent.leaf_id:
        agent.branch(leaf_id)
    return agent


FORMATS = ("durable_nb", "pi", "claude_code", "codex", "llm", "inspect")
_CLAUDE_TYPES = {"user", "assistant", "system", "summary", "progress", "file-history-snapshot", "queue-operation"}


def detect(first: dict) -> str | None:
    """Return the format whose first record looks like ``first``, else ``None``.

    ``session_init`` → durable_nb (pi-go layout); ``session`` → pi;
    ``session_meta`` (or the early Codex header: ``id`` + ``instructions``,
    no ``type``) → codex; a Claude Code record type or a ``sessionId``/``uuid``
    field → claude_code.
    """
    t = first.get("type") if isinstance(first.get("type"), str) else None
    if t == "session_init":
        return "durable_nb"
    if t == "session":
        return "pi"
    if (
        t == "session_meta"
        or ("payload" in first and "timestamp" in first)
        or (t is None and "id" in first and ("instructions" in first or "timestamp" in first))
    ):
        return "codex"
    if t in _CLAUDE_TYPES or "sessionId" in first or "parentUuid" in first:
        return "claude_code"
    return None


def open_session(path: str | Path, conversation: str | None = None) -> Imported:
    """Open the session log at ``path`` read-only and return an :class:`Imported`.

    The format is detected from the first record: durable_nb / pi-go JSONL
    (``session_init``), pi coding-agent sessions (``session`` header, v1–v3),
    Claude Code transcripts and Codex CLI rollouts (see ``docs/importers.md``
    for each mapping); an Inspect AI eval log (``.eval``, or Inspect's
    ``.json``) opens with each sample a branch (:mod:`.inspect_eval`, needs
    the ``inspect`` extra). An SQLite file is read as llm's log database (``llm
    logs path``): ``conversation`` names the conversation (thread) id to open,
    as a tree with its forks; without it, a database holding one conversation
    opens it and one holding several raises
    :class:`~durable_nb.importers.llm_sqlite.ChooseConversation` (a
    DurableError whose ``conversations`` lists them; see
    :func:`llm_conversations`). The session id comes from the log (or the file name),
    made safe for a store. The file is only read; the agent works on an
    in-memory copy, its leaf where the tool would resume.

    A torn last line (no newline, not valid JSON: a crash mid-write) is
    dropped and named in ``warnings``. Raises :class:`DurableError` for a
    missing, unreadable or empty file or an unknown format, and
    :class:`~durable_nb.errors.CorruptLog` (a DurableError) naming file and
    line for any other bad line. Cost: one read and parse of the file, O(size).
    """
    p = Path(path).expanduser()
    try:
        if not p.is_file():
            raise DurableError(f"no session log at {p}")
        if llm_sqlite.is_sqlite(p):
            return _open_llm(p, conversation)
        if inspect_eval.is_inspect(p):
            return _open_inspect(p, conversation)
        if conversation is not None:
            raise DurableError(f"{p}: a conversation id is only for llm's SQLite log; this file is JSONL")
        with p.open("rb") as f:
            first_line = b""
            while not first_line.strip():
                first_line = f.readline()
                if not first_line:
                    raise DurableError(f"{p}: the file is empty, so it holds no session")
    except OSError as e:  # unreadable (permissions), a name too long, ...
        raise DurableError(f"cannot read {p}: {e.strerror or e}") from None
    try:
        first = json.loads(first_line)
    except (ValueError, RecursionError):
        raise CorruptLog(f"{p}:1: not valid JSON, so not a session log this package can read") from None
    fmt = detect(first) if isinstance(first, dict) else None
    if fmt is None:
        raise DurableError(
            f"{p}: unrecognised session log format (expected durable_nb/pi-go, pi, Claude Code or Codex JSONL)"
        )
    lenient = False
    if fmt == "durable_nb":
        loaded = pi_go.load(p)
        lenient = loaded.lenient
    else:
        records = Records(p)
        module = {"pi": pi, "claude_code": claude_code, "codex": codex}[fmt]
        with collector_paused():  # the records and entries are acyclic (about 1.4x faster)
            loaded = module.load(p, records)
        loaded.warnings[:0] = records.notes
        lenient = records.lenient
        fill_times(loaded.entries, mtime_iso(p))
    try:
        # Entries built from lines msgspec read are handed over as they are; after a lenient line
        # they go through the store's encode and decode, which refuses what no store could keep.
        agent = in_memory(loaded.session_id, loaded.entries, loaded.leaf_id, adopt=not lenient)
    except DecodeError as e:  # a value no converter checked; still a clear error naming the file
        raise CorruptLog(f"{p}: {e}") from None
    except UnicodeEncodeError:  # an escaped lone surrogate: text UTF-8 cannot hold
        raise lone_surrogate_error(f"{p}:{lone_surrogate_line(p.read_bytes())}") from None
    except RecursionError:
        raise CorruptLog(f"{p}: JSON nested too deeply to read") from None
    return Imported(agent, fmt, p, loaded.warnings)


def llm_conversations(path: str | Path) -> list[llm_sqlite.Conversation]:
    """Return the conversations in llm's log database at ``path``, newest first (see
    :func:`llm_sqlite.conversations`). Raises :class:`DurableError` for a file that is not one."""
    return llm_sqlite.conversations(path)


def _open_llm(p: Path, conversation: str | None) -> Imported:
    if conversation is None:
        found = [c for c in llm_sqlite.conversations(p) if not c.forked_from] or llm_sqlite.conversations(p)
        if not found:
            raise DurableError(f"{p}: llm's database holds no conversations")
        if len(found) > 1:
            raise llm_sqlite.ChooseConversation(p, found)
        conversation = found[0].id
    with collector_paused():  # rows, part dicts and entries are acyclic
        loaded = llm_sqlite.load(p, conversation)
    fill_times(loaded.entries, mtime_iso(p))
    agent = in_memory(loaded.session_id, loaded.entries, loaded.leaf_id, adopt=True)
    return Imported(agent, "llm", p, loaded.warnings)


def _open_inspect(p: Path, conversation: str | None) -> Imported:
    if conversation is not None:
        raise DurableError(f"{p}: a conversation id is only for llm's SQLite log; this file is an Inspect log")
    with collector_paused():  # the samples read and the entries are acyclic
        loaded = inspect_eval.load(p)
    # read from the zip with msgspec, entries are handed over as they are; from inspect_ai's models (whose
    # JSON reader takes NaN), through the store's encode and decode, which refuses what no store could keep
    agent = in_memory(loaded.session_id, loaded.entries, loaded.leaf_id, adopt=not loaded.lenient)
    return Imported(agent, "inspect", p, loaded.warnings)


def stored_copy(store: Store, session_id: str) -> Imported:
    """Return a read-only in-memory copy of a stored session (format ``durable_nb``): its agent works on
    the copy, the store is only read. O(entries).

    Raises the one-line :func:`lone_surrogate_error` when the log holds an escaped lone surrogate
    (naming ``file:line`` in a store with a file per session), ``SessionNotFound`` for no session."""
    entries = store.load_entries(session_id)
    try:
        agent = in_memory(session_id, entries)
    except UnicodeEncodeError:  # an escaped lone surrogate in the log
        where = f"session {session_id!r} in {describe(store)}"
        if isinstance(store, SessionFiles):
            where = f"{store.file(session_id)}:{lone_surrogate_line(store.file(session_id).read_bytes())}"
        raise lone_surrogate_error(where) from None
    return Imported(agent, "durable_nb", Path(f"{describe(store)} session {session_id}"))


__all__ = [
    "FORMATS",
    "Imported",
    "detect",
    "in_memory",
    "llm_conversations",
    "open_session",
    "safe_session_id",
    "stored_copy",
    "upgrade_legacy_meta",
]
