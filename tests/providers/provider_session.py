"""The session every provider test sends, and helpers to check what reached the store."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from durable_nb import ai, durable, models
from durable_nb.errors import ModelError
from durable_nb.session import CompactionEntry, JsonlStore, MessageEntry
from durable_nb.session.view import SUMMARY_PREFIX

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01"
FAKE_KEY = "sk-durable-test-7f3a9c1e5b2d4608-not-a-real-key"


def build_session(root: Path) -> durable.Agent:
    """Return an agent on a JSONL store holding every kind of model input, built with the offline model.

    Turn 1 ("Hello") is compacted away; turn 2 is kept: a user message with
    an image, an assistant tool call, a tool result carrying a Reminder
    block, and the assistant's answer. Tests then switch the model and run
    :data:`LAST_TURN` (meta + ephemeral + text).
    """
    agent = durable.Agent(store=JsonlStore(root), session_id="s1")
    agent.run("Hello").wait()
    agent.append(
        durable.image("What's the weather in Paris?", ai.Image(PNG, "image/png")),
        MessageEntry(
            message=ai.Message(
                "assistant", [ai.Text("Let me check."), ai.ToolCall("call_1", "get_weather", {"city": "Paris"})]
            )
        ),
        MessageEntry(
            message=ai.Message(
                "tool_result",
                [ai.Text("18°C and sunny"), ai.Reminder("The user wants Celsius.")],
                tool_call_id="call_1",
                tool_name="get_weather",
            )
        ),
        MessageEntry(message=ai.assistant_message("It is 18°C and sunny in Paris.")),
    )
    assert agent.compact(keep_turns=1) is not None
    return agent


LAST_TURN = (
    durable.meta("Answer in French.", origin="skill:fr"),
    durable.ephemeral("Today is Monday.", origin="cell:c1"),
    durable.text("And tomorrow?"),
)


def summary_text(agent: durable.Agent) -> str:
    """Return the user-message text the latest compaction on the agent's path stands for."""
    entry = [e for e in agent.path() if isinstance(e, CompactionEntry)][-1]
    return SUMMARY_PREFIX + entry.summary


def run_events(agent: durable.Agent, *entries, on_delta=None) -> list:
    """Run a turn, calling ``on_delta(event)`` at each text delta; return all events."""
    events = []
    for ev in agent.run(*entries):
        events.append(ev)
        if ev.type == "text_delta" and on_delta is not None:
            on_delta(ev)
    return events


def store_bytes(root: Path) -> bytes:
    """Return every byte of every file under ``root``."""
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def stored_reply(root: Path, session_id: str = "s1") -> tuple:
    """Return (text, usage, stop_reason, model) of the last entry of ``session_id``, read back from disk."""
    m = durable.Agent(store=JsonlStore(root), session_id=session_id).path()[-1].message
    return m.text(), m.usage, m.stop_reason, m.model


def fail_and_check_the_key_stays_out(agent: durable.Agent, root: Path, wire) -> str:
    """Run a good turn, then one the server refuses (401 quoting the key): the key went out in
    both requests and appears in nothing kept or shown. Returns the failure's one-line message."""
    events = run_events(agent, durable.meta("Be brief."), "Hi")
    with pytest.raises(ModelError) as failed:
        agent.run("Again").wait()
    assert [r.headers["authorization"] for r in wire.requests] == [f"Bearer {FAKE_KEY}"] * 2
    message = str(failed.value)
    for where in (store_bytes(root).decode(), repr(events), repr(agent.entries()), message, agent.model_name()):
        assert FAKE_KEY not in where
    return message


def chat_messages(agent: durable.Agent) -> list[dict]:
    """Return the Chat Completions ``messages`` the session of :func:`build_session` plus
    :data:`LAST_TURN` becomes (what the openai SDK and llm's OpenAI plugin both send)."""
    return [
        {"role": "user", "content": summary_text(agent)},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What's the weather in Paris?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}},
            ],
        },
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "18°C and sunny\n\n<system-reminder>\nThe user wants Celsius.\n</system-reminder>",
        },
        {"role": "assistant", "content": "It is 18°C and sunny in Paris."},
        {"role": "user", "content": "Answer in French."},
        {"role": "user", "content": "Today is Monday."},
        {"role": "user", "content": "And tomorrow?"},
    ]


def assert_one_line_error(spec: str, pieces: list[str]) -> None:
    """Assert that streaming from model ``spec`` raises a one-line ModelError holding every piece,
    with no chained cause (a cause could quote the key back)."""
    model = models.build(spec)
    with pytest.raises(ModelError) as failed:
        list(model.stream([ai.user_message("hi")]))
    message = str(failed.value)
    assert "\n" not in message and failed.value.__cause__ is None
    for piece in pieces:
        assert piece in message
