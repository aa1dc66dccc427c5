"""One test (or a few) per rule R1–R14 of DESIGN.md, named after the rule."""

from __future__ import annotations

import json
import warnings

import pytest
from core_helpers import Recorder, ids, msg, texts

from durable_nb import ai, durable, session
from durable_nb.errors import DurableError


class Artifact(session.CustomEntry):
    title: str = ""
    size: int = 0


session.register_custom("artifact", Artifact)


def test_R1_header_assigned_on_append_and_parent_pointers_make_the_tree(store):
    agent = durable.Agent(store=store, session_id="s")
    agent.run("one").wait()
    agent.run("two").wait()
    entries = store.load_entries("s")
    assert len({e.id for e in entries}) == 4 and all(e.id for e in entries)
    assert entries[0].parent_id == ""
    assert [e.parent_id for e in entries[1:]] == [e.id for e in entries[:-1]]
    assert all(e.created_at.endswith("Z") for e in entries)
    assert entries[0].created_at <= entries[-1].created_at


def test_R1_caller_entries_are_not_mutated():
    agent = durable.Agent()
    e = durable.text("hi")
    agent.run(e).wait()
    assert e.id == "" and e.parent_id == ""


def test_R2_three_shapes_round_trip_and_custom_decodes_into_its_class(store):
    store.create_session("s")
    entries = [
        msg("a"),
        session.CompactionEntry(id="c", parent_id="a", summary="sum", first_kept_id="a", tokens_before=12),
        Artifact(id="x", parent_id="c", kind="artifact", title="plot", size=3),
    ]
    store.append_entries("s", entries)
    back = store.load_entries("s")
    assert back == entries
    assert type(back[2]) is Artifact and back[2].title == "plot"


def test_R2_unregistered_custom_kind_decodes_to_bare_custom_entry_keeping_everything(store):
    store.create_session("s")

    class Temp(session.CustomEntry):
        body: str = ""

    store.append_entries("s", [Temp(id="t", kind="never-registered", body="keep me")])
    back = store.load_entries("s")[0]
    assert type(back) is session.CustomEntry
    assert (back.id, back.kind, back.data) == ("t", "never-registered", {"body": "keep me"})
    # and it re-encodes losslessly
    assert session.encode(back) == session.encode(Temp(id="t", kind="never-registered", body="keep me"))


def test_R3_injection_lives_on_the_message_not_the_entry(tmp_path):
    store = session.JsonlStore(tmp_path)
    agent = durable.Agent(store=store, session_id="s")
    agent.run(durable.meta("skill body", origin="skill:release"), "go").wait()
    lines = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    meta_line = lines[1]
    assert meta_line["message"]["injected"] == "meta"
    assert meta_line["message"]["origin"] == "skill:release"
    assert not any(k in meta_line for k in ("meta", "injected", "ephemeral"))
    # the stream event carries the same flag on its message
    seen = []
    for ev in agent.run(durable.meta("again", origin="cell:x"), "go"):
        if ev.type == "agent_start":
            seen = [e.message.injected for e in ev.entries]
    assert seen == [ai.Injection.META, None]


def test_R4_who_sees_what(tmp_path):
    received = []

    def model(messages):
        received.append([(m.text(), m.injected) for m in messages])
        return "ok"

    store = session.JsonlStore(tmp_path)
    agent = durable.Agent(model=model, store=store, session_id="s")
    agent.run(
        durable.text("ordinary"),
        durable.meta("meta text"),
        durable.ephemeral("ephemeral text"),
        Artifact(kind="artifact", title="custom text"),
    ).wait()
    sent = [t for t, _ in received[0]]
    assert sent == ["ordinary", "meta text", "ephemeral text"]  # custom never reaches the model
    raw = (tmp_path / "s.jsonl").read_text()
    assert "ordinary" in raw and "meta text" in raw and "custom text" in raw
    assert "ephemeral text" not in raw
    shown = [session.display_text(e) for e in agent.transcript()]
    assert "ordinary" in shown and "meta text" not in shown and "ephemeral text" not in shown
    assert any(isinstance(e, Artifact) for e in agent.transcript())
    # next run: the ephemeral text is gone, the meta text stays
    agent.run("next").wait()
    assert [t for t, _ in received[1]][:2] == ["ordinary", "meta text"]
    assert "ephemeral text" not in [t for t, _ in received[1]]


def test_R5_entries_reach_the_model_in_the_order_given():
    received = []
    agent = durable.Agent(model=lambda m: received.append(texts(m)) or "ok")
    agent.run(durable.ephemeral("reminder"), durable.meta("skill"), durable.text("question")).wait()
    assert received[0] == ["reminder", "skill", "question"]


def test_R6_model_view_meta_in_custom_out():
    path = [msg("a"), msg("m", "a", injected="meta"), Artifact(id="x", parent_id="m", kind="artifact"), msg("b", "x")]
    assert texts(session.model_view(path)) == ["a", "m", "b"]


def test_R6_latest_compaction_wins_and_elides_before_first_kept():
    path = [
        msg("a"),
        msg("b", "a", role="assistant"),
        msg("c", "b"),
        msg("d", "c", role="assistant"),
        session.CompactionEntry(id="k1", parent_id="d", summary="old summary", first_kept_id="c"),
        msg("e", "k1"),
        msg("f", "e", role="assistant"),
        session.CompactionEntry(id="k2", parent_id="f", summary="new summary", first_kept_id="e"),
        msg("g", "k2"),
    ]
    view = session.model_view(path)
    assert "new summary" in view[0].text() and view[0].role == "user"
    assert texts(view[1:]) == ["e", "f", "g"]
    assert not any("old summary" in t for t in texts(view))


def test_R6_compaction_with_empty_first_kept_keeps_only_what_follows():
    path = [msg("a"), session.CompactionEntry(id="k", parent_id="a", summary="S"), msg("b", "k")]
    view = session.model_view(path)
    assert len(view) == 2 and "S" in view[0].text() and view[1].text() == "b"


def test_R6_dangling_tool_calls_are_repaired():
    call = ai.Message(role="assistant", content=[ai.ToolCall("t1", "ls", {}), ai.ToolCall("t2", "cat", {"f": "x"})])
    result = ai.Message(role="tool_result", content=[ai.Text("files")], tool_call_id="t1")
    path = [
        msg("u"),
        session.MessageEntry(id="c", parent_id="u", message=call),
        session.MessageEntry(id="r", parent_id="c", message=result),
        msg("u2", "r"),
    ]
    view = session.model_view(path)
    assert [m.role for m in view] == ["user", "assistant", "tool_result", "tool_result", "user"]
    synth = view[3]
    assert synth.tool_call_id == "t2" and synth.is_error and "interrupted" in synth.text()
    # a call with nothing after it is repaired at the end
    view2 = session.model_view(path[:2])
    assert [m.tool_call_id for m in view2[2:]] == ["t1", "t2"]


def test_R6_a_call_left_dangling_before_the_next_reply_is_repaired_in_place_or_in_a_copy():
    from durable_nb.session.view import ViewBuilder

    def turn(k: int) -> list[ai.Message]:
        call = ai.Message(role="assistant", content=[ai.ToolCall(f"a{k}", "ls", {}), ai.ToolCall(f"b{k}", "ls", {})])
        done = ai.Message(role="tool_result", content=[ai.Text("ok")], tool_call_id=f"a{k}")
        return [call, done, ai.Message(role="user", content=[ai.Text(f"q{k}")])]

    msgs = [m for k in range(50) for m in turn(k)] + [ai.Message(role="assistant", content=[ai.Text("end")])]
    want = [(m.role, m.tool_call_id) for k in range(50) for m in turn(k)[:2]]
    want = [x for k in range(50) for x in (want[2 * k], want[2 * k + 1], ("tool_result", f"b{k}"), ("user", None))]
    # a view being built (no one else holds its list) takes each repair in place
    assert [(m.role, m.tool_call_id) for m in session.repair_tool_calls(msgs)] == [*want, ("assistant", None)]
    # a list someone holds (a cached view's snapshot) is never changed: the builder moves to a copy
    builder = ViewBuilder()
    for m in msgs[:3]:
        builder.add(m)
    held, n = builder.out, len(builder.out)
    before = list(held)
    builder.add(msgs[3])  # the next reply, after the dangling call b0
    assert held[:n] == before and builder.out is not held
    assert [(m.role, m.tool_call_id) for m in builder.out] == [*want[:4], ("assistant", None)]


def test_R7_transcript_hides_injected_keeps_custom_and_shows_text_blocks_only():
    tool = ai.Message(role="tool_result", tool_call_id="t", content=[ai.Text("42 files"), ai.Reminder("be brief")])
    path = [
        msg("m", injected="meta"),
        msg("e", "m", injected="ephemeral"),
        msg("u", "m"),
        session.MessageEntry(id="t", parent_id="u", message=tool),
        Artifact(id="x", parent_id="t", kind="artifact"),
    ]
    shown = session.transcript_view(path)
    assert ids(shown) == ["u", "t", "x"]
    assert session.display_text(shown[1]) == "42 files"
    # the model still gets the reminder
    assert any(isinstance(b, ai.Reminder) for m in session.model_view(path) for b in m.content)


def test_R8_ephemeral_gets_an_id_hangs_off_the_leaf_and_never_reaches_the_store(store):
    agent = durable.Agent(store=store, session_id="s")
    agent.run("first").wait()
    leaf = agent.leaf_id
    events = list(agent.run(durable.meta("m"), durable.ephemeral("now"), durable.text("q")))
    log = agent.entries()
    eph = [e for e in log if session.is_ephemeral(e)]
    assert len(eph) == 1 and eph[0].id
    meta_entry = next(e for e in log if getattr(e, "message", None) and e.message.text() == "m")
    assert meta_entry.parent_id == leaf
    assert eph[0].parent_id == meta_entry.id  # hangs off the leaf at the moment it was appended
    q = next(e for e in log if getattr(e, "message", None) and e.message.text() == "q")
    assert q.parent_id == meta_entry.id  # the chain skips the ephemeral entry
    assert all(e.parent_id != eph[0].id for e in log)
    assert eph[0].id not in ids(agent.path())
    assert eph[0].id not in ids(store.load_entries("s"))
    receipts = [e for ev in events for e in ev.entries]
    assert eph[0].id not in ids(receipts)
    with pytest.raises(DurableError, match="ephemeral"):
        agent.branch(eph[0].id)
    # reopening: the whole stored path resolves (user -> meta -> q -> reply)
    again = durable.Agent(store=store, session_id="s")
    reopened = texts(again.messages())
    assert reopened[0] == "first" and reopened[2:4] == ["m", "q"]
    assert len(again.path()) == len(store.load_entries("s")) == 5


def test_R8_fork_and_later_runs_skip_ephemeral():
    received = []
    agent = durable.Agent(model=lambda m: received.append(texts(m)) or "ok")
    agent.run(durable.ephemeral("temp"), "q1").wait()
    agent.run("q2").wait()
    assert "temp" not in received[1]
    forked = agent.fork("f")
    assert "temp" not in [session.display_text(e) for e in forked.entries()]


def test_R9_branch_moves_only_the_leaf_and_reopen_resumes_at_last_appended(store):
    agent = durable.Agent(store=store, session_id="s")
    agent.run("q1").wait()
    first_reply = agent.leaf_id
    agent.run("q2").wait()
    n = len(store.load_entries("s"))
    agent.branch(first_reply)
    assert agent.leaf_id == first_reply and len(store.load_entries("s")) == n
    agent.run("q2 edited").wait()
    tree = session.tree(agent.entries())
    reply_node = tree[0].children[0]
    assert len(reply_node.children) == 2  # two sibling branches
    last = store.load_entries("s")[-1].id
    agent.branch(first_reply)  # remembered branch point is not persisted
    assert durable.Agent(store=store, session_id="s").leaf_id == last


def test_R9_branch_to_empty_makes_a_new_root():
    agent = durable.Agent()
    agent.run("first").wait()
    agent.branch("")
    assert agent.leaf_id == "" and agent.messages() == []
    agent.run("edited first").wait()
    assert len(session.tree(agent.entries())) == 2
    assert texts(agent.messages())[0] == "edited first"


def test_R10_fork_copies_the_active_path_rechained_with_fresh_ids(store):
    pub = Recorder()
    agent = durable.Agent(store=store, session_id="src", publisher=pub)
    agent.run("q1").wait()
    mid = agent.leaf_id
    agent.run("q2").wait()
    agent.branch(mid)
    agent.run("q2b").wait()
    agent.compact(keep_turns=1)
    forked = agent.fork("dst")
    src_path = agent.path()
    dst = store.load_entries("dst")
    assert store.load_session("dst").parent_id == "src"
    assert len(dst) == len(src_path)
    assert not set(ids(dst)) & set(ids(agent.entries()))
    assert [e.created_at for e in dst] == [e.created_at for e in src_path]
    assert dst[0].parent_id == "" and all(d.parent_id == p.id for p, d in zip(dst, dst[1:]))
    assert texts(forked.messages()) == texts(agent.messages())
    comp = next(e for e in dst if isinstance(e, session.CompactionEntry))
    assert comp.first_kept_id in ids(dst)
    assert "session_forked" in pub.types()


def test_R11_compaction_deletes_nothing_and_counts_turns_at_non_injected_user_messages(store):
    pub = Recorder()
    agent = durable.Agent(store=store, session_id="s", publisher=pub)
    agent.run(durable.meta("skill"), "q1").wait()
    agent.run(durable.meta("more skill"), "q2").wait()
    agent.run("q3").wait()
    before = agent.leaf_id
    n = len(store.load_entries("s"))
    entry = agent.compact(keep_turns=2)
    assert isinstance(entry, session.CompactionEntry)
    kept = agent.entry(entry.first_kept_id)
    # keep 2 turns: the turn starts at q2 (a meta message is not a turn start)
    assert kept.message.text() == "q2"
    assert len(store.load_entries("s")) == n + 1
    view = agent.messages()
    assert "compacted" in view[0].text()
    assert texts(view)[1:4] == ["q2", texts(view)[2], "q3"]
    agent.branch(before)  # the uncompacted conversation comes back
    assert texts(agent.messages())[:2] == ["skill", "q1"]
    assert pub.types().count("session_compacted") == 1


def test_R11_nothing_to_summarise_gives_no_entry_and_no_event():
    pub = Recorder()
    agent = durable.Agent(publisher=pub)
    assert agent.compact() is None
    agent.run("q1").wait()
    assert agent.compact(keep_turns=1) is None
    assert agent.compact(keep_turns=5) is None
    assert "session_compacted" not in pub.types()
    assert agent.compact() is not None
    assert agent.compact() is None  # only the summary is left


def test_R11_summary_is_written_by_the_sessions_own_model():
    agent = durable.Agent(model=lambda m: f"SUMMARY OF {len(m)}")
    agent.run("q1").wait()
    agent.run("q2").wait()
    entry = agent.compact(keep_turns=1, prompt="please summarise")
    assert entry.summary == "SUMMARY OF 3"  # q1, reply, prompt
    assert entry.tokens_before > 0


def test_R12_model_that_cannot_start_leaves_the_store_untouched(tmp_path):
    store = session.JsonlStore(tmp_path)
    agent = durable.Agent(model="nosuchprovider:x", store=store, session_id="s")
    before = (tmp_path / "s.jsonl").read_bytes()
    with pytest.raises(DurableError, match="unknown model"):
        agent.run("hello")
    assert (tmp_path / "s.jsonl").read_bytes() == before


def test_R12_receipts_come_after_the_append_and_carry_the_new_leaf(tmp_path):
    store = session.JsonlStore(tmp_path)
    agent = durable.Agent(store=store, session_id="s")
    seen = []
    for ev in agent.run(durable.meta("m"), "q"):
        if ev.type in ("agent_start", "message_end"):
            stored = ids(store.load_entries("s"))
            assert set(ids(ev.entries)) <= set(stored)
            assert ev.leaf_id == ev.entries[-1].id
        seen.append(ev.type)
    assert seen[0] == "agent_start" and seen[-2:] == ["message_end", "agent_end"]
    assert "text_delta" in seen


def test_R12_lifecycle_events_go_to_the_publisher_after_success():
    pub = Recorder()
    agent = durable.Agent(publisher=pub, session_id="s")
    agent.run("q").wait()
    agent.branch("")
    with pytest.raises(DurableError):
        agent.branch("nope")
    agent.fork("f")
    assert pub.types() == ["session_init", "session_branched", "session_forked", "session_init"]


def test_R13_legacy_meta_flag_is_read_by_nothing_and_reported_once(tmp_path):
    f = tmp_path / "old.jsonl"
    lines = [
        {"type": "session_init", "id": "old", "parent_id": "", "created_at": "2025-01-01T00:00:00Z"},
        {
            "type": "message",
            "id": "a",
            "parent_id": "",
            "created_at": "",
            "meta": True,
            "message": {"role": "user", "content": [{"type": "text", "text": "skill body"}]},
        },
        {
            "type": "message",
            "id": "b",
            "parent_id": "a",
            "created_at": "",
            "message": {"role": "user", "content": [{"type": "text", "text": "question"}]},
        },
    ]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = durable.Agent(store=session.JsonlStore(tmp_path), session_id="old")
    legacy = [w for w in caught if issubclass(w.category, session.LegacyMetaWarning)]
    assert len(legacy) == 1 and "'old'" in str(legacy[0].message) and "1 entry" in str(legacy[0].message)
    # it loads as an ordinary message: visible in the transcript
    assert [session.display_text(e) for e in agent.transcript()] == ["skill body", "question"]
    # and counts as a turn for compaction: keep 1 turn keeps "question", summarises "skill body"
    assert agent.entry(agent.compact(keep_turns=1).first_kept_id).message.text() == "question"
    # we never write the legacy key
    assert all('"meta"' not in line for line in f.read_text().splitlines()[3:])


def test_R13_meta_false_is_not_the_legacy_flag_in_the_store_or_the_importer(tmp_path):
    from durable_nb.importers import open_session

    f = tmp_path / "plain.jsonl"
    lines = [
        {"type": "session_init", "id": "plain", "parent_id": "", "created_at": "2025-01-01T00:00:00Z"},
        {
            "type": "message",
            "id": "a",
            "parent_id": "",
            "created_at": "",
            "meta": False,
            "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        },
    ]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        entries = session.JsonlStore(tmp_path).load_entries("plain")
    assert [session.display_text(e) for e in entries] == ["hi"]
    assert not [w for w in caught if issubclass(w.category, session.LegacyMetaWarning)]
    assert open_session(f).warnings == []


def test_rule_homes_answer_the_small_questions_once():
    from durable_nb.session import entry_kind, is_turn_start, safe_session_id

    def m(role, injected=None):
        return session.MessageEntry(id="x", message=ai.Message(role=role, content=[ai.Text("t")], injected=injected))

    assert is_turn_start(m("user")) and not is_turn_start(m("user", ai.Injection.META))
    assert not is_turn_start(m("assistant")) and not is_turn_start(session.CompactionEntry(id="c"))
    assert [entry_kind(e) for e in (m("user"), m("user", ai.Injection.EPHEMERAL), m("tool_result"))] == [
        "user",
        "ephemeral",
        "tool_result",
    ]
    assert entry_kind(session.CompactionEntry(id="c")) == "compaction"
    assert safe_session_id("My Notes (1)") == "My-Notes-1" and safe_session_id("..", default="d") == "d"


def test_R14_two_live_agents_grow_sibling_branches(store):
    a = durable.Agent(store=store, session_id="s")
    a.run("start").wait()
    b = durable.Agent(store=store, session_id="s")
    a.run("from a").wait()
    b.run("from b").wait()
    entries = store.load_entries("s")
    roots = session.tree(entries)
    assert len(roots) == 1
    reply = roots[0].children[0]
    assert sorted(session.display_text(n.entry) for n in reply.children) == ["from a", "from b"]
    assert len(entries) == 6


def test_siblings_are_ordered_by_created_at_with_ties_in_log_order():
    def e(id_, parent, at):
        return session.CustomEntry(id=id_, parent_id=parent, created_at=at, kind="k")

    entries = [
        e("r2", "", "2026-01-01T00:00:05Z"),
        e("r1", "", "2026-01-01T00:00:01.5+00:00"),
        e("c-late", "r1", "2026-01-01T01:00:00Z"),
        e("c-tie-a", "r1", "2026-01-01T00:30:00.000000Z"),
        e("c-early", "r1", "2026-01-01T02:00:00+03:00"),  # 23:00 the day before, UTC
        e("c-tie-b", "r1", "2026-01-01T00:30:00Z"),  # same instant as c-tie-a: log order
        e("c-nano", "r1", "2026-01-01T00:29:59.999999999Z"),  # Go's nanoseconds, cut to microseconds
        e("c-none", "r1", ""),  # unreadable: first, as Go's zero time
    ]
    roots = session.tree(entries)
    assert [n.entry.id for n in roots] == ["r1", "r2"]
    assert [n.entry.id for n in roots[0].children] == ["c-none", "c-early", "c-nano", "c-tie-a", "c-tie-b", "c-late"]
    # the one rule, for any kind of item (the widget and the share pages sort rows with it)
    rows = [{"id": "x", "created_at": "2026-01-01T00:00:02Z"}, {"id": "y", "created_at": "2026-01-01T00:00:01Z"}]
    assert [r["id"] for r in session.sort_siblings(rows, lambda r: r["created_at"])] == ["y", "x"]
    assert session.created_key("not a time") == float("-inf")


def test_lifecycle_events_carry_what_pi_gos_do(store):
    pub = Recorder()
    agent = durable.Agent(store=store, session_id="s", publisher=pub)
    assert [(e.type, e.session_id, e.leaf_id) for e in pub.events] == [("session_init", "s", "")]
    agent.run("q1").wait()
    first = agent.leaf_id
    agent.run("q2").wait()
    leaf = agent.leaf_id
    pub.events.clear()
    agent.branch(first)
    (br,) = pub.events
    assert (br.type, br.from_id, br.leaf_id) == ("session_branched", leaf, first)
    pub.events.clear()
    child = agent.fork("child")
    forked, init = pub.events
    assert (forked.type, forked.session_id, forked.parent_id, forked.leaf_id) == (
        "session_forked",
        "child",
        "s",
        child.leaf_id,
    )
    assert (init.type, init.session_id, init.leaf_id) == ("session_init", "child", child.leaf_id)
    pub.events.clear()
    durable.Agent(store=store, session_id="s", publisher=pub)  # resumed: "new or resumed"
    assert [(e.type, e.session_id, e.leaf_id) for e in pub.events] == [("session_init", "s", leaf)]
