"""Hostile and malformed input: round trips, fuzzed logs, broken files, unsafe ids."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from durable_nb import ai, durable
from durable_nb.errors import CorruptLog, InvalidSessionId
from durable_nb.models.offline import OfflineModel
from durable_nb.session import (
    CompactionEntry,
    CustomEntry,
    DecodeError,
    JsonlStore,
    MemoryStore,
    MessageEntry,
    decode,
    decode_lines,
    display_text,
    encode,
    encode_line,
    model_view,
    path,
    register_custom,
    transcript_view,
    tree,
)


class Review(CustomEntry):
    """A registered custom kind with fields of its own."""

    verdict: str = ""
    score: int = 0
    tags: list[str] = []


register_custom("test-review", Review)

# -- strategies ---------------------------------------------------------------

# Any Unicode but lone surrogates (which UTF-8 cannot carry; see test_lone_surrogate_*).
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)
some_text = text.filter(bool)
opt_text = st.none() | text  # unset optional fields are None; an empty string reads back as ""
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(text, c, max_size=3),
    max_leaves=10,
)
blocks = st.one_of(
    st.builds(ai.Text, text),
    st.builds(ai.Reminder, text),
    st.builds(ai.ToolCall, text, text, st.dictionaries(text, json_value, max_size=3)),
    st.builds(ai.Image, st.binary(max_size=64), text),
    st.builds(ai.File, st.binary(max_size=64), text, text),
)
messages = st.builds(
    ai.Message,
    role=st.sampled_from(ai.ROLES),
    content=st.lists(blocks, max_size=6),
    injected=st.sampled_from([None, ai.Injection.META]),  # a store refuses an ephemeral entry
    origin=opt_text,
    tool_call_id=opt_text,
    tool_name=opt_text,
    is_error=st.booleans(),
    usage=st.none() | st.dictionaries(some_text, st.integers(0, 10**9), min_size=1, max_size=3),
    stop_reason=opt_text,
    model=opt_text,
)
header = {"id": some_text, "parent_id": text, "created_at": text}
entries = st.one_of(
    st.builds(MessageEntry, message=messages, **header),
    st.builds(CompactionEntry, summary=text, first_kept_id=text, tokens_before=st.integers(0, 10**12), **header),
    st.builds(
        CustomEntry,
        kind=text.filter(lambda k: k != "test-review"),
        data=st.dictionaries(text, json_value, max_size=4),
        **header,
    ),
    st.builds(
        Review,
        kind=st.just("test-review"),
        verdict=text,
        score=st.integers(),
        tags=st.lists(text, max_size=3),
        data=st.dictionaries(text.filter(lambda k: k not in ("verdict", "score", "tags")), json_value, max_size=3),
        **header,
    ),
)

FAST = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


# -- round trips ----------------------------------------------------------------


@FAST
@given(st.lists(entries, max_size=8))
def test_every_entry_type_round_trips_through_codec_and_both_stores(tmp_path_factory, batch):
    for e in batch:
        assert decode(json.loads(json.dumps(encode(e), ensure_ascii=False))) == e
    mem = MemoryStore()
    mem.create_session("s")
    mem.append_entries("s", batch)
    assert mem.load_entries("s") == batch
    store = JsonlStore(tmp_path_factory.mktemp("rt"))
    store.create_session("s")
    store.append_entries("s", batch[:3])
    store.append_entries("s", batch[3:])
    loaded = store.load_entries("s")
    assert loaded == batch
    assert [type(e) for e in loaded] == [type(e) for e in batch]  # registered kinds come back as their class


def test_empty_strings_in_optional_message_fields_read_back_as_written_not_as_unset(tmp_path):
    m = ai.Message("assistant", [], origin="", tool_call_id="", tool_name="", stop_reason="", model="", usage={})
    back = decode(json.loads(json.dumps(encode(MessageEntry(id="a", message=m)))))
    assert back.message == m and back.message != ai.Message("assistant", [])
    store = JsonlStore(tmp_path)
    store.create_session("s")
    store.append_entries("s", [MessageEntry(id="a", message=m)])
    assert store.load_entries("s")[0].message == m


def test_huge_and_empty_texts_round_trip_through_the_jsonl_store(tmp_path):
    huge = 'ø\u200d🧪\x00\n"\\' * 1_500_000  # ~10.5 M characters, control and escape characters included
    batch = [
        MessageEntry(id="big", message=ai.user_message(huge)),
        MessageEntry(id="empty", parent_id="big", message=ai.Message("assistant", [])),
        MessageEntry(id="blank", parent_id="empty", message=ai.user_message("")),
        CustomEntry(id="c", parent_id="blank", kind="", data={}),
    ]
    store = JsonlStore(tmp_path)
    store.create_session("s")
    store.append_entries("s", batch)
    assert store.load_entries("s") == batch


def test_lone_surrogate_is_refused_by_the_jsonl_store_and_nothing_is_written(tmp_path):
    store = JsonlStore(tmp_path)
    store.create_session("s")
    before = store.file("s").read_bytes()
    with pytest.raises(UnicodeEncodeError):
        store.append_entries(
            "s",
            [
                MessageEntry(id="ok", message=ai.user_message("fine")),
                MessageEntry(id="bad", message=ai.user_message("half \ud800 pair")),
            ],
        )
    assert store.file("s").read_bytes() == before


@pytest.mark.parametrize("reply", ["a\ud83d\ude00b", ["a\ud83d", "\ude00b"], ["cut \ud83d"]])
def test_a_reply_with_surrogate_halves_from_any_model_is_stored_repaired_not_lost(tmp_path, reply):
    """A model of one's own (a plain function, a stream) that joins JSON-decoded chunks naively."""

    class Chunks:
        def stream(self, messages):
            yield from reply

    model = (lambda messages: reply) if isinstance(reply, str) else Chunks()
    agent = durable.Agent(model=model, store=JsonlStore(tmp_path), session_id="s")
    agent.run("emoji please").wait()
    stored = durable.Agent(store=JsonlStore(tmp_path), session_id="s").path()[-1].message.text()
    assert stored == ("cut \ufffd" if reply == ["cut \ud83d"] else "a\U0001f600b")


# -- fuzzed entry objects: an entry or a DecodeError, never a crash later ------------------

_ids = st.sampled_from(["a", "b", "c", ""])
_anything = json_value
_block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "reminder", "tool_call", "image", "file", "video"]) | _anything},
    optional={
        "text": _anything,
        "id": _anything,
        "name": _anything,
        "arguments": _anything,
        "data": _anything | st.just("aGk="),
        "mime_type": _anything,
    },
)
_message = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(ai.ROLES) | _anything,
        "content": st.lists(_block, max_size=3) | _anything,
        "injected": st.sampled_from(["meta", "ephemeral"]) | _anything,
        "origin": _anything,
        "tool_call_id": _anything,
        "tool_name": _anything,
        "is_error": _anything,
        "usage": _anything,
        "stop_reason": _anything,
        "model": _anything,
    },
)
_entry = st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "compaction", "custom"]) | _anything},
    optional={
        "id": _ids | _anything,
        "parent_id": _ids | _anything,
        "created_at": _anything,
        "message": _message | _anything,
        "summary": _anything,
        "first_kept_id": _ids | _anything,
        "tokens_before": _anything,
        "kind": st.just("test-review") | _anything,
        "data": _anything,
        "meta": st.just(True),
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_entry, max_size=5))
def test_any_json_object_decodes_to_a_usable_entry_or_raises_decode_error(objs):
    decoded = []
    for obj in objs:
        try:
            decoded.append(decode(json.loads(json.dumps(obj))))
        except DecodeError:
            pass
    tree(decoded)
    for e in decoded:  # whatever decodes works in every view and in the offline model
        p = path(decoded, e.id)
        transcript_view(p)
        display_text(e)
        list(OfflineModel().stream(model_view(p)))


@st.composite
def _near_entry(draw):
    """A valid entry's JSON with one value, at any depth, replaced by anything (or nothing changed)."""
    d = json.loads(json.dumps(encode(draw(entries)), ensure_ascii=False))
    spots = [d]
    if isinstance(d.get("message"), dict):
        spots.append(d["message"])
        spots += [b for b in d["message"].get("content", []) if isinstance(b, dict)]
    spot = draw(st.sampled_from(spots))
    key = draw(st.sampled_from(sorted(spot) + ["meta", "extra"]))
    change = draw(st.sampled_from(["keep", "drop", "set"]))
    if change == "drop":
        spot.pop(key, None)
    elif change == "set":
        spot[key] = draw(st.sampled_from(["", None, 1.0, 0, True, "meta", "video"]) | _anything)
    return d


@settings(max_examples=300, deadline=None)
@given(st.lists(_near_entry() | _entry, max_size=6))
def test_whatever_the_strict_fast_path_accepts_the_general_decoder_decodes_the_same(objs):
    lines = b"".join(json.dumps(o, ensure_ascii=False).encode() + b"\n" for o in objs)
    fast = decode_lines(lines)
    if fast is not None:
        assert fast == [decode(json.loads(json.dumps(o))) for o in objs]
        assert [type(e) for e in fast] == [type(decode(o)) for o in objs]


@FAST
@given(st.lists(entries, max_size=8))
def test_what_the_codec_writes_takes_the_fast_path(batch):
    assert decode_lines(b"".join(encode_line(e) for e in batch)) == batch


# -- malformed logs ---------------------------------------------------------------

INIT = '{"type":"session_init","id":"s","parent_id":"","created_at":""}'
GOOD = '{"type":"message","id":"%s","parent_id":"%s","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}'
GOOD_X = GOOD % ("x", "a")


def _write_log(tmp_path, *lines: str, end: str = "\n") -> JsonlStore:
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + end, encoding="utf-8")
    return JsonlStore(tmp_path)


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ('{"type":"message","id":"x",', "not valid JSON"),
        (GOOD_X + "," + GOOD_X, "not valid JSON"),  # two objects on one line
        (GOOD_X + " " + GOOD_X, "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"type":"video","id":"x"}', "unknown entry type 'video'"),
        ('{"id":"x","parent_id":"a"}', "entry has no 'type'"),
        ('{"type":"message","parent_id":"a","message":{"role":"user","content":[]}}', "missing 'id'"),
        ('{"type":"message","id":"x","parent_id":"a"}', "missing 'message'"),
        ('{"type":"message","id":"x","message":{"content":[]}}', "missing 'role'"),
        ('{"type":"message","id":"x","message":{"role":"robot","content":[]}}', "role"),
        ('{"type":"message","id":"x","message":{"role":"user","content":[{"type":"reminder"}]}}', "missing 'text'"),
        (
            '{"type":"message","id":"x","message":{"role":"user","content":[{"type":"text","text":5}]}}',
            "must be a string",
        ),
        ('{"type":"message","id":"x","message":{"role":"user","content":[{"type":"gif"}]}}', "unknown content block"),
        ('{"type":"message","id":"x","message":{"role":"user","injected":"always","content":[]}}', "always"),
        ('{"type":"message","id":["x"],"message":{"role":"user","content":[]}}', "must be strings"),
        ('{"type":"compaction","id":"x","tokens_before":"many"}', "tokens_before"),
        ('{"type":"custom","id":"x","kind":["k"],"body":1}', "kind must be strings"),
    ],
)
def test_a_bad_line_mid_file_names_file_and_line(tmp_path, bad, says):
    store = _write_log(tmp_path, INIT, GOOD % ("a", ""), bad, GOOD % ("b", "a"))
    with pytest.raises(CorruptLog) as err:
        store.load_entries("s")
    assert f"{tmp_path / 's.jsonl'}:3:" in str(err.value) and says in str(err.value)
    with pytest.raises(CorruptLog):  # an agent cannot open it either: nothing is silently skipped
        durable.Agent(store=store, session_id="s")


@pytest.mark.parametrize("first", ["", "not json", GOOD % ("a", ""), '{"type":"session_init"}'])
def test_a_missing_or_bad_session_init_line_names_line_1(tmp_path, first):
    store = _write_log(tmp_path, first, GOOD % ("a", ""))
    with pytest.raises(CorruptLog, match=r"s\.jsonl:1: the first line is not a session_init record"):
        store.load_entries("s")


def test_a_bad_last_line_ending_in_newline_is_an_error_not_a_torn_tail(tmp_path):
    store = _write_log(tmp_path, INIT, GOOD % ("a", ""), '{"type":"mess')
    with pytest.raises(CorruptLog, match=r"s\.jsonl:3: not valid JSON"):
        store.load_entries("s")
    torn = _write_log(tmp_path, INIT, GOOD % ("a", ""), '{"type":"mess', end="")
    assert [e.id for e in torn.load_entries("s")] == ["a"]


def test_blank_lines_are_skipped(tmp_path):
    store = _write_log(tmp_path, INIT, GOOD % ("a", ""), "", "   ", GOOD % ("b", "a"))
    assert [e.id for e in store.load_entries("s")] == ["a", "b"]


def test_a_missing_parent_id_makes_a_root(tmp_path):
    store = _write_log(
        tmp_path, INIT, GOOD % ("a", ""), '{"type":"message","id":"b","message":{"role":"user","content":"shorthand"}}'
    )
    a, b = store.load_entries("s")
    assert b.parent_id == "" and display_text(b) == "shorthand"
    assert [n.entry.id for n in tree([a, b])] == ["a", "b"]


def _ids(entries):
    return [e.id for e in entries]


def test_orphans_load_and_the_walk_stops_at_the_gap(tmp_path):
    # "b" names a parent the log lacks (e.g. an ephemeral id written by a buggy tool).
    store = _write_log(tmp_path, INIT, GOOD % ("a", ""), GOOD % ("b", "ghost"), GOOD % ("c", "b"))
    loaded = store.load_entries("s")
    assert _ids(path(loaded, "c")) == ["b", "c"]
    assert [n.entry.id for n in tree(loaded)] == ["a", "b"]
    agent = durable.Agent(store=store, session_id="s")
    assert _ids(agent.path()) == ["b", "c"]
    agent.run("next").wait()  # a resumed agent keeps working from the leaf
    assert len(JsonlStore(tmp_path).load_entries("s")) == 5


def test_cycles_load_and_every_walk_terminates(tmp_path):
    store = _write_log(tmp_path, INIT, GOOD % ("a", "c"), GOOD % ("b", "a"), GOOD % ("c", "b"), GOOD % ("d", "d"))
    loaded = store.load_entries("s")
    assert _ids(path(loaded, "c")) == ["a", "b", "c"]  # each entry once
    assert _ids(path(loaded, "d")) == ["d"]
    roots = tree(loaded)
    assert [n.entry.id for n in roots] == ["a", "d"]  # the cycle is cut at its first entry in log order
    agent = durable.Agent(store=store, session_id="s")
    reply = agent.run("after the cycle").wait()[0]
    assert "I received 2 messages" in reply.text()  # d, then the new user message


def test_duplicate_ids_later_entry_wins_everywhere(tmp_path):
    store = _write_log(tmp_path, INIT, GOOD % ("a", ""), GOOD % ("x", "a"), GOOD % ("x", ""), GOOD % ("c", "x"))
    loaded = store.load_entries("s")
    assert len(loaded) == 4  # the store returns the log as written
    assert [e.parent_id for e in path(loaded, "c")] == ["", "x"]  # through the later "x"
    roots = tree(loaded)
    assert [(n.entry.id, n.entry.parent_id) for n in roots] == [("a", ""), ("x", "")]
    first_x = roots[0].children[0]
    assert first_x.entry is loaded[1] and first_x.children == []
    assert [n.entry.id for n in roots[1].children] == ["c"]


# -- unsafe session ids ---------------------------------------------------------------

UNSAFE = [
    "../escape",
    "..",
    ".",
    "",
    "/etc/passwd",
    "a/b",
    "a\\b",
    "x\x00y",
    ".hidden",
    "a" * 201,
    "é" * 150,  # 150 characters pass the pattern, but 300 bytes make no file name (ENAMETOOLONG)
    "日本" * 40,
    "-rf",
    "a\nb",
    "~/x",
    "sess id",
]


def _files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("sid", UNSAFE)
def test_unsafe_session_ids_are_refused_and_nothing_is_written(tmp_path, sid):
    store = JsonlStore(tmp_path / "store")
    for call in (
        lambda: store.create_session(sid),
        lambda: store.load_entries(sid),
        lambda: store.load_session(sid),
        lambda: store.append_entries(sid, [MessageEntry(id="a", message=ai.user_message("x"))]),
        lambda: MemoryStore().create_session(sid),
        lambda: durable.Agent(store=store, session_id=sid),
    ):
        with pytest.raises(InvalidSessionId, match="invalid session id"):
            call()
    assert _files(tmp_path) == []  # not even the store folder
    agent = durable.Agent(store=store, session_id="fine")
    with pytest.raises(InvalidSessionId):
        agent.fork(sid)
    assert _files(tmp_path) == ["store", "store/fine.jsonl"]
    assert not (tmp_path.parent / "escape.jsonl").exists()
