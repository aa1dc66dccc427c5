"""The command line: ``python -m durable_nb COMMAND ...``.

Each subcommand lives in a module of :mod:`durable_nb.commands` (see there);
:data:`COMMANDS` lists them. A mistake in the arguments exits with status 2
and argparse's message; an error of durable_nb's (a missing file, an unknown
session) is one line on stderr and status 1.
"""

from __future__ import annotations

import argparse
import sys

from .commands import copy, evaluate, export
from .errors import DurableError

COMMANDS = (export, copy, evaluate)


def parser() -> argparse.ArgumentParser:
    """Return the parser of ``python -m durable_nb`` with every subcommand of :data:`COMMANDS`."""
    p = argparse.ArgumentParser(prog="python -m durable_nb", description="durable_nb on the command line.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 an error, 2 bad arguments)."""
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except DurableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
