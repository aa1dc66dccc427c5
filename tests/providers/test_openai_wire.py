"""The real ``openai`` SDK against a local Chat Completions server (SSE streaming)."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from provider_session import (
    FAKE_KEY,
    LAST_TURN,
    assert_one_line_error,
    build_session,
    chat_messages,
    run_events,
    store_bytes,
    stored_reply,
)
from provider_wire import openai_error, openai_stream

from durable_nb import ai, durable, models
from durable_nb.errors import ModelError
from durable_nb.session import JsonlStore

PIECES = ["Demain, ", "ce sera ", "mardi."]


def test_a_session_turn_sends_the_exact_request_and_streams_deltas(wire, tmp_path):
    root = tmp_path / "store"
    agent = build_session(root)
    gate = threading.Event()
    reply = openai_stream(PIECES, pause_after=2, gate=gate)  # pause after the first piece
    wire.add(reply)
    agent.model = f"openai:gpt-test@{wire.url}/v1"

    events = run_events(agent, *LAST_TURN, on_delta=lambda ev: gate.set())

    (req,) = wire.requests
    assert req.path == "/v1/chat/completions"
    assert req.body == {
        "model": "gpt-test",
        "messages": chat_messages(agent),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert req.headers["authorization"] == "Bearer no-key-needed"  # no OPENAI_API_KEY, own base URL
    assert [e.delta for e in events if e.type == "text_delta"] == PIECES
    assert reply.released is True, "the first delta did not reach the agent while the server was still streaming"

    assert stored_reply(root) == (
        "Demain, ce sera mardi.",
        {"input_tokens": 31, "output_tokens": 7},
        "stop",
        "gpt-test-0001",
    )
    data = store_bytes(root)
    assert b"Answer in French." in data and b"Today is Monday." not in data  # meta kept, ephemeral not

    wire.add(openai_stream(["Merci !"]))
    agent.run("Merci").wait()  # the next run: the meta message again, the ephemeral one no more
    first = chat_messages(agent)
    assert wire.requests[1].body["messages"] == first[:6] + first[7:] + [
        {"role": "assistant", "content": "Demain, ce sera mardi."},
        {"role": "user", "content": "Merci"},
    ]


def test_env_vars_work_unchanged_and_the_key_never_reaches_the_store(wire, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{wire.url}/v1")
    monkeypatch.setenv("DURABLE_NB_MODEL", "openai:gpt-test")
    wire.add(
        openai_stream(["Bonjour."]),
        openai_error(401, f"Incorrect API key provided: {FAKE_KEY}.", "invalid_request_error", "invalid_api_key"),
    )
    root = tmp_path / "store"
    agent = durable.Agent(store=JsonlStore(root))  # model=None: $DURABLE_NB_MODEL

    events = run_events(agent, durable.meta("Be brief."), "Hi")
    with pytest.raises(ModelError) as failed:
        agent.run("Again").wait()

    assert [r.headers["authorization"] for r in wire.requests] == [f"Bearer {FAKE_KEY}"] * 2
    assert agent.path()[-2].message.text() == "Bonjour."
    message = str(failed.value)
    assert "401" in message and "OPENAI_API_KEY" in message and "\n" not in message
    for where in (store_bytes(root).decode(), repr(events), repr(agent.entries()), message, agent.model_name()):
        assert FAKE_KEY not in where


@pytest.mark.parametrize(
    "reply, expected",
    [
        (
            openai_error(401, "Incorrect API key provided: sk-abc.", "invalid_request_error", "invalid_api_key"),
            ["openai: 401 authentication failed", "Incorrect API key provided", "check OPENAI_API_KEY"],
        ),
        (
            openai_error(404, "The model `gpt-nope` does not exist.", "invalid_request_error", "model_not_found"),
            ["openai: 404 model 'gpt-nope' not found", "does not exist", "check the model name"],
        ),
        (
            openai_error(429, "Rate limit reached.", "requests", "rate_limit_exceeded", x_should_retry="false"),
            ["openai: 429 rate limited", "Rate limit reached.", "wait a moment"],
        ),
        (
            openai_error(500, "The server had an error.", "server_error", x_should_retry="false"),
            ["openai: 500 server error", "try again later"],
        ),
    ],
)
def test_provider_errors_become_one_clear_line(wire, reply, expected):
    wire.add(reply)
    assert_one_line_error(f"openai:gpt-nope@{wire.url}/v1", expected)


def test_connection_refused_names_the_server_and_what_to_do():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = models.build(f"openai:llama3.2:3b@http://127.0.0.1:{port}/v1")
    with pytest.raises(ModelError) as failed:
        list(model.stream([ai.user_message("hi")]))
    message = str(failed.value)
    assert message.startswith(f"openai: cannot reach http://127.0.0.1:{port}/v1 (")
    assert "is the server running?" in message and "OPENAI_BASE_URL" in message and "\n" not in message


def test_rate_limit_mid_session_keeps_the_store_consistent(wire, tmp_path):
    root = tmp_path / "store"
    spec = f"openai:gpt-test@{wire.url}/v1"
    limited = openai_error(
        429, "Rate limit reached for gpt-test.", "requests", "rate_limit_exceeded", retry_after_ms="1"
    )
    wire.add(openai_stream(["One."]), limited, limited, limited, openai_stream(["Three."]))
    agent = durable.Agent(model=spec, store=JsonlStore(root), session_id="s")
    agent.run("First").wait()

    with pytest.raises(ModelError, match="^openai: 429 rate limited"):
        agent.run("Second").wait()
    assert len(wire.requests) == 4  # the SDK retried twice, as it does for a 429

    reopened = durable.Agent(model=spec, store=JsonlStore(root), session_id="s")
    assert [(m.role, m.text()) for m in reopened.messages()] == [
        ("user", "First"),
        ("assistant", "One."),
        ("user", "Second"),
    ]  # input kept, no reply stored
    reopened.run("Third").wait()
    assert [m["content"] for m in wire.requests[-1].body["messages"]] == ["First", "One.", "Second", "Third"]
    assert reopened.path()[-1].message.text() == "Three."


def test_an_error_event_mid_stream_stores_no_partial_reply(wire, tmp_path):
    root = tmp_path / "store"
    reply = openai_stream(["Partial "])
    reply.events[2:] = [(None, {"error": {"message": "The model crashed.", "type": "server_error"}})]
    wire.add(reply)
    agent = durable.Agent(model=f"openai:gpt-test@{wire.url}/v1", store=JsonlStore(root), session_id="s")
    stream = agent.run("Go")
    with pytest.raises(ModelError, match="while streaming: The model crashed."):
        stream.wait()
    assert [(m.role, m.text()) for m in durable.Agent(store=JsonlStore(root), session_id="s").messages()] == [
        ("user", "Go")
    ]


def test_a_cut_stream_is_an_error_not_a_short_reply(wire):
    reply = openai_stream(["Half a sen"])
    del reply.events[2:]  # the connection closes with no finish_reason and no [DONE]
    wire.add(reply)
    with pytest.raises(ModelError, match="was cut off after 10 characters, before it finished"):
        list(models.build(f"openai:gpt-test@{wire.url}/v1").stream([ai.user_message("hi")]))


def test_tool_calls_in_a_reply_come_back_and_round_trip(wire, tmp_path):
    wire.add(
        openai_stream(
            [],
            finish="tool_calls",
            tool_calls=[{"id": "call_9", "name": "lookup", "arguments": {"q": "durable sessions", "n": 3}}],
        ),
        openai_stream(["Found it."]),
    )

    def lookup(q: str, n: int) -> str:
        return f"{n} hits"

    agent = durable.Agent(
        model=f"openai:gpt-test@{wire.url}/v1", store=JsonlStore(tmp_path), session_id="s", tools=[lookup]
    )
    agent.run("Look it up").wait()  # the loop runs the call and sends its result back
    call_msg = agent.path()[1].message
    assert call_msg.tool_calls() == [ai.ToolCall("call_9", "lookup", {"q": "durable sessions", "n": 3})]
    assert call_msg.stop_reason == "tool_calls"
    assert agent.path()[-1].message.text() == "Found it."
    sent = wire.requests[-1].body["messages"]
    assert sent[1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": json.dumps({"q": "durable sessions", "n": 3})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": "3 hits"},
    ]


def test_a_base_url_keyword_or_an_own_client_works_too(wire):
    import openai

    from durable_nb.models.openai_chat import OpenAIChat

    wire.add(openai_stream(["a"]), openai_stream(["b"]))
    by_keyword = OpenAIChat("gpt-test", base_url=f"{wire.url}/v1")
    own_client = OpenAIChat("gpt-test", client=openai.OpenAI(base_url=f"{wire.url}/v1", api_key="k", max_retries=0))
    assert [list(m.stream([ai.user_message("hi")]))[0] for m in (by_keyword, own_client)] == ["a", "b"]
    assert [r.headers["authorization"] for r in wire.requests] == ["Bearer no-key-needed", "Bearer k"]


LOOKUP = ai.ToolSpec(
    "lookup",
    "Look a word up in the glossary.",
    {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}, "required": ["q"]},
)
SETTINGS = {"temperature": 0.2, "max_tokens": 300, "top_p": 0.9, "seed": 7, "stop": ["END"], "reasoning_effort": "low"}


def test_system_tools_settings_go_out_and_streamed_calls_and_reasoning_come_back(wire):
    wire.add(
        openai_stream(
            ["Checking ", "both."],
            reasoning=["The user wants ", "two lookups."],
            finish="tool_calls",
            usage=(120, 33),
            tool_calls=[
                {"id": "call_0", "name": "lookup", "arguments": {"q": "durable", "n": 2}},
                {"id": "call_1", "name": "lookup", "arguments": '{"q": "sess'},  # cut short by the model
            ],
        )
    )
    model = models.build(f"openai:gpt-test@{wire.url}/v1")
    request = ai.Request(system="You are terse.", tools=[LOOKUP, ai.ToolSpec("now")], settings=SETTINGS)
    history = [
        ai.user_message("Define durable."),
        ai.Message("assistant", [ai.Thinking("Look it up."), ai.ToolCall("call_0", "lookup", {"q": "durable"})]),
        ai.Message(
            "tool_result",
            [ai.Text("no such word"), ai.Reminder("Be kind.")],
            tool_call_id="call_0",
            tool_name="lookup",
            is_error=True,
        ),
        ai.user_message("Try again, and 'session' too."),
    ]

    *deltas, reply = model.stream(history, request)

    (req,) = wire.requests
    assert req.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Define durable."},
            {
                "role": "assistant",
                "content": None,  # the thinking is not sent back
                "tool_calls": [
                    {
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": "durable"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_0",
                "content": "no such word\n\n<system-reminder>\nBe kind.\n</system-reminder>",
            },
            {"role": "user", "content": "Try again, and 'session' too."},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {"type": "function", "function": {"name": "lookup", **LOOKUP_WIRE}},
            {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}},
        ],
        **SETTINGS,
    }
    assert deltas == ["Checking ", "both."]
    assert reply.content[:3] == [
        ai.Thinking("The user wants two lookups."),
        ai.Text("Checking both."),
        ai.ToolCall("call_0", "lookup", {"q": "durable", "n": 2}),
    ]
    bad = reply.content[3]
    assert (bad.id, bad.name, bad.arguments["_raw"]) == ("call_1", "lookup", '{"q": "sess')
    assert bad.malformed().startswith("the arguments are not valid JSON")
    assert reply.content[2].malformed() is None
    assert (reply.usage, reply.stop_reason, reply.model) == (
        {"input_tokens": 120, "output_tokens": 33},
        "tool_calls",
        "gpt-test-0001",
    )


LOOKUP_WIRE = {"description": LOOKUP.description, "parameters": LOOKUP.parameters}


def test_a_setting_that_would_replace_the_request_is_one_clear_line(wire):
    model = models.build(f"openai:gpt-test@{wire.url}/v1")
    with pytest.raises(ModelError, match="^openai: the setting 'messages' is sent by durable_nb itself"):
        list(model.stream([ai.user_message("hi")], ai.Request(settings={"messages": []})))
    assert wire.requests == []


def test_a_streamed_call_without_an_id_gets_one_its_result_can_answer(wire):
    wire.add(openai_stream([], finish="tool_calls", tool_calls=[{"id": None, "name": "now", "arguments": {}}]))
    *_, reply = models.build(f"openai:local@{wire.url}/v1").stream([ai.user_message("Time?")])
    assert reply.content == [ai.ToolCall("call_0", "now", {})]
