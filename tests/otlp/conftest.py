"""Sessions to export and a fake OTLP/HTTP collector (a thread of this process) for tests/otlp."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from durable_nb import ai, durable


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def scripted(messages):
    """A model that calls ``add`` when asked to add, else answers; usage and a stop reason on each reply."""
    last = messages[-1]
    if last.role == "user" and "add" in last.text():
        return ai.Message(
            role="assistant",
            content=[ai.Text("adding"), ai.ToolCall("c1", "add", {"a": 2, "b": 3})],
            usage={"input_tokens": 11, "output_tokens": 3},
            stop_reason="tool_use",
            model="fake-1",
        )
    return ai.Message(
        role="assistant",
        content=[ai.Text(f"answer to {last.text()[:40]}")],
        usage={"input_tokens": 20, "output_tokens": 5},
        stop_reason="end_turn",
        model="fake-1",
    )


@pytest.fixture
def session() -> durable.Agent:
    """Two branches: (system, meta, ephemeral, "please add" -> call -> result -> answer, "thanks" -> answer)
    and a sibling of "thanks" ("other" -> answer); a label on the first branch's end."""
    a = durable.Agent(scripted, tools=[add], system="be terse", session_id="otlp-s")
    a.run(durable.meta("skill body", origin="cell:skill"), durable.ephemeral("now: 12:00"), "please add").wait()
    fork = a.leaf_id
    a.run("thanks").wait()
    a.label("first")
    a.branch(fork)
    a.run("other").wait()
    return a


@dataclass
class Collector:
    """What the fake collector received: one ``(path, headers, body)`` per request; ``status`` it answers."""

    url: str
    status: int = 200
    requests: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)


@pytest.fixture
def collector() -> Iterator[Collector]:
    """An OTLP/HTTP collector on 127.0.0.1 in a thread, answering ``collector.status``."""
    got: Collector = Collector("")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            got.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(got.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    got.url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield got
    server.shutdown()
    server.server_close()


@pytest.fixture
def closed_port() -> str:
    """A URL on 127.0.0.1 where nothing listens (the port was free a moment ago)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1/traces"


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory) -> Iterator[tuple]:
    """``(venv, base URL)`` of a real Phoenix server on 127.0.0.1, stopped after the module (marks a test
    ``slow``: tests/markers.py). The first run makes Phoenix's own environment (tests/otlp/phoenix_server.py)."""
    import phoenix_server

    root = phoenix_server.venv()
    proc, base = phoenix_server.start(root, tmp_path_factory.mktemp("phoenix"))
    try:
        yield root, base
    finally:
        phoenix_server.stop(proc)
