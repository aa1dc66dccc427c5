"""``python -m durable_nb export SESSION_OR_LOG -o PATH``: write a session to .html, .md or .jsonl.

SESSION_OR_LOG is a log file any importer reads (durable_nb / pi-go, pi,
Claude Code, Codex JSONL) or the id of a session in a store folder
(``--store``, default ``.durable``: the store beside a notebook).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import DurableError, SessionNotFound
from ..importers import in_memory, open_session
from ..session import JsonlStore, check_session_id
from ..share import export


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``export`` subcommand to ``subparsers`` and return its parser."""
    p = subparsers.add_parser(
        "export",
        help="write a session or a log to .html, .md or .jsonl",
        description="Write a session to one self-contained .html page, a .md handout or a .jsonl log. "
        "SESSION_OR_LOG is a log file any importer reads (durable_nb / pi-go, pi, Claude Code, Codex JSONL) "
        "or the id of a session in the store folder --store.",
    )
    p.add_argument("source", metavar="SESSION_OR_LOG", help="a session log file, or a session id in --store")
    p.add_argument("-o", "--output", required=True, metavar="PATH", help="the file to write: .html, .md or .jsonl")
    p.add_argument(
        "--store", default=".durable", metavar="DIR", help="the store folder for a session id (default: .durable)"
    )
    p.set_defaults(run=run)
    return p


def load(ref: str, store: str) -> tuple[Any, str]:
    """Return ``(agent, source)`` for a log file or a session id in the JSONL store folder ``store``.

    The agent is an in-memory copy (nothing is written to the source); a
    log's warnings go to stderr. Raises :class:`DurableError` naming what
    was looked for, and the sessions a store has, when ``ref`` is neither.
    """
    path = Path(ref).expanduser()
    if path.is_file():
        imported = open_session(path)
        for w in imported.warnings:
            print(f"warning: {w}", file=sys.stderr)
        return imported.agent, str(path)
    root = Path(store).expanduser()
    if path.suffix == ".jsonl" or not root.is_dir():
        raise DurableError(f"no log file {ref!r}" + ("" if root.is_dir() else f" and no store folder {store!r}"))
    check_session_id(ref)
    s = JsonlStore(root)
    try:
        entries = s.load_entries(ref)
    except SessionNotFound:
        known = ", ".join(sorted(r.id for r in s.list_sessions())[:10]) or "none"
        raise DurableError(f"no log file {ref!r} and no session {ref!r} in {root} (sessions there: {known})") from None
    return in_memory(ref, entries), str(s.file(ref))


def run(args: argparse.Namespace) -> int:
    """Export ``args.source`` to ``args.output``; print what was written. Returns 0."""
    agent, source = load(args.source, args.store)
    out = export(agent, args.output, source)
    n = len(agent.entries())
    print(f"exported session {agent.session_id} ({n} {'entry' if n == 1 else 'entries'}) to {out}")
    return 0
