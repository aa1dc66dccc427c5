"""``python -m durable_nb eval SPEC.py --store STORE [--name NAME] [--baseline NAME] [--junit PATH]``.

SPEC.py defines ``prompt`` and ``cases`` at module level, and optionally
``variants``, ``graders``, ``name``, ``history``, ``session_id`` and
``concurrency`` (see :func:`durable_nb.evals.run`); a near miss of one it
lacks (``grader``, ``variant``) is a usage error. The run goes into
session ``--session`` (default: the spec's ``session_id``, else ``eval``) of
``--store``; ``--tools reuse`` answers the model's tool calls from the
session's stored results instead of running the spec's ``tools``. Prints
the grid; exits 0 when every pair passed (with ``--baseline``: when no
pair regressed against that run), 1 when some failed or regressed, 2 on a
usage error (a bad spec, bad arguments, a baseline with no pair in common
with the run: nothing compared), 130 when stopped with Ctrl-C (one line;
what was stored is kept and the same command continues).
"""

from __future__ import annotations

import argparse
import difflib
import runpy
import sys
import types
from pathlib import Path
from typing import Any

from ..errors import DurableError, SessionNotFound
from ..evals import load
from ..evals import run as run_eval
from ..evals.report import comparison, grid, junit
from ..evals.results import compared
from ..session.locate import open_store

USAGE = 2
STOPPED = 130  # the shell's status for a command ended by Ctrl-C (128 + SIGINT)
TESTED_NAMES = ("graders", "variants", "history", "tools")  # a typo of one would run another test, silently
SPEC_NAMES = ("prompt", "cases", "variants", "graders", "name", "history", "session_id", "concurrency", "tools")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``eval`` subcommand to ``subparsers`` and return its parser."""
    p = subparsers.add_parser(
        "eval",
        help="run an evaluation spec (prompt × cases × variants × graders); exit 1 when a pair fails",
        description="Run (or continue) the evaluation SPEC.py defines (prompt, cases, variants, graders) in a "
        "store, print the grid, and exit 0 when every pair passed (with --baseline: nothing regressed), "
        "1 when some failed or regressed, 2 on a usage error.",
    )
    p.add_argument("spec", metavar="SPEC.py", help="a Python file defining prompt, cases, variants, graders")
    p.add_argument("--store", required=True, metavar="STORE", help="a JSONL folder, a SQLite file or a PostgreSQL DSN")
    p.add_argument("--session", default=None, metavar="ID", help="the session (default: the spec's, else 'eval')")
    p.add_argument("--name", default=None, metavar="NAME", help="the run's name (default: the spec's, else derived)")
    p.add_argument(
        "--baseline", default=None, metavar="NAME", help="a run to compare with: exit 1 when a pair regressed"
    )
    p.add_argument("--junit", default=None, metavar="PATH", help="write JUnit XML, one test case per pair")
    p.add_argument(
        "--tools",
        choices=("call", "reuse"),
        default="call",
        help="call: run the spec's tools (default); reuse: answer tool calls from the session's stored results",
    )
    p.set_defaults(run=run)
    return p


def read_spec(path: str) -> dict[str, Any]:
    """Return the spec's module-level names; raises :class:`DurableError` (one line) for a missing file,
    a file that fails to run, one without ``prompt`` or ``cases``, or one defining a near miss of a spec
    name it does not define (``grader`` without ``graders``: else the run would pass ungraded)."""
    p = Path(path)
    if not p.is_file():
        raise DurableError(f"no spec file {path!r}")
    try:
        ns = runpy.run_path(str(p))
    except Exception as e:  # noqa: BLE001 - the spec's own error, one line
        raise DurableError(f"spec {p.name} failed to run: {type(e).__name__}: {e}") from None
    missing = [k for k in ("prompt", "cases") if k not in ns]
    if missing:
        raise DurableError(f"spec {p.name} defines no {' and no '.join(missing)} (it needs prompt and cases)")
    for k, v in ns.items():
        near = _near_miss(k, v, ns)
        if near:
            raise DurableError(f"spec {p.name} defines {k!r} but no {near!r}: rename it (or name a helper _{k})")
    return {k: ns[k] for k in SPEC_NAMES if k in ns}


def _near_miss(name: str, value: object, ns: dict[str, Any]) -> str:
    """Return the spec name that ``name`` (defined in the spec, not imported) is a typo of when the spec
    lacks it (``grader`` -> ``graders``), among the names whose loss changes what is tested; else ``""``."""
    imported = isinstance(value, types.ModuleType) or (
        isinstance(value, (types.FunctionType, type)) and value.__module__ != ns.get("__name__")
    )
    if name.startswith("_") or name in SPEC_NAMES or imported:
        return ""
    near = difflib.get_close_matches(name.lower(), TESTED_NAMES, n=1, cutoff=0.85)
    return near[0] if near and near[0] not in ns else ""


def run(args: argparse.Namespace) -> int:
    """Run the spec; print the grid (and the comparison); return 0, 1 or 2 (130 with one line when
    stopped with Ctrl-C: the replies stored so far are kept, and the same command continues)."""
    try:
        spec = read_spec(args.spec)
        if args.junit and not Path(args.junit).parent.is_dir():
            raise DurableError(f"cannot write --junit {args.junit}: no folder {Path(args.junit).parent}")
        store = open_store(args.store)
        sid = args.session or spec.pop("session_id", None) or "eval"
        spec.pop("session_id", None)
        if args.name:
            spec["name"] = args.name
        base = None
        if args.baseline:
            try:
                base = load(store, sid, args.baseline)
            except SessionNotFound:
                raise DurableError(f"no baseline run {args.baseline!r}: session {sid!r} is not in the store") from None
        result = run_eval(store=store, session_id=sid, tool_results=args.tools, **spec)
    except DurableError as e:
        print(f"error: {e}", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:  # Ctrl-C: every pair stopped, nothing written after it
        print("stopped: the replies stored so far are kept; the same command continues the run", file=sys.stderr)
        return STOPPED
    print(grid(result))
    if args.junit:
        try:
            junit(result, args.junit)
        except OSError as e:
            print(f"error: cannot write --junit {args.junit}: {e.strerror}", file=sys.stderr)
            return USAGE
    if base is not None:
        try:
            c = compared(result, base)
        except DurableError as e:  # no pair in common: a gate on nothing must not pass
            print(f"error: {e}", file=sys.stderr)
            return USAGE
        print(comparison(c))
        return 1 if c.regressed else 0
    return 0 if result.passed else 1
