"""The agent's cached active path and model view give exactly what recomputing gives.

The agent keeps the active path and its model view up to date as the leaf
advances, so a turn does no whole-session work. Whatever sequence of runs,
appends, tool calls, compactions, branches and reopenings happens, the model
must receive exactly ``model_view(path to the old leaf + the run's input)``
computed from scratch, and ``path()`` / ``messages()`` must match too.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from durable_nb import ai, durable
from durable_nb.session import CustomEntry, MemoryStore, MessageEntry, is_ephemeral, model_view, path

OPS = ["run", "run_injected", "append_custom", "tool_call", "tool_result", "compact", "branch", "reopen", "run_tool"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(OPS), min_size=1, max_size=30), st.integers(0, 2**32))
def test_turn_input_equals_the_recomputed_model_view(ops, seed):
    rng = random.Random(seed)
    seen: list[list[ai.Message]] = []

    def recorder(messages):
        seen.append(list(messages))
        return f"reply {len(seen)}"

    store = MemoryStore()
    agent = durable.Agent(model=recorder, store=store, session_id="s")
    calls = 0
    for op in ops:
        before_leaf, before_n = agent.leaf_id, len(agent.entries())
        if op in ("run", "run_injected", "run_tool"):
            if op == "run":
                inputs = [durable.text(f"q{rng.random()}")]
            elif op == "run_injected":
                inputs = [
                    durable.meta("m", origin="skill:x"),
                    durable.ephemeral("e"),
                    durable.text("q"),
                    CustomEntry(kind="note"),
                ]
            else:  # input that carries a tool result: the uncached path
                inputs = [MessageEntry(message=ai.Message("tool_result", [ai.Text("r")], tool_call_id=f"c{calls}"))]
            agent.run(*inputs).wait()
            new = agent.entries()[before_n:-1]  # the input entries, ephemeral included (the reply is last)
            expected = model_view(path(agent.entries(), before_leaf) + new)
            assert seen[-1] == expected
        elif op == "append_custom":
            agent.append(CustomEntry(kind="note", data={"i": rng.random()}))
        elif op == "tool_call":
            calls += 1
            agent.append(MessageEntry(message=ai.Message("assistant", [ai.ToolCall(f"c{calls}", "f", {})])))
        elif op == "tool_result":
            agent.append(MessageEntry(message=ai.Message("tool_result", [ai.Text("ok")], tool_call_id=f"c{calls}")))
        elif op == "compact":
            agent.compact(keep_turns=rng.randint(0, 2))
        elif op == "branch":
            targets = [""] + [e.id for e in agent.entries() if not is_ephemeral(e)]
            agent.branch(rng.choice(targets))
        elif op == "reopen":
            agent = durable.Agent(model=recorder, store=store, session_id="s")
        recomputed = path(agent.entries(), agent.leaf_id)
        assert agent.path() == recomputed
        assert agent.messages() == model_view(recomputed)
        assert agent.preview("next") == model_view(recomputed + [durable.text("next")])


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["c1", "c2", "c3", None]), st.sampled_from(["turn", "meta", "ephemeral", "note", "branch"])
        ),
        min_size=1,
        max_size=20,
    ),
    st.integers(0, 2**32),
)
def test_notebook_cell_positions_match_a_full_scan(tmp_path_factory, cells, seed):
    """The notebook's incremental origin index and ``Agent.on_path`` agree with scanning the whole log."""
    from durable_nb.notebook.state import NotebookSession, Turn

    rng = random.Random(seed)
    nb = NotebookSession(tmp_path_factory.mktemp("nb"), "s")
    for cell_id, kind in cells:
        origin = f"cell:{cell_id}" if cell_id else None
        if kind == "branch":
            targets = [""] + [e.id for e in nb.agent.entries() if not is_ephemeral(e)]
            nb.agent.branch(rng.choice(targets))
            continue
        nb.rewind_for(origin)
        if kind == "turn":
            nb.run(f"{cell_id} {rng.random()}", origin, Turn())
        elif kind == "note":
            nb.note("n", cell_id or "")
        else:
            nb.stage(kind, "x", origin)
        on_path = {e.id for e in nb.agent.path()}
        for e in nb.agent.entries():
            assert nb.agent.on_path(e.id) == (e.id in on_path)
        for o in ("cell:c1", "cell:c2", "cell:c3"):
            assert nb.cell_position(o) is scanned_position(nb.agent.entries(), nb.agent.path(), o)


def scanned_position(entries, active, origin):
    """The cell-as-position rule by scanning everything: the cell's latest entry (with the entries of the same
    cell right before it) if on the active path; else the entry of that cell the path holds in its place
    (a sibling: a fan-out's variants, an earlier version of an edited cell); else ``None``."""
    from durable_nb.notebook.state import cell_entry, entry_origin

    latest = cell_entry(entries, origin)
    if latest is None:
        return None
    by_id = {e.id: e for e in entries}
    first = latest
    while first.parent_id in by_id and entry_origin(by_id[first.parent_id]) == origin:
        first = by_id[first.parent_id]
    on_path = {e.id for e in active}
    if latest.id in on_path:
        return first
    if first.parent_id and first.parent_id not in on_path:
        return None
    there = [e for e in active if e.parent_id == first.parent_id]
    return there[0] if there and entry_origin(there[0]) == origin else None
