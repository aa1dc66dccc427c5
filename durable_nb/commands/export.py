"""``python -m durable_nb export SESSION_OR_LOG -o PATH [--format F]``: write a session to .html, .md,
.jsonl or another tool's format (pi's ``.pi.jsonl``, ``.atif.json``, Inspect's ``.eval``, ``.otlp.json``;
see :mod:`durable_nb.share.formats`), chosen by ``--format`` or else by the file name's suffix.

SESSION_OR_LOG is a log file any importer reads (durable_nb / pi-go, pi,
Claude Code, Codex JSONL) or the id of a session in a store folder
(``--store``, default ``.durable``: the store beside a notebook).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..durable import Agent
from ..errors import DurableError, SessionNotFound
from ..importers import open_session
from ..session import check_session_id, describe, open_store, store_kind
from ..session.locate import expand_env
from ..share import export, exported_line
from ..share.formats import FORMATS
from ..share.redact import redactor_for


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``export`` subcommand to ``subparsers`` and return its parser."""
    p = subparsers.add_parser(
        "export",
        help="write a session or a log to .html, .md, .jsonl, .pi.jsonl, .atif.json, .eval or .otlp.json",
        description="Write a session to one self-contained .html page, a .md handout, a .jsonl log, or "
        "another tool's format, chosen by --format or else by the file name's suffix. "
        "SESSION_OR_LOG is a log file any importer reads (durable_nb / pi-go, pi, Claude Code, Codex JSONL) "
        "or the id of a session in the store folder --store.",
    )
    p.add_argument("source", metavar="SESSION_OR_LOG", help="a session log file, or a session id in --store")
    p.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="the file to write (required unless --to is given): "
        + ", ".join(f"{s} ({f.what})" for f in FORMATS.values() for s in f.suffixes),
    )
    p.add_argument(
        "--format",
        choices=list(FORMATS),
        default=None,
        help="the format to write whatever PATH ends in (default: chosen by PATH's suffix)",
    )
    p.add_argument(
        "--store",
        default=".durable",
        metavar="STORE",
        help="where a session id is looked up: a JSONL folder, a SQLite file (sessions.db, sqlite:///abs.db) "
        "or a PostgreSQL DSN (default: .durable, the store beside a notebook)",
    )
    p.add_argument("--force", action="store_true", help="replace an existing file (never a session's log)")
    p.add_argument(
        "--redact",
        nargs="?",
        const="",
        metavar="emails",
        help="replace secrets (detect-secrets), values of env variables named *KEY*, *TOKEN*, *SECRET*, "
        "*PASSWORD* and the home folder in every exported string; --redact emails: e-mail addresses too "
        "(needs durable_nb[redact])",
    )
    p.add_argument(
        "--run",
        dest="eval_run",
        default="",
        metavar="NAME",
        help="write the session's evaluation run NAME instead of the session (Inspect logs: a sample per "
        "case x variant, the verdicts as scores)",
    )
    p.add_argument(
        "--to",
        choices=["otlp"],
        help="also send the session: otlp = its traces over OTLP/HTTP to --endpoint (after any file is written)",
    )
    p.add_argument(
        "--endpoint",
        metavar="URL",
        help="the collector's traces URL for --to otlp (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else "
        "$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces, else http://localhost:4318/v1/traces); headers from "
        "$OTEL_EXPORTER_OTLP_HEADERS",
    )
    p.set_defaults(run=run, parser=p)
    return p


def load(ref: str, store: str) -> tuple[Any, str]:
    """Return ``(agent, source)`` for a log file, or for a session id in the store ``store``
    (a JSONL folder, a SQLite file or a PostgreSQL DSN; see :mod:`durable_nb.session.locate`).

    A log is read into an in-memory copy (the file is never written) and its
    warnings go to stderr; a stored session is only read. Raises
    :class:`DurableError` naming what was looked for, and the sessions a
    store has, when ``ref`` is neither.
    """
    path = Path(ref).expanduser()
    if path.is_file():
        imported = open_session(path)
        for w in imported.warnings:
            print(f"warning: {w}", file=sys.stderr)
        return imported.agent, str(path)
    if store_kind(store) == "jsonl" and not Path(expand_env(store)).expanduser().is_dir():
        raise DurableError(f"no log file {ref!r} and no store folder {store!r}")
    if path.suffix == ".jsonl":
        raise DurableError(f"no log file {ref!r}")
    check_session_id(ref)
    s = open_store(store)
    try:
        s.load_session(ref)
    except SessionNotFound:
        known = ", ".join(sorted(r.id for r in s.list_sessions())[:10]) or "none"
        where = describe(s) if store_kind(store) == "postgres" else store  # a DSN masked, a path as typed
        raise DurableError(f"no log file {ref!r} and no session {ref!r} in {where} (sessions there: {known})") from None
    source = describe(s, ref)
    return Agent(store=s, session_id=ref), source


def run(args: argparse.Namespace) -> int:
    """Export ``args.source`` to ``args.output`` and/or send it ``--to otlp``; print what was done.

    Returns 0; 1 (one line on stderr, the file still written) when the
    collector cannot be reached or refuses; 2 when neither ``-o`` nor ``--to``
    is given or ``--endpoint`` comes without ``--to``."""
    if not args.output and not args.to:
        args.parser.error("give -o PATH (a file to write), --to otlp (send it), or both")
    if args.endpoint and not args.to:
        args.parser.error("--endpoint URL goes with --to otlp")
    redactor = redactor_for(args.redact)  # a bad --redact: one line before anything is read
    agent, source = load(args.source, args.store)
    if args.output:
        stores = [open_store(args.store)] if store_kind(args.store) == "jsonl" else []
        out = export(
            agent,
            args.output,
            source,
            replace=args.force,
            stores=stores,
            format=args.format,
            redact=redactor,
            run=args.eval_run,
        )
        print(exported_line(agent, out, args.eval_run))
    if args.to == "otlp":
        from ..otlp.export import send_session
        from ..otlp.wire import endpoint, shown

        sent = redactor.session(agent, source)[0] if redactor is not None else agent
        traces, spans = send_session(sent, args.endpoint)
        print(
            f"sent session {agent.session_id} to {shown(endpoint(args.endpoint))}: "
            f"{traces} {'trace' if traces == 1 else 'traces'}, {spans} spans"
        )
    if redactor is not None:
        print(redactor.summary())
    return 0
