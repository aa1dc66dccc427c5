"""Live tracing: each turn sent to an OTLP/HTTP collector as it ends, from a thread of its own.

    from durable_nb.otlp.live import OtlpPublisher
    trace = OtlpPublisher(agent, "http://127.0.0.1:6006/v1/traces")
    for ev in agent.run("hello"):
        trace(ev)                     # at agent_end the turn is queued and sent
    agent.replay(on_event=trace)      # a replay's turns too
    trace.close()                     # waits for what is queued (at most a few seconds)

Each turn is its own trace (its ``invoke_agent`` span the root,
:func:`~durable_nb.otlp.spans.turn_spans`), grouped by
``gen_ai.conversation.id`` / ``session.id``. The spans are made in the
caller's thread when the turn ends (O(the turn's requests)); encoding and the
POST happen in the publisher's thread, so a slow or absent collector never
holds a turn up. A collector that is down costs one warning line (on
``warn``, stderr by default) until a send succeeds again; a turn is never
failed by it.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ..durable.events import Event
from ..durable.tools import as_tools
from .spans import AGENT, SpanRecord, turn_spans
from .wire import CollectorError, encode, endpoint, headers, post, shown


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


class OtlpPublisher:
    """Sends each turn of ``agent`` (or of the agent :meth:`turn` is given) to ``url`` (else the
    ``OTEL_EXPORTER_OTLP_*`` endpoint, see :func:`~durable_nb.otlp.wire.endpoint`) as it ends.

    Call it with a run's events (``agent_end`` triggers a send; other events
    are ignored), or call :meth:`turn` yourself. ``sent`` and ``failed`` count
    turns; ``last_error`` is the last failure's line. Raises
    :class:`~durable_nb.errors.DurableError` at construction for an endpoint
    that is not http(s) or a missing SDK (checked once, up front).
    """

    def __init__(
        self,
        agent: Any = None,
        url: str | None = None,
        agent_name: str = AGENT,
        warn: Callable[[str], object] = _stderr,
        timeout: float | None = None,
    ) -> None:
        self.agent = agent
        self.url = endpoint(url)
        self.agent_name = agent_name
        self.warn = warn
        self.timeout = timeout
        self._headers = headers()
        encode([])  # the SDK is there (else: one line, now, not at the first turn)
        self.sent = 0
        self.failed = 0
        self.last_error = ""
        self._down = False
        self._queue: queue.Queue[list[SpanRecord] | threading.Event | None] = queue.Queue()
        self._thread = threading.Thread(target=self._send_loop, name="durable_nb-otlp", daemon=True)
        self._thread.start()

    @property
    def where(self) -> str:
        """The endpoint as it may be printed (:func:`~durable_nb.otlp.wire.shown`)."""
        return shown(self.url)

    def __call__(self, ev: Event) -> None:
        """Queue the turn an ``agent_end`` event ends (of :attr:`agent`); ignore any other event."""
        if ev.type == "agent_end" and self.agent is not None:
            self.turn(self.agent, ev.leaf_id)

    def turn(self, agent: Any, leaf_id: str | None = None, tools: Iterable[Any] | None = None) -> None:
        """Queue the last turn of ``agent``'s path to ``leaf_id`` (default: its leaf) for sending, with
        the tool definitions of ``tools`` (default: ``agent.tools``). Never raises for the collector's sake."""
        try:
            specs = [t.spec() for t in as_tools(agent.tools if tools is None else tools)]
        except Exception:  # noqa: BLE001 - a tool list that changed under us: send without definitions
            specs = []
        spans = turn_spans(agent.entries(), agent.session_id, leaf_id or agent.leaf_id, self.agent_name, specs or None)
        if spans:
            self._queue.put(spans)

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every queued turn was sent or failed (at most ``timeout`` seconds); return whether it got there."""
        done = threading.Event()
        self._queue.put(done)  # the thread sets it when it gets there
        return done.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Send what is queued (waiting at most ``timeout`` seconds), then stop the thread."""
        self.flush(timeout)
        self._queue.put(None)

    def _send_loop(self) -> None:
        while True:
            spans = self._queue.get()
            if spans is None:
                return
            if isinstance(spans, threading.Event):
                spans.set()
                continue
            try:
                post(encode(spans).SerializeToString(), self.url, self._headers, self.timeout)
            except CollectorError as e:
                self.failed += 1
                self.last_error = str(e)
                if not self._down:
                    self._down = True
                    self.warn(f"warning: trace not sent: {e} (the turn is saved; later turns are tried again)")
            except Exception as e:  # noqa: BLE001 - never let the sender die: the turn is stored anyway
                self.failed += 1
                self.last_error = f"{type(e).__name__}: {e}"
                if not self._down:
                    self._down = True
                    self.warn(f"warning: trace not sent: {self.last_error}")
            else:
                self.sent += 1
                self._down = False
