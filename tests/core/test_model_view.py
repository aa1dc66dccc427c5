"""What a model receives: the agent's own view, shared read-only, equal to the model view it stands for."""

from __future__ import annotations

import pytest

from durable_nb import ai, durable
from durable_nb.session import CompactionEntry, JsonlStore, MessageEntry, model_view, split_system


def as_entries(messages):
    return [MessageEntry(id=f"x{i}", parent_id="", created_at="", message=m) for i, m in enumerate(messages)]


def test_each_model_call_gets_exactly_the_model_view_of_the_path_and_the_run_so_far(tmp_path):
    """System prompt, a compaction, a dangling tool call, meta + ephemeral input, three steps with tools:
    at every call the sequence equals model_view(path before the run + input + what the run produced)
    (the list the agent used to copy), and stays equal to it after the run went on."""
    agent = durable.Agent(model=lambda m: "first", store=JsonlStore(tmp_path), session_id="s", system="Be brief.")
    agent.run("one").wait()
    (u,) = agent.append(durable.text("two"))
    agent.append(
        CompactionEntry(id="", parent_id="", created_at="", summary="they said one", first_kept_id=u.id),
        durable.text("three"),
        *as_entries([ai.Message("assistant", [ai.ToolCall("k1", "add", {"a": 1})])]),  # a crash's footprint
    )
    before = agent.path()
    inputs = [durable.meta("Answer in French.", origin="skill:fr"), durable.ephemeral("Today is Monday."), "four"]
    # the user's message as stored: marked as sent with one ephemeral input (of no origin)
    four = ai.Message("user", [ai.Text("four")], ephemeral_context=[""])
    produced: list[ai.Message] = []
    seen = []  # (what the model got, a list copy made at that moment, what it should be)

    def model(messages, request):
        msgs = [e.message for e in inputs[:2]] + [four] + produced
        expected = split_system(model_view(before + as_entries(msgs)))[1]
        seen.append((messages, list(messages), expected, request.system))
        step = len(seen)
        return ai.Message("assistant", [ai.ToolCall(f"c{step}", "add", {"a": step})]) if step < 3 else "done"

    def add(a: int) -> int:
        """Add one."""
        return a + 1

    agent.model = model
    stream = agent.run(*inputs, tools=[add])
    for ev in stream:
        if ev.type == "message_end" and ev.message.role != "user":
            produced.append(ev.message)
    assert len(seen) == 3 and stream.messages[-1].text() == "done"
    for got, copy, expected, system in seen:
        assert type(got) is not list
        assert copy == expected  # role, content, ids: struct equality, message by message
        assert got == expected and list(got) == copy  # the shared view did not move under the model
        assert system == "Be brief."
        assert copy[0].origin.startswith("compaction:") and [m.text() for m in copy[1:3]] == ["two", "three"]
    first = seen[0][1]
    assert first[-3:] == [inputs[0].message, inputs[1].message, four]
    repaired = first[first.index(next(m for m in first if m.tool_calls())) + 1]
    assert repaired.role == "tool_result" and repaired.tool_call_id == "k1" and repaired.is_error


def test_a_model_that_tries_to_change_its_messages_gets_one_clear_error_and_changes_nothing(tmp_path):
    agent = durable.Agent(model=lambda m: "ok", store=JsonlStore(tmp_path), session_id="s")
    agent.run("hello").wait()
    before, leaf = agent.messages(), agent.leaf_id

    def appends(messages):
        messages.append(ai.user_message("sneaked in"))
        return "never"

    def assigns(messages):
        messages[0] = ai.user_message("rewritten")
        return "never"

    def deletes(messages):
        del messages[0]
        return "never"

    for bad in (appends, assigns, deletes):
        agent.model = bad
        with pytest.raises(TypeError, match=r"^the messages a model receives are read-only .*list\(messages\)$"):
            agent.run("again").wait()
        agent.branch(leaf)  # back to before the failed turn's stored input
    seen = []
    agent.model = lambda messages: seen.append(list(messages)) or "fine"
    agent.run("last").wait()
    assert seen[0] == before + [ai.user_message("last")]
    assert JsonlStore(tmp_path).load_entries("s")[-1].message.text() == "fine"


def test_a_model_may_copy_add_or_concatenate_without_touching_the_next_turn():
    seen = []

    def model(messages):
        mine = list(messages)
        mine.append(ai.user_message("private"))
        extended = messages + [ai.user_message("also private")]
        messages += [ai.user_message("rebinds the local name only")]  # a new list, as with a copy before
        seen.append((len(mine), len(extended), len(messages)))
        return "ok"

    agent = durable.Agent(model=model)
    agent.run("a").wait()
    agent.run("b").wait()
    assert seen == [(2, 2, 2), (4, 4, 4)]
    assert [m.text() for m in agent.messages()] == ["a", "ok", "b", "ok"]


def test_the_view_reads_like_a_list():
    seen = []
    agent = durable.Agent(model=lambda m: seen.append(m) or "ok")
    agent.run("a").wait()
    agent.run("b").wait()
    m = seen[-1]
    assert len(m) == 3 and m[-1].text() == "b" and m[0].text() == "a"
    assert m[1:] == [m[1], m[2]] and m[::-1] == list(reversed(list(m))) and isinstance(m[:1], list)
    assert m.index(m[2]) == 2 and m.count(m[0]) == 1 and m[0] in m
    assert [x.text() for x in [ai.user_message("z")] + m] == ["z", "a", "ok", "b"]
    with pytest.raises(IndexError):
        m[3]
    assert m != [m[0]] and m != "abc"


@pytest.mark.parametrize("seed", range(6))
def test_moving_the_leaf_anywhere_keeps_the_cached_path_and_view_exact(seed):
    """Random sessions (branches, edits and retries, system prompts, compactions, dangling and answered tool
    calls, custom and ephemeral entries) against the views computed from scratch: after every step the
    agent's path is path(log, leaf), its system prompt the latest on the path, and every model call gets
    exactly split_system(model_view(path before the run + input + what the run produced)). Odd seeds keep
    every view a model got (the agent then cuts copies, not the shared list) and read them at the end."""
    import random

    from durable_nb.session import CustomEntry, index, is_ephemeral, path

    rng = random.Random(seed)
    agent = durable.Agent(max_steps=3)
    calls = []

    def add(a: int) -> int:
        """Add one."""
        return a + 1

    def check():
        assert agent.path() == path(index(agent.entries()), agent.leaf_id)
        systems = [e.message.text() for e in agent.path() if isinstance(e, MessageEntry) and e.message.role == "system"]
        assert agent.system == (systems[-1] if systems else None)
        assert agent.depth == len(agent.path())

    for step in range(120):
        op = rng.choice(["run", "run", "tools", "branch", "branch", "dangling", "custom", "system", "compact", "eph"])
        durable_ids = [e.id for e in agent.entries() if not is_ephemeral(e)]
        if op == "branch":
            agent.branch(rng.choice(["", *durable_ids]))
        elif op == "dangling":
            agent.append(*as_entries([ai.Message("assistant", [ai.ToolCall(f"d{step}", "add", {"a": 1})])]))
        elif op == "custom":
            agent.append(CustomEntry(id="", parent_id="", created_at="", kind="note"))
        elif op == "system":
            agent.append(durable.system(f"system {step}"))
        elif op == "compact":
            on_path = [e.id for e in agent.path()]
            kept = rng.choice(["", "unknown", *on_path]) if on_path else ""
            agent.append(CompactionEntry(id="", parent_id="", created_at="", summary=f"s{step}", first_kept_id=kept))
        else:
            before = agent.path()
            inputs = (
                [durable.ephemeral(f"e{step}"), durable.text(f"u{step}")] if op == "eph" else [durable.text(f"u{step}")]
            )
            produced, stored = [], []  # what the run produced; its input as stored (the user message marked)
            plan = [rng.random() < 0.5 for _ in range(3)] if op == "tools" else [False]

            def model(messages, request, inputs=inputs, before=before, produced=produced, stored=stored, plan=plan):
                kept = iter(stored)
                msgs = [e.message if is_ephemeral(e) else next(kept).message for e in inputs] + produced
                system, expected = split_system(model_view(before + as_entries(msgs)))
                assert list(messages) == expected and request.system == system
                calls.append((messages, expected) if seed % 2 else 1)  # odd seeds keep every view a model got
                n = len(calls)
                if plan and plan.pop(0):
                    return ai.Message("assistant", [ai.ToolCall(f"c{n}", "add", {"a": n})])
                return f"r{n}"

            agent.model = model
            for ev in agent.run(*inputs, tools=[add]):
                if ev.type == "agent_start":
                    stored.extend(ev.entries)
                elif ev.type == "message_end" and ev.message.role != "user":
                    produced.append(ev.message)
        check()
    assert len(calls) > 40
    for kept in calls:  # a view a model kept still reads as it did during its call, however the leaf moved since
        assert kept == 1 or list(kept[0]) == kept[1]
