"""Parse a ``%durable`` / ``%%durable`` line into a :class:`Call`.

Each option is declared once, in :data:`OPTIONS` (flag, help, where it
applies); each verb once, in :mod:`.verbs` (usage, help, what it does).
:func:`documented` turns the options into IPython ``magic_arguments`` (the way
``%%capture`` declares its own) and the verbs into the help text, so
``%%durable?`` documents both and :func:`parse` can be tested without a
kernel. Every mistake raises ``UsageError`` (one line, with the nearest verb
or option suggested), as IPython's own argument parser does.
"""

from __future__ import annotations

import argparse
import builtins
import keyword
from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import MagicHelpFormatter, argument, kwds, magic_arguments

from ..errors import suggest
from .verbs import VERBS

KINDS = ("meta", "ephemeral", "note", "system")
CELL = "cell"  # Option.where: only on a %%durable cell
ANY = "any"  # Option.where: on the cell and on the line magic
TURN = (CELL, "replay")  # Option.where: what sends turns (a cell, a replay)


@dataclass(frozen=True)
class Option:
    """One option of the magic: its flag, its help, and where it applies.

    ``where`` is :data:`CELL`, :data:`ANY`, the name of the one verb that
    takes it (``"compact"`` for ``--keep``) or a tuple of such places
    (:data:`TURN`); anywhere else it is refused with one line naming its place. ``spec`` holds argparse's keywords
    (``action``, ``type``, ``metavar``); the default is a flag
    (``store_true``).
    """

    flag: str
    help: str
    where: str | tuple[str, ...] = CELL
    spec: dict[str, Any] = field(default_factory=lambda: {"action": "store_true"})

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    Option("--meta", "stage this cell as a meta entry (kept, hidden from transcripts)"),
    Option("--ephemeral", "stage this cell as an ephemeral entry (next turn only, never stored)"),
    Option("--note", "append this cell as a note entry (kept, never sent to the model)"),
    Option(
        "--system",
        "make this cell the session's system prompt (kept on the active path, sent as system); "
        "replay: --system TEXT replays with that system prompt",
        where=TURN,
        spec={"metavar": "TEXT", "nargs": "?", "const": True},
    ),
    Option(
        "--tools",
        "the tools for this turn only: notebook functions, comma-separated",
        where=TURN,
        spec={"metavar": "A,B"},
    ),
    Option("--temperature", "sampling temperature for this turn", where=TURN, spec={"metavar": "T"}),
    Option("--max-tokens", "most tokens the reply may have, this turn", where=TURN, spec={"metavar": "N"}),
    Option(
        "--param",
        "a provider setting for this turn, sent as is (repeatable; VALUE read as JSON when it is JSON)",
        where=TURN,
        spec={"metavar": "KEY=VALUE", "action": "append"},
    ),
    Option(
        "--models",
        "fan out: run this turn once per model, each on a sibling branch, at the same time "
        "(names or notebook functions, comma-separated)",
        spec={"metavar": "A,B,C"},
    ),
    Option(
        "--variants",
        'fan out over settings / system prompts: "temperature=0 | temperature=1" '
        "(| between variants), or a notebook list of dicts",
        spec={"metavar": "SPEC"},
    ),
    Option(
        "--model",
        "replay: the model to replay with (a name or a notebook function)",
        where="replay",
        spec={"metavar": "M"},
    ),
    Option("--chat", "append at the current leaf even if this cell ran before"),
    Option("--out", "also bind the reply text to the notebook variable VAR", spec={"metavar": "VAR"}),
    Option("--no-interpolate", "send the text as written: no {{name}} substitution"),
    Option("--dry-run", "show the messages the turn would send; call no model, write nothing", where=ANY),
    Option(
        "--keep", "compact: turns to keep verbatim (default 0)", where="compact", spec={"metavar": "N", "type": int}
    ),
    Option("--session", "search: only this session", where="search", spec={"metavar": "ID"}),
    Option("--force", "export: replace an existing file (never a session's log)", where="export"),
)
FLAGS = sorted(o.flag for o in OPTIONS)

CELL_HELP = """Run a turn of the notebook's durable session, or manage the session.

Cell magic -- the cell body is the user message; the reply streams below:

    %%durable [--meta | --ephemeral | --note | --system] [--chat] [--out VAR] [--no-interpolate] [--dry-run]
              [--tools A,B] [--temperature T] [--max-tokens N] [--param KEY=VALUE]
              [--models A,B,C] [--variants "temperature=0 | temperature=1"]

  A cell tagged (or flagged) `meta` or `ephemeral` does not call the model:
  it stages an injected entry for the next turn. `note` appends a note entry
  that is kept but never sent. `system` sets the session's system prompt (an
  entry on the active path; edit and re-run the cell for a sibling branch).
  Flags win over tags. A turn runs the tools the model calls (%durable tools
  add NAME) and calls the model again until it answers without a tool call. Re-running a cell whose
  entry is on the active path rewinds to before that entry first, so an
  edited cell grows a sibling branch (--chat appends at the leaf instead).
  {{name}} / {{name.attr}} put a notebook variable into the text
  (\\{{name}} is literal). The reply is in `_durable` afterwards.
  --models / --variants fan the turn out: one sibling branch per variant
  (both given: every model with every variant), run at the same time, each
  labelled by what differs (offline@t3); `_durable` is then {label: reply}
  and the leaf stays on the first variant that replied.

Line magic verbs (a bare %durable is status):

"""

SETTINGS_HELP = """
Settings: %config DurableMagics.model / .store / .session / .throttle
"""


def help_text() -> str:
    """Return the magic's help: the cell magic, then one entry per verb of :data:`.verbs.VERBS`, then the settings."""
    width = max(len(v.usage) for v in VERBS.values()) + 2
    rows = []
    for v in VERBS.values():
        first, *more = v.help.splitlines()
        rows.append(f"    %durable {v.usage:<{width}}{first}")
        rows += [" " * (14 + width) + line for line in more]
    return CELL_HELP + "\n".join(rows) + "\n" + SETTINGS_HELP


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


@dataclass(frozen=True)
class Call:
    """One parsed magic invocation.

    ``verb`` is ``""`` for a ``%%durable`` cell and a key of :data:`VERBS`
    for the line magic (``"status"`` when the line is empty, ``"dry-run"``
    for a bare ``--dry-run``); ``args`` are the verb's arguments. ``kind``
    is the flag given (``"meta"``, ``"ephemeral"``, ``"note"`` or ``None``).
    """

    verb: str = ""
    args: tuple[str, ...] = ()
    kind: str | None = None
    chat: bool = False
    out: str | None = None
    interpolate: bool = True
    dry_run: bool = False
    keep: int | None = None
    session: str | None = None
    tools: tuple[str, ...] | None = None
    settings: tuple[tuple[str, str], ...] = ()
    model: str | None = None
    system: str | None = None
    models: tuple[str, ...] | None = None
    variants: str | None = None
    force: bool = False


# names IPython puts in every user namespace (besides _-prefixed ones and builtins)
SHELL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "display"})


def out_refusal(name: str) -> str:
    """Return the one-line refusal of ``--out NAME`` for a name that belongs to IPython or Python."""
    return (
        f"--out {name}: {name!r} belongs to IPython or Python (names starting with _, builtins, "
        f"In, Out, get_ipython, exit...); binding the reply there would replace it — pick another name"
    )


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
            raise UsageError(f"unknown option {x}{suggest(x.split('=')[0], FLAGS)}; see %durable? for the options")
    words = [w for w in ns.words + extra]
    kinds = [k for k in KINDS if getattr(ns, k) is True]  # --system TEXT is a replay's prompt, not a kind
    if len(kinds) > 1:
        raise UsageError(f"choose one of --{' / --'.join(kinds)}: a cell is one kind of entry")
    if ns.out is not None and (not ns.out.isidentifier() or keyword.iskeyword(ns.out)):
        raise UsageError(f"--out needs a Python variable name, not {ns.out!r}")
    if ns.out is not None and (ns.out.startswith("_") or ns.out in SHELL_NAMES or hasattr(builtins, ns.out)):
        raise UsageError(out_refusal(ns.out))
    settings = [("temperature", ns.temperature)] if ns.temperature is not None else []
    settings += [("max_tokens", ns.max_tokens)] if ns.max_tokens is not None else []
    for p in ns.param or []:
        key, eq, value = p.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--param needs KEY=VALUE (like --param top_p=0.9), not {p!r}")
        settings.append((key.strip(), value))
    tools = tuple(t.strip() for t in ns.tools.split(",") if t.strip()) if ns.tools is not None else None
    models = tuple(m.strip() for m in ns.models.split(",") if m.strip()) if ns.models is not None else None
    if models is not None and not models:
        raise UsageError("--models needs model names, comma-separated (like --models offline,openai:gpt-4.1-mini)")
    if ns.variants is not None and not ns.variants.strip():
        raise UsageError('--variants needs variants, like --variants "temperature=0 | temperature=1"')
    system_text = ns.system if isinstance(ns.system, str) else None
    if ns.keep is not None and ns.keep < 0:
        raise UsageError("--keep needs a number of turns, 0 or more")
    common = dict(
        kind=kinds[0] if kinds else None,
        chat=ns.chat,
        out=ns.out,
        interpolate=not ns.no_interpolate,
        dry_run=ns.dry_run,
        keep=ns.keep,
        session=ns.session,
        tools=tools,
        settings=tuple(settings),
        model=ns.model,
        system=system_text,
        models=models,
        variants=ns.variants,
        force=ns.force,
    )
    given = [o for o in OPTIONS if getattr(ns, o.dest) not in (None, False)]
    if cell:
        if words:
            w = words[0]
            listed = next((f for f in ("models", "tools") if (getattr(ns, f) or "").rstrip().endswith(",")), None)
            if listed is not None:
                hint = f"no spaces in a list: --{listed} {getattr(ns, listed)}{''.join(words)}"
            elif w.lstrip("-") in KINDS or "--" + w in FLAGS:
                hint = f"did you mean --{w.lstrip('-')}?"
            elif w in VERBS:
                hint = f"verbs go on a line magic of their own: %durable {w}"
            else:
                hint = "the message goes on the lines below %%durable"
            raise UsageError(f"%%durable takes options only, not {' '.join(words)!r}: {hint}")
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


def _check_place(given: list[Option], place: str) -> None:
    """Raise ``UsageError`` for the first option in ``given`` that does not apply at ``place`` (:data:`CELL` or a verb)."""
    for o in given:
        places = o.where if isinstance(o.where, tuple) else (o.where,)
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
