"""A local HTTP server that speaks the providers' wire protocols, for the SDKs to talk to.

:class:`WireServer` listens on 127.0.0.1 (a free port), records every
request (path, headers, parsed JSON body) and answers each with the next
scripted :class:`Reply`: a JSON body with a status, or a Server-Sent-Events
stream written event by event. A reply can pause its stream after some
events until the test releases a gate, which proves that deltas reach the
caller while the server is still sending.

The event builders write exactly what OpenAI's Chat Completions
(``chat.completion.chunk`` ... ``[DONE]``) and Anthropic's Messages API
(``message_start`` ... ``message_stop``) send.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GATE_TIMEOUT = 5.0


@dataclass
class Reply:
    """One scripted answer: ``events`` (SSE ``(event, data)`` pairs) or a JSON ``body``."""

    status: int = 200
    body: Any = None
    events: list[tuple[str | None, Any]] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    pause_after: int | None = None  # pause after this many events ...
    gate: threading.Event | None = None  # ... until this is set
    released: bool | None = None  # whether the gate was set in time


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class WireServer:
    """A threaded HTTP server on 127.0.0.1:<free port>; use as a context manager."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.replies: deque[Reply] = deque()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append(
                    Request(
                        "POST",
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        json.loads(raw) if raw else None,
                    )
                )
                reply = (
                    outer.replies.popleft()
                    if outer.replies
                    else Reply(500, {"error": {"message": "no scripted reply left", "type": "test_error"}})
                )
                if reply.events is None:
                    data = json.dumps(reply.body).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.close_connection = True
                for i, (event, data) in enumerate(reply.events):
                    if reply.pause_after is not None and i == reply.pause_after and reply.gate is not None:
                        reply.released = reply.gate.wait(GATE_TIMEOUT)
                    text = data if isinstance(data, str) else json.dumps(data)
                    frame = (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
                    self.wfile.write(frame.encode())
                    self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def add(self, *replies: Reply) -> WireServer:
        self.replies.extend(replies)
        return self

    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def __enter__(self) -> WireServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


# -- OpenAI Chat Completions --------------------------------------------------


def openai_stream(
    pieces: list[str],
    *,
    model: str = "gpt-test-0001",
    finish: str = "stop",
    usage: tuple[int, int] = (31, 7),
    tool_calls: list[dict[str, Any]] | None = None,
    reasoning: list[str] | None = None,
    pause_after: int | None = None,
    gate: threading.Event | None = None,
) -> Reply:
    """Return a streamed Chat Completions reply: a role chunk, one ``reasoning_content``
    chunk per reasoning piece (as vLLM, DeepSeek and llama.cpp stream it), one chunk per piece,
    tool-call chunks (name first, then the arguments in two halves; ``arguments`` given as a
    string is sent as it is, malformed or not), the finish chunk, the usage chunk
    (``stream_options.include_usage``) and ``[DONE]``."""

    def chunk(delta: dict[str, Any] | None, finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
        choices = (
            [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]
        )
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1764475200,
            "model": model,
            "system_fingerprint": "fp_test",
            "choices": choices,
            **extra,
        }

    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
    events += [(None, chunk({"reasoning_content": p})) for p in reasoning or []]
    events += [(None, chunk({"content": p})) for p in pieces]
    for i, call in enumerate(tool_calls or []):
        args = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
        half = len(args) // 2
        events.append(
            (
                None,
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": call["id"],
                                "type": "function",
                                "function": {"name": call["name"], "arguments": ""},
                            }
                        ]
                    }
                ),
            )
        )
        for part in (args[:half], args[half:]):
            events.append((None, chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})))
    events.append((None, chunk({}, finish)))
    events.append(
        (
            None,
            chunk(
                None,
                usage={"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": usage[0] + usage[1]},
            ),
        )
    )
    events.append((None, "[DONE]"))
    return Reply(events=events, pause_after=pause_after, gate=gate)


def openai_error(status: int, message: str, type_: str, code: str | None = None, **headers: str) -> Reply:
    """Return an OpenAI-style error reply (``{"error": {...}}``)."""
    return Reply(
        status,
        {"error": {"message": message, "type": type_, "param": None, "code": code}},
        headers={k.replace("_", "-"): v for k, v in headers.items()},
    )


# -- Anthropic Messages -------------------------------------------------------


def anthropic_stream(
    pieces: list[str],
    *,
    model: str = "claude-test-20260101",
    stop: str = "end_turn",
    usage: tuple[int, int] = (42, 9),
    tool_use: dict[str, Any] | list[dict[str, Any]] | None = None,
    thinking: tuple[list[str], str] | None = None,
    redacted: str | None = None,
    error: dict[str, Any] | None = None,
    pause_after: int | None = None,
    gate: threading.Event | None = None,
) -> Reply:
    """Return a streamed Messages reply: ``message_start``; with ``thinking`` = (pieces,
    signature) a ``thinking`` block (one ``thinking_delta`` per piece, then a
    ``signature_delta``); with ``redacted`` a ``redacted_thinking`` block; a text block
    with one ``text_delta`` per piece; ``tool_use`` blocks (``input_json_delta`` in two
    halves; ``input`` given as a string is sent as it is, malformed or not);
    ``message_delta`` (stop reason, output tokens), ``message_stop``.
    With ``error``, the stream ends after the text deltas with an ``error`` event."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage[0],
                "output_tokens": 1,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        },
    }
    events: list[tuple[str | None, Any]] = [("message_start", start)]
    index = 0

    def block_start(block: dict[str, Any]) -> None:
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))

    def delta(d: dict[str, Any]) -> None:
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}))

    def block_stop() -> None:
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))

    if thinking is not None:
        block_start({"type": "thinking", "thinking": "", "signature": ""})
        for p in thinking[0]:
            delta({"type": "thinking_delta", "thinking": p})
        delta({"type": "signature_delta", "signature": thinking[1]})
        block_stop()
        index += 1
    if redacted is not None:
        block_start({"type": "redacted_thinking", "data": redacted})
        block_stop()
        index += 1
    block_start({"type": "text", "text": ""})
    events.append(("ping", {"type": "ping"}))
    for p in pieces:
        delta({"type": "text_delta", "text": p})
    if error is not None:
        events.append(("error", {"type": "error", "error": error}))
        return Reply(events=events, pause_after=pause_after, gate=gate)
    block_stop()
    for call in [tool_use] if isinstance(tool_use, dict) else tool_use or []:
        index += 1
        args = call["input"] if isinstance(call["input"], str) else json.dumps(call["input"])
        half = len(args) // 2
        block_start({"type": "tool_use", "id": call["id"], "name": call["name"], "input": {}})
        for part in (args[:half], args[half:]):
            delta({"type": "input_json_delta", "partial_json": part})
        block_stop()
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage[1]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return Reply(events=events, pause_after=pause_after, gate=gate)


def anthropic_error(status: int, type_: str, message: str, **headers: str) -> Reply:
    """Return an Anthropic-style error reply (``{"type": "error", "error": {...}}``)."""
    return Reply(
        status,
        {"type": "error", "error": {"type": type_, "message": message}},
        headers={k.replace("_", "-"): v for k, v in headers.items()},
    )
