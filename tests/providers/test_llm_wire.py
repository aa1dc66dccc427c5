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


LOOKUP = ai.ToolSpec(
    "lookup", "Look a word up.", {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
)


def test_system_tools_and_options_go_out_through_llm_and_streamed_calls_come_back(wire):
    configure(wire.url, supports_tools="true")
    wire.add(
        openai_stream(
            ["Checking."],
            finish="tool_calls",
            tool_calls=[{"id": "call_0", "name": "lookup", "arguments": {"q": "durable"}}],
        ),
        openai_stream(
            [],
            finish="tool_calls",
            tool_calls=[
                {"id": "call_0", "name": "lookup", "arguments": {"q": "durable"}},
                {"id": "call_1", "name": "lookup", "arguments": '{"q": "sess'},  # cut short by the model
            ],
        ),
    )
    model = models.build("llm:wire-test")
    request = ai.Request(
        system="You are terse.",
        tools=[LOOKUP],
        settings={"temperature": 0.2, "max_tokens": 300, "top_p": 0.9, "seed": 7, "stop": "END"},
    )
    history = [
        ai.user_message("Define durable."),
        ai.Message("assistant", [ai.ToolCall("call_9", "lookup", {"q": "durable"})]),
        ai.Message("tool_result", [ai.Text("no such word")], tool_call_id="call_9", tool_name="lookup", is_error=True),
        ai.user_message("Try again."),
    ]

    *deltas, reply = model.stream(history, request)

    assert wire.requests[0].body == {
        "model": "gpt-test",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Define durable."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "type": "function",
                        "id": "call_9",
                        "function": {"name": "lookup", "arguments": '{"q": "durable"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_9", "content": "no such word"},
            {"role": "user", "content": "Try again."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "lookup", "description": "Look a word up.", "parameters": LOOKUP.parameters},
            }
        ],
        "temperature": 0.2,
        "max_tokens": 300,
        "top_p": 0.9,
        "seed": 7,
        "stop": "END",
    }
    assert deltas == ["Checking."]
    assert reply.content == [ai.Text("Checking."), ai.ToolCall("call_0", "lookup", {"q": "durable"})]
    assert (reply.usage, reply.stop_reason) == ({"input_tokens": 31, "output_tokens": 7}, "tool_calls")

    # llm's OpenAI plugin raises on arguments it cannot parse: the call is kept, raw.
    *_, broken = model.stream(history, request)
    assert broken.content[0] == ai.ToolCall("call_0", "lookup", {"q": "durable"})
    assert broken.content[1].arguments["_raw"] == '{"q": "sess' and "not valid JSON" in broken.content[1].malformed()


def test_a_setting_the_llm_model_refuses_is_one_line_naming_its_options(wire):
    configure(wire.url)
    model = models.build("llm:wire-test")
    for settings, said in [
        ({"temperature": "hot"}, "temperature: Input should be a valid number"),
        ({"warmth": 1}, "warmth: Extra inputs"),
    ]:
        with pytest.raises(ModelError) as failed:
            list(model.stream([ai.user_message("hi")], ai.Request(settings=settings)))
        message = str(failed.value)
        assert message.startswith(f"llm:wire-test: bad setting ({said}") and "\n" not in message
        assert "this model's options: temperature, max_tokens, top_p" in message
    assert wire.requests == []


def test_a_broken_event_mid_stream_is_an_error_not_a_short_reply(wire, tmp_path):
    configure(wire.url)
    reply = openai_stream(["Half a ", "reply"])
    reply.events[3:] = [(None, "this is not JSON")]
    wire.add(reply)
    agent = durable.Agent(model="llm:wire-test", store=JsonlStore(tmp_path), session_id="s")
    with pytest.raises(ModelError) as failed:
        agent.run("Go").wait()
    assert "\n" not in str(failed.value)
    reopened = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    assert [m.role for m in reopened.messages()] == ["user"]  # no partial reply stored
