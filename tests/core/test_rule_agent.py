"""Rules R6-R11 on an agent, over random sequences of runs, appends, compactions, branches and forks.

After every step the agent's cached path and views must be what the rules
give from its log (the references of ``test_rule_paths``), ephemeral input
must stay off the chain and out of the store (R8), and a fork must copy the
active path only, re-chained with fresh ids and timestamps kept (R10).
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from test_rule_paths import reference_view

from durable_nb import ai, durable
from durable_nb.session import (
    CompactionEntry,
    CustomEntry,
    MemoryStore,
    MessageEntry,
    is_ephemeral,
    model_view,
    path,
    transcript_view,
)

OPS = [
    "run",
    "run_injected",
    "system",
    "tool_call",
    "tool_result",
    "note",
    "label",
    "compact",
    "branch",
    "fork",
    "reopen",
]


def without_summary_origin(msgs: list[ai.Message]) -> list[ai.Message]:
    """The messages with a compaction summary's origin (which names the compaction's id) blanked."""
    return [ai.Message(m.role, m.content, tool_call_id=m.tool_call_id, injected=m.injected) for m in msgs]


def check_fork(src: durable.Agent, forked: durable.Agent, store: MemoryStore) -> None:
    """R10: the active path only, fresh ids, each copy the child of the one before, timestamps kept."""
    original, copies = src.path(), forked.entries()
    assert len(copies) == len(original)
    assert not {e.id for e in copies} & {e.id for e in src.entries()}
    assert [e.parent_id for e in copies] == ([""] + [e.id for e in copies[:-1]])[: len(copies)]
    assert [e.created_at for e in copies] == [e.created_at for e in original]
    assert forked.leaf_id == (copies[-1].id if copies else "")
    assert store.load_session(forked.session_id).parent_id == src.session_id
    ids = {o.id: c.id for o, c in zip(original, copies)}
    for o, c in zip(original, copies):
        assert type(o) is type(c)
        if isinstance(o, MessageEntry):
            assert c.message == o.message  # type: ignore[attr-defined]
        elif isinstance(o, CompactionEntry):
            assert isinstance(c, CompactionEntry) and c.summary == o.summary
            assert c.first_kept_id == ids.get(o.first_kept_id, "")
    assert without_summary_origin(forked.messages()) == without_summary_origin(src.messages())
    assert forked.system == src.system


def check(agent: durable.Agent, store: MemoryStore) -> None:
    log = agent.entries()
    recomputed = path(log, agent.leaf_id)
    assert agent.path() == recomputed
    assert not any(is_ephemeral(e) for e in recomputed)  # R8: never on the chain
    assert agent.messages() == reference_view(recomputed)
    systems = [e.message.text() for e in recomputed if isinstance(e, MessageEntry) and e.message.role == "system"]
    assert agent.system == (systems[-1] if systems else None)
    assert agent.transcript() == transcript_view(recomputed)
    stored = store.load_entries(agent.session_id)
    assert [e.id for e in stored] == [e.id for e in log if not is_ephemeral(e)]  # R8: never stored
    assert agent.depth == len(recomputed)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(OPS), min_size=1, max_size=25), st.integers(0, 2**32))
def test_rules_hold_over_random_sequences(ops, seed):
    rng = random.Random(seed)
    requests: list[list[ai.Message]] = []

    def model(messages):
        requests.append(list(messages))
        return f"reply {len(requests)}"

    store = MemoryStore()
    agent = durable.Agent(model=model, store=store, session_id="s")
    forks = 0
    calls = 0
    for op in ops:
        before_leaf = agent.leaf_id
        if op == "run":
            agent.run(f"q{rng.random()}").wait()
        elif op == "run_injected":
            n = len(agent.entries())
            agent.run(durable.meta("m", origin="skill:x"), durable.ephemeral("e"), "q", CustomEntry(kind="memo")).wait()
            new = agent.entries()[n:]
            eph = [e for e in new if is_ephemeral(e)]
            assert len(eph) == 1 and eph[0].parent_id == new[0].id  # hangs off the chain, never a parent
            assert not any(e.parent_id == eph[0].id for e in agent.entries())
            assert new[0].parent_id == before_leaf
        elif op == "system":
            agent.append(durable.system(rng.choice(["be brief", "be kind"])))
        elif op == "tool_call":
            calls += 1
            agent.append(MessageEntry(message=ai.Message("assistant", [ai.ToolCall(f"c{calls}", "f", {})])))
        elif op == "tool_result":
            agent.append(MessageEntry(message=ai.Message("tool_result", [ai.Text("ok")], tool_call_id=f"c{calls}")))
        elif op == "note":
            agent.append(CustomEntry(kind="memo", data={"x": 1}))
        elif op == "label":
            named = [e for e in agent.path() if not (isinstance(e, CustomEntry) and e.kind == "label")]
            if named:
                agent.label(f"v{rng.randint(0, 2)}", rng.choice(named).id)
        elif op == "compact":
            keep = rng.randint(0, 2)
            full = agent.path()
            n = len(requests)
            entry = agent.compact(keep_turns=keep)
            if entry is None:
                assert agent.leaf_id == before_leaf and len(requests) == n
            else:
                assert agent.leaf_id == entry.id and entry.parent_id == before_leaf
                assert len(requests) == n + 1
                kept = [i for i, e in enumerate(full) if e.id == entry.first_kept_id]
                assert entry.first_kept_id == "" or kept
                verbatim = full[kept[0] :] if kept else []
                starts = [e for e in verbatim if isinstance(e, MessageEntry) and e.message.role == "user"
                          and e.message.injected is None]  # fmt: skip
                assert len(starts) == keep
                assert not kept or verbatim[0] is starts[0] or keep == 0
        elif op == "branch":
            targets = [""] + [e.id for e in agent.entries() if not is_ephemeral(e)]
            agent.branch(rng.choice(targets))
        elif op == "fork":
            forks += 1
            forked = agent.fork(f"f{forks}")
            check_fork(agent, forked, store)
            if rng.random() < 0.5:
                agent = forked
        elif op == "reopen":
            agent = durable.Agent(model=model, store=store, session_id=agent.session_id)
            durable_log = [e for e in agent.entries() if not is_ephemeral(e)]
            assert agent.leaf_id == (durable_log[-1].id if durable_log else "")
        check(agent, store)
        assert model_view(agent.path()) == agent.messages()


def test_R11_a_system_prompt_alone_is_nothing_to_summarise():
    """Views keep the system prompt whatever is compacted: with nothing else new, compact() writes nothing."""
    requests: list[list[ai.Message]] = []
    agent = durable.Agent(model=lambda m: requests.append(list(m)) or "summary", system="be brief")
    assert agent.compact() is None
    agent.run("q").wait()
    assert agent.compact() is not None
    agent.append(durable.system("be kind"))
    assert agent.compact() is None
    assert len(requests) == 2  # the run and the one compaction


def test_R11_a_second_compaction_summarises_the_first_ones_summary_not_what_it_replaced():
    """A cut inside the turns an earlier compaction kept verbatim: the model summarises that compaction's
    summary and the turns before the cut, as the model sees them, never the history the summary replaced."""
    requests: list[list[ai.Message]] = []

    def model(messages: list[ai.Message]) -> str:
        requests.append(list(messages))
        return f"summary {len(requests)}" if "Summar" in messages[-1].text() else "ok"

    agent = durable.Agent(model=model)
    for i in range(1, 5):
        agent.run(f"q{i}").wait()
    first = agent.compact(keep_turns=3)
    assert first is not None and first.summary == "summary 5"
    agent.run("q5").wait()
    assert agent.compact(keep_turns=2) is not None
    asked = [m.text() for m in requests[-1]]
    assert "q1" not in asked and any("summary 5" in t for t in asked)
    assert ["q2", "ok", "q3", "ok"] == [t for t in asked if t in ("q2", "q3", "ok")]
    assert "q4" not in asked and "q5" not in asked
