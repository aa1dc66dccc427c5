"""``%durable trace``: each turn of the notebook sent to an OpenTelemetry collector as it ends.

The kernel keeps one :class:`~durable_nb.otlp.live.OtlpPublisher` on its
:class:`~.context.Context` (``ctx.tracer``) while tracing is on; the turn,
fan-out and replay runners hand it each ``agent_end`` through :func:`traced`.
The OpenTelemetry SDK is imported only when tracing is switched on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..durable import Event
from ..errors import DurableError

Handler = Callable[[Event], object]


def traced(ctx: Any, on_event: Handler, tools: list | None = None) -> Handler:
    """Return ``on_event`` itself while tracing is off, else a handler that also hands each turn's end
    (``agent_end``) of the notebook's own session to the tracer, with the turn's ``tools``. O(1) per event;
    the tracer sends from its own thread."""
    tracer = getattr(ctx, "tracer", None)
    if tracer is None:
        return on_event

    def handle(ev: Event) -> object:
        out = on_event(ev)
        if ev.type == "agent_end":
            end_turn(ctx, ev.leaf_id, tools)
        return out

    return handle


def end_turn(ctx: Any, leaf_id: str, tools: list | None = None) -> None:
    """Queue the turn ending at ``leaf_id`` of the notebook's session for the tracer (none: nothing).
    Never raises: a trace must not cost a turn (a failure is one warning line)."""
    tracer = getattr(ctx, "tracer", None)
    if tracer is None:
        return
    try:
        tracer.turn(ctx.state.own, leaf_id, tools)
    except Exception as e:  # noqa: BLE001 - the turn is stored; its trace is not worth an error
        print(f"warning: trace not sent: {e}")


def switch(ctx: Any, args: list[str]) -> str:
    """Apply ``%durable trace [otlp [URL] | off]`` to ``ctx``; return the line to print. Raises
    :class:`DurableError` (one line) for another mode, a bad URL or a missing SDK."""
    if not args:
        return state_line(ctx)
    mode, rest = args[0], args[1:]
    if mode == "off":
        if rest:
            raise DurableError(f"usage: %durable trace off (it takes nothing, not {rest[0]!r})")
        old = getattr(ctx, "tracer", None)
        ctx.tracer = None
        if old is None:
            return "tracing was off"
        old.close()
        return f"tracing off ({_counts(old)})"
    if mode != "otlp":
        raise DurableError(f"usage: %durable trace otlp [URL] | off; no trace mode {mode!r}")
    if len(rest) > 1:
        raise DurableError("usage: %durable trace otlp [URL]")
    from ..otlp.live import OtlpPublisher

    old = getattr(ctx, "tracer", None)
    ctx.tracer = OtlpPublisher(url=rest[0] if rest else None)
    if old is not None:
        old.close()
    return f"tracing each turn to {ctx.tracer.where} (OTLP/HTTP) as it ends; %durable trace off stops it"


def _counts(t: Any) -> str:
    return f"{t.sent} turns sent, {t.failed} not sent" + (f"; last: {t.last_error}" if t.last_error else "")


def state_line(ctx: Any) -> str:
    """Return what ``%durable trace`` alone prints: off, or where turns go and how many went."""
    t = getattr(ctx, "tracer", None)
    if t is None:
        return "tracing is off (%durable trace otlp [URL] sends each turn to an OpenTelemetry collector)"
    return f"tracing each turn to {t.where} (OTLP/HTTP): {_counts(t)}"
