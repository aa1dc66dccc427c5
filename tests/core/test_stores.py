"""The store contract, for both stores, and the JSONL file format."""

from __future__ import annotations

import gc
import json
import os
import sys

import pytest
from core_helpers import ids, msg

from durable_nb import ai, session
from durable_nb.errors import CorruptLog, DurableError, EphemeralNotStored, InvalidSessionId


def test_create_load_append_list(store):
    rec = store.create_session("a")
    assert (rec.id, rec.parent_id) == ("a", "") and rec.created_at
    store.create_session("b", parent_id="a")
    assert store.load_session("b").parent_id == "a"
    assert store.load_entries("a") == []
    store.append_entries("a", [msg("1"), msg("2", "1")])
    store.append_entries("a", [msg("3", "2")])
    assert ids(store.load_entries("a")) == ["1", "2", "3"]
    assert [r.id for r in store.list_sessions()] == ["a", "b"]


def test_create_twice_raises_session_exists(store):
    store.create_session("a")
    with pytest.raises(session.SessionExists):
        store.create_session("a")


@pytest.mark.parametrize("op", ["load_entries", "load_session", "append"])
def test_missing_session_raises_session_not_found(store, op):
    with pytest.raises(session.SessionNotFound, match="nope"):
        if op == "append":
            store.append_entries("nope", [msg("1")])
        else:
            getattr(store, op)("nope")


@pytest.mark.parametrize("bad", ["..", "../x", "a/b", "/etc/passwd", "", ".hidden", "a\\b", "x" * 201, "a\0b"])
def test_unsafe_session_ids_are_refused_and_nothing_is_written(store, tmp_path, bad):
    before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(InvalidSessionId, match="invalid session id"):
        store.create_session(bad)
    assert sorted(p for p in tmp_path.rglob("*")) == before
    assert isinstance(InvalidSessionId("x"), DurableError)


def test_loaded_entries_are_copies(store):
    store.create_session("a")
    e = msg("1")
    store.append_entries("a", [e])
    e.message.content.append(ai.Text("mutated"))
    assert store.load_entries("a")[0].message.text() == "1"


def test_every_block_type_round_trips(store):
    m = ai.Message(
        role="assistant",
        content=[
            ai.Text("t"),
            ai.Reminder("r"),
            ai.Image(b"\x89PNG\x00", "image/png"),
            ai.File(b"%PDF", "application/pdf", "a.pdf"),
            ai.ToolCall("c1", "ls", {"dir": "/", "n": [1, 2]}),
        ],
        usage={"input_tokens": 3, "output_tokens": 4},
        stop_reason="tool_use",
        model="m1",
    )
    r = ai.Message(
        role="tool_result",
        content=[ai.Text("ok")],
        tool_call_id="c1",
        tool_name="ls",
        is_error=True,
        injected=ai.Injection.META,
        origin="harness",
    )
    store.create_session("a")
    entries = [session.MessageEntry(id="1", message=m), session.MessageEntry(id="2", parent_id="1", message=r)]
    store.append_entries("a", entries)
    assert store.load_entries("a") == entries


def test_a_store_refuses_an_ephemeral_entry_in_one_line_and_writes_nothing(store):
    eph = session.MessageEntry(id="e", parent_id="1", message=ai.Message(role="user", content=[ai.Text("now")]))
    eph.message.injected = ai.Injection.EPHEMERAL
    ok = session.MessageEntry(id="1", message=ai.user_message("kept"))
    store.create_session("a")
    with pytest.raises(EphemeralNotStored, match=r"^entry 'e' is ephemeral and a store never keeps") as info:
        store.append_entries("a", [ok, eph])
    assert "\n" not in str(info.value)
    assert store.load_entries("a") == []  # the batch is all or nothing
    with pytest.raises(EphemeralNotStored):
        store.create_session("b", entries=[ok, eph])
    assert "b" not in [r.id for r in store.list_sessions()]


def test_unencodable_entry_writes_nothing(store):
    store.create_session("a")
    bad = session.CustomEntry(id="x", kind="k", data={"obj": object()})
    with pytest.raises(TypeError):
        store.append_entries("a", [msg("1"), bad])
    assert store.load_entries("a") == []


# -- the JSONL file itself ---------------------------------------------------------


def test_a_store_and_its_created_on_write_wrapper_declare_the_same_capabilities(store):
    caps = (session.Searchable, session.Summarising, session.Subscribable, session.Describable, session.SessionFiles)
    wrapped = session.CreatedOnWrite(store)
    assert [isinstance(wrapped, c) for c in caps] == [isinstance(store, c) for c in caps]
    assert isinstance(store, session.Searchable)  # every store of the package searches
    assert isinstance(store, session.SessionFiles) == (session.kind_of_store(store) == "jsonl")
    store.create_session("s1")
    where = session.describe(store, "s1")
    assert where == (str(store.file("s1")) if isinstance(store, session.SessionFiles) else session.describe(store))
    if isinstance(store, session.Describable):
        assert session.describe(wrapped) == session.describe(store)
    assert wrapped.load_entries("not-yet") == []  # a missing session reads as empty through the wrapper


def test_jsonl_layout_follows_pi_go(tmp_path):
    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    root = msg("1", text="hi", injected="meta")
    root.created_at = "2026-03-02T09:00:01Z"
    child = msg("2", "1", text="ok")
    child.created_at = "2026-03-02T09:00:02.5Z"
    st.append_entries("s", [root, child])
    first, second, third = [json.loads(x) for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert first["type"] == "session_init" and first["id"] == "s" and first["parent_id"] == ""
    assert second == {  # a root's empty parent_id is left out, as pi-go's omitempty does
        "type": "message",
        "id": "1",
        "created_at": "2026-03-02T09:00:01Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "injected": "meta"},
    }
    assert third == {
        "type": "message",
        "id": "2",
        "parent_id": "1",
        "created_at": "2026-03-02T09:00:02.5Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "ok"}]},
    }


def test_torn_final_line_is_dropped_and_the_next_append_closes_it_without_cutting_it(tmp_path):
    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    st.append_entries("s", [msg("1")])
    f = tmp_path / "s.jsonl"
    with open(f, "ab") as fh:
        fh.write(b'{"type":"message","id":"2","parent_id":"1","mess')
    assert ids(st.load_entries("s")) == ["1"]
    st.append_entries("s", [msg("3", "1")])
    assert ids(st.load_entries("s")) == ["1", "3"]
    # the store never cuts bytes it did not write: the torn line stays, closed by a blank line
    assert b'"id":"2","parent_id":"1","mess\n\n{"type":"message","id":"3"' in f.read_bytes()


def test_complete_final_line_without_newline_is_kept_and_completed(tmp_path):
    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    f = tmp_path / "s.jsonl"
    with open(f, "ab") as fh:
        fh.write(json.dumps(session.encode(msg("1"))).encode())
    assert ids(st.load_entries("s")) == ["1"]
    st.append_entries("s", [msg("2", "1")])
    assert ids(st.load_entries("s")) == ["1", "2"]


def test_bad_line_in_the_middle_names_file_and_line(tmp_path):
    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    st.append_entries("s", [msg("1")])
    with open(tmp_path / "s.jsonl", "ab") as fh:
        fh.write(b"{not json\n")
    st.append_entries("s", [msg("2", "1")])
    with pytest.raises(CorruptLog, match=r"s\.jsonl:3"):
        st.load_entries("s")


def test_unknown_entry_type_is_an_error_naming_it(tmp_path):
    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    with open(tmp_path / "s.jsonl", "ab") as fh:
        fh.write(b'{"type":"hologram","id":"1"}\n')
    with pytest.raises(CorruptLog, match="hologram"):
        st.load_entries("s")


def test_store_folder_is_created_on_first_write_and_list_skips_foreign_files(tmp_path):
    st = session.JsonlStore(tmp_path / "deep" / "store")
    assert st.list_sessions() == []
    st.create_session("s")
    (tmp_path / "deep" / "store" / "notes.jsonl").write_text('{"hello": 1}\n')
    assert [r.id for r in st.list_sessions()] == ["s"]


def test_fsync_option_still_appends(tmp_path):
    st = session.JsonlStore(tmp_path, fsync=True)
    st.create_session("s")
    st.append_entries("s", [msg("1")])
    assert ids(st.load_entries("s")) == ["1"]
    assert os.path.getsize(tmp_path / "s.jsonl") > 0


def test_fsync_flushes_each_append_after_releasing_the_lock_and_before_returning(tmp_path, monkeypatch):
    """Observed from inside os.fsync: the lines are already in the file, another descriptor can take the
    lock (so a second writer is not held up by this one's flush), and append returns only after the flush."""
    fcntl = pytest.importorskip("fcntl")
    st = session.JsonlStore(tmp_path, fsync=True)
    st.create_session("s")
    f = st.file("s")
    real, seen = os.fsync, []

    def spy(fd: int) -> None:
        other = os.open(f, os.O_RDONLY)
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError while a writer holds it
            fcntl.flock(other, fcntl.LOCK_UN)
            lock = "free"
        except BlockingIOError:
            lock = "held"
        finally:
            os.close(other)
        seen.append((os.fstat(fd).st_ino == os.stat(f).st_ino, lock, f.read_bytes().count(b"\n")))
        real(fd)
        seen.append("flushed")

    monkeypatch.setattr(os, "fsync", spy)
    st.append_entries("s", [msg("1")])
    seen.append("returned")
    st.append_entries("s", [msg("2"), msg("3")])
    seen.append("returned")
    assert seen == [(True, "free", 2), "flushed", "returned", (True, "free", 4), "flushed", "returned"]
    session.JsonlStore(tmp_path).append_entries("s", [msg("4")])  # fsync off: no flush
    assert len(seen) == 6 and ids(session.JsonlStore(tmp_path).load_entries("s")) == ["1", "2", "3", "4"]


# -- the fast parser gives exactly what json.loads gives ----------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from durable_nb.session.jsonlstore import loads  # noqa: E402

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**64, max_value=2**200)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


def _same(a, b) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@settings(max_examples=300, deadline=None)
@given(_json_values, st.booleans())
def test_fast_loads_equals_json_loads_on_valid_json(value, ascii_only):
    data = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    assert _same(loads(data), json.loads(data))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40) | st.text(max_size=40).map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_fast_loads_accepts_and_refuses_what_json_loads_does(data):
    try:
        expected = json.loads(data)
    except ValueError:
        with pytest.raises(ValueError):
            loads(data)
    else:
        assert _same(loads(data), expected)


def test_log_values_msgspec_refuses_still_load_as_json_reads_them(tmp_path):
    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    with open(tmp_path / "s.jsonl", "ab") as fh:
        fh.write(
            b'{"type":"custom","id":"1","parent_id":"","created_at":"","kind":"k",'
            b'"data":{"x":NaN,"big":123456789012345678901234567890,"s":"\\ud800"}}\n'
        )
    data = st.load_entries("s")[0].data
    assert data["x"] != data["x"] and data["big"] == 123456789012345678901234567890 and data["s"] == "\ud800"


def test_a_loaded_session_adds_about_one_object_per_entry_for_the_cyclic_gc_to_walk(tmp_path):
    """Messages and message entries are not GC-tracked (they hold JSON values only):
    of each entry only its content list is left for every full collection to walk."""
    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    n = 5000
    usage = {"input_tokens": 3, "output_tokens": 5}
    st.append_entries(
        "s",
        [
            session.MessageEntry(
                id=f"e{i}",
                parent_id=f"e{i - 1}" if i else "",
                message=ai.Message("assistant", [ai.Text("a"), ai.Reminder("b")], usage=dict(usage), model="m"),
            )
            for i in range(n)
        ],
    )
    gc.collect()
    before = len(gc.get_objects())
    loaded = st.load_entries("s")
    gc.collect()
    added = len(gc.get_objects()) - before
    assert len(loaded) == n and loaded[-1].message.usage == usage
    assert added <= 1.1 * n, f"{added / n:.1f} tracked objects per entry"
    assert not gc.is_tracked(loaded[0]) and not gc.is_tracked(loaded[0].message)
    assert not gc.is_tracked(session.CustomEntry())  # nor are custom entries, unless a class opts in (gc=True)
    if sys.implementation.name == "cpython":  # nor are the content lists: a full collection skips the log
        assert added <= 50, f"{added} tracked objects for {n} entries"
        assert not any(gc.is_tracked(e.message.content) for e in loaded)


def test_a_loaded_conversation_costs_about_580_bytes_an_entry_besides_its_text(tmp_path):
    """What the kernel holds for each entry of a conversation log, its text aside (issue 32: ~1,150
    bytes an entry of the benchmark's log, ~500 of them text): the entry (56), id (61) and time
    (76) strings, the message (160), its content list (88) and text block (40), the usage dict of
    every other entry (184). A parent id is the id before it and a repeated model or stop reason the
    one before (shared, 0). The bound has ~7% margin: one more slot on the message or the entry
    (+8), unshared parent ids (+61) or a second copy of anything fails it."""
    import tracemalloc

    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    n, entries, parent = 3000, [], ""
    for i in range(n):
        fields = {"model": "m1", "stop_reason": "end_turn", "usage": {"input": 120, "output": 80}} if i % 2 else {}
        m = ai.Message("assistant" if i % 2 else "user", [ai.Text(f"words {i} " * 20)], **fields)
        entries.append(session.MessageEntry(id=f"{i:012x}", parent_id=parent, created_at=session.now(), message=m))
        parent = entries[-1].id
    st.append_entries("s", entries)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        loaded = st.load_entries("s")
        traced = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    text = sum(sys.getsizeof(e.message.content[0].text) for e in loaded)
    per_entry = (traced - text - sys.getsizeof(loaded)) / n
    assert loaded == entries
    assert per_entry <= 620, f"{per_entry:.0f} bytes an entry besides the text"


# -- search, the same on every store ---------------------------------------------------


def test_search_finds_every_word_across_sessions_and_branches(store):
    assert isinstance(store, session.Store)
    store.create_session("a")
    store.create_session("b")
    note = session.CustomEntry(id="n", parent_id="1", kind="note", data={"body": "a Fox in the data"})
    store.append_entries("a", [msg("1", text="the quick brown fox"), msg("2", "1", text="lazy dog"), note])
    store.append_entries("a", [msg("3", "1", text="Quick thinking, no FOX?")])  # a sibling branch of 2
    store.append_entries("b", [msg("x", text="quick: fox jumps"), msg("y", "x", text="quickly foxes")])
    hits = store.search("quick fox")
    assert {(h.session_id, h.entry_id) for h in hits} == {("a", "1"), ("a", "3"), ("b", "x")}
    h = next(h for h in hits if h.entry_id == "3")
    assert h.snippet == "Quick thinking, no FOX?" and isinstance(h, session.Hit)
    assert [(h.session_id, h.entry_id) for h in store.search("FOX", session="b")] == [("b", "x")]
    assert {h.entry_id for h in store.search("fox data")} == {"n"}  # a custom entry's data is found
    assert store.search("qui") == [] and store.search("") == [] and store.search("  ?! ") == []
    assert len(store.search("fox", limit=2)) == 2
    assert store.search("'\"*) OR NEAR(") == []  # query syntax is text, never an error


def test_search_keeps_untrusted_text_as_text(store):
    store.create_session("a")
    store.append_entries("a", [msg("1", text="<script>alert(1)</script> payload")])
    (h,) = store.search("payload")
    assert h.snippet == "<script>alert(1)</script> payload"


def test_the_legacy_meta_check_sends_only_a_possible_flag_to_the_general_path(tmp_path, monkeypatch):
    from durable_nb.session import jsonlstore

    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    meta = ai.Message("user", [ai.Text("a reminder")], injected=ai.Injection.META, origin="skill:x")
    st.append_entries("s", [msg("1"), session.MessageEntry(id="2", parent_id="1", created_at="", message=meta)] * 3)
    f = st.file("s")
    real, general = jsonlstore.parse_lines, []
    monkeypatch.setattr(jsonlstore, "parse_lines", lambda *a: general.append(a[0].name) or real(*a))
    assert not jsonlstore.may_carry_legacy_meta(f.read_bytes())  # three "injected":"meta" values, no flag
    assert len(st.load_entries("s")) == 6 and general == []  # the fast path
    legacy = b'{"meta":true,"type":"message","id":"3","parent_id":"2","created_at":"","message":{"role":"user"}}\n'
    for extra, flagged in (
        (legacy, [6]),
        (b'{"type":"custom","id":"4","parent_id":"","kind":"k","data":{"meta":1}}\n', []),
    ):
        g = tmp_path / "g"
        g.mkdir(exist_ok=True)
        (g / "s.jsonl").write_bytes(f.read_bytes() + extra)
        assert jsonlstore.may_carry_legacy_meta((g / "s.jsonl").read_bytes())
        entries, found = jsonlstore.read_entries(g / "s.jsonl", (g / "s.jsonl").read_bytes())
        assert len(entries) == 7 and found == flagged and general[-1] == "s.jsonl"
    assert jsonlstore.may_carry_legacy_meta(b'"meta"') and jsonlstore.may_carry_legacy_meta(b'"injected": "meta"')
    assert not jsonlstore.may_carry_legacy_meta(b"") and not jsonlstore.may_carry_legacy_meta(b'"metadata"')


def test_the_legacy_flag_is_counted_beside_custom_kinds_and_unknown_fields_in_one_block(tmp_path):
    """A line with pi-go's legacy ``"meta"`` never passes a one-pass decoder (strict, a custom
    kind's, the unknown-field probe), so a block holding one is read by runs and warned about."""
    import warnings

    class Tagged(session.CustomEntry):
        body: str = ""

    session.register_custom("t-tagged", Tagged)
    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    lines, parent = [], ""
    for i in range(40):
        if i % 2:
            e: session.Entry = Tagged(id=f"c{i}", parent_id=parent, kind="t-tagged", body="b")
            d = json.loads(session.encode_line(e))
        else:
            d = json.loads(
                session.encode_line(session.MessageEntry(id=f"m{i}", parent_id=parent, message=ai.user_message("hi")))
            )
            d["x_tool"] = 1
        if i == 20:
            d["meta"] = True
        parent = d["id"]
        lines.append(json.dumps(d, separators=(",", ":")) + "\n")
    with open(st.file("s"), "a") as f:
        f.write("".join(lines))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = st.load_entries("s")
    legacy = [w for w in caught if issubclass(w.category, session.LegacyMetaWarning)]
    assert len(legacy) == 1 and "1 entry" in str(legacy[0].message)
    assert len(loaded) == 40 and loaded[20].extra == {"x_tool": 1, "meta": True}
    assert type(loaded[1]) is Tagged and loaded[2].extra == {"x_tool": 1}


def test_a_log_read_block_by_block_keeps_lines_longer_than_a_block_and_refuses_what_it_did(tmp_path):
    """JsonlStore reads a log ~256 KB at a time (session/logstream.py): a line longer than that,
    lines across block ends, a blank line and a torn tail read as the whole-file path reads them."""
    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    es = [
        session.MessageEntry(
            id=f"e{i}", parent_id=f"e{i - 1}" if i else "", message=ai.user_message("x" * (600_000 if i == 5 else 300))
        )
        for i in range(2000)
    ]
    st.append_entries("s", es)
    assert st.load_entries("s") == es
    f = st.file("s")
    data = f.read_bytes()
    f.write_bytes(data.replace(b"\n", b"\n\n", 1500))  # blank lines: the general path skips them
    assert session.JsonlStore(tmp_path).load_entries("s") == es
    f.write_bytes(data + data.splitlines(keepends=True)[-1][:40])  # a torn tail: dropped
    assert session.JsonlStore(tmp_path).load_entries("s") == es
