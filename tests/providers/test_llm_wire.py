"""simonw's ``llm``, with its real OpenAI plugin, against a local Chat Completions server.

The model is configured the way an llm user configures a local server: an
entry in ``extra-openai-models.yaml`` in ``$LLM_USER_PATH`` (a temp dir here)
whose ``api_base`` points at the wire server.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from provider_session import (
    FAKE_KEY,
    LAST_TURN,
    build_session,
    chat_messages,
    fail_and_check_the_key_stays_out,
    run_events,
    stored_reply,
)
from provider_wire import openai_error, openai_stream

from durable_nb import ai, durable, models
from durable_nb.errors import ModelError
from durable_nb.session import JsonlStore

PIECES = ["Demain, ", "ce sera ", "mardi."]


def configure(url: str, **extra: str) -> None:
    lines = ["- model_id: wire-test", "  model_name: gpt-test", f"  api_base: {url}/v1", "  vision: true"]
    lines += [f"  {k}: {v}" for k, v in extra.items()]
    (Path(os.environ["LLM_USER_PATH"]) / "extra-openai-models.yaml").write_text("\n".join(lines) + "\n")


def test_a_session_turn_sends_the_exact_request_and_streams_deltas(wire, tmp_path):
    configure(wire.url)
    root = tmp_path / "store"
    agent = build_session(root)
    gate = threading.Event()
    reply = openai_stream(PIECES, pause_after=2, gate=gate)
    wire.add(reply)
    agent.model = "llm:wire-test"

    events = run_events(agent, *LAST_TURN, on_delta=lambda ev: gate.set())

    (req,) = wire.requests
    assert req.path == "/v1/chat/completions"
    assert req.body == {
        "model": "gpt-test",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": chat_messages(agent),
    }
    assert [e.delta for e in events if e.type == "text_delta"] == PIECES
    assert reply.released is True, "the first delta did not reach the agent while the server was still streaming"

    assert stored_reply(root) == (
        "Demain, ce sera mardi.",
        {"input_tokens": 31, "output_tokens": 7},
        "stop",
        "gpt-test-0001",
    )


def test_llm_finds_the_key_itself_and_it_never_reaches_the_store(wire, tmp_path, monkeypatch):
    configure(wire.url, api_key_name="wiretest")  # llm looks the key up: keys.json, then $OPENAI_API_KEY
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    wire.add(
        openai_stream(["Bonjour."]),
        openai_error(401, f"Incorrect API key provided: {FAKE_KEY}.", "invalid_request_error", "invalid_api_key"),
    )
    root = tmp_path / "store"
    agent = durable.Agent(model="llm:wire-test", store=JsonlStore(root))

    message = fail_and_check_the_key_stays_out(agent, root, wire)
    assert message.startswith("llm: 401 authentication failed") and "llm keys set wiretest" in message


def test_unknown_model_and_missing_key_fail_at_build(wire):
    with pytest.raises(ModelError, match="llm:no-such-model: Unknown model: no-such-model — `llm models` lists"):
        models.build("llm:no-such-model")
    configure(wire.url, api_key_name="wiretest")
    with pytest.raises(ModelError, match="llm:wire-test: No key found - add one using 'llm keys set wiretest'"):
        models.build("llm:wire-test")


def test_rate_limit_mid_session_keeps_the_store_consistent(wire, tmp_path):
    configure(wire.url)
    root = tmp_path / "store"
    wire.add(
        openai_stream(["One."]),
        openai_error(429, "Rate limit reached.", "requests", "rate_limit_exceeded", x_should_retry="false"),
        openai_stream(["Three."]),
    )
    agent = durable.Agent(model="llm:wire-test", store=JsonlStore(root), session_id="s")
    agent.run("First").wait()
    with pytest.raises(ModelError, match="^llm: 429 rate limited"):
        agent.run("Second").wait()
    reopened = durable.Agent(model="llm:wire-test", store=JsonlStore(root), session_id="s")
    assert [(m.role, m.text()) for m in reopened.messages()] == [
        ("user", "First"),
        ("assistant", "One."),
        ("user", "Second"),
    ]
    reopened.run("Third").wait()
    assert [m["content"] for m in wire.requests[-1].body["messages"]] == ["First", "One.", "Second", "Third"]


def test_tool_calls_in_a_reply_come_back(wire):
    configure(wire.url)
    wire.add(
        openai_stream([], finish="tool_calls", tool_calls=[{"id": "call_7", "name": "lookup", "arguments": {"q": "x"}}])
    )
    *_, reply = models.build("llm:wire-test").stream([ai.user_message("Look it up")])
    assert reply.tool_calls() == [ai.ToolCall("call_7", "lookup", {"q": "x"})]
    assert reply.stop_reason == "tool_calls"
