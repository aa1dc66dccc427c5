"""Replay a branch with other settings, and fan one turn out over several variants (public API, real stores)."""

from __future__ import annotations

import threading

import msgspec
import pytest

from durable_nb import ai, durable
from durable_nb.errors import DurableError, ModelError
from durable_nb.session import JsonlStore, MessageEntry, model_view


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def conversation(tmp_path) -> durable.Agent:
    """A session with a system prompt, a meta entry, a tool call turn and three user turns (offline model)."""
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", system="Be brief.", tools=[add])
    agent.run("first question").wait()
    agent.run(durable.meta("Answer in French.", origin="skill:fr"), 'call add {"a": 2, "b": 3}').wait()
    agent.run("third question").wait()
    return agent


def comparable(messages: list[ai.Message]) -> list[ai.Message]:
    """The messages without what differs by nature between two runs: timings and the settings stamp."""
    return [msgspec.structs.replace(m, timing=None, settings=None) for m in messages]


def test_replay_with_other_settings_is_a_sibling_branch_whose_model_view_equals_the_original(tmp_path):
    agent = conversation(tmp_path)
    original = agent.path()
    first_user = next(e for e in original if isinstance(e, MessageEntry) and e.message.role == "user")
    r = agent.replay(first_user.id, temperature=0.7)
    assert r.turns == 3 and r.warnings == []
    assert agent.path(r.original_leaf_id) == original  # the original branch is untouched
    new = agent.path()
    assert agent.leaf_id == r.leaf_id == new[-1].id
    copy = new[len(new) - len(r.entries)]
    assert copy.parent_id == first_user.parent_id == r.fork_id and copy.id != first_user.id  # a sibling
    # the offline model ignores temperature: everything the model saw and said is the same, but the settings
    assert comparable(model_view(new)) == comparable(model_view(original))
    replies = [e.message for e in r.entries if isinstance(e, MessageEntry) and e.message.role == "assistant"]
    assert replies and all(m.settings == {"temperature": 0.7} for m in replies)
    assert any(m.role == "tool_result" and m.text() == "5" for m in r.messages)  # the tool loop ran again
    # labelled by what changed; the label names the last reply; it resolves like an id
    assert r.label == "temperature=0.7@replay1"
    assert agent.entry(agent.resolve(r.label)) == new[-2] and new[-2].message.role == "assistant"
    reopened = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    assert [e.id for e in reopened.path()] == [e.id for e in new]  # all of it reached the store
    # compare sees the same: what differs is the setting, no message
    (diff,) = durable.compare(agent, original[-1].id, r.label).diffs
    assert diff.messages == [] and diff.settings == {"temperature": (None, 0.7)} and diff.system is None


def test_replay_with_another_model_and_system_prompt_changes_only_those(tmp_path):
    agent = conversation(tmp_path)
    original = model_view(agent.path())
    old_system = agent.path()[0]
    seen = []

    def echo(messages, request):
        seen.append(request.system)
        return f"echo {len(messages)}"

    r = agent.replay(model=echo, system="Be verbose.")  # the whole path
    view = model_view(agent.path())
    assert view[0] == ai.system_message("Be verbose.") and original[0] == ai.system_message("Be brief.")
    ins = [m for m in view if m.role == "user"]
    assert comparable(ins) == comparable([m for m in original if m.role == "user"])  # meta included, in order
    assert all(s == "Be verbose." for s in seen) and len(seen) == 3  # no tool call: echo calls no tools
    assert [m.text() for m in view if m.role == "assistant"] == ["echo 1", "echo 4", "echo 6"]
    assert r.label == "echo,system=Be_verbose.@replay1"
    assert r.fork_id == old_system.id  # the old prompt is not replayed: the new one follows it, then the turns


def test_replay_from_a_label_or_a_reply_starts_at_the_next_turn(tmp_path):
    agent = conversation(tmp_path)
    path = agent.path()
    replies = [e for e in path if isinstance(e, MessageEntry) and e.message.role == "assistant"]
    agent.label("after-tool", replies[-2].id)  # the reply that read the tool result
    r = agent.replay("after-tool", model=lambda m: "again")
    assert r.turns == 1 and r.fork_id == agent.resolve("after-tool")
    assert [e.message.text() for e in r.entries if isinstance(e, MessageEntry)] == ["third question", "again"]
    with pytest.raises(DurableError, match="nothing to replay from"):
        agent.replay(r.leaf_id[:6])  # 6 characters of the label entry at the new end: nothing after it


def test_replay_refuses_in_one_line_and_writes_nothing(tmp_path):
    agent = conversation(tmp_path)
    n = len(agent.store.load_entries("s"))
    last = agent.path()[-1].id
    first_user = next(e for e in agent.path() if isinstance(e, MessageEntry) and e.message.role == "user")
    with pytest.raises(DurableError, match="no entry or label 'nope'"):
        agent.replay("nope")
    with pytest.raises(DurableError, match="nothing to replay"):
        agent.replay(last)
    with pytest.raises(ModelError, match="unknown model 'gtp-4'"):
        agent.replay(first_user.id, model="gtp-4")
    with pytest.raises(DurableError, match="did you mean 'temperature'"):
        agent.replay(first_user.id, temprature=1)
    with pytest.raises(DurableError, match="bad setting temperature"):
        agent.replay(first_user.id, temperature=-1)
    r = agent.replay(first_user.id)
    with pytest.raises(DurableError, match="not on the active path"):
        agent.replay(first_user.id)  # now on the sibling branch
    assert len(agent.store.load_entries("s")) == n + len(r.entries)
    for msg in ("no entry", "nothing", "unknown model", "did you mean", "not on the active path"):
        assert "\n" not in msg


def test_a_turn_that_had_ephemeral_input_is_marked_and_the_replay_names_it(tmp_path):
    agent = durable.Agent(model=lambda m: "noted", store=JsonlStore(tmp_path), session_id="s")
    agent.run(durable.ephemeral("Today is Monday.", origin="cell:eph1"), "what day is it?").wait()
    agent.run("and tomorrow?").wait()
    stored = durable.Agent(store=JsonlStore(tmp_path), session_id="s")  # another kernel: only the store
    ((user, *_),) = [[e for e in stored.path() if isinstance(e, MessageEntry) and e.message.role == "user"]]
    assert user.message.ephemeral_context == ["cell:eph1"]  # the mark survives; the text does not
    assert "Monday" not in (tmp_path / "s.jsonl").read_text()
    r = stored.replay()
    assert len(r.warnings) == 1
    assert r.warnings[0].startswith(f"turn 1 ({user.id}) was sent 1 ephemeral input (cell:eph1)")
    assert "replayed without it" in r.warnings[0]
    copy = next(e for e in r.entries if isinstance(e, MessageEntry) and e.message.role == "user")
    assert copy.message.ephemeral_context is None  # the replay sent none
    (diff,) = durable.compare(stored, user.id, copy.id).diffs  # the mark is bookkeeping, not a difference
    assert diff.messages == [] and diff.same == 1


def test_a_replay_that_fails_midway_keeps_what_it_wrote(tmp_path):
    agent = conversation(tmp_path)
    calls = []

    def flaky(messages):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("provider down")
        return "ok"

    original_leaf = agent.leaf_id
    with pytest.raises(durable.ReplayFailed, match="replay stopped at turn 2 .*provider down") as info:
        agent.replay(model=flaky)
    r = info.value.result
    assert r.turns == 1 and r.original_leaf_id == original_leaf and agent.leaf_id == r.leaf_id
    reopened = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    assert {e.id for e in reopened.entries()} == {e.id for e in agent.entries()}  # the store is consistent


def test_fan_out_over_three_models_gives_three_labelled_siblings_and_survives_one_failing(tmp_path):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    agent.run("hello").wait()
    gate = threading.Barrier(2, timeout=10)  # the two callables only get past it together: they run at once

    def careful(messages):
        gate.wait()
        return f"careful saw {len(messages)}"

    def quick(messages):
        gate.wait()
        return "quick"

    def broken(messages):
        raise RuntimeError("model exploded")

    out = agent.fan_out(durable.meta("Be brief.", origin="cell:m"), "what now?", variants=[careful, broken, quick])
    assert [b.name for b in out.branches] == ["careful@t2", "broken@t2", "quick@t2"]
    ok, failed, quick_b = out.branches
    assert ok.text == "careful saw 4" and quick_b.text == "quick" and str(failed.error) == "model exploded"
    assert out.failed == [failed] and agent.leaf_id == out.leaf_id == ok.leaf_id
    users = [b.entries[0] for b in out.branches]
    assert {u.parent_id for u in users} == {out.fork_id}  # siblings under the one shared meta entry
    assert agent.entry(out.fork_id).message.injected == ai.Injection.META
    assert agent.labels() == {"careful@t2": ok.entries[1].id, "quick@t2": quick_b.entries[1].id}
    assert failed.entries == [users[1]]  # its message stays, unanswered, on its branch
    reopened = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    assert [e.id for e in reopened.entries()] == [e.id for e in agent.entries()]
    assert reopened.labels() == agent.labels()
    # the next turn continues the first variant that replied
    agent.run("go on").wait()
    assert agent.on_path(ok.entries[1].id) and not agent.on_path(quick_b.entries[1].id)


def test_fan_out_over_settings_and_system_prompts(tmp_path):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", system="Be brief.")
    got = []

    def model(messages, request):
        got.append((request.system, request.settings.get("temperature")))
        return "ok"

    agent.model = model
    out = agent.fan_out(
        durable.ephemeral("It is Monday.", origin="cell:e"),
        "hi",
        variants=[{"temperature": 0}, {"temperature": 1}, {"system": "Be verbose.", "temperature": 1}],
    )
    assert [b.name for b in out.branches] == [
        "temperature=0@t1",
        "temperature=1@t1",
        "system=Be_verbose.,temperature=1@t1",
    ]
    assert sorted(got, key=str) == sorted([("Be brief.", 0), ("Be brief.", 1), ("Be verbose.", 1)], key=str)
    third = out.branches[2]
    assert model_view(agent.path(third.leaf_id))[0] == ai.system_message("Be verbose.")  # stored on its branch
    for b in out.branches:
        user = next(e for e in b.entries if isinstance(e, MessageEntry) and e.message.role == "user")
        assert user.message.ephemeral_context == ["cell:e"]
    again = agent.fan_out("hi", variants=[{"temperature": 0}, {"temperature": 0}])
    assert [b.name for b in again.branches] == ["model@t2", "model@t2.2"]  # nothing differs: the model's name
    assert all(b.ok for b in again.branches)


def test_fan_out_names_stay_unique_and_bad_variants_are_refused_before_anything_is_written():
    agent = durable.Agent()
    agent.fan_out("q", variants=["offline"])
    agent.branch("")
    out = agent.fan_out("q", variants=["offline"])  # the same turn again: a new name
    assert out.branches[0].name == "offline@t1.2"
    n = len(agent.entries())
    with pytest.raises(ModelError, match="variant 2: unknown model 'nope'"):
        agent.fan_out("q", variants=["offline", "nope"])
    with pytest.raises(DurableError, match="variant 1: unknown setting 'temprature'"):
        agent.fan_out("q", variants=[{"temprature": 1}])
    with pytest.raises(DurableError, match="at least one variant"):
        agent.fan_out("q", variants=[])
    with pytest.raises(DurableError, match="user's message"):
        agent.fan_out(durable.meta("m"), variants=["offline"])
    with pytest.raises(DurableError, match="one word"):
        agent.fan_out("q", variants=[{"label": "two words"}])
    with pytest.raises(DurableError, match="unknown variant key 'modle' \\(did you mean 'model'\\?\\)"):
        agent.fan_out("q", variants=[{"modle": "offline"}])
    assert len(agent.entries()) == n


def test_parse_variants():
    assert durable.parse_variants('temperature=0 | temperature=1 max_tokens=50 | system="Be brief" model=offline') == [
        {"temperature": 0},
        {"temperature": 1, "max_tokens": 50},
        {"system": "Be brief", "model": "offline"},
    ]
    assert durable.parse_variants("system='a | b' | label=x") == [{"system": "a | b"}, {"label": "x"}]
    for bad, msg in (
        ("temperature=0 |", "variant 2 is empty"),
        ("temperature", "not KEY=VALUE"),
        ('system="x', "cannot be read"),
    ):
        with pytest.raises(DurableError, match=msg):
            durable.parse_variants(bad)


def test_every_store_takes_a_fan_out_s_commits_from_its_threads(store):
    """The variants commit from their own threads (one at a time): SQLite's connection and PostgreSQL's pool too."""
    agent = durable.Agent(store=store, session_id="fan")
    agent.run("hello").wait()
    out = agent.fan_out("again", variants=["offline", lambda m: "one", lambda m: "two", {"temperature": 1}])
    assert all(b.ok for b in out.branches), out.failed
    again = durable.Agent(store=store, session_id="fan")
    assert sorted(e.id for e in again.entries()) == sorted(e.id for e in agent.entries())
    assert again.labels() == agent.labels() and len(again.labels()) == 4


def test_after_stop_a_variant_still_in_its_model_call_commits_nothing(tmp_path):
    # issue 25 #18: Stop while one variant's model call is under way; when that call returns, its
    # reply (and anything after it) must not be stored: "every variant stopped" means nothing more is written
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    agent.run("hello").wait()
    release = threading.Event()

    class Slow:  # streams a first piece, then its provider is slow to send the rest
        name = "slow"

        def stream(self, messages, request=None):
            yield "slow "
            release.wait(10)  # still in its model call when Stop comes
            yield ai.assistant_message("slow reply")

    def quick(messages):
        return "quick reply"

    def stop_on_quick_reply(branch, ev):
        if branch.name.startswith("quick") and ev.type == "message_end":
            raise KeyboardInterrupt  # what the kernel's Stop raises in the caller's thread

    with pytest.raises(KeyboardInterrupt):
        agent.fan_out("what now?", variants=[Slow(), quick], on_event=stop_on_quick_reply)
    stored = [e.id for e in JsonlStore(tmp_path).load_entries("s")]
    release.set()  # the slow variant's model call returns now, after the interrupt
    for t in threading.enumerate():
        if t.name.startswith("durable-variant-"):
            t.join(10)
    assert [e.id for e in JsonlStore(tmp_path).load_entries("s")] == stored
    assert [e.id for e in agent.entries()] == stored
    assert "slow reply" not in [m.text() for m in agent.messages()]
