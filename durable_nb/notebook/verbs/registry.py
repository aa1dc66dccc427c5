"""The table of ``%durable`` verbs: each declared once, with its usage, help and options.

:func:`verb` puts a function in :data:`VERBS`; the parser (:mod:`..args`)
takes the names, argument counts and options from there, the help text
(``%durable?``) its lines, the magic its dispatch, and :func:`specs` the
machine-readable table the documentation is generated from.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..options import ANY, CELL, CELL_OPTIONS, Call, Option

if TYPE_CHECKING:
    from ..context import Context

MANY = 10**6  # "any number" of arguments


@dataclass(frozen=True)
class Verb:
    """One verb: ``usage`` (``"rewind [turns]"``: ``<x>`` is a required
    argument, ``[x]`` an optional one, ``[--opt N]`` an option), its ``help``
    (first line in the table, more lines indented under it), ``run`` and the
    ``options`` only this verb takes."""

    name: str
    usage: str
    help: str
    run: Callable[[Context, Call], Any]
    nargs: tuple[int, int] | None = None  # (min, max) when the usage cannot say it
    options: tuple[Option, ...] = ()

    @property
    def min_args(self) -> int:
        if self.nargs is not None:
            return self.nargs[0]
        return len(re.findall(r"<[^>]*>", self.usage))

    @property
    def max_args(self) -> int:
        if self.nargs is not None:
            return self.nargs[1]
        if "...>" in self.usage:  # <text...>: any number of words
            return MANY
        plain = re.sub(r"\[--[^\[\]]*(?:\[[^\]]*\][^\[\]]*)*\]", "", self.usage)  # options' own [values] out
        return self.min_args + len(re.findall(r"\[[^\]]*\]", plain))


VERBS: dict[str, Verb] = {}


def verb(usage: str, help: str, nargs: tuple[int, int] | None = None, options: tuple[Option, ...] = ()):
    """Declare the decorated function as the verb named by ``usage``'s first word; return it unchanged.

    ``nargs`` gives the (min, max) argument count when the usage's brackets
    cannot say it; ``options`` are the options only this verb takes (their
    ``where`` becomes the verb's name). A flag declared twice raises
    ``ValueError`` when the module loads.
    """

    def register(run):
        name = usage.split()[0]
        own = tuple(dataclasses.replace(o, where=name) for o in options)
        taken = {o.flag for o in all_options()}
        for o in own:
            if o.flag in taken:
                raise ValueError(f"option {o.flag} is declared twice")
        VERBS[name] = Verb(name, usage, help, run, nargs, own)
        return run

    return register


def all_options() -> tuple[Option, ...]:
    """Return every option of the magic: the cell's and turns' ones, then each verb's, in verb order."""
    return CELL_OPTIONS + tuple(o for v in VERBS.values() for o in v.options)


def _option_spec(o: Option) -> dict[str, Any]:
    return {"flag": o.flag, "metavar": o.spec.get("metavar", ""), "help": o.help}


def specs() -> list[dict[str, Any]]:
    """Return the verbs as data, in the order ``%durable?`` lists them (for generated documentation).

    Each is ``{"name", "usage", "help", "details", "options"}``: ``help`` is
    the one-line help, ``details`` the further help lines (``[]`` for none),
    ``options`` the options the verb takes (its own and the ones it shares
    with a cell, such as replay's ``--temperature``), each ``{"flag",
    "metavar", "help"}`` (``metavar`` ``""`` for a plain flag). The
    ``%%durable`` cell's own options are :func:`cell_specs`. Plain data,
    JSON-serialisable; O(verbs × options).
    """
    shared = [o for o in CELL_OPTIONS if ANY not in o.places]
    out = []
    for v in VERBS.values():
        first, *more = v.help.splitlines()
        opts = [o for o in shared if v.name in o.places] + list(v.options)
        out.append(
            {
                "name": v.name,
                "usage": v.usage,
                "help": first,
                "details": more,
                "options": [_option_spec(o) for o in opts],
            }
        )
    return out


def cell_specs() -> list[dict[str, Any]]:
    """Return the options of a ``%%durable`` cell as :func:`specs` gives a verb's, in declaration order."""
    return [_option_spec(o) for o in CELL_OPTIONS if CELL in o.places or ANY in o.places]
