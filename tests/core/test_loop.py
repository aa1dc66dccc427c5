"""The agent loop through the public API: tools, receipts, errors, interrupts, reminders, system prompt, settings."""

from __future__ import annotations

import asyncio
import enum
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from durable_nb import ai, durable
from durable_nb.errors import DurableError
from durable_nb.session import JsonlStore, MessageEntry, display_text, model_view, transcript_view
from tests.support import child_env


def add(a: int, b: int = 1) -> int:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


async def weather(city: str, unit: Unit = Unit.C) -> dict:
    """Return the weather in a city."""
    await asyncio.sleep(0)
    return {"city": city, "temp": 21, "unit": unit.value}


def script(*replies):
    """A callable model that returns the given replies in order (ai.Message or str)."""
    seen = []

    def model(messages, request=None):
        seen.append((list(messages), request))
        return replies[len(seen) - 1]

    model.seen = seen
    return model


def calls(*pairs):
    return ai.Message("assistant", [ai.ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(pairs)])


# -- tools --------------------------------------------------------------------------------------


def test_a_tool_schema_comes_from_the_signature_hints_and_docstring():
    spec = durable.Tool(add).spec()
    assert spec == ai.ToolSpec(
        "add",
        "Add two numbers.",
        {
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "the first number"},
                "b": {"type": "integer", "description": "the second number", "default": 1},
            },
            "required": ["a"],
            "additionalProperties": False,
        },
    )
    w = durable.Tool(weather).parameters
    assert w["properties"]["unit"]["default"] == "celsius" and w["required"] == ["city"]
    assert w["$defs"]["Unit"]["enum"] == ["celsius", "fahrenheit"]
    assert durable.Tool(weather)({"city": "Oslo", "unit": "fahrenheit"}) == {
        "city": "Oslo",
        "temp": 21,
        "unit": "fahrenheit",
    }


def test_what_cannot_be_a_tool_says_so_in_one_line():
    with pytest.raises(durable.ToolError, match=r"^3 is not callable"):
        durable.Agent(tools=[3])

    def bad(sock: socket.socket, n: int) -> None: ...

    with pytest.raises(
        durable.ToolError, match=r"^tool bad: the type of parameter 'sock' \(socket\) cannot be described"
    ):
        durable.Agent(tools=[bad])

    def star(*names: str) -> None: ...

    with pytest.raises(durable.ToolError, match=r"parameter \*names cannot be described"):
        durable.Tool(star)
    with pytest.raises(durable.ToolError, match="not a valid tool name"):
        durable.Tool(lambda x: x)
    assert durable.Tool(lambda x: x, name="echo").name == "echo"
    with pytest.raises(durable.ToolError, match="two tools are named 'add'"):
        durable.Agent(tools=[add, durable.Tool(weather, name="add")])


def test_a_run_with_two_tool_calls_persists_each_message_in_order_with_a_receipt(tmp_path):
    model = script(calls(("add", {"a": 2, "b": 3}), ("weather", {"city": "Oslo"})), "Done.")
    agent = durable.Agent(model=model, store=JsonlStore(tmp_path), session_id="s", tools=[add, weather])
    events = list(agent.run("Go"))
    kinds = [(ev.type, ev.message.role if ev.message else ev.call.name if ev.call else "") for ev in events]
    assert kinds == [
        ("agent_start", ""),
        ("message_end", "assistant"),
        ("tool_start", "add"),
        ("message_end", "tool_result"),
        ("tool_end", "add"),
        ("tool_start", "weather"),
        ("message_end", "tool_result"),
        ("tool_end", "weather"),
        ("text_delta", ""),
        ("message_end", "assistant"),
        ("agent_end", ""),
    ]
    receipts = [e for ev in events if ev.type in ("agent_start", "message_end") for e in ev.entries]
    stored = JsonlStore(tmp_path).load_entries("s")
    assert [e.id for e in stored] == [e.id for e in receipts]
    assert [display_text(e) for e in stored] == ["Go", "", "5", '{"city":"Oslo","temp":21,"unit":"celsius"}', "Done."]
    assert [e.parent_id for e in stored[1:]] == [e.id for e in stored[:-1]]  # one chain
    end = [ev for ev in events if ev.type == "tool_end"]
    assert end[0].result.tool_call_id == "c0" and end[0].result.is_error is False and end[0].duration_ms >= 0
    assert end[0].result.timing == {"duration_ms": end[0].duration_ms}
    # the second model call saw both results, and was told about both tools
    messages, request = model.seen[1]
    assert [m.role for m in messages] == ["user", "assistant", "tool_result", "tool_result"]
    assert [t.name for t in request.tools] == ["add", "weather"]
    assert events[-1].stop_reason == "" and events[-1].messages[-1].text() == "Done."


def test_failures_inside_a_call_become_error_results_and_the_run_goes_on():
    def boom(x: int) -> None:
        raise ValueError("no such x")

    bad_json = ai.ToolCall("c9", "add", ai.tool_arguments('{"a": 1,'))
    model = script(
        ai.Message(
            "assistant",
            [
                ai.ToolCall("c1", "boom", {"x": 1}),
                ai.ToolCall("c2", "add", {"a": "two"}),
                ai.ToolCall("c3", "nope", {}),
                bad_json,
                ai.ToolCall("c4", "add", {"a": 1, "zzz": 2}),
            ],
        ),
        "ok",
    )
    agent = durable.Agent(model=model, tools=[boom, add])
    out = agent.run("Go").wait()
    results = [(m.tool_call_id, m.is_error, m.text()) for m in out if m.role == "tool_result"]
    assert results[0] == ("c1", True, "ValueError: no such x")
    assert results[1][1] and results[1][2].startswith("invalid arguments for add: a: Input should be a valid integer")
    assert results[2] == ("c3", True, "unknown tool 'nope'; the tools are: add, boom")
    assert results[3][1] and results[3][2].startswith(
        "the arguments of add could not be read: the arguments are not valid JSON"
    )
    assert results[4][1] and "zzz: Extra inputs are not permitted" in results[4][2]
    assert out[-1].text() == "ok"
    assert len(agent.path()) == 8  # user, assistant, five results, assistant


def test_max_steps_stops_the_run_and_says_so():
    def again(messages):
        return calls(("add", {"a": len(messages)}))

    agent = durable.Agent(model=again, tools=[add], max_steps=3)
    stream = agent.run("loop forever")
    out = stream.wait()
    assert stream.stop_reason == "max_steps"
    assert [m.role for m in out] == ["assistant", "tool_result"] * 3  # the last calls still ran: nothing dangles
    with pytest.raises(DurableError, match="max_steps"):
        durable.Agent(max_steps=0)


def test_a_plain_callable_model_and_an_old_stream_model_both_loop():
    class Old:
        name = "old"

        def __init__(self):
            self.n = 0

        def stream(self, messages):  # no request parameter: still works, gets no request
            self.n += 1
            yield calls(("add", {"a": 41})) if self.n == 1 else ai.assistant_message(messages[-1].text())

    agent = durable.Agent(model=Old(), tools=[add])
    assert agent.run("x").wait()[-1].text() == "42"


# -- interrupts, crashes, repair -----------------------------------------------------------------


def test_an_interrupt_during_a_tool_keeps_what_was_acknowledged_and_the_next_run_repairs(tmp_path):
    def hang(seconds: float) -> str:
        raise KeyboardInterrupt  # what the kernel's Stop raises inside a running tool

    agent = durable.Agent(
        model=script(calls(("hang", {"seconds": 60})), "after"),
        store=JsonlStore(tmp_path),
        session_id="s",
        tools=[hang],
    )
    events = []
    with pytest.raises(KeyboardInterrupt):
        for ev in agent.run("Start"):
            events.append(ev)
    assert events[-1].type == "agent_end" and isinstance(events[-1].error, KeyboardInterrupt)
    stored = JsonlStore(tmp_path).load_entries("s")
    assert [e.message.role for e in stored] == ["user", "assistant"]  # every acknowledged message, no result

    for fresh in (agent, durable.Agent(store=JsonlStore(tmp_path), session_id="s")):
        view = fresh.preview("Go on")
        assert [(m.role, m.is_error) for m in view] == [
            ("user", False),
            ("assistant", False),
            ("tool_result", True),
            ("user", False),
        ]
        assert view[2].tool_call_id == "c0" and "interrupted" in view[2].text()


def test_a_dangling_call_whose_id_was_answered_earlier_is_repaired():
    agent = durable.Agent(model=script(calls(("add", {"a": 1})), "first", calls(("add", {"a": 2})), "x"), tools=[add])
    agent.run("one").wait()  # c0 answered
    agent.append(MessageEntry(message=calls(("add", {"a": 2}))))  # c0 again, never answered (a crash)
    view = agent.preview("two")
    assert [m.role for m in view] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "assistant",
        "tool_result",
        "user",
    ]
    assert view[-2].is_error and view[-2].tool_call_id == "c0"
    assert model_view(agent.path() + [MessageEntry(message=ai.user_message("two"))]) == view


def test_sigkill_during_a_tool_leaves_a_loadable_store_and_the_next_run_repairs(tmp_path):
    child = textwrap.dedent(
        f"""
        import os, sys, time
        from durable_nb import ai, durable
        from durable_nb.session import JsonlStore

        def slow(n: int) -> str:
            print("IN TOOL", flush=True)
            time.sleep(60)
            return "never"

        def model(messages):
            return ai.Message("assistant", [ai.ToolCall("call_0", "slow", {{"n": 1}})])

        agent = durable.Agent(model=model, store=JsonlStore({str(tmp_path)!r}), session_id="s", tools=[slow])
        agent.run("go").wait()
        """
    )
    env = child_env()
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "IN TOOL"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        proc.kill()
    agent = durable.Agent(model=lambda m: f"{len(m)} messages", store=JsonlStore(tmp_path), session_id="s")
    assert [e.message.role for e in agent.path()] == ["user", "assistant"]
    reply = agent.run("again").wait()[-1]
    assert reply.text() == "4 messages"  # user, assistant(call), the repaired result, user
    assert agent.messages()[2].is_error and agent.messages()[2].tool_call_id == "call_0"


# -- reminders ---------------------------------------------------------------------------------


def test_a_tool_reminder_reaches_the_model_and_never_the_transcript():
    model = script(calls(("add", {"a": 1})), "ok")
    agent = durable.Agent(model=model, tools=[add])
    agent.tool_reminder = lambda call, result: (
        f"{call.name} is cheap; call it again if needed" if not result.is_error else None
    )
    agent.run("Go").wait()
    result = model.seen[1][0][-1]
    assert result.content == [ai.Text("2"), ai.Reminder("add is cheap; call it again if needed")]
    entry = agent.path()[2]
    assert entry.message.content[-1] == ai.Reminder("add is cheap; call it again if needed")
    assert entry in transcript_view(agent.path()) and display_text(entry) == "2"


# -- system prompt -------------------------------------------------------------------------------


def test_the_system_prompt_is_on_the_path_first_in_the_view_and_sent_as_the_requests_system(tmp_path):
    model = script("a", "b", "c")
    agent = durable.Agent(model=model, store=JsonlStore(tmp_path), session_id="s", system="Be terse.")
    agent.run("hi").wait()
    messages, request = model.seen[0]
    assert request.system == "Be terse." and [m.role for m in messages] == ["user"]  # not a message
    assert agent.messages()[0] == ai.system_message("Be terse.")
    assert [e.message.role for e in agent.transcript()] == ["system", "user", "assistant"]  # the reader sees it

    # edit the system prompt: a sibling branch, the old one still there
    agent.branch("")
    agent.run(durable.system("Be verbose."), "hi").wait()
    assert model.seen[1][1].system == "Be verbose."
    siblings = [e for e in agent.entries() if e.parent_id == "" and e.message.role == "system"]
    assert [display_text(e) for e in siblings] == ["Be terse.", "Be verbose."]
    agent.branch(agent.path()[-1].id)

    # a later system entry supersedes; it still goes first; it survives a reopen and a compaction
    agent.append(durable.system("Be French."))
    reopened = durable.Agent(model=model, store=JsonlStore(tmp_path), session_id="s")
    assert reopened.system == "Be French."
    assert reopened.preview("x")[0].text() == "Be French." and reopened.preview("x")[1].role == "user"
    reopened.compact()
    assert reopened.system == "Be French." and reopened.messages()[0].role == "system"
    assert durable.Agent(store=JsonlStore(tmp_path), session_id="s", system="Be French.").depth == reopened.depth


# -- settings and provenance ---------------------------------------------------------------------


def test_settings_per_run_over_session_defaults_and_each_reply_says_how_it_was_made():
    model = script("one", "two")
    agent = durable.Agent(model=model)
    agent.settings = {"temperature": 0.2, "max_tokens": 100}
    agent.run("x", settings={"max_tokens": "300", "reasoning_effort": "low"}).wait()
    assert model.seen[0][1].settings == {"temperature": 0.2, "max_tokens": 300, "reasoning_effort": "low"}
    reply = agent.path()[-1].message
    assert reply.model == "model" and reply.settings == model.seen[0][1].settings
    assert set(reply.timing) == {"ttft_ms", "total_ms"} and 0 <= reply.timing["ttft_ms"] <= reply.timing["total_ms"]
    n = len(agent.entries())
    with pytest.raises(durable.SettingsError, match=r"^bad setting temperature='hot': input should be a valid number"):
        agent.run("y", settings={"temperature": "hot"})
    assert len(agent.entries()) == n  # nothing written
    with pytest.raises(durable.SettingsError, match=r"^unknown setting 'temprature' \(did you mean 'temperature'\?\)"):
        agent.run("y", settings={"temprature": 0.2})
    assert len(agent.entries()) == n
    for bad in ({"api_key": "sk-s3cr3t"}, {"extra_headers": {"Authorization": "Bearer sk-s3cr3t"}}):
        with pytest.raises(durable.SettingsError, match=r"is a credential: settings are stored") as e:
            agent.run("y", settings=bad)  # a key never reaches the store with the reply's settings
        assert "s3cr3t" not in str(e.value) and len(agent.entries()) == n
    agent.settings = {}
    agent.run("z").wait()
    assert model.seen[1][1].settings == {} and agent.path()[-1].message.settings is None


def test_the_offline_model_scripts_tool_calls_and_lists_what_came_back():
    agent = durable.Agent(tools=[add], system="Be terse.")
    out = agent.run('call add {"a": 2, "b": 3}').wait()
    assert [m.role for m in out] == ["assistant", "tool_result", "assistant"]
    assert out[0].tool_calls() == [ai.ToolCall("call_0", "add", {"a": 2, "b": 3})] and out[1].text() == "5"
    listing = out[2].text().splitlines()
    assert listing[:3] == ["System prompt: Be terse.", "Tools: add", "I received 3 messages:"]
    assert listing[-1] == "3. tool_result (for call_0): 5"
