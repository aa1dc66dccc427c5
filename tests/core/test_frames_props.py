"""durable_nb.frame, durable_nb.annotations and store search over random stores of several sessions
(JSONL and SQLite; branches, custom entries, labels, annotations, unicode), each held to a plain
recomputation from the store's own entries (docs/frames.md, docs/stores.md "Search")."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import durable_nb
from durable_nb import ai, session
from durable_nb.durable import Agent, meta
from durable_nb.errors import DurableError
from durable_nb.frames import COLUMNS, EXTRAS
from durable_nb.kinds.annotation import AnnotationEntry
from durable_nb.session import CustomEntry, MessageEntry, entry_kind, path, resume_leaf
from durable_nb.session.labels import label_of
from durable_nb.session.search import search_text, words

pd = pytest.importorskip("pandas")

WORDS = ["Straße", "STRASSE", "café", "cafe", "日本", "foo_bar", "foo", "bar", "x2", "İstanbul", "naïve", "😀"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
op = st.one_of(
    st.tuples(st.just("user"), text),
    st.tuples(st.just("reply"), text, st.booleans()),
    st.tuples(st.just("meta"), text),
    st.tuples(st.just("note"), text),
    st.tuples(st.just("branch"), st.integers(0, 99)),
    st.tuples(st.just("label"), st.sampled_from(["v1", "v2", "ß"]), st.integers(0, 99)),
    st.tuples(st.just("unlabel"), st.sampled_from(["v1", "v2", "ß"])),
    st.tuples(
        st.just("annotate"), st.integers(0, 99), st.none() | text, st.none() | st.integers(-3, 3),
        st.lists(st.sampled_from(["ok", "wrong", "日本"]), max_size=2), st.sampled_from(["ana", "bo", "çé"]),
    ),
)  # fmt: skip
store_ops = st.lists(
    st.tuples(st.sampled_from(["s1", "s2", "s3"]), st.lists(op, min_size=1, max_size=8)), min_size=1, max_size=4
)


def fill(store: session.Store, plan: list) -> None:
    """Apply ``plan`` (``[(session id, ops)]``; a session named again is reopened) to ``store``."""
    for sid, ops in plan:
        a = Agent(store=store, session_id=sid)
        for o in ops:
            kind, stored = o[0], [e for e in a.entries() if not isinstance(e, AnnotationEntry)]
            if kind == "user":
                a.append(o[1])
            elif kind == "reply":
                calls = [ai.ToolCall(id="c1", name="look", arguments={})] if o[2] else []
                m = ai.Message(role="assistant", content=[ai.Text(o[1]), *calls], model="gpt-4o-mini",
                               usage={"input_tokens": 10, "output_tokens": 2})  # fmt: skip
                a.append(MessageEntry(message=m))
            elif kind == "meta":
                a.append(meta(o[1]))
            elif kind == "note":
                a.append(CustomEntry(kind="note", data={"body": o[1]}))
            elif kind == "branch" and stored:
                a.branch(stored[o[1] % len(stored)].id)
            elif kind == "label":
                targets = [e for e in stored if label_of(e) is None]
                if targets:
                    a.label(o[1], targets[o[2] % len(targets)].id)
            elif kind == "unlabel" and o[1] in a.labels():
                a.unlabel(o[1])
            elif kind == "annotate" and stored and (o[2] or o[3] is not None or o[4]):
                a.annotate(stored[o[1] % len(stored)].id, note=o[2], score=o[3], tags=o[4], by=o[5])


def stores(root: Path):
    yield session.JsonlStore(root / "j")
    s = session.SqliteStore(root / "x.db")
    try:
        yield s
    finally:
        s.close()


def expected_labels(entries) -> dict[str, list[str]]:
    named: dict[str, str] = {}
    for e in entries:
        got = label_of(e)
        if got is not None:
            named.pop(got[0], None)  # a moved name goes where it was set last
            if got[1]:
                named[got[0]] = got[1]
    out: dict[str, list[str]] = {}
    for name, target in named.items():
        out.setdefault(target, []).append(name)
    return out


SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SLOW
@given(store_ops)
def test_frame_rows_are_the_stores_entries(plan):
    root = Path(tempfile.mkdtemp())
    try:
        for store in stores(root):
            fill(store, plan)
            f = durable_nb.frame(store)
            assert list(f.columns) == [*COLUMNS, *EXTRAS]
            want = []
            for rec in store.list_sessions():
                entries = store.load_entries(rec.id)
                on = {e.id for e in path(entries, resume_leaf(entries))}
                named = expected_labels(entries)
                for e in entries:
                    m = e.message if isinstance(e, MessageEntry) else None
                    want.append((rec.id, e.id, e.parent_id, entry_kind(e), m.role if m else None,
                                 m.text() if m else None, e.id in on, sorted(named.get(e.id, []))))  # fmt: skip
            got = [
                (r.session_id, r.id, r.parent_id, r.kind, None if pd.isna(r.role) else r.role,
                 None if r.role is pd.NA or pd.isna(r.role) else r.text, bool(r.on_active_path), sorted(r.labels))
                for r in f.itertuples()
            ]  # fmt: skip
            assert got == want
            assert not (f.kind == "annotation").any() or not f[f.kind == "annotation"].on_active_path.any()

            a = durable_nb.annotations(store)
            notes = [(rec.id, e) for rec in store.list_sessions() for e in store.load_entries(rec.id)
                     if isinstance(e, AnnotationEntry)]  # fmt: skip
            assert list(a.id) == [e.id for _, e in notes]
            last = {(sid, e.target_id): e.id for sid, e in notes}
            assert list(a.latest) == [last[(sid, e.target_id)] == e.id for sid, e in notes]
            assert list(a.by) == [e.by for _, e in notes] and [list(t) for t in a.tags] == [e.tags for _, e in notes]
    finally:
        shutil.rmtree(root)


@SLOW
@given(store_ops, st.lists(st.sampled_from(WORDS), min_size=1, max_size=2).map(" ".join), st.integers(0, 3))
def test_search_finds_what_the_word_rule_says_in_every_store(plan, query, limit):
    root = Path(tempfile.mkdtemp())
    try:
        for store in stores(root):
            fill(store, plan)
            q = words(query)
            want = {
                (rec.id, e.id)
                for rec in store.list_sessions()
                for e in store.load_entries(rec.id)
                if q and all(w in set(words(search_text(e))) for w in q)
            }  # a query of no words (an emoji is not one) finds nothing
            everything = store.search(query, limit=10**6)
            assert {(h.session_id, h.entry_id) for h in everything} == want, type(store).__name__
            some = store.search(query, limit=limit)
            assert len(some) == min(limit, len(want)), (type(store).__name__, limit)  # "at most limit"
            assert {(h.session_id, h.entry_id) for h in some} <= want
    finally:
        shutil.rmtree(root)


@pytest.mark.parametrize("kind", ["memory", "jsonl", "sqlite"])
def test_sessions_keeps_only_the_named_ones_in_the_sources_order(kind, tmp_path):
    """``sessions=`` keeps only the sessions named (docs/frames.md), sessions in the source's order
    (frame's docstring): naming one twice or in another order neither repeats nor reorders rows."""
    store = {"memory": session.MemoryStore, "jsonl": lambda: session.JsonlStore(tmp_path / "j"),
             "sqlite": lambda: session.SqliteStore(tmp_path / "x.db")}[kind]()  # fmt: skip
    for sid in ("a", "b", "c"):
        Agent(store=store, session_id=sid).append(f"hello from {sid}")
    order = [r.id for r in store.list_sessions()]
    f = durable_nb.frame(store, sessions=["c", "a", "c"])
    assert list(f.session_id) == [s for s in order if s in ("a", "c")]
    a = durable_nb.annotations(store, sessions=["c", "c"])
    assert len(a) == 0
    with pytest.raises(DurableError, match="no session 'nope'"):
        durable_nb.frame(store, sessions=["a", "nope"])


@pytest.mark.parametrize("kind", ["memory", "jsonl", "sqlite"])
def test_a_search_limit_of_zero_finds_nothing(kind, tmp_path):
    """``limit`` is "at most": 0 gives no hit in every store (a scan gave one)."""
    store = {"memory": session.MemoryStore, "jsonl": lambda: session.JsonlStore(tmp_path / "j"),
             "sqlite": lambda: session.SqliteStore(tmp_path / "x.db")}[kind]()  # fmt: skip
    Agent(store=store, session_id="s").append("hello", "hello again")
    assert store.search("hello", limit=0) == []
    assert len(store.search("hello", limit=1)) == 1
    assert session.browse.search_store(store, "hello", limit=0) == []


def test_a_mistyped_argument_is_one_line_not_a_type_error(tmp_path):
    """A number where sessions= or tags= wants words is refused in one line (it was a TypeError)."""
    agent = Agent(store=session.JsonlStore(tmp_path / "d"), session_id="s")
    (u,) = agent.append("hi")
    with pytest.raises(DurableError, match=r"^sessions= takes a session id or a list of them, not 3$"):
        durable_nb.frame(agent.store, sessions=3)
    with pytest.raises(DurableError, match=r"^sessions= takes"):
        durable_nb.annotations(str(tmp_path / "d"), sessions=3)
    with pytest.raises(DurableError, match=r"^an annotation's tags are a word or a list of words, not 5$"):
        agent.annotate(u.id, tags=5)
    assert len(agent.store.load_entries("s")) == 1  # nothing written
