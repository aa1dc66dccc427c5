"""The agent loop through each provider's real SDK against a local server speaking its protocol:
tool definitions out, a streamed call in, the tool run, its result sent back, all persisted."""

from __future__ import annotations

import json
import os
from pathlib import Path

from provider_wire import anthropic_stream, openai_stream

from durable_nb import ai, durable
from durable_nb.session import JsonlStore

CALLS: list[str] = []


def lookup(q: str) -> str:
    """Look a word up in the glossary.

    Args:
        q: the word to look up.
    """
    CALLS.append(q)
    return {"durable": "lasting"}.get(q, f"no entry for {q!r}")


def roles(root: Path) -> list[tuple]:
    """(role, text, is_error) of every message on the reopened session's path, read back from disk."""
    agent = durable.Agent(store=JsonlStore(root), session_id="s")
    return [(e.message.role, e.message.text(), e.message.is_error) for e in agent.path()]


def test_openai_a_tool_using_run_sends_definitions_runs_the_call_and_sends_the_result(wire, tmp_path):
    CALLS.clear()
    wire.add(
        openai_stream(
            ["Looking it up."],
            finish="tool_calls",
            tool_calls=[
                {"id": "call_0", "name": "lookup", "arguments": {"q": "durable"}},
                {"id": "call_1", "name": "lookup", "arguments": '{"q": "sess'},  # malformed: never run
            ],
        ),
        openai_stream(["Durable means lasting."], usage=(80, 6)),
    )
    root = tmp_path / "store"
    agent = durable.Agent(
        model=f"openai:gpt-test@{wire.url}/v1",
        store=JsonlStore(root),
        session_id="s",
        tools=[lookup],
        system="Be terse.",
    )
    agent.settings = {"temperature": 0.2, "max_tokens": 300}
    events = [ev.type for ev in agent.run("Define durable.")]

    assert CALLS == ["durable"]
    assert events.count("tool_start") == 2 and events.count("tool_end") == 2
    first, second = (r.body for r in wire.requests)
    (tool,) = first["tools"]
    assert tool["type"] == "function" and tool["function"]["name"] == "lookup"
    assert tool["function"]["description"].startswith("Look a word up in the glossary.")
    assert tool["function"]["parameters"]["properties"]["q"]["type"] == "string"
    assert tool["function"]["parameters"]["required"] == ["q"]
    assert (first["temperature"], first["max_tokens"]) == (0.2, 300)
    assert first["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Define durable."},
    ]
    assistant, ok, failed = second["messages"][2:5]
    assert assistant["tool_calls"][0] == {
        "id": "call_0",
        "type": "function",
        "function": {"name": "lookup", "arguments": json.dumps({"q": "durable"})},
    }
    assert ok == {"role": "tool", "tool_call_id": "call_0", "content": "lasting"}
    assert failed["role"] == "tool" and failed["tool_call_id"] == "call_1" and "not valid JSON" in failed["content"]
    assert second["messages"][:2] == first["messages"] and len(second["messages"]) == 5

    stored = roles(root)
    assert [r for r, _, _ in stored] == ["system", "user", "assistant", "tool_result", "tool_result", "assistant"]
    assert stored[-1][1] == "Durable means lasting." and stored[-2][2] is True
    last = durable.Agent(store=JsonlStore(root), session_id="s").path()[-1].message
    assert (last.usage, last.stop_reason, last.model) == (
        {"input_tokens": 80, "output_tokens": 6},
        "stop",
        "gpt-test-0001",
    )
    assert last.settings == {"temperature": 0.2, "max_tokens": 300} and last.timing["total_ms"] >= 0


def test_anthropic_thinking_with_tool_use_is_sent_back_in_the_next_step(wire, tmp_path):
    CALLS.clear()
    wire.add(
        anthropic_stream(
            [],
            thinking=(["Look it ", "up."], "sig-EqQB"),
            stop="tool_use",
            tool_use={"id": "toolu_1", "name": "lookup", "input": {"q": "durable"}},
        ),
        anthropic_stream(["Lasting."]),
    )
    root = tmp_path / "store"
    agent = durable.Agent(
        model=f"anthropic:claude-test@{wire.url}",
        store=JsonlStore(root),
        session_id="s",
        tools=[lookup],
        system="Be terse.",
    )
    agent.settings = {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2048}
    agent.run("Define durable.").wait()

    assert CALLS == ["durable"]
    first, second = (r.body for r in wire.requests)
    assert first["system"] == second["system"] == "Be terse."
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 1024} and first["max_tokens"] == 2048
    assert first["tools"][0]["name"] == "lookup" and first["tools"][0]["input_schema"]["required"] == ["q"]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "sig-EqQB"},
                {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "durable"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "lasting"}]}
            ],
        },
    ]
    reopened = durable.Agent(store=JsonlStore(root), session_id="s")
    call = [e.message for e in reopened.path() if e.message.role == "assistant"][0]
    assert call.content[0] == ai.Thinking("Look it up.", "sig-EqQB")


def test_llm_a_tool_using_run_through_llms_tools_api(wire, tmp_path):
    CALLS.clear()
    (Path(os.environ["LLM_USER_PATH"]) / "extra-openai-models.yaml").write_text(
        f"- model_id: wire-test\n  model_name: gpt-test\n  api_base: {wire.url}/v1\n  supports_tools: true\n"
    )
    wire.add(
        openai_stream(
            [], finish="tool_calls", tool_calls=[{"id": "call_0", "name": "lookup", "arguments": {"q": "durable"}}]
        ),
        openai_stream(["Lasting."]),
    )
    root = tmp_path / "store"
    agent = durable.Agent(
        model="llm:wire-test", store=JsonlStore(root), session_id="s", tools=[lookup], system="Be terse."
    )
    agent.run("Define durable.", settings={"temperature": 0.2}).wait()

    assert CALLS == ["durable"]
    first, second = (r.body for r in wire.requests)
    assert first["messages"][0] == {"role": "system", "content": "Be terse."} and first["temperature"] == 0.2
    assert first["tools"][0]["function"]["name"] == "lookup"
    assert second["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"type": "function", "id": "call_0", "function": {"name": "lookup", "arguments": '{"q": "durable"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": "lasting"},
    ]
    assert [r for r, _, _ in roles(root)] == ["system", "user", "assistant", "tool_result", "assistant"]


REPEAT = 'Tool call call_0 (an earlier call has this id): lookup {"q": "session"}'


def test_openai_two_calls_of_one_id_go_back_as_one_call_one_answer_and_text(wire, tmp_path):
    """A reply whose two calls share an id: both run, and the next request holds one call of that id and
    one ``tool`` message for it (the API refuses two of either); the other call and its result go as text."""
    CALLS.clear()
    twice = [{"id": "call_0", "name": "lookup", "arguments": {"q": q}} for q in ("durable", "session")]
    wire.add(
        openai_stream([], finish="tool_calls", tool_calls=twice),
        openai_stream(["Lasting; no entry for session."]),
    )
    agent = durable.Agent(
        model=f"openai:gpt-test@{wire.url}/v1", store=JsonlStore(tmp_path), session_id="s", tools=[lookup]
    )
    agent.run("Define durable and session.").wait()

    assert CALLS == ["durable", "session"]
    assert wire.requests[1].body["messages"] == [
        {"role": "user", "content": "Define durable and session."},
        {
            "role": "assistant",
            "content": REPEAT,
            "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "durable"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": "lasting"},
        {"role": "user", "content": "Result of tool call call_0:\n\nno entry for 'session'"},
    ]
    assert [r for r, _, _ in roles(tmp_path)] == ["user", "assistant", "tool_result", "tool_result", "assistant"]


def test_anthropic_two_calls_of_one_id_go_back_as_one_tool_use_one_result_and_text(wire, tmp_path):
    """The same through the Messages API, which refuses two ``tool_use`` blocks of one id."""
    CALLS.clear()
    twice = [{"id": "call_0", "name": "lookup", "input": {"q": q}} for q in ("durable", "session")]
    wire.add(anthropic_stream([], stop="tool_use", tool_use=twice), anthropic_stream(["Lasting."]))
    agent = durable.Agent(
        model=f"anthropic:claude-test@{wire.url}", store=JsonlStore(tmp_path), session_id="s", tools=[lookup]
    )
    agent.run("Define durable and session.").wait()

    assert CALLS == ["durable", "session"]
    assert wire.requests[1].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": REPEAT},
                {"type": "tool_use", "id": "call_0", "name": "lookup", "input": {"q": "durable"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_0", "content": [{"type": "text", "text": "lasting"}]},
                {"type": "text", "text": "Result of tool call call_0:"},
                {"type": "text", "text": "no entry for 'session'"},
            ],
        },
    ]
