"""Parse a ``%durable`` / ``%%durable`` line into a :class:`~.options.Call`.

Each option is declared once: a cell's in :mod:`.options`, a verb's with
the verb (:mod:`.verbs`, with its usage, help and what it does).
:func:`documented` turns the options into IPython ``magic_arguments`` (the way
``%%capture`` declares its own) and the verbs into the help text
(:mod:`.verbs.helptext`), so ``%%durable?`` documents both and :func:`parse` can
be tested without a kernel. Every mistake raises ``UsageError`` (one line, with the nearest verb
or option suggested), as IPython's own argument parser does.
"""

from __future__ import annotations

import argparse
import builtins
import keyword

from IPython.core.error import UsageError
from IPython.core.magic_arguments import MagicHelpFormatter, argument, kwds, magic_arguments

from ..errors import suggest
from .options import ANY, CELL, KINDS, TURN, Call, Option
from .verbs import VERBS, all_options
from .verbs.helptext import help_text

__all__ = ["HELP", "OPTIONS", "Call", "Option", "cell_kind", "documented", "out_refusal", "parse"]

OPTIONS = all_options()  # every option: the cell's and turns', then each verb's own
FLAGS = sorted(o.flag for o in OPTIONS)
HELP = help_text()


class _RawHelp(MagicHelpFormatter):
    """Keep the hand-written help's line breaks; no usage line (the help shows the usage)."""

    def _fill_text(self, text, width, indent):
        return "".join(indent + line for line in text.splitlines(keepends=True))


def documented(func):
    """Return ``func`` with the magic's options attached (``func.parser``) and its
    docstring replaced by the full help. Used by the magic and by :func:`parse`."""
    func.__doc__ = HELP
    decorators = [
        kwds(formatter_class=_RawHelp, usage=argparse.SUPPRESS),
        argument("words", nargs="*", help="line magic: a verb and its arguments (see above)"),
        *(argument(o.flag, help=o.help, **o.spec) for o in OPTIONS),
    ]
    for deco in reversed(decorators):
        func = deco(func)
    func.argcmd_name = "durable"
    func = magic_arguments()(func)
    func.parser.allow_abbrev = False  # "--met" is a typo to report, not a guess to make
    return func


@documented
def _spec(line, cell=None):
    """The option spec :func:`parse` uses (the magic method carries the same one)."""


# names IPython puts in every user namespace (besides _-prefixed ones and builtins)
SHELL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "display"})


def out_refusal(name: str) -> str:
    """Return the one-line refusal of ``--out NAME`` for a name that belongs to IPython or Python."""
    return (
        f"--out {name}: {name!r} belongs to IPython or Python (names starting with _, builtins, "
        f"In, Out, get_ipython, exit...); binding the reply there would replace it — pick another name"
    )


# the Call fields that take their option's value as it is
_AS_GIVEN = (
    "chat out dry_run keep session model variants force cases eval score mcp mcp_url name approve format redact "
    "baseline run logs pinned"
).split()


def parse(line: str, cell: bool) -> Call:
    """Return the :class:`Call` for a magic ``line``; ``cell`` says whether it is ``%%durable``.

    Raises ``UsageError`` for an unknown option or verb (naming the nearest),
    a wrong number of verb arguments, two kinds at once, an option where it
    does not apply (a cell option on the line magic, ``--keep`` outside
    ``compact``), a verb after ``%%durable`` or a bad ``--out`` name (not an
    identifier, or one of IPython's or Python's own: ``_``-prefixed,
    builtins, :data:`SHELL_NAMES`).
    """
    ns, extra = _spec.parser.parse_known_args(_split(line))
    for x in extra:
        if x.startswith("-"):
            first = next((w for w in ns.words + extra if not w.startswith("-")), "")
            here = _flags_at(CELL if cell else first if first in VERBS else None)
            raise UsageError(f"unknown option {x}{suggest(x.split('=')[0], here)}; see %durable? for the options")
    words = [w for w in ns.words + extra]
    kinds = [k for k in KINDS if getattr(ns, k) is True]  # --system TEXT is a replay's prompt, not a kind
    if len(kinds) > 1:
        raise UsageError(f"choose one of --{' / --'.join(kinds)}: a cell is one kind of entry")
    if ns.out is not None and (not ns.out.isidentifier() or keyword.iskeyword(ns.out)):
        raise UsageError(f"--out needs a Python variable name, not {ns.out!r}")
    if ns.out is not None and (ns.out.startswith("_") or ns.out in SHELL_NAMES or hasattr(builtins, ns.out)):
        raise UsageError(out_refusal(ns.out))
    settings = _settings(ns)
    tools = tuple(t.strip() for t in ns.tools.split(",") if t.strip()) if ns.tools is not None else None
    models = tuple(m.strip() for m in ns.models.split(",") if m.strip()) if ns.models is not None else None
    if models is not None and not models:
        raise UsageError("--models needs model names, comma-separated (like --models offline,openai:gpt-4.1-mini)")
    if ns.variants is not None and not ns.variants.strip():
        raise UsageError('--variants needs variants, like --variants "temperature=0 | temperature=1"')
    grade = _grade(ns)
    system_text = ns.system if isinstance(ns.system, str) else None
    if ns.keep is not None and ns.keep < 0:
        raise UsageError("--keep needs a number of turns, 0 or more")
    common = dict(
        kind=kinds[0] if kinds else None,
        interpolate=not ns.no_interpolate,
        tools=tools,
        settings=tuple(settings),
        system=system_text,
        models=models,
        grade=grade,
        tag=tuple(ns.tag or ()),
        **{k: getattr(ns, k) for k in _AS_GIVEN},
    )
    given = [o for o in OPTIONS if getattr(ns, o.dest) not in (None, False)]
    if cell:
        if words:
            raise UsageError(f"%%durable takes options only, not {' '.join(words)!r}: {_words_hint(ns, words)}")
        if system_text is not None:
            raise UsageError(
                f"--system takes no text on a cell (the cell is the prompt), not {system_text!r}: "
                "write %%durable --system and the prompt below it"
            )
        _check_place(given, CELL)
        return Call(**common)
    verb = words[0] if words else ("dry-run" if ns.dry_run else "status")
    if verb not in VERBS:
        hint = suggest(verb, VERBS)
        raise UsageError(
            f"unknown verb {verb!r}{hint}; "
            + ("%durable? explains the verbs" if hint else f"verbs: {', '.join(VERBS)}")
        )
    v = VERBS[verb]
    args = tuple(words[1:])
    if not v.min_args <= len(args) <= v.max_args:
        raise UsageError(f"usage: %durable {v.usage}")
    _check_place(given, verb)
    if common["kind"] == "system":
        raise UsageError('--system needs the prompt to replay with: %durable replay --system "Answer briefly"')
    return Call(verb=verb, args=args, **common)


def _grade(ns) -> tuple[str, ...] | None:
    """Return the graders ``--grade`` names; refuse ``--grade`` / ``--eval`` without ``--cases``, and a
    ``--cases`` that is not a variable name."""
    grade = tuple(g.strip() for g in ns.grade.split(",") if g.strip()) if ns.grade is not None else None
    if ns.cases is None and (grade is not None or ns.eval is not None):
        raise UsageError(f"{'--grade' if grade is not None else '--eval'} goes with --cases NAME (an evaluation run)")
    if ns.cases is not None and not ns.cases.isidentifier():
        raise UsageError(f"--cases needs the name of a notebook variable holding the cases, not {ns.cases!r}")
    return grade


def _flags_at(place: str | None) -> list[str]:
    """Return the flags that apply at ``place`` (:data:`CELL` or a verb; ``None``: every flag), so a
    did-you-mean never suggests an option that is then refused where it was typed. O(options)."""
    if place is None:
        return FLAGS
    return sorted(o.flag for o in OPTIONS if ANY in o.places or place in o.places)


def _settings(ns) -> list[tuple[str, str]]:
    """Return the turn settings the options give, as (key, text) pairs: temperature, max_tokens, each --param."""
    settings = [("temperature", ns.temperature)] if ns.temperature is not None else []
    settings += [("max_tokens", ns.max_tokens)] if ns.max_tokens is not None else []
    for p in ns.param or []:
        key, eq, value = p.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--param needs KEY=VALUE (like --param top_p=0.9), not {p!r}")
        settings.append((key.strip(), value))
    return settings


def _words_hint(ns, words: list[str]) -> str:
    """Return the hint for words on a ``%%durable`` line: a spaced list, a flag without ``--``, a verb, a message."""
    w = words[0]
    listed = next((f for f in ("models", "tools") if (getattr(ns, f) or "").rstrip().endswith(",")), None)
    if listed is not None:
        return f"no spaces in a list: --{listed} {getattr(ns, listed)}{''.join(words)}"
    if w.lstrip("-") in KINDS or "--" + w in FLAGS:
        return f"did you mean --{w.lstrip('-')}?"
    if w in VERBS:
        return f"verbs go on a line magic of their own: %durable {w}"
    return "the message goes on the lines below %%durable"


def _check_place(given: list[Option], place: str) -> None:
    """Raise ``UsageError`` for the first option in ``given`` that does not apply at ``place`` (:data:`CELL` or a verb)."""
    for o in given:
        places = o.places
        if ANY in places or place in places:
            continue
        if places == TURN:
            raise UsageError(f"{o.flag} goes with a turn: a %%durable cell or %durable replay")
        if o.where == CELL:
            raise UsageError(
                f"{o.flag} applies to a %%durable cell (write %%durable {o.flag} on the cell's first line)"
            )
        raise UsageError(f"{o.flag} belongs to %durable {o.where}")


def _split(line: str) -> list[str]:
    from IPython.utils.process import arg_split

    try:
        return arg_split(line, posix=True)
    except ValueError as e:  # e.g. an unclosed quote
        raise UsageError(f"cannot read the magic's line ({e}): check its quotes") from None


def cell_kind(flag: str | None, tags: frozenset[str]) -> str:
    """Return what a ``%%durable`` cell does: ``"turn"``, ``"meta"``, ``"ephemeral"``, ``"note"`` or ``"system"``.

    A flag wins over tags. A cell tagged with more than one of ``meta``,
    ``ephemeral``, ``note`` and ``system`` (and no flag) raises ``UsageError``.
    """
    if flag:
        return flag
    tagged = [k for k in KINDS if k in tags]
    if len(tagged) > 1:
        raise UsageError(f"this cell is tagged both {' and '.join(tagged)}: keep one tag (or pass --{tagged[0]})")
    return tagged[0] if tagged else "turn"
