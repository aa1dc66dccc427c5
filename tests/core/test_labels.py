"""Labels: names for entries, stored as custom entries; they resolve wherever an entry id does."""

from __future__ import annotations

import pytest
from core_helpers import msg, texts

from durable_nb import durable, session
from durable_nb.errors import DurableError, UnknownEntry
from durable_nb.session.labels import label_entry, labels, names_by_target


def lab(id: str, parent: str, name: str, target: str) -> session.CustomEntry:
    e = label_entry(name, target)
    e.id, e.parent_id = id, parent
    return e


def test_labels_in_log_order_later_wins_and_removal_drops():
    log = [
        msg("a"),
        msg("b", "a"),
        lab("l1", "b", "v1", "a"),
        lab("l2", "l1", "draft", "b"),
        lab("l3", "l2", "v1", "b"),  # relabel: v1 moves to b
        lab("l4", "l3", "gone", "a"),
        lab("l5", "l4", "gone", ""),  # removal
        session.CustomEntry(id="x", parent_id="l5", kind="label", data={"target_id": "a"}),  # no name: not a label
        session.CustomEntry(id="n", parent_id="x", kind="note", data={"name": "v1", "target_id": "a"}),
    ]
    assert labels(log) == {"v1": "b", "draft": "b"}
    assert names_by_target(log) == {"b": ["v1", "draft"]}
    assert labels([]) == {} and names_by_target([]) == {}


def test_label_names_the_leaf_and_resolves_like_an_id():
    a = durable.Agent()
    a.run("first").wait()
    reply = a.leaf_id
    e = a.label("v1")
    assert isinstance(e, session.CustomEntry) and e.kind == "label"
    assert e.data == {"name": "v1", "target_id": reply}
    assert session.display_text(e) == f"label v1 → {reply}"  # what the log, transcript and tree show
    assert a.labels() == {"v1": reply}
    assert a.resolve("v1") == reply and a.resolve(reply) == reply and a.resolve(reply[:4]) == reply
    # a label entry is custom: the model never sees it; labelling the leaf again steps over it
    assert texts(a.messages()) == ["first", a.entry(reply).message.text()]
    assert a.leaf_id == e.id
    assert a.label("v1") is e and len(a.entries()) == 3  # already so: nothing written
    a.label("also")
    assert a.labels() == {"v1": reply, "also": reply}


def test_relabel_moves_label_on_another_branch_and_unlabel(tmp_path):
    a = durable.Agent(store=session.JsonlStore(tmp_path), session_id="s")
    a.run("one").wait()
    one = a.leaf_id
    a.branch("")
    a.run("two").wait()
    two = a.leaf_id
    a.label("best", one)  # an entry off the active path
    assert a.resolve("best") == one and not a.on_path(one)
    a.label("best", two)  # relabel moves the name
    assert a.labels() == {"best": two}
    a.branch("best")
    assert a.leaf_id == two
    removed = a.unlabel("best")
    assert removed.data == {"name": "best", "target_id": ""}
    assert session.display_text(removed) == "label best removed"
    assert a.labels() == {}
    with pytest.raises(UnknownEntry, match="no entry or label 'best'"):
        a.resolve("best")
    with pytest.raises(DurableError, match="no label 'best'"):
        a.unlabel("best")


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_labels_survive_reopening_the_session(tmp_path, kind):
    def store():
        return session.JsonlStore(tmp_path) if kind == "jsonl" else session.SqliteStore(tmp_path / "s.db")

    a = durable.Agent(store=store(), session_id="s")
    a.run("hello").wait()
    first = a.path()[0].id
    a.label("start", first)
    a.label("end")
    a.label("tmp", first)
    a.unlabel("tmp")
    b = durable.Agent(store=store(), session_id="s")
    assert b.labels() == {"start": first, "end": a.path()[1].id} == a.labels()
    b.branch("start")
    assert b.leaf_id == first


def test_resolve_errors_are_one_line_with_did_you_mean():
    a = durable.Agent()
    a.run("x").wait()
    a.label("baseline")
    sid = a.session_id
    with pytest.raises(UnknownEntry, match=r"no entry or label 'baselien' .*did you mean 'baseline'\?"):
        a.resolve("baselien")
    with pytest.raises(UnknownEntry, match="no entry or label 'zzzzzz'") as info:
        a.branch("zzzzzz")
    assert "\n" not in str(info.value) and sid in str(info.value)
    first = a.path()[0].id
    with pytest.raises(UnknownEntry, match="too short"):
        a.resolve(first[:3])
    with pytest.raises(UnknownEntry, match="name an entry"):
        a.resolve("")


def test_an_ambiguous_prefix_is_refused_and_an_id_wins_over_a_label():
    store = session.MemoryStore()
    store.create_session(
        "s", entries=[msg("abcd1111"), msg("abcd2222", "abcd1111"), lab("l", "abcd2222", "x", "abcd1111")]
    )
    a = durable.Agent(store=store, session_id="s")
    with pytest.raises(UnknownEntry, match=r"'abcd' starts 2 entry ids .*abcd1111, abcd2222.*give more characters"):
        a.resolve("abcd")
    assert a.resolve("abcd2") == "abcd2222" and a.resolve("x") == "abcd1111"
    with pytest.raises(DurableError, match="entry id"):
        a.label("abcd2222")


def test_bad_label_names_and_targets_are_refused():
    a = durable.Agent()
    with pytest.raises(DurableError, match="no entry to label yet"):
        a.label("v1")
    a.run(durable.ephemeral("now"), "q").wait()
    eph = next(e for e in a.entries() if session.is_ephemeral(e))
    for name, what in [("", "needs a name"), ("my label", "one word without spaces"), (a.leaf_id, "entry id")]:
        with pytest.raises(DurableError, match=what):
            a.label(name)
    with pytest.raises(DurableError, match="ephemeral"):
        a.label("now", eph.id)
    e = a.label("ok")
    with pytest.raises(DurableError, match="is a label entry"):
        a.label("meta-label", e.id)
    with pytest.raises(UnknownEntry, match="no entry or label 'nope'"):
        a.label("v2", "nope")
    assert a.labels() == {"ok": e.data["target_id"]}


def test_fork_at_a_label_copies_that_path_and_remaps_labels():
    a = durable.Agent()
    a.run("one").wait()
    a.label("v1")
    a.run("two").wait()
    a.label("v2")
    f = a.fork("copy", at="v1")
    assert texts(f.messages())[0] == "one" and len(f.messages()) == 2
    assert f.labels() == {}  # the path to v1's entry holds no label entry
    g = a.fork("copy-all")
    assert set(g.labels()) == {"v1", "v2"}
    for name, target in g.labels().items():  # remapped to the copy's ids
        assert g.entry(target).message.text() == a.entry(a.resolve(name)).message.text()
    with pytest.raises(UnknownEntry, match=r"did you mean 'v[12]'"):
        a.fork("bad", at="v3")


def test_compare_and_replay_take_labels_too():
    a = durable.Agent()
    a.run("one").wait()
    a.label("v1")
    a.branch("")
    a.run("two").wait()
    a.label("v2")
    a.label("q2", a.path()[0].id)
    c = durable.compare(a, "v1", "v2")
    assert [s.entry_id for s in c.sides] == [a.resolve("v1"), a.resolve("v2")]
    assert [s.ref for s in c.sides] == ["v1", "v2"]  # each side is named as asked
    with pytest.raises(UnknownEntry, match="did you mean 'v2'"):
        durable.compare(a, "v1", "v22")
    before = a.resolve("q2")
    a.replay("q2", model=lambda messages: "again")  # from the labelled user message: a sibling of it
    assert a.path()[0].id != before and a.entry(a.path()[0].id).parent_id == a.entry(before).parent_id
    with pytest.raises(UnknownEntry, match="did you mean 'q2'"):
        a.replay("q3", model=lambda messages: "x")


def test_a_reopened_sessions_labels_count_what_was_appended_before_they_were_first_asked_for(tmp_path):
    """A loaded log's labels are found when first asked for (the open does not scan for them): the
    entries appended in between count, in log order, as they would have counted one by one."""
    store = session.JsonlStore(tmp_path)
    a = durable.Agent(store=store, session_id="s")
    a.run("one").wait()
    one = a.leaf_id
    a.label("v1")
    a.run("two").wait()
    two = a.leaf_id
    b = durable.Agent(store=store, session_id="s")
    b.append(lab("l9", b.leaf_id, "v1", two))  # moves v1 before anything asked for the labels
    b.append(lab("l10", "l9", "first", one))
    assert b.labels() == {"v1": two, "first": one}
    b.label("last", one)  # once found, each new label is taken in as it is appended
    assert b.labels() == {"v1": two, "first": one, "last": one}
    assert durable.Agent(store=store, session_id="s").labels() == b.labels()
