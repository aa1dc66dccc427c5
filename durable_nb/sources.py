"""What ``durable_nb.frame`` and ``durable_nb.annotations`` read: sessions out of any source.

A source is an :class:`~durable_nb.durable.Agent` (its in-memory log, ephemeral
entries included), an :class:`~durable_nb.importers.Imported`, a
:class:`~durable_nb.session.Store`, a store string (``.durable``, ``x.db``,
``postgresql://...``), a log file of this project or another tool (read with
:func:`durable_nb.importers.open_session`, never written), or a folder. A
folder is a JSONL store when every ``*.jsonl`` directly in it is a durable_nb
log, or when no ``*.jsonl`` is under it at any depth (an empty store); otherwise
it is a folder of logs (``~/.claude/projects``, whose logs are in folders
below it), and every ``*.jsonl`` under it, at any depth, is opened read-only
(a file that cannot be read is skipped with a one-line warning). A store
string naming no store is one line: reading makes nothing. Pure; imports
nothing from Jupyter.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .durable import Agent
from .errors import DurableError
from .session import Entry, Store, check_store_path, open_store, path, resume_leaf, store_kind
from .session.store import Describable


@dataclass
class Session:
    """One session read from a source: its ``session_id``, its ``entries`` in append order, whether an
    entry id is on its active path (``on_path``), the file it was read from (``file``: ``""`` for a
    store's session, which can take annotations itself) and where it came from (``where``)."""

    session_id: str
    entries: Sequence[Entry]
    on_path: Callable[[str], bool]
    file: str
    where: str


def read(source: object, sessions: str | Iterable[str] | None = None) -> list[Session]:
    """Return the sessions of ``source`` (see the module doc) in its order, only those named in ``sessions``
    when given (each once, in the source's order whatever order they are named in).

    Raises :class:`DurableError` in one line for a source that is not a
    store or log and for a named session the source does not hold (the
    sessions it holds listed). Cost: one load of every session read.
    """
    from .importers import Imported

    if isinstance(source, Agent):
        found = [_of_agent(source, "")]
    elif isinstance(source, Imported):
        found = [_of_agent(source.agent, str(source.source))]
    elif isinstance(source, Store):
        return _of_store(source, sessions)
    elif isinstance(source, (str, os.PathLike)):
        in_files = _of_path(os.fspath(source), sessions)
        if in_files is None:
            check_store_path(source, existing=True)  # reading makes nothing: a misspelt store is one line
            with closing(open_store(os.fspath(source))) as opened:
                return _of_store(opened, sessions)
        found = in_files
    else:
        raise DurableError(
            f"cannot read sessions from a {type(source).__name__}: give an Agent, a Store, a store string, "
            "a log file or a folder of logs"
        )
    return _only(found, sessions, lambda: repr(source))


class closing:
    """Close what was opened here on the way out, if it can be closed."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __enter__(self) -> Store:
        return self.store

    def __exit__(self, *exc: Any) -> None:
        close = getattr(self.store, "close", None)
        if close is not None:
            close()


def _of_agent(agent: Agent, file: str) -> Session:
    return Session(agent.session_id, agent.entries(), agent.on_path, file, file or agent.session_id)


def _of_entries(session_id: str, entries: list[Entry], file: str, where: str) -> Session:
    active = {e.id for e in path({e.id: e for e in entries}, resume_leaf(entries))}
    return Session(session_id, entries, active.__contains__, file, where)


def _of_store(store: Store, sessions: str | Iterable[str] | None) -> list[Session]:
    ids = [r.id for r in store.list_sessions()]
    where = store.describe() if isinstance(store, Describable) else type(store).__name__
    wanted = _names(sessions)
    if wanted is not None:  # chosen before any is loaded
        keep = _chosen(ids, wanted, lambda: where)
        ids = [i for i in ids if i in keep]
    return [_of_entries(i, store.load_entries(i), "", where) for i in ids]


def _of_path(spec: str, sessions: str | Iterable[str] | None) -> list[Session] | None:
    """The sessions of a log file or a folder of logs; ``None`` when ``spec`` names a store."""
    if store_kind(spec) != "jsonl":
        return None
    p = Path(spec).expanduser()
    if p.is_file():
        return [_of_log(p)]
    if not p.is_dir():
        raise DurableError(f"no store or log at {p}: give a store folder, a .db file, a postgresql:// DSN or a log")
    direct = sorted(p.glob("*.jsonl"))
    if direct and all(_is_durable_log(f) for f in direct):
        return None  # a JSONL store
    nested = sorted(p.rglob("*.jsonl"))
    if not nested:
        return None  # no log at any depth: an empty store
    out = []
    for f in nested:  # logs beside, or only in folders below (~/.claude/projects/PROJECT/*.jsonl)
        try:
            out.append(_of_log(f))
        except DurableError as e:
            warnings.warn(f"skipped {f}: {e}", stacklevel=3)
    return out


def _of_log(p: Path) -> Session:
    from .importers import open_session

    imported = open_session(p)
    return _of_agent(imported.agent, str(p))


def _is_durable_log(f: Path) -> bool:
    try:
        with f.open("rb") as fh:
            first = fh.readline()
        record = json.loads(first) if first.strip() else None
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get("type") == "session_init"


def _names(sessions: str | Iterable[str] | None) -> list[str] | None:
    if sessions is None:
        return None
    if not isinstance(sessions, (str, Iterable)):
        raise DurableError(f"sessions= takes a session id or a list of them, not {sessions!r}")
    names = [sessions] if isinstance(sessions, str) else list(sessions)
    if any(not isinstance(s, str) for s in names):
        raise DurableError(f"sessions are named by their ids (strings), not {names!r}")
    return names


def _only(found: list[Session], sessions: str | Iterable[str] | None, where: Callable[[], str]) -> list[Session]:
    wanted = _names(sessions)
    if wanted is None:
        return found
    keep = _chosen([s.session_id for s in found], wanted, where)
    return [s for s in found if s.session_id in keep]


def _chosen(ids: list[str], wanted: list[str], where: Callable[[], str]) -> set[str]:
    """Return the ids ``wanted`` names, for keeping the source's ``ids`` in their order, each once; raises
    :class:`DurableError` in one line for the first one ``ids`` lacks, listing what ``where()`` holds."""
    have = set(ids)
    missing = [w for w in wanted if w not in have]
    if missing:
        raise DurableError(f"no session {missing[0]!r} in {where()}; it holds: {_listing(ids)}")
    return set(wanted)


def _listing(ids: Iterable[str], most: int = 10) -> str:
    ids = list(ids)
    return (", ".join(ids[:most]) + (f", ... ({len(ids)} in all)" if len(ids) > most else "")) or "no sessions"
