"""The first look's fast paths (#32) give exactly what the general rules give: the active path of a log
that is one chain, its layout, its counts, transcript, latest compaction and tally."""

from __future__ import annotations

import random
from array import array

import pytest
from core_helpers import msg

from durable_nb import ai, durable, session
from durable_nb.cost import tally
from durable_nb.durable.active import ActivePath, _chain
from durable_nb.kept import forget, kept_tally
from durable_nb.notebook.render import counts
from durable_nb.session import CompactionEntry, MessageEntry, entry_kind, latest_compaction, path, transcript_view
from durable_nb.widget.layout import Layout
from durable_nb.widget.tree import layout_of, log_of, never_drawn, off_chain


def chain(n: int, first_parent: str = "") -> list[MessageEntry]:
    out, parent = [], first_parent
    for i in range(n):
        out.append(msg(f"e{i}", parent, role="user" if i % 2 == 0 else "assistant"))
        parent = out[-1].id
    return out


def walked(entries: list, leaf: str) -> list:
    """path() without the fast path: the general walk."""
    return path({e.id: e for e in entries}, leaf)


@pytest.mark.parametrize("first_parent", ["", "gone"])
def test_a_chain_log_is_its_own_path(first_parent):
    log = chain(50, first_parent)
    by_id = {e.id: e for e in log}
    assert _chain(by_id, "e49") == walked(log, "e49") == log
    ap = ActivePath(by_id)
    ap.move_to("e49")
    assert ap.entries() == log and "e10" in ap and "nope" not in ap and len(ap) == 50
    ap.move_to("e20")  # moving back: the index is made then, the path cut back
    assert ap.entries() == log[:21] and "e30" not in ap and "e20" in ap


def test_the_view_of_a_long_path_costs_three_pointers_a_position():
    """The agent's cached path, its model view and the view's marks (#32: kernel memory): 8 bytes a
    position each (the marks a C array: a list of ints held a 32-byte int object for every mark above
    256, ~29 bytes more an entry), and cutting back and growing read them as before."""
    import tracemalloc

    n = 20_000
    log = chain(n)
    ap = ActivePath({e.id: e for e in log})
    ap.move_to(log[-1].id)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        rv = ap.run_view([])
        traced = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert rv.messages() == [e.message for e in log]
    assert traced / n <= 30, f"{traced / n:.1f} bytes a position"
    ap.move_to("e99")  # back: the view is cut at the mark, then grows again
    assert ap.run_view([]).messages() == [e.message for e in log[:100]]
    ap.extend([msg("x", "e99")])
    assert ap.run_view([]).messages() == [*(e.message for e in log[:100]), msg("x", "e99").message]


def test_an_opened_agent_holds_its_entries_an_index_and_a_list(tmp_path):
    """Opening an agent on a log keeps, beyond the entries the store decodes, only the id index and
    the entry list (#32: no per-entry cache is built at open; the path and its view come on the
    first read)."""
    import gc
    import tracemalloc

    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    n = 20_000
    st.append_entries("s", chain(n))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        loaded = st.load_entries("s")
        decoded = tracemalloc.get_traced_memory()[0] - before
        del loaded
        before = tracemalloc.get_traced_memory()[0]
        agent = durable.Agent(store=st, session_id="s")
        opened = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert agent.id_count() == n
    assert (opened - decoded) / n <= 26, f"{(opened - decoded) / n:.1f} bytes an entry beside its objects"


def test_a_read_session_leaves_nothing_of_its_size_to_the_collector(tmp_path):
    """Once an opened session's path and model view are read (a first turn, a show), no container
    as long as the log is left for the cyclic GC to walk (#32: its full collection at 300k entries
    went from ~15 to ~45 ms CPU when the path and view were built); the lists grow as before."""
    import gc

    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    n = 5_000
    st.append_entries("s", chain(n))

    def big() -> set[int]:  # containers of the log's size the collector walks (earlier tests' too)
        gc.collect()  # the interpreter's own tables (object's subclasses, modules) are of other sizes
        return {id(o) for o in gc.get_objects() if isinstance(o, (list, dict)) and n <= len(o) <= n + 2}

    before = big()
    agent = durable.Agent(store=st, session_id="s")
    assert agent.system is None and agent.depth == n  # builds the path and its view
    assert not big() - before
    agent.append(durable.text("more"))
    assert agent.depth == n + 1 and len(agent.entries()) == n + 1 and len(agent.messages()) == n + 1


def test_other_logs_take_the_walk():
    log = chain(10)
    by_id = {e.id: e for e in log}
    assert _chain(by_id, "e5") is None  # the leaf is not the last entry
    branched = [*log, msg("b", "e3")]
    assert _chain({e.id: e for e in branched}, "b") is None
    cyclic = [msg("a", "c"), msg("b", "a"), msg("c", "b")]
    assert _chain({e.id: e for e in cyclic}, "c") is None
    ap = ActivePath({e.id: e for e in branched})
    ap.move_to("b")
    assert ap.entries() == walked(branched, "b")


def general_layout(entries) -> Layout:
    real = Layout._rebuild_chain
    Layout._rebuild_chain = lambda self: False  # type: ignore[method-assign]
    try:
        return Layout.build(
            [e.id for e in entries],
            [e.parent_id for e in entries],
            [off_chain(e) for e in entries],
            [never_drawn(e) for e in entries],
            [e.created_at for e in entries],
        )
    finally:
        Layout._rebuild_chain = real  # type: ignore[method-assign]


@pytest.mark.parametrize("n", [1, 2, 3, 200])
def test_a_chain_is_laid_out_as_the_walk_lays_it_out(n):
    log = chain(n)
    fast, slow = layout_of(log), general_layout(log)
    assert fast.__dict__ == slow.__dict__
    rng = random.Random(n)
    ids = [e.id for e in log]
    for m in range(30):  # and grows the same way
        parent = rng.choice([*ids, ""]) if m % 3 else ids[-1]
        for lay in (fast, slow):
            lay.add(f"x{m}", parent, m % 5 == 0, False, "")
        ids.append(f"x{m}")
    assert fast.lines == slow.lines
    assert all(fast.info(i) == slow.info(i) and fast.rails(i) == slow.rails(i) for i in ids)


def test_logs_that_are_not_one_plain_chain_take_the_walk():
    eph = [*chain(5), msg("p", "e4", injected=ai.Injection.EPHEMERAL)]
    orphan = chain(5, "gone")
    assert layout_of(eph).__dict__ == general_layout(eph).__dict__
    assert layout_of(orphan).__dict__ == general_layout(orphan).__dict__


def test_counts_transcript_and_compaction_of_plain_messages_match_the_rules():
    log = chain(20)
    meta = [*log, msg("m", "e19", injected=ai.Injection.META)]
    comp = [*log, CompactionEntry(id="c", parent_id="e19", summary="s", first_kept_id="e10")]
    for entries in (log, meta, comp, []):
        general: dict[str, int] = {}
        for e in entries:
            general[entry_kind(e)] = general.get(entry_kind(e), 0) + 1
        assert counts(entries) == general
        assert transcript_view(entries) == [
            e for e in entries if not isinstance(e, MessageEntry) or e.message.injected is None
        ]
        assert latest_compaction(entries) == max(
            (i for i, e in enumerate(entries) if isinstance(e, CompactionEntry)), default=-1
        )


def test_a_tally_of_message_entries_is_the_tally_of_their_messages():
    log = chain(10)
    for i, e in enumerate(log):
        if e.message.role == "assistant":
            usage = [{"input_tokens": 7, "output_tokens": 3}, {"input_tokens": -1, "output_tokens": True}, {}][i % 3]
            log[i] = session.MessageEntry(
                id=e.id, parent_id=e.parent_id, message=ai.Message("assistant", [ai.Text("x")], usage=usage)
            )

    class Owner:
        pass

    owner = Owner()
    assert kept_tally(owner, "session", log) == tally(e.message for e in log)
    forget(owner)
    assert kept_tally(owner, "session", [*log, CompactionEntry(id="c", parent_id="e9")]) == tally(
        e.message for e in log
    )


def plain(lay: Layout) -> dict:
    """The layout's state with its arrays (a chain laid out without its index) as lists."""
    return {k: list(v) if isinstance(v, array) else v for k, v in lay.__dict__.items()}


@pytest.mark.parametrize("n", [1, 2, 3, 200, 1500])
def test_a_chain_laid_out_without_its_id_index_answers_as_the_walk(n):
    log = chain(n)
    lazy, slow = layout_of(log, distinct=True), general_layout(log)
    ids = [e.id for e in log]
    near = ids[-40:] + ids[:30]  # the lines near the leaf, the fallback's first lines
    assert lazy._kd is None  # the index is not made for the layout...
    assert lazy.ids(max(0, n - 40), n) == slow.ids(max(0, n - 40), n) and lazy.ids(0, 30) == slow.ids(0, 30)
    for i in near:  # ...nor for the lines near the leaf
        assert lazy.info(i) == slow.info(i) and lazy.rails(i) == slow.rails(i)
        assert lazy.position(i) == slow.position(i) and lazy.kids_of(i) == slow.kids_of(i)
        assert lazy.drawn(i) == slow.drawn(i) and i in lazy
    assert lazy._kd is None
    assert lazy.kids_of("") == slow.kids_of("") and lazy.position("") == slow.position("")
    assert ("nope" in lazy) is False and lazy.drawn("nope") is None and lazy.position("nope") == -1  # made here
    with pytest.raises(KeyError):
        lazy.info("nope")
    assert plain(lazy) == plain(slow)  # once made, the same layout
    copied = layout_of(log, distinct=True).copy()
    assert all(copied.position(i) == slow.position(i) for i in ids)
    assert "nope" not in copied and plain(copied) == plain(slow)


@pytest.mark.parametrize("n", [3, 700])
def test_a_chain_without_its_index_grows_as_the_walk(n):
    log = chain(n)
    lazy, slow = layout_of(log, distinct=True), general_layout(log)
    rng = random.Random(n)
    ids = [e.id for e in log]
    for m in range(30):
        parent = rng.choice([*ids, ""]) if m % 3 else ids[-1]
        for lay in (lazy, slow):
            lay.add(f"x{m}", parent, m % 5 == 0, False, "")
        ids.append(f"x{m}")
    lazy.add("e0", ids[-1])  # a duplicate id: the first entry keeps it
    slow.add("e0", ids[-1])
    assert lazy.lines == slow.lines and plain(lazy) == plain(slow)
    twin = layout_of(log, distinct=True)
    copied = twin.copy()
    copied.add("y", log[-1].id)
    assert "y" in copied and "y" not in twin and len(twin) == n and twin.lines == general_layout(log).lines
    assert all(lazy.info(i) == slow.info(i) and lazy.rails(i) == slow.rails(i) for i in ids)


def test_only_ids_known_distinct_skip_the_index():
    log = [*chain(4), msg("e1", "e3")]  # one chain by its parents, with a repeated id
    assert layout_of(log).lines == general_layout(log).lines == ["e0", "e1", "e2", "e3"]
    agent = durable.Agent()
    agent.run("hi").wait()
    entries, distinct = log_of(agent)
    assert distinct and entries == agent.entries() and agent.id_count() == len(entries)
    agent._log.remember(entries[0])  # a repeated id (the general rule keeps the first)
    assert log_of(agent) == (agent.entries(), False)
    assert log_of(object.__new__(Stub))[1] is False


class Stub:
    def entries(self, start: int = 0) -> list:
        return []


@pytest.mark.parametrize("n", [3, 1500])
def test_fresh_ids_added_to_a_chain_without_its_index_make_none(n):
    log = chain(n)
    lazy, slow = layout_of(log, distinct=True), general_layout(log)
    rng = random.Random(n)
    ids = [e.id for e in log]
    for m in range(30):
        parent = rng.choice(ids[-20:]) if m % 4 else ids[-1]
        for lay in (lazy, slow):
            lay.add(f"x{m}", parent, m % 7 == 3, False, "", fresh=True)
        ids.append(f"x{m}")
    assert lazy.lines == slow.lines
    assert all(lazy.info(i) == slow.info(i) and lazy.rails(i) == slow.rails(i) for i in ids[-60:])
    kept_lazy = lazy._kd is None
    far, slow_far = layout_of(log, distinct=True), general_layout(log)
    for lay in (far, slow_far):  # a parent far from both ends: the index is made then, "y" in it
        lay.add("y", log[n // 2].id, fresh=True)
    assert (far._kd is not None) == (n > 1024) and "y" in far and far.position("y") == slow_far.position("y")
    assert far.lines == slow_far.lines and "nope" not in far and plain(far) == plain(slow_far)
    assert n < 1024 or kept_lazy  # children near the leaf make no index
    assert "nope" not in lazy and plain(lazy) == plain(slow)


def test_a_log_shape_read_in_parts_is_the_shape_of_the_whole():
    from durable_nb.kept import shape_of
    from durable_nb.kinds.note import Note

    log = [
        *chain(6),
        msg("m", "e5", injected=ai.Injection.META),
        msg("p", "e5", injected=ai.Injection.EPHEMERAL),
        Note(id="n", parent_id="e5", body="b"),
        CompactionEntry(id="c", parent_id="n", summary="s"),
        *chain(3, "c"),
    ]
    whole = shape_of(log)
    assert whole.kinds is None and whole.n == len(log) and whole.last_id == log[-1].id  # counts() counts it
    assert not whole.messages_only and not whole.plain and whole.compactions
    assert whole.types == {type(e) for e in log} and ai.Injection.EPHEMERAL in whole.injected
    for cut in range(len(log) + 1):
        assert shape_of(log[cut:], shape_of(log[:cut])) == whole
    plain = shape_of(chain(4))
    assert plain.plain and plain.messages_only and not plain.compactions and plain.kinds == {"user": 2, "assistant": 2}
    assert plain.kinds == counts(chain(4)) and shape_of(chain(4)[2:], shape_of(chain(4)[:2])) == plain
    assert not shape_of([]).messages_only and shape_of([]).kinds == {}


def test_an_agents_kept_shape_follows_its_log():
    from durable_nb.kept import log_shape, shape_of

    agent = durable.Agent()
    agent.run("hi").wait()
    assert log_shape(agent) == shape_of(agent.entries()) and log_shape(agent).plain
    agent.append(durable.meta("a note for the model"))
    agent.run("again").wait()
    assert log_shape(agent) == shape_of(agent.entries()) and not log_shape(agent).plain
    forget(agent)
    assert log_shape(agent) == shape_of(agent.entries())


@pytest.mark.parametrize("first_parent", ["", "gone"])
def test_a_chain_known_from_its_path_is_laid_out_as_one_read_from_its_entries(first_parent):
    from durable_nb.kept import shape_of

    for n in (1, 2, 700):
        log = chain(n, first_parent)
        known = layout_of(log, distinct=True, shape=shape_of(log), chain=True)
        assert plain(known) == plain(layout_of(log, distinct=True))
        assert known._raw == [e.parent_id for e in log]
    eph = [*chain(5), msg("p", "e4", injected=ai.Injection.EPHEMERAL)]
    assert layout_of(eph, shape=shape_of(eph)).__dict__ == general_layout(eph).__dict__


def test_a_plain_path_is_its_own_transcript():
    log = chain(5)
    assert transcript_view(log, plain=True) == transcript_view(log) == log
    assert transcript_view(log, plain=True) is not log


def test_chips_of_a_log_whose_types_are_known_are_its_chips():
    from durable_nb.kept import shape_of
    from durable_nb.kinds.note import Note
    from durable_nb.widget.chips import Chips

    log = chain(3)
    assert len(Chips.of(log, shape_of(log).types)) == 0
    noted = [*log, Note(id="n", parent_id="e2", body="b")]
    assert list(Chips.of(noted, shape_of(noted).types).items()) == list(Chips.of(noted).items())
