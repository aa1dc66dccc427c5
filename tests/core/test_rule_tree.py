"""``path`` and ``tree`` over logs with orphans, parent cycles and repeated ids, held to their docstrings.

- ``path(entries, leaf)``: from the root down to the leaf; the walk stops at
  a parent it cannot resolve and at a cycle (each entry once); the later of
  two entries with one id wins.
- ``tree(entries)``: every entry once; an entry hangs under its parent (the
  later entry of that id) unless the parent is missing (then it is a root)
  or the entry is where a parent cycle is cut: a cycle is cut at its first
  entry in log order, which becomes a root. Siblings and roots are oldest
  first, equal times in log order.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from durable_nb import ai, durable
from durable_nb.session import CompactionEntry, CustomEntry, Entry, MemoryStore, MessageEntry, model_view
from durable_nb.session.tree import Node, path, tree

IDS = [f"n{i}" for i in range(4)]


@st.composite
def logs(draw) -> list[Entry]:
    n = draw(st.integers(0, 8))
    out: list[Entry] = []
    for i in range(n):
        eid = draw(st.sampled_from(IDS))
        parent = draw(st.sampled_from(["", "gone", *IDS]))
        at = draw(st.sampled_from(["", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]))
        out.append(CustomEntry(id=eid, parent_id=parent, created_at=at, kind="x", data={"i": i}))
    return out


def reference_path(entries: list[Entry], leaf: str) -> list[Entry]:
    by_id = {}
    for e in entries:
        by_id[e.id] = e  # the later one wins
    out: list[Entry] = []
    cur = by_id.get(leaf)
    while cur is not None and all(cur.id != e.id for e in out):
        out.insert(0, cur)
        cur = by_id.get(cur.parent_id)
    return out


@settings(max_examples=150, deadline=None)
@given(logs(), st.sampled_from(["", "gone", *IDS]))
def test_path_is_the_walk_up_written_out(entries, leaf):
    assert path(entries, leaf) == reference_path(entries, leaf)
    assert path({e.id: e for e in entries}, leaf) == reference_path(entries, leaf)


def flatten(nodes: list[Node], parent: Entry | None, into: list[tuple[int, int | None]], pos: dict[int, int]) -> None:
    for n in nodes:
        into.append((pos[id(n.entry)], pos[id(parent)] if parent is not None else None))
        flatten(n.children, n.entry, into, pos)


def in_cycle(entries: list[Entry], i: int) -> bool:
    """Whether the entry at log position ``i`` lies on a parent cycle (following the later entry of each id)."""
    by_id = {e.id: e for e in entries}
    e = entries[i]
    if by_id.get(e.id) is not e:  # an earlier duplicate: nobody names it as a parent
        return False
    seen: set[str] = set()
    cur = by_id.get(e.parent_id)
    while cur is not None and cur.id not in seen:
        if cur is e:
            return True
        seen.add(cur.id)
        cur = by_id.get(cur.parent_id)
    return False


@settings(max_examples=150, deadline=None)
@given(logs())
def test_tree_keeps_every_parent_it_can(entries):
    pos = {id(e): i for i, e in enumerate(entries)}
    pairs: list[tuple[int, int | None]] = []
    flatten(tree(entries), None, pairs, pos)
    assert sorted(i for i, _ in pairs) == list(range(len(entries)))  # every entry exactly once
    by_id = {e.id: e for e in entries}
    parent_of = dict(pairs)
    for i, e in enumerate(entries):
        p = by_id.get(e.parent_id) if e.parent_id else None
        if p is None or p is e:
            assert parent_of[i] is None, f"{e.id} has no parent in the log: a root"
        elif not in_cycle(entries, i):
            assert parent_of[i] == pos[id(p)], f"{e.id} (log position {i}) is not under its parent"
    # a cycle is cut once, at its first entry in log order
    for i in range(len(entries)):
        if in_cycle(entries, i) and parent_of[i] is None:
            members = [
                j for j in range(len(entries)) if in_cycle(entries, j) and entries[j].id in cycle_ids(entries, i)
            ]
            assert i == min(members)


def cycle_ids(entries: list[Entry], i: int) -> set[str]:
    by_id = {e.id: e for e in entries}
    ids = {entries[i].id}
    cur = by_id.get(entries[i].parent_id)
    while cur is not None and cur.id not in ids:
        ids.add(cur.id)
        cur = by_id.get(cur.parent_id)
    return ids


def test_an_entry_hanging_off_a_cycle_stays_under_its_parent():
    """b -> a -> b is a cycle; c hangs off a and comes first in the log: the cycle is cut at a (its first
    entry in log order), c stays a's child."""
    c = CustomEntry(id="c", parent_id="a", kind="x")
    a = CustomEntry(id="a", parent_id="b", kind="x")
    b = CustomEntry(id="b", parent_id="a", kind="x")
    (root,) = tree([c, a, b])
    assert root.entry is a
    assert sorted(n.entry.id for n in root.children) == ["b", "c"]


MSG_ROLES = ["user", "assistant", "system", "tool_result", "compaction"]


@st.composite
def message_logs(draw) -> list[Entry]:
    """Logs of messages and compactions with orphans, parent cycles and repeated ids."""
    out: list[Entry] = []
    for i in range(draw(st.integers(1, 9))):
        head = {"id": draw(st.sampled_from(IDS)), "parent_id": draw(st.sampled_from(["", "gone", *IDS]))}
        role = draw(st.sampled_from(MSG_ROLES))
        if role == "compaction":
            out.append(CompactionEntry(**head, summary=f"s{i}", first_kept_id=draw(st.sampled_from(["", *IDS]))))
        elif role == "assistant":
            out.append(MessageEntry(**head, message=ai.Message(role, [ai.Text(f"t{i}"), ai.ToolCall("c", "f", {})])))
        else:
            out.append(MessageEntry(**head, message=ai.Message(role, [ai.Text(f"t{i}")], tool_call_id="c")))
    return out


@settings(max_examples=100, deadline=None)
@given(message_logs(), st.lists(st.sampled_from(["", "gone", *IDS, "run"]), max_size=8))
def test_the_agents_cached_path_and_view_follow_orphans_cycles_and_repeated_ids(log, moves):
    """An agent opened on such a log, moved around it and run from where it lands, keeps giving what
    ``path`` and ``model_view`` give from its log."""
    store = MemoryStore()
    store.create_session("s")
    store.append_entries("s", log)
    agent = durable.Agent(model=lambda m: "ok", store=store, session_id="s")
    for move in moves:
        if move == "run":
            agent.run("q").wait()
        elif move in {e.id for e in agent.entries()}:
            agent.branch(move)
        else:
            agent.leaf_id = move  # an unknown leaf, as a caller may set it
        expected = path(agent.entries(), agent.leaf_id)
        assert agent.path() == expected
        assert agent.messages() == model_view(expected)
        assert agent.depth == len(expected)
