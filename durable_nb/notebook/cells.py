"""A ``%%durable`` cell: what kind it is, its checks, and what it does (stage, note, system prompt, turn).

The cell's kind comes from its flag or tags (:func:`.args.cell_kind`);
options that do not fit the kind are refused in one line before anything
moves. Then the cell-as-position rule applies (:meth:`~.state.NotebookSession.rewind_for`)
and the cell acts: a turn and a fan-out run in :mod:`.turns`.
"""

from __future__ import annotations

from typing import Any

from .. import ai
from ..errors import DurableError
from .args import cell_kind, out_refusal
from .context import Context
from .interpolate import interpolate
from .options import Call
from .render import dry_run_text, model_label, plural, short
from .state import NotebookSession
from .tags import Cell, current_cell
from .turns import run_fan_out, run_turn

WHAT = {"turn": "run a turn", "note": "add a note", "system": "set the system prompt"}  # kind -> what it does


def run_cell(ctx: Context, call: Call, cell: str) -> None:
    """Run the ``%%durable`` cell ``cell`` with its parsed line ``call``; report in the cell output.

    Raises ``DurableError`` (one line) for a mistake, before anything is
    written; a turn's failure is :class:`~.turns.TurnFailed`.
    """
    info = current_cell(ctx.shell)
    kind = cell_kind(call.kind, info.tags)
    if call.cases is not None:
        return _evaluate(ctx, call, kind, cell)
    body = _body(ctx, call, kind, cell)
    st = ctx.state
    fanned = call.models is not None or call.variants is not None
    if fanned and kind != "turn":
        raise DurableError(f"--models and --variants fan out a turn; this is a {kind} cell and calls no model")
    variants = ctx.variants(call) if fanned else None
    if call.dry_run:
        return _dry_run(st, call, kind, body, info, variants)
    if (call.tools is not None or call.settings) and kind != "turn":
        raise DurableError(f"--tools and the settings go with a turn; this is a {kind} cell and calls no model")
    tools, settings = None, None
    if kind == "turn":
        if variants is None:
            st.check_model()  # a model that cannot start moves nothing and writes nothing
        tools = ctx.tools(call)
        settings = ctx.turn_settings(call)
    st.writable(WHAT.get(kind, "stage entries"))
    with st.syncs_held():  # a rewind goes to the widgets with what the cell writes next (one sync, not two)
        _position(st, info, call.chat, kind)
    try:
        if kind != "turn":
            return _store(st, kind, body, info)
        if variants is not None:
            return run_fan_out(ctx, st, body, info.origin, call.out, variants, tools, settings)
        return run_turn(ctx, st, body, info.origin, call.out, tools, settings)
    finally:
        st.settle()


def _evaluate(ctx: Context, call: Call, kind: str, cell: str) -> None:
    """Run the cell as an evaluation template over ``--cases`` (see :func:`.verbs.evaluations.run_cases`)."""
    from .verbs.evaluations import run_cases

    if kind != "turn" or call.out or call.dry_run or call.chat:
        what = f"a {kind} cell" if kind != "turn" else "--out, --dry-run or --chat"
        raise DurableError(f"--cases runs the cell as a template over cases; it does not go with {what}")
    body = cell[:-1] if cell.endswith("\n") else cell
    if not body.strip():
        raise DurableError("the cell is empty: write the prompt template below the %%durable --cases line")
    fanned = call.models is not None or call.variants is not None
    run_cases(ctx, call, body, ctx.variants(call) if fanned else None)


def _body(ctx: Context, call: Call, kind: str, cell: str) -> str:
    """Return the cell's text to send or keep (interpolated unless ``--no-interpolate``); refuse an empty cell
    and an ``--out`` that a non-turn cell or a name of the shell's own cannot take."""
    if call.out and kind != "turn":
        raise DurableError(f"--out binds a reply, but this cell is a {kind} cell and calls no model")
    if call.out and call.out in getattr(ctx.shell, "user_ns_hidden", {}):  # names the shell itself set
        raise DurableError(out_refusal(call.out))
    body = cell[:-1] if cell.endswith("\n") else cell
    if not body.strip():
        raise DurableError("the cell is empty: write the message below the %%durable line")
    return interpolate(body, ctx.ns) if call.interpolate else body


def _dry_run(
    st: NotebookSession, call: Call, kind: str, body: str, info: Cell, variants: list[dict[str, Any]] | None
) -> None:
    """Print what the cell would send (and each fan-out variant); nothing moves or is written."""
    if kind == "note":
        raise DurableError("--dry-run previews a turn; a note cell sends nothing")
    msgs, new = st.preview(body, info.origin, call.chat, kind)
    print(dry_run_text(msgs, new, model_label(st.own.model)))
    if variants is not None:
        print(
            f"fan-out: {plural(len(variants), 'variant', 'variants')}, each on its own branch: "
            + "; ".join(
                ", ".join(f"{k}={model_label(v) if k == 'model' else v!r}" for k, v in d.items()) or "as is"
                for d in variants
            )
        )


def _position(st: NotebookSession, info: Cell, chat: bool, kind: str) -> None:
    """Apply the cell-as-position rule, and before a turn leave an unanswered message; say what moved."""
    before = st.agent.depth
    rewound = st.rewind_for(info.origin, chat)
    if rewound is not None:
        left = before - st.agent.depth
        print(
            f"↺ this cell ran before: rewound to before its entry {rewound.id} "
            f"({plural(left, 'entry', 'entries')} left the active path and stay on a sibling branch)"
        )
        if kind == "turn":
            _say_unsent(st, rewound)
    if kind == "turn":
        skipped = st.leave_unanswered()
        if skipped is not None:
            print(
                f"↷ the last message ({short(skipped.message.text())!r}) never got a reply: this turn continues "
                "from before it (it stays in the log, unanswered; re-run its cell to retry it)"
            )


def _say_unsent(st: NotebookSession, rewound) -> None:
    """Say in one line which ephemeral input the cell's earlier run was sent that this run will not send:
    it was consumed then and never stored, so only re-running its cell stages it again."""
    sent = getattr(getattr(rewound, "message", None), "ephemeral_context", None) or []
    staged = {s.message.origin for s in st.staged}
    gone = [o for o in sent if not (o and o in staged)]
    if gone:
        where = ", ".join(
            f"{ai.shown_origin(o)} {short(st.spent[o])!r}" if o in st.spent else o or "no origin" for o in gone
        )
        print(
            f"⚠ its earlier run was also sent {plural(len(gone), 'ephemeral input', 'ephemeral inputs')} ({where}), "
            "used once and never stored: this run goes without it; re-run that cell first to send it again"
        )


def _store(st: NotebookSession, kind: str, body: str, info: Cell) -> None:
    """Stage (meta, ephemeral), append a note, or set the system prompt, and say so in one line."""
    if kind in ("meta", "ephemeral"):
        replaced = st.stage(kind, body, info.origin)
        st.sync()
        print(
            f"{'re-staged' if replaced else 'staged'} {kind}: {short(body)!r} "
            f"({len(st.staged)} staged for the next turn)"
        )
    elif kind == "note":
        note = st.note(body, info.cell_id)
        print(f"note {note.id} appended to {st.own.session_id} (kept, never sent to the model)")
    elif kind == "system":
        e = st.system(body, info.origin)
        print(f"system prompt set: entry {e.id} on the active path; the next turns send it as the system prompt")
