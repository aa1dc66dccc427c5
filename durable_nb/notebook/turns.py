"""Running a turn from the notebook: a cell's turn, its fan-out, a replay; and how each failure reads.

Each runs through :class:`~.state.NotebookSession`, shows its events with a
:class:`~.printer.Printer`, then prints one summary line. A model failure
is one :class:`TurnFailed` line (its cause redacted by
:func:`~durable_nb.models.failures.failure_line`) saying what was kept; the
stop button is one :class:`TurnInterrupted` line, a ``KeyboardInterrupt``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ..durable import FanOut, ReplayFailed, Tool, read_value
from ..durable.reuse import MODES
from ..errors import DurableError, suggest
from ..models.failures import failure_line
from ..session import MessageEntry
from .context import Context
from .options import Call
from .printer import Printer
from .render import footer, model_label, plural, thinking_of
from .state import NotebookSession, Turn
from .tracing import end_turn, traced


class TurnFailed(Exception):
    """A turn whose model failed or was cut off: shown as its one-line message, without a traceback.

    IPython shows an exception's ``_render_traceback_()`` lines instead of a
    traceback; a kernel reports ``ename`` ``TurnFailed``.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {self}"]


class TurnInterrupted(KeyboardInterrupt):
    """The stop button during a turn: one line, no traceback; the kernel still reports an interrupted cell
    (``ename`` ``TurnInterrupted``, a ``KeyboardInterrupt``), so Run All stops there."""

    _render_traceback_ = TurnFailed._render_traceback_


def bind_reply(ctx: Context, out: str | None, value: Any) -> None:
    """Put a turn's reply in ``_durable`` (and in the notebook variable ``out`` when given)."""
    ctx.ns["_durable"] = value
    if out:
        ctx.ns[out] = value


def run_turn(
    ctx: Context,
    st: NotebookSession,
    body: str,
    origin: str | None,
    out: str | None,
    tools: list[Tool] | None = None,
    settings: dict[str, Any] | None = None,
) -> None:
    """Run one turn of the cell ``body``, streaming it, then print its footer line; the reply goes to
    ``_durable`` (and ``out``). Raises :class:`TurnFailed` / :class:`TurnInterrupted` (see the module docs)."""
    printer = Printer(ctx.in_kernel, ctx.config.throttle)  # a view per model call
    turn = Turn()
    start = time.perf_counter()
    try:
        st.run(body, origin, turn, on_event=traced(ctx, printer, tools), tools=tools, settings=settings)
    except KeyboardInterrupt:
        printer.fail("".join(turn.deltas), "interrupted: this partial reply was not saved")
        raise TurnInterrupted(after_failure(st, turn, "interrupted")) from None
    except Exception as e:  # a model or provider failure: one line, the session stays usable
        partial = "".join(turn.deltas)
        printer.fail(partial, "the model failed: this partial reply was not saved" if partial else "")
        raise TurnFailed(f"{failure_line(e)} — {after_failure(st, turn, 'the turn failed')}") from None
    elapsed = time.perf_counter() - start
    printer.finish(turn.text, thinking=thinking_of(turn.reply))
    bind_reply(ctx, out, turn.text)
    if turn.stop_reason == "max_steps":
        print(
            f"stopped after {len(turn.replies)} model calls (max_steps): every result is saved; "
            "send another turn to let the model go on"
        )
    model = (turn.reply.model if turn.reply is not None else None) or st.own.model_name()
    print(
        f"— {footer(model, turn.replies, elapsed)} · {st.own.session_id} · leaf {turn.leaf_id} · "
        f"{plural(turn.written, 'entry', 'entries')} written"
    )


def after_failure(st: NotebookSession, turn: Turn, what: str) -> str:
    """Return what a failed or interrupted turn left (``what`` names how it ended) and how to retry it."""
    if not turn.input_ids:
        return f"{what} before anything was written; re-run the cell to try again"
    if turn.replies:
        last = st.own.path()[-1] if st.own.depth else None
        dangling = isinstance(last, MessageEntry) and bool(last.message.tool_calls())
        return (
            f"{what}; your message and {plural(len(turn.replies), 'reply', 'replies')} with their tool results "
            f"are saved (leaf {st.own.leaf_id})"
            + ("; the unfinished tool call reaches the model as interrupted" if dangling else "")
            + "; re-run the cell to retry"
        )
    return (
        f"{what}; your message is kept in the log without a reply (the next turn continues from before it), "
        "the partial reply is not; re-run this cell to retry"
    )


def run_fan_out(
    ctx: Context,
    st: NotebookSession,
    body: str,
    origin: str | None,
    out: str | None,
    variants: list[dict[str, Any]],
    tools: list[Tool] | None,
    settings: dict[str, Any] | None,
) -> None:
    """Run the cell's turn once per variant on sibling branches, one output each in their order, then a
    line per variant and a summary; ``_durable`` (and ``out``) get ``{label: reply}``. Raises
    :class:`TurnFailed` when every variant failed, :class:`TurnInterrupted` on the stop button."""
    in_kernel, throttle = ctx.in_kernel, ctx.config.throttle
    lanes: list[Printer] = []  # one per variant: a view for the whole run, finalised below
    replied: dict[int, str] = {}  # variants whose run ended with a reply stored: its text

    def on_event(b, ev) -> None:
        if not lanes:  # the turn started (every check passed): one output per variant, in their order
            for n in range(1, len(variants) + 1):
                lanes.append(Printer(in_kernel, throttle, title=f"variant {n}", split=False, stream=in_kernel))
                if in_kernel:
                    lanes[-1].views[0].update("")
        lane = lanes[b.index]
        lane.retitle(b.name)
        lane(ev)
        if ev.type == "agent_end":
            end_turn(ctx, ev.leaf_id, tools)
        if ev.type == "agent_end" and ev.error is None:
            replied[b.index] = b.text

    try:
        result = st.fan_out(body, origin, variants, on_event=on_event, tools=tools, settings=settings)
    except KeyboardInterrupt:
        for i, lane in enumerate(lanes):
            if i in replied:
                lane.finish(replied[i])  # it finished before the stop: stored, on its branch
            else:
                lane.fail(lane.text, "interrupted: this partial reply was not saved")
        raise TurnInterrupted(
            f"interrupted: every variant stopped; what each stored stays on its branch (leaf {st.own.leaf_id})"
        ) from None
    lines, failures = _show_variants(st, result, lanes, in_kernel, throttle)
    ok = [b for b in result.branches if b.ok]
    if not ok:
        causes = "; ".join(f"{name}: {cause}" for name, cause, _ in failures)
        raise TurnFailed(
            f"every variant failed ({causes}); each message is kept without a reply on its branch, "
            f"the leaf is back at {result.fork_id or 'the root'}; re-run the cell to retry"
        )
    for line in lines:
        print(line)
    for name, cause, kept in failures:
        print(f"✗ {name} failed: {cause} — {kept}; the other variants are kept")
    bind_reply(ctx, out, {b.name: b.text for b in ok})
    print(
        f"fan-out of {len(result.branches)} from {result.fork_id or 'the root'}: {len(ok)} replied"
        + (f", {len(result.failed)} failed" if result.failed else "")
        + f"; leaf on {ok[0].name} (the first that replied); labels: {', '.join(b.name for b in ok)}"
    )


def _show_variants(
    st: NotebookSession, result: FanOut, lanes: list[Printer], in_kernel: bool, throttle: float
) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Finalise each variant's output; return the footer lines of those that replied and
    ``(name, cause, what was kept)`` for those that failed."""
    lines, failures = [], []
    for b in result.branches:
        if b.index >= len(lanes):  # a variant that sent no event
            lanes.append(Printer(in_kernel, throttle, split=False, stream=in_kernel))
        lane = lanes[b.index]
        lane.retitle(b.name)
        if b.ok:
            lane.finish(
                b.text, thinking=thinking_of(next((m for m in reversed(b.messages) if m.role == "assistant"), None))
            )
            lines.append(_variant_line(st, b))
            continue
        assert b.error is not None  # not ok: its run ended with an error
        cause = failure_line(b.error)
        text = lane.partial
        lane.fail(text, f"failed: {cause}" + ("; this partial reply was not saved" if text else ""))
        kept = (
            f"its message is kept without a reply on its branch ({b.entries[-1].id})"
            if b.entries and not any(m.role == "assistant" for m in b.messages)
            else f"what it stored stays on its branch ({plural(len(b.entries), 'entry', 'entries')})"
        )
        failures.append((b.name, cause, kept))
    return lines, failures


def _variant_line(st: NotebookSession, b) -> str:
    """Return the footer line of a fan-out variant that replied."""
    replies = [m for m in b.messages if m.role == "assistant"]
    took = sum((m.timing or {}).get("total_ms", 0) or (m.timing or {}).get("duration_ms", 0) for m in b.messages)
    model = (replies[-1].model if replies else None) or model_label(b.variant.model or st.own.model)
    return f"— {b.name} · {footer(model, replies, took / 1000)} · {plural(len(b.entries), 'entry', 'entries')}"


def tool_mode(call: Call, ns: Mapping[str, Any]) -> str | None:
    """Return ``"reuse"`` or ``"call"`` for ``--tools reuse`` / ``--tools call`` (a replay's or an
    evaluation's switch: stored results, or the session's tools run), else ``None`` (``--tools A,B`` names tools).

    Raises ``DurableError`` (one line) for a mode in a list of tools, or a near-miss of a mode
    (``--tools reus``) that is no notebook name either."""
    if call.tools is None:
        return None
    if len(call.tools) == 1 and call.tools[0] in MODES:
        return call.tools[0]
    for name in call.tools:
        if name in MODES and name not in ns:
            raise DurableError(f"--tools {name} stands alone (reuse or call), not among tools A,B")
        hint = suggest(name, MODES)
        if hint and name not in ns:
            raise DurableError(f"--tools {name}: neither reuse, call nor a notebook function{hint}")
    return None


def run_replay(ctx: Context, call: Call) -> None:
    """``%durable replay [ENTRY|LABEL] [--model M] [--system TEXT] [settings]``: run the active path's turns
    again into a sibling branch, each reply streaming below, then a summary and any warnings."""
    st = ctx.state
    st.writable("replay")
    model = ctx.model_of(call.model) if call.model is not None else None
    mode = tool_mode(call, ctx.ns)
    tools = ctx.tool_list() if mode else ctx.tools(call)
    settings = {k: read_value(v) for k, v in call.settings}
    printer = Printer(ctx.in_kernel, ctx.config.throttle, numbered=True)
    try:
        r = st.replay(
            call.args[0] if call.args else None, model, call.system, settings, tools, traced(ctx, printer, tools),
            mode or "call",
        )  # fmt: skip
    except ReplayFailed as e:
        raise TurnFailed(failure_line(e)) from None
    except KeyboardInterrupt:
        raise TurnInterrupted(
            f"replay interrupted: the turns replayed so far stay on the new branch (leaf {st.own.leaf_id}); "
            "the original branch is unchanged"
        ) from None
    print(
        f"replayed {plural(r.turns, 'turn', 'turns')} into a new branch from {r.fork_id or 'the root'}: "
        f"label {r.label}, leaf {r.leaf_id} · {plural(len(r.entries), 'entry', 'entries')} written; "
        f"the original branch (leaf {r.original_leaf_id}) is unchanged"
    )
    for w in r.warnings:
        print(f"warning: {w}")
