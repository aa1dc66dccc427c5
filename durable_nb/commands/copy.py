"""``python -m durable_nb copy SRC DST``: copy sessions between stores, losslessly, idempotently.

SRC is a store (a JSONL folder, ``sqlite:///file.db`` or a ``.db`` file, a
``postgresql://`` DSN) or one session log file any importer reads; DST is a
store. Re-running finishes an interrupted copy and changes nothing after a
finished one (see :mod:`durable_nb.transfer`).
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import transfer


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``copy`` subcommand to ``subparsers`` and return its parser."""
    p = subparsers.add_parser(
        "copy",
        help="copy sessions between stores (JSONL folder, SQLite, PostgreSQL) or from a log file",
        description="Copy every session of SRC (or those given with --session) into DST, keeping ids, parents, "
        "times and every field. SRC: a JSONL store folder, sqlite:///file.db (or a .db file), a postgresql:// DSN, "
        "or a session log file (durable_nb / pi-go, pi, Claude Code, Codex JSONL). DST: a store. "
        "Running it again copies only what DST lacks. Keep a DSN's password in PGPASSWORD or ~/.pgpass.",
    )
    p.add_argument("source", metavar="SRC", help="a store or a session log file")
    p.add_argument("dest", metavar="DST", help="a store: folder, sqlite:///file.db, postgresql://...")
    p.add_argument(
        "--session", action="append", metavar="ID", help="copy only this session (repeat for more)", default=None
    )
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Copy and print one line per session and a total; return 0, or 1 when a session could not be
    read (each such session is named on its own line and skipped; the others are copied)."""
    done = transfer.copy(args.source, args.dest, only=args.session)
    added = sum(c.added for c in done)
    skipped = f"; {len(done.skipped)} unreadable session(s) skipped" if done.skipped else ""
    print(f"{len(done)} session(s), {added} entries copied{skipped}")
    return 1 if done.skipped else 0
