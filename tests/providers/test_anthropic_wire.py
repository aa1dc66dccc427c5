"""The real ``anthropic`` SDK against a local Messages API server (SSE streaming)."""

from __future__ import annotations

import base64
import threading

import pytest
from provider_session import (
    FAKE_KEY,
    LAST_TURN,
    PNG,
    assert_one_line_error,
    build_session,
    fail_and_check_the_key_stays_out,
    run_events,
    stored_reply,
    summary_text,
)
from provider_wire import anthropic_error, anthropic_stream

from durable_nb import ai, durable, models
from durable_nb.errors import ModelError
from durable_nb.session import JsonlStore, MessageEntry

PIECES = ["Demain, ", "ce sera ", "mardi."]


def text(s: str) -> dict:
    return {"type": "text", "text": s}


def expected_messages(agent) -> list[dict]:
    return [
        {
            "role": "user",
            "content": [  # the summary and the next user message, merged into one turn
                text(summary_text(agent)),
                text("What's the weather in Paris?"),
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                text("Let me check."),
                {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": [
                        text("18°C and sunny"),
                        text("<system-reminder>\nThe user wants Celsius.\n</system-reminder>"),
                    ],
                },
            ],
        },
        {"role": "assistant", "content": [text("It is 18°C and sunny in Paris.")]},
        {"role": "user", "content": [text("Answer in French."), text("Today is Monday."), text("And tomorrow?")]},
    ]


def test_a_session_turn_sends_the_exact_request_and_streams_deltas(wire, tmp_path):
    root = tmp_path / "store"
    agent = build_session(root)
    gate = threading.Event()
    reply = anthropic_stream(PIECES, pause_after=4, gate=gate)  # start, block start, ping, first delta | pause
    wire.add(reply)
    agent.model = f"anthropic:claude-test@{wire.url}"

    events = run_events(agent, *LAST_TURN, on_delta=lambda ev: gate.set())

    (req,) = wire.requests
    assert req.path == "/v1/messages"
    assert req.body == {
        "model": "claude-test",
        "max_tokens": 8192,
        "messages": expected_messages(agent),
        "stream": True,
    }
    assert (
        req.headers["authorization"] == "Bearer no-key-needed"
    )  # no key set, own base URL (this SDK sends keys as a bearer)
    assert [e.delta for e in events if e.type == "text_delta"] == PIECES
    assert reply.released is True, "the first delta did not reach the agent while the server was still streaming"

    usage = {"input_tokens": 42, "output_tokens": 9, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    assert stored_reply(root) == ("Demain, ce sera mardi.", usage, "end_turn", "claude-test-20260101")


def test_env_vars_work_unchanged_and_the_key_never_reaches_the_store(wire, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", wire.url)
    wire.add(
        anthropic_stream(["Bonjour."]), anthropic_error(401, "authentication_error", f"invalid x-api-key {FAKE_KEY}")
    )
    root = tmp_path / "store"
    agent = durable.Agent(model="anthropic:claude-test", store=JsonlStore(root))

    message = fail_and_check_the_key_stays_out(agent, root, wire)
    assert message.startswith("anthropic: 401 authentication failed") and "ANTHROPIC_API_KEY" in message


def test_no_key_fails_at_build_before_anything_is_stored(tmp_path):
    agent = durable.Agent(model="anthropic:claude-test", store=JsonlStore(tmp_path), session_id="s")
    with pytest.raises(ModelError, match="needs an API key: set ANTHROPIC_API_KEY"):
        agent.run("Hello")
    assert durable.Agent(store=JsonlStore(tmp_path), session_id="s").entries() == []


@pytest.mark.parametrize(
    "reply, expected",
    [
        (
            anthropic_error(401, "authentication_error", "invalid x-api-key"),
            ["anthropic: 401 authentication failed", "invalid x-api-key", "check ANTHROPIC_API_KEY"],
        ),
        (
            anthropic_error(404, "not_found_error", "model: claude-nope"),
            ["anthropic: 404 model 'claude-nope' not found", "model: claude-nope", "check the model name"],
        ),
        (
            anthropic_error(
                429, "rate_limit_error", "Number of requests has exceeded your rate limit.", x_should_retry="false"
            ),
            ["anthropic: 429 rate limited", "exceeded your rate limit", "wait a moment"],
        ),
        (
            anthropic_error(529, "overloaded_error", "Overloaded", x_should_retry="false"),
            ["anthropic: 529 server error", "Overloaded", "try again later"],
        ),
    ],
)
def test_provider_errors_become_one_clear_line(wire, reply, expected):
    wire.add(reply)
    assert_one_line_error(f"anthropic:claude-nope@{wire.url}", expected)


def test_an_error_event_mid_stream_keeps_the_store_consistent(wire, tmp_path):
    root = tmp_path / "store"
    spec = f"anthropic:claude-test@{wire.url}"
    wire.add(
        anthropic_stream(["Half a ", "reply"], error={"type": "overloaded_error", "message": "Overloaded"}),
        anthropic_stream(["Whole reply."]),
    )
    agent = durable.Agent(model=spec, store=JsonlStore(root), session_id="s")
    events = []
    with pytest.raises(ModelError, match="^anthropic: overloaded_error from .* while streaming: Overloaded"):
        for ev in agent.run("Go"):
            events.append(ev)
    assert events[-1].type == "agent_end" and events[-1].partial == "Half a reply"

    reopened = durable.Agent(model=spec, store=JsonlStore(root), session_id="s")
    assert [(m.role, m.text()) for m in reopened.messages()] == [("user", "Go")]  # no partial reply stored
    reopened.run("Go on").wait()
    assert wire.requests[-1].body["messages"] == [{"role": "user", "content": [text("Go"), text("Go on")]}]
    assert reopened.path()[-1].message.text() == "Whole reply."


def test_tool_use_in_a_reply_comes_back_and_round_trips(wire, tmp_path):
    wire.add(
        anthropic_stream(
            ["Checking."],
            stop="tool_use",
            tool_use={"id": "toolu_1", "name": "lookup", "input": {"q": "durable", "n": 3}},
        ),
        anthropic_stream(["Found it."]),
    )

    def lookup(q: str, n: int) -> str:
        raise LookupError("no hits")

    agent = durable.Agent(
        model=f"anthropic:claude-test@{wire.url}", store=JsonlStore(tmp_path), session_id="s", tools=[lookup]
    )
    agent.run("Look it up").wait()  # the loop runs the call and sends its (failed) result back
    msg = agent.path()[1].message
    assert msg.content == [ai.Text("Checking."), ai.ToolCall("toolu_1", "lookup", {"q": "durable", "n": 3})]
    assert msg.stop_reason == "tool_use"
    assert agent.path()[-1].message.text() == "Found it."
    assert wire.requests[-1].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                text("Checking."),
                {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "durable", "n": 3}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [text("LookupError: no hits")],
                    "is_error": True,
                },
            ],
        },
    ]


LOOKUP = ai.ToolSpec(
    "lookup",
    "Look a word up in the glossary.",
    {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
)


def test_system_tools_settings_go_out_and_thinking_round_trips_through_the_store(wire, tmp_path):
    wire.add(
        anthropic_stream(
            ["Looking ", "both up."],
            thinking=(["The user wants ", "two words."], "sig-EqQBCkYI"),
            redacted="EnCrYpTeD-reasoning",
            stop="tool_use",
            usage=(120, 45),
            tool_use=[
                {"id": "toolu_1", "name": "lookup", "input": {"q": "durable"}},
                {"id": "toolu_2", "name": "lookup", "input": '{"q": "sess'},  # cut short by the model
            ],
        ),
        anthropic_stream(["Both are defined."]),
    )
    model = models.build(f"anthropic:claude-test@{wire.url}")
    request = ai.Request(
        system="You are terse.",
        tools=[LOOKUP, ai.ToolSpec("now")],
        settings={
            "temperature": 0.2,
            "max_tokens": 300,
            "top_p": 0.9,
            "seed": 7,  # the API has none: not sent
            "stop": "END",
            "thinking": {"type": "enabled", "budget_tokens": 1024},  # an extra, sent as it is
        },
    )

    *deltas, reply = model.stream([ai.user_message("Define durable and session.")], request)

    expected_body = {
        "model": "claude-test",
        "max_tokens": 300,
        "system": "You are terse.",
        "tools": [
            {"name": "lookup", "description": LOOKUP.description, "input_schema": LOOKUP.parameters},
            {"name": "now", "input_schema": {"type": "object", "properties": {}}},
        ],
        "temperature": 0.2,
        "top_p": 0.9,
        "stop_sequences": ["END"],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "stream": True,
    }
    assert wire.requests[0].body == {
        **expected_body,
        "messages": [{"role": "user", "content": [text("Define durable and session.")]}],
    }
    assert deltas == ["Looking ", "both up."]
    assert reply.content[:4] == [
        ai.Thinking("The user wants two words.", "sig-EqQBCkYI"),
        ai.Thinking(redacted="EnCrYpTeD-reasoning"),
        ai.Text("Looking both up."),
        ai.ToolCall("toolu_1", "lookup", {"q": "durable"}),
    ]
    bad = reply.content[4]
    assert (bad.id, bad.arguments["_raw"]) == ("toolu_2", '{"q": "sess') and "not valid JSON" in bad.malformed()
    usage = {"input_tokens": 120, "output_tokens": 45, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    assert (reply.usage, reply.stop_reason, reply.model) == (usage, "tool_use", "claude-test-20260101")

    # Stored, reopened, and sent back: the thinking blocks with their signature, as the API requires.
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    agent.append(
        "Define durable and session.",
        MessageEntry(message=reply),
        MessageEntry(
            message=ai.Message("tool_result", [ai.Text("lasting")], tool_call_id="toolu_1", tool_name="lookup")
        ),
        MessageEntry(
            message=ai.Message(
                "tool_result", [ai.Text(bad.malformed())], tool_call_id="toolu_2", tool_name="lookup", is_error=True
            )
        ),
    )
    reopened = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    *_, final = model.stream(reopened.messages(), request)
    assert final.text() == "Both are defined."
    assert wire.requests[1].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "The user wants two words.", "signature": "sig-EqQBCkYI"},
                {"type": "redacted_thinking", "data": "EnCrYpTeD-reasoning"},
                text("Looking both up."),
                {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "durable"}},
                {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": bad.arguments},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [text("lasting")]},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": [text(bad.malformed())], "is_error": True},
            ],
        },
    ]


def test_unsigned_reasoning_from_another_provider_is_not_sent_to_anthropic():
    from durable_nb.models.anthropic_messages import to_anthropic

    m = ai.Message("assistant", [ai.Thinking("local model musings"), ai.Text("Hi.")])
    assert to_anthropic([ai.user_message("Hello"), m]) == [
        {"role": "user", "content": [text("Hello")]},
        {"role": "assistant", "content": [text("Hi.")]},
    ]
