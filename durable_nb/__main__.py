"""The command line: ``python -m durable_nb COMMAND ...``.

Each subcommand lives in a module of :mod:`durable_nb.commands` (see there);
:data:`COMMANDS` lists them. A mistake in the arguments exits with status 2
and one line on stderr (argparse's message; an unknown option names the
nearest one); an error of durable_nb's (a missing file, an unknown session)
is one line on stderr and status 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from .commands import copy, evaluate, export
from .errors import DurableError, suggest

COMMANDS = (export, copy, evaluate)


class Parser(argparse.ArgumentParser):
    """argparse saying a mistake in one line on stderr (``PROG: error: ... (see PROG --help)``), status 2;
    ``commands`` maps each subcommand's name to its parser (the top-level parser's own)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.commands: dict[str, argparse.ArgumentParser] = {}

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def parser() -> Parser:
    """Return the parser of ``python -m durable_nb`` with every subcommand of :data:`COMMANDS`."""
    p = Parser(prog="python -m durable_nb", description="durable_nb on the command line.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    p.commands = dict(sub.choices)
    return p


def unknown(word: str, command: argparse.ArgumentParser) -> str:
    """Return the error for an argument ``command`` does not take, naming its nearest option."""
    if not word.startswith("-"):
        return f"unexpected argument {word!r}"
    flags = [f for a in command._actions for f in a.option_strings if f not in ("-h", "--help")]  # no public list
    return f"unknown option {word.split('=')[0]}{suggest(word.split('=')[0], flags)}"


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 an error, 2 bad arguments)."""
    p = parser()
    args, extra = p.parse_known_args(argv)
    if extra:
        command = p.commands[args.command]
        command.error(unknown(extra[0], command))
    try:
        return args.run(args)
    except DurableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
