"""A session to OpenTelemetry: the ``otlp`` export format (``.otlp.json``) and sending to a collector.

:func:`write` is the format's writer (:mod:`durable_nb.share.formats`):
``python -m durable_nb export S -o x.otlp.json`` and ``%durable export
x.otlp.json`` call it. :func:`send_session` is ``--to otlp``. Both stream
the session a turn at a time (:func:`~durable_nb.otlp.spans.session_spans`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .spans import session_spans
from .wire import send, write_jsonl


def write(job: Any, out: Path) -> None:
    """Write ``job.agent``'s session to ``out`` as OTLP/JSON lines (:func:`~durable_nb.otlp.wire.write_jsonl`)."""
    agent = job.agent
    with out.open("wb") as f:
        write_jsonl(session_spans(agent.entries(), agent.session_id), f)


def send_session(agent: Any, url: str | None = None) -> tuple[int, int]:
    """Send ``agent``'s session over OTLP/HTTP (:func:`~durable_nb.otlp.wire.send`); return ``(traces, spans)``.

    Raises :class:`~durable_nb.otlp.wire.CollectorError` in one line when the
    collector is down or refuses (header values never in it)."""
    return send(session_spans(agent.entries(), agent.session_id), url)
