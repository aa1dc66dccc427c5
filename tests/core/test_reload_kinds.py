"""Logs full of custom entries or of unknown fields reload on their fast paths and lose nothing (issue 32).

Custom entries are out of the cyclic GC's walks (``gc=False``, and the lists and dicts a store decodes
into their fields) unless their class opts back in; lines with unknown fields are decoded in one typed
pass per run of lines of one shape, straight into the real entries. A round trip (load, then write the
entries again) writes back every line as it was read.
"""

from __future__ import annotations

import gc
import json
import sys
from typing import Any

import pytest

from durable_nb import ai
from durable_nb.session import CustomEntry, JsonlStore, MessageEntry, codec, decode, decode_lines, register_custom
from durable_nb.session.entry import CompactionEntry
from durable_nb.session.extralines import extra_lines
from durable_nb.session.kindlines import typed_lines

CPYTHON = sys.implementation.name == "cpython"


class Survey(CustomEntry):
    question: str = ""
    answers: list[str] = []
    scores: dict[str, Any] = {}
    note: Any = None


class Linked(CustomEntry, gc=True):  # may hold a reference cycle: back in the collector's walks
    refs: list[Any] = []


CHECKED: list[int] = []


class Checked(CustomEntry):
    n: int = 0

    def __post_init__(self) -> None:
        CHECKED.append(self.n)


register_custom("t-survey", Survey)
register_custom("t-linked", Linked)
register_custom("t-checked", Checked)


def _log(tmp_path: Any, entries: list[Any]) -> tuple[JsonlStore, list[bytes]]:
    st = JsonlStore(tmp_path / "a")
    st.create_session("s", entries=entries)
    return st, st.file("s").read_bytes().splitlines(keepends=True)[1:]


def _chain(entries: list[Any]) -> list[Any]:
    for i, e in enumerate(entries):
        e.id, e.parent_id, e.created_at = f"e{i}", f"e{i - 1}" if i else "", "2026-01-01T00:00:00Z"
    return entries


def test_a_log_of_custom_entries_reloads_out_of_the_collector_and_writes_back_the_same_lines(tmp_path):
    es = _chain(
        [
            Survey(kind="t-survey", question=f"q{i}", answers=["a", str(i)], scores={"x": i}, note=[{"n": i}])
            if i % 2
            else MessageEntry(message=ai.Message("user", [ai.Text(f"t{i}")]))
            for i in range(600)
        ]
    )
    st, lines = _log(tmp_path, es)
    assert typed_lines(memoryview(b"".join(lines))) is not None  # the kind's one typed pass
    gc.collect()
    before = len(gc.get_objects())
    loaded = st.load_entries("s")
    gc.collect()
    assert loaded == es and [type(e) for e in loaded] == [type(e) for e in es]
    assert [codec.encode_line(e) for e in loaded] == lines
    s = loaded[1]
    assert not gc.is_tracked(s) and not Survey.__struct_config__.gc  # inherited from CustomEntry
    if CPYTHON:  # nor the lists and dicts decoded into its fields
        assert not any(gc.is_tracked(x) for x in (s.answers, s.scores, s.note))
        assert len(gc.get_objects()) - before <= 350  # a container inside one (the dict in note) stays tracked
    copy = JsonlStore(tmp_path / "b")
    copy.create_session("s", entries=loaded)
    assert copy.file("s").read_bytes().splitlines(keepends=True)[1:] == lines


def test_a_custom_class_may_opt_back_into_the_collector(tmp_path):
    assert not gc.is_tracked(CustomEntry()) and not gc.is_tracked(Survey(answers=["a"]))
    assert gc.is_tracked(Linked(refs=["a"]))
    st, lines = _log(tmp_path, _chain([Linked(kind="t-linked", refs=["a", {"b": 1}]) for _ in range(3)]))
    loaded = st.load_entries("s")
    assert [codec.encode_line(e) for e in loaded] == lines
    e = loaded[0]
    assert type(e) is Linked and gc.is_tracked(e) and gc.is_tracked(e.refs)  # its fields stay tracked too
    e.refs.append(e)  # a cycle the collector can now free
    del e, loaded
    assert gc.collect() > 0


def test_a_custom_class_check_runs_once_for_each_entry_decoded_on_the_typed_path():
    es = _chain([Checked(kind="t-checked", n=i) for i in range(5)])
    data = b"".join(codec.encode_line(e) for e in es)
    CHECKED.clear()
    assert typed_lines(memoryview(data)) == es
    assert CHECKED == [0, 1, 2, 3, 4]  # once each decoded


def _message(i: int, top: dict[str, Any], inner: dict[str, Any], **fields: Any) -> dict[str, Any]:
    message = {"role": "user", "content": [{"type": "text", "text": f"t{i}"}], **fields, **inner}
    return {"type": "message", "id": f"e{i}", "parent_id": f"e{i - 1}", "created_at": "c", "message": message, **top}


NESTED = {"a": {"b": [1, {"c": None, "d": [True, 2.5]}]}, "e": "x"}


def test_lines_whose_unknown_fields_vary_decode_in_runs_as_the_general_path(tmp_path):
    recs = [
        _message(1, {"x_tool": {"version": 3}}, {"x_seen": True}),
        _message(2, {"x_tool": NESTED}, {"x_seen": [1, 2]}),
        _message(3, {"x_tool": 4}, {}),
        _message(4, {"y_run": "r1"}, {}),  # another tool's field: a new run
        _message(5, {}, {"z_note": NESTED}, model="m"),
        {
            "type": "compaction",
            "id": "e6",
            "parent_id": "e5",
            "created_at": "c",
            "summary": "s",
            "first_kept_id": "e5",
            "tokens_before": 9,
        },
        _message(7, {}, {}),
        _message(8, {"x_tool": None}, {"x_seen": None}),  # an unknown field's null is its value
        _message(9, {"x_tool": 1}, {"x_seen": 2}),
    ]
    lines = [json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in recs]
    data = b"".join(lines)
    want = [decode(r) for r in recs]
    got = extra_lines(memoryview(data))  # in runs, none of them on the general path
    assert got == want and [type(e) for e in got] == [type(e) for e in want]
    assert all(type(e.message) is ai.Message for e in got if isinstance(e, MessageEntry))
    assert got[1].extra == {"x_tool": NESTED} and got[4].message.extra == {"z_note": NESTED}
    assert got[3].extra == {"y_run": "r1"} and got[3].message.extra is codec._UNSET
    assert [codec.encode_line(e) for e in got] == lines
    assert decode_lines(data) == want
    st = JsonlStore(tmp_path / "a")
    st.create_session("s")
    with open(st.file("s"), "ab") as f:
        f.write(data)
    loaded = st.load_entries("s")
    assert loaded == want
    copy = JsonlStore(tmp_path / "b")
    copy.create_session("s", entries=loaded)
    assert copy.file("s").read_bytes().splitlines(keepends=True)[1:] == lines
    if CPYTHON:  # the extra dicts holding containers are out of the collector's walks
        assert not gc.is_tracked(loaded[1].extra) and not gc.is_tracked(loaded[1].message.extra)


@pytest.mark.parametrize(
    "rec",
    [
        _message(2, {"x_tool": 1}, {"x_seen": 1}, origin=None),  # a declared field's explicit null
        _message(2, {"x_tool": 1}, {}, origin=None),
        {
            **_message(2, {"x_tool": 1}, {}),
            "message": {"role": "assistant", "content": [{"type": "tool_call", "id": "c", "output": None}]},
        },
        _message(2, {"x_tool": 1}, {"x_seen": 1}, injected="meta", usage={"input": 3}),
    ],
)
def test_a_null_of_a_declared_field_among_unknown_ones_is_kept_as_the_general_path_keeps_it(rec):
    lines = [json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in (_message(1, {"x_tool": 1}, {}), rec)]
    got = decode_lines(b"".join(lines))
    assert got == [decode(json.loads(line)) for line in lines]
    assert [codec.encode_line(e) for e in got] == lines
    assert isinstance(got[1], (MessageEntry, CompactionEntry))
