"""What a parsed ``%durable`` line is: the :class:`Call`, and the :class:`Option` its flags come from.

The options of a ``%%durable`` cell (and of every turn: a cell or a replay)
are declared here, in :data:`CELL_OPTIONS`; an option of one verb only is
declared with that verb (:func:`.verbs.verb`). Nothing here parses: that is
:mod:`.args`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KINDS = ("meta", "ephemeral", "note", "system")
CELL = "cell"  # Option.where: only on a %%durable cell
ANY = "any"  # Option.where: on the cell and on the line magic
TURN = (CELL, "replay")  # Option.where: what sends turns (a cell, a replay)


@dataclass(frozen=True)
class Option:
    """One option of the magic: its flag, its help, and where it applies.

    ``where`` is :data:`CELL`, :data:`ANY`, the name of the one verb that
    takes it (``"compact"`` for ``--keep``; set by the verb that declares it)
    or a tuple of such places (:data:`TURN`); anywhere else it is refused
    with one line naming its place. ``spec`` holds argparse's keywords
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

    @property
    def places(self) -> tuple[str, ...]:
        """Where it applies, as a tuple (:data:`CELL`, :data:`ANY` or verb names)."""
        return self.where if isinstance(self.where, tuple) else (self.where,)


CELL_OPTIONS: tuple[Option, ...] = (
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
        "--cases",
        "evaluate: run the cell as a template ({field}) over the notebook's case table NAME "
        "(a list of dicts or a DataFrame), once per variant",
        spec={"metavar": "NAME"},
    ),
    Option("--grade", "with --cases: the notebook's graders, comma-separated", spec={"metavar": "G1,G2"}),
    Option("--eval", "with --cases: the run's name (the same name continues it)", spec={"metavar": "NAME"}),
    Option("--chat", "append at the current leaf even if this cell ran before"),
    Option("--out", "also bind the reply text to the notebook variable VAR", spec={"metavar": "VAR"}),
    Option("--no-interpolate", "send the text as written: no {{name}} substitution"),
    Option("--dry-run", "show the messages the turn would send; call no model, write nothing", where=ANY),
)


@dataclass(frozen=True)
class Call:
    """One parsed magic invocation.

    ``verb`` is ``""`` for a ``%%durable`` cell and a verb's name for the
    line magic (``"status"`` when the line is empty, ``"dry-run"`` for a
    bare ``--dry-run``); ``args`` are the verb's arguments. ``kind`` is the
    flag given (``"meta"``, ``"ephemeral"``, ``"note"`` or ``None``).
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
    cases: str | None = None
    grade: tuple[str, ...] | None = None
    eval: str | None = None
    score: str | None = None
    tag: tuple[str, ...] = ()
    mcp: str | None = None
    mcp_url: str | None = None
    name: str | None = None
    approve: str | None = None
    format: str | None = None
    logs: bool = False
    redact: str | None = None  # export: "" for a bare --redact, "emails", or None (no redaction)
    baseline: str | None = None
    run: str | None = None  # export: an evaluation run's name
    pinned: bool = False  # show: a read-only widget of the session up to the entry
