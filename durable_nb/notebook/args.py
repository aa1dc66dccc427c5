"""Parse a ``%durable`` / ``%%durable`` line into a :class:`Call`.

The options are declared once, with IPython's ``magic_arguments``, by
:func:`documented`; the magic method and this module's parser share them, so
``%%durable?`` documents every option and :func:`parse` can be tested
without a kernel. Every mistake raises ``UsageError`` (one line, with the
nearest verb or option suggested).
"""

from __future__ import annotations

import difflib
import keyword
from dataclasses import dataclass

from IPython.core.error import UsageError
from IPython.core.magic_arguments import MagicHelpFormatter, argument, kwds, magic_arguments

# verb -> (min args, max args, usage)
VERBS: dict[str, tuple[int, int, str]] = {
    "status": (0, 0, "status"),
    "sessions": (0, 0, "sessions"),
    "new": (0, 1, "new [session-id]"),
    "use": (1, 1, "use <session-id>"),
    "open": (1, 1, "open <path.jsonl | session-id>"),
    "close": (0, 0, "close"),
    "branch": (1, 1, "branch <entry-id>"),
    "rewind": (0, 1, "rewind [turns]"),
    "fork": (1, 1, "fork <new-session-id>"),
    "compact": (0, 0, "compact [--keep N]"),
    "model": (0, 1, "model [name]"),
    "log": (0, 0, "log"),
    "staged": (0, 0, "staged"),
    "clear": (0, 0, "clear"),
    "dry-run": (0, 0, "dry-run"),
    "show": (0, 0, "show"),
    "help": (0, 0, "help"),
}

KINDS = ("meta", "ephemeral", "note")
CELL_ONLY = ("meta", "ephemeral", "note", "chat", "out", "no_interpolate")

HELP = """Run a turn of the notebook's durable session, or manage the session.

Cell magic -- the cell body is the user message; the reply streams below:

    %%durable [--meta | --ephemeral | --note] [--chat] [--out VAR] [--no-interpolate] [--dry-run]

  A cell tagged (or flagged) `meta` or `ephemeral` does not call the model:
  it stages an injected entry for the next turn. `note` appends a note entry
  that is kept but never sent. Flags win over tags. Re-running a cell whose
  entry is on the active path rewinds to before that entry first, so an
  edited cell grows a sibling branch (--chat appends at the leaf instead).
  {{name}} / {{name.attr}} put a notebook variable into the text
  (\\{{name}} is literal). The reply is in `_durable` afterwards.

Line magic verbs:

    %durable                      status: session, store, leaf, counts, staged, model
    %durable sessions             saved sessions with entry counts and last activity
    %durable new [id]             start a new session (and use it)
    %durable use <id>             continue a saved session (created if missing)
    %durable open <path | id>     inspect a saved log read-only (turns refused; fork to continue it)
    %durable close                stop inspecting; back to the notebook's session
    %durable log                  every entry: id, parent, kind, text (* = active path)
    %durable branch <entry-id>    move the leaf to an entry (a unique prefix works)
    %durable rewind [N]           move the leaf to before the last N turns (1)
    %durable fork <new-id>        copy the active path into a new session and use it
                                  (of an opened log too: it is left as it was)
    %durable compact [--keep N]   summarise the path, keeping the last N turns
    %durable model [name]         show or set the model (offline, openai:..., ...)
    %durable staged / clear       list / drop the staged meta and ephemeral entries
    %durable dry-run              the messages the next turn would send (no cell)
    %durable show                 the session widget (tree, model/transcript views)

Settings: %config DurableMagics.model / .store / .session / .throttle
"""


class _RawHelp(MagicHelpFormatter):
    """Keep the hand-written help's line breaks."""

    def _fill_text(self, text, width, indent):
        return "".join(indent + line for line in text.splitlines(keepends=True))


def documented(func):
    """Return ``func`` with the magic's options attached (``func.parser``) and its
    docstring replaced by the full help. Used by the magic and by :func:`parse`."""
    func.__doc__ = HELP
    decorators = [
        kwds(formatter_class=_RawHelp),
        argument("words", nargs="*", help="line magic: a verb and its arguments (see above)"),
        argument("--meta", action="store_true", help="stage this cell as a meta entry (kept, hidden from transcripts)"),
        argument(
            "--ephemeral",
            action="store_true",
            help="stage this cell as an ephemeral entry (next turn only, never stored)",
        ),
        argument(
            "--note", action="store_true", help="append this cell as a note entry (kept, never sent to the model)"
        ),
        argument("--chat", action="store_true", help="append at the current leaf even if this cell ran before"),
        argument("--out", metavar="VAR", help="also bind the reply text to the notebook variable VAR"),
        argument("--no-interpolate", action="store_true", help="send the text as written: no {{name}} substitution"),
        argument(
            "--dry-run", action="store_true", help="show the messages the turn would send; call no model, write nothing"
        ),
        argument("--keep", metavar="N", type=int, help="compact: turns to keep verbatim (default 0)"),
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


OPTIONS = sorted(s for a in _spec.parser._actions for s in a.option_strings)


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


def suggest(word: str, choices) -> str:
    """Return ``" (did you mean 'x'?)"`` for the nearest choice, or ``""``."""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f" (did you mean {near[0]!r}?)" if near else ""


def parse(line: str, cell: bool) -> Call:
    """Return the :class:`Call` for a magic ``line``; ``cell`` says whether it is ``%%durable``.

    Raises ``UsageError`` for an unknown option or verb (naming the nearest),
    a wrong number of verb arguments, two kinds at once, a cell-only option
    on the line magic, a verb after ``%%durable``, a bad ``--out`` name or a
    ``--keep`` outside ``compact``.
    """
    parser = _spec.parser
    ns, extra = parser.parse_known_args(_split(line))
    for x in extra:
        if x.startswith("-"):
            raise UsageError(f"unknown option {x}{suggest(x.split('=')[0], OPTIONS)}; see %durable? for the options")
    words = [w for w in ns.words + extra]
    kinds = [k for k in KINDS if getattr(ns, k)]
    if len(kinds) > 1:
        raise UsageError(f"choose one of --{' / --'.join(kinds)}: a cell is one kind of entry")
    if ns.out is not None and (not ns.out.isidentifier() or keyword.iskeyword(ns.out)):
        raise UsageError(f"--out needs a Python variable name, not {ns.out!r}")
    common = dict(
        kind=kinds[0] if kinds else None,
        chat=ns.chat,
        out=ns.out,
        interpolate=not ns.no_interpolate,
        dry_run=ns.dry_run,
        keep=ns.keep,
    )
    if cell:
        if words:
            w = words[0]
            if w.lstrip("-") in KINDS or "--" + w in OPTIONS:
                hint = f"did you mean --{w.lstrip('-')}?"
            elif w in VERBS:
                hint = f"verbs go on a line magic of their own: %durable {w}"
            else:
                hint = "the message goes on the lines below %%durable"
            raise UsageError(f"%%durable takes options only, not {' '.join(words)!r}: {hint}")
        if ns.keep is not None:
            raise UsageError("--keep belongs to %durable compact")
        return Call(**common)
    given = [o for o in CELL_ONLY if getattr(ns, o)]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise UsageError(f"{flag} applies to a %%durable cell (write %%durable {flag} on the cell's first line)")
    verb = words[0] if words else ("dry-run" if ns.dry_run else "status")
    if verb not in VERBS:
        hint = suggest(verb, VERBS)
        raise UsageError(
            f"unknown verb {verb!r}{hint}; "
            + ("%durable? explains the verbs" if hint else f"verbs: {', '.join(VERBS)}")
        )
    lo, hi, usage = VERBS[verb]
    args = tuple(words[1:])
    if not lo <= len(args) <= hi:
        raise UsageError(f"usage: %durable {usage}")
    if ns.keep is not None and verb != "compact":
        raise UsageError("--keep belongs to %durable compact")
    if ns.keep is not None and ns.keep < 0:
        raise UsageError("--keep needs a number of turns, 0 or more")
    return Call(verb=verb, args=args, **common)


def _split(line: str) -> list[str]:
    from IPython.utils.process import arg_split

    try:
        return arg_split(line, posix=True)
    except ValueError as e:  # e.g. an unclosed quote
        raise UsageError(f"cannot read the magic's line ({e}): check its quotes") from None


def cell_kind(flag: str | None, tags: frozenset[str]) -> str:
    """Return what a ``%%durable`` cell does: ``"turn"``, ``"meta"``, ``"ephemeral"`` or ``"note"``.

    A flag wins over tags. A cell tagged with more than one of ``meta``,
    ``ephemeral`` and ``note`` (and no flag) raises ``UsageError``.
    """
    if flag:
        return flag
    tagged = [k for k in KINDS if k in tags]
    if len(tagged) > 1:
        raise UsageError(f"this cell is tagged both {' and '.join(tagged)}: keep one tag (or pass --{tagged[0]})")
    return tagged[0] if tagged else "turn"
