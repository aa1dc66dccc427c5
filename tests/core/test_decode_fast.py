"""The fast decode paths give the general path's entries: custom kinds decoded by their class, logs in chunks.

``decode_lines`` decodes a log ~256 KB at a time (sharing repeated strings
between entries), a chunk of custom entries of one registered kind in one
msgspec pass through a probe of the class, a single custom line the same
way; each must give exactly what ``decode`` gives for the line's dict.
"""

from __future__ import annotations

import gc
import json
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from durable_nb import ai
from durable_nb.session import CustomEntry, MessageEntry, codec, decode, decode_lines, register_custom
from durable_nb.session.entry import CompactionEntry
from durable_nb.session.kindlines import typed_custom, typed_lines
from tests.core.test_unknown_fields import chained, records


class PlainKind(CustomEntry):
    body: str = ""
    count: int = 0
    tags: list[str] = []
    extra_info: dict[str, Any] = {}
    flag: bool | None = None
    mode: Literal["a", "b"] = "a"
    anything: Any = None


class FloatKind(CustomEntry):  # probed as int | float: a 3 must stay an int, as on the general path
    score: float | None = None


class DefaultKind(CustomEntry):
    kind: str = "t-default"  # a missing "kind" must not read as this default
    body: str = ""


register_custom("t-plain", PlainKind)
register_custom("t-float", FloatKind)
register_custom("t-default", DefaultKind)

values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**70) | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["kind", "data", "x"]), inner, max_size=2)
    ),
    max_leaves=4,
)
header = st.fixed_dictionaries(
    {"id": st.sampled_from(["a", "b", ""]), "created_at": st.just("2026-01-01T00:00:00Z")},
    optional={
        "parent_id": st.sampled_from(["a", ""]) | values,
        "kind": st.sampled_from(["t-plain", "t-plain", "t-float", "t-default", "t-none", ""]) | values,
    },
)
typed = st.sampled_from(["s", "a", 3, 2**70, ["x", "y"], [1], {"k": 1}, True, None, 1.5])
own = st.dictionaries(
    st.sampled_from(["body", "count", "tags", "extra_info", "flag", "mode", "anything", "score", "data", "meta", "zz"]),
    typed | typed | values,
    max_size=4,
)


good_own = st.fixed_dictionaries(
    {},
    optional={
        "body": st.text(max_size=3),
        "count": st.integers(-3, 2**70),
        "tags": st.lists(st.text(max_size=2), max_size=2),
        "extra_info": st.dictionaries(st.text(max_size=2), values, max_size=2),
        "flag": st.none() | st.booleans(),
        "mode": st.sampled_from(["a", "b"]),
        "anything": values,
        "score": st.integers(0, 3) | st.floats(0, 1) | st.integers(2**64, 2**70),
    },
)


@st.composite
def custom_records(draw: Any) -> dict[str, Any]:
    """A custom entry's record: a well-formed one of a kind (perhaps with one value changed), or anything."""
    if draw(st.booleans()):
        kind = draw(st.sampled_from(["t-plain", "t-float", "t-default"]))
        rec = {"type": "custom", "id": "a", "parent_id": "p", "created_at": "t", "kind": kind, **draw(good_own)}
        if draw(st.booleans()):
            rec[draw(st.sampled_from([*sorted(rec), "data", "meta", "zz"]))] = draw(typed | values)
        if draw(st.booleans()):
            rec.pop(draw(st.sampled_from(sorted(rec))))
        return rec
    head = draw(header)
    if draw(st.booleans()):  # some header fields of another JSON type, or null
        head.update(draw(st.dictionaries(st.sampled_from(["id", "parent_id", "created_at"]), values, max_size=1)))
    rec = {"type": "custom", **head}
    if draw(st.booleans()):  # a nested "kind" before the top-level one
        rec = {"type": "custom", "x": {"kind": "t-plain"}, **head}
    rec.update(draw(own))
    return rec


def _line(rec: dict[str, Any], compact: bool = True) -> bytes:
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":") if compact else None).encode()


def _expected(objs: list[dict[str, Any]]) -> list[Any] | None:
    out = []
    for o in objs:
        try:
            out.append(decode(json.loads(json.dumps(o))))
        except (codec.DecodeError, TypeError, ValueError):
            return None
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(custom_records(), st.booleans())
def test_a_custom_line_decoded_by_its_class_is_the_general_paths_entry(rec, compact):
    line = _line(rec, compact)
    got = typed_custom(line)
    if got is not None:
        want = decode(json.loads(line))
        assert got == want and type(got) is type(want)


def _message(i: int) -> dict[str, Any]:
    return json.loads(
        codec.encode_line(MessageEntry(id=f"m{i}", parent_id=f"c{i}", message=ai.Message("user", [ai.Text("hi")])))
    )


custom_runs = st.lists(custom_records() | st.integers(0, 9).map(_message), min_size=1, max_size=6)
"""A few lines of a log: custom entries of any shape among message entries."""


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(custom_runs)
def test_lines_with_custom_entries_decode_as_the_general_path_decodes_each(objs):
    lines = b"".join(_line(o) + b"\n" for o in objs)
    want = _expected(objs)
    got = decode_lines(lines)
    if want is None or any(not e.id for e in want):
        assert got is None
    else:
        assert got == want and [type(e) for e in got] == [type(e) for e in want]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(custom_runs)
def test_a_run_of_lines_in_one_typed_pass_is_the_general_paths_entries(objs):
    """``typed_lines`` alone (a JSONL reload calls it on each block the strict pass refused): whatever
    it takes is what the general path makes of each line, or it refuses the block."""
    got = typed_lines(memoryview(b"".join(_line(o) + b"\n" for o in objs)))
    if got is not None:
        want = _expected(objs)
        assert want is not None and got == want and [type(e) for e in got] == [type(e) for e in want]


def test_a_top_level_data_beside_a_kinds_own_fields_is_not_taken_for_its_data():
    """``"data"`` beside the class's own fields is a field of that name (kept in ``data``), not the nested
    layout: the typed pass must refuse it, however empty its value (a pass straight into the class,
    measured at the sixth stop, read ``{}`` here as no data at all)."""
    rec = {"type": "custom", "id": "a", "kind": "t-plain", "body": "x", "data": {}}
    want = decode(json.loads(_line(rec)))
    assert want.data == {"data": {}}
    assert typed_lines(memoryview(_line(rec) + b"\n")) is None
    assert decode_lines(_line(rec) + b"\n") == [want]


def _entries(n: int) -> list[Any]:
    out: list[Any] = []
    parent = ""
    for i in range(n):
        eid = f"e{i:06d}"
        if i % 3 == 1:
            e: Any = PlainKind(id=eid, parent_id=parent, created_at="t", kind="t-plain", body="b" * 50, tags=["x"])
        else:
            m = ai.Message("assistant", [ai.Text("word " * 30)], model="m1", stop_reason="end_turn", usage={"input": 3})
            e = MessageEntry(id=eid, parent_id=parent, created_at="t", message=m)
        out.append(e)
        parent = eid
    return out


def test_a_log_of_many_chunks_decodes_the_same_and_shares_parent_ids():
    es = _entries(6000)  # ~1 MB: four chunks, two of them of messages and one kind of custom entry
    lines = [codec.encode_line(e) for e in es]
    lines[2500] = lines[2500][:-2] + b',"x_new":1}\n'  # an unknown field: that chunk by runs of lines
    lines[4000] = (
        json.dumps({"type": "custom", "id": "e004000", "parent_id": "e003999", "kind": "t-none", "a": 1}).encode()
        + b"\n"
    )
    buf = b"".join(lines)
    assert len(buf) > 4 * 2**18
    got = decode_lines(buf)
    want = [decode(json.loads(line)) for line in lines]
    assert got == want and [type(e) for e in got] == [type(e) for e in want]
    assert all(got[i].parent_id is got[i - 1].id for i in range(1, len(got)))
    models = [e.message.model for e in got if isinstance(e, MessageEntry)]
    assert len({id(m) for m in models}) < len(models) / 100
    assert decode_lines(buf, one_pass=True) is None  # the unknown field: no one-pass decode


def test_an_object_over_lines_across_a_chunk_end_decodes_as_one_pass_did():
    es = _entries(3000)
    lines = [codec.encode_line(e) for e in es]
    at, size = 0, 0
    while size < 2**18 - 50:
        size += len(lines[at])
        at += 1
    lines[at] = json.dumps(json.loads(lines[at]), indent=2).encode() + b"\n"  # spans 2**18
    got = decode_lines(b"".join(lines))
    assert got == [decode(json.loads(line)) for line in lines]


@st.composite
def message_records(draw: Any) -> dict[str, Any]:
    """A message entry's record with unknown fields at any level, perhaps one value changed to anything."""
    rec = chained([draw(records.filter(lambda r: r["type"] == "message"))])[0]
    if draw(st.booleans()):
        spots = [rec, rec["message"], *[b for b in rec["message"]["content"] if isinstance(b, dict)]]
        spot = draw(st.sampled_from(spots))
        spot[draw(st.sampled_from([*sorted(spot), "content", "x"]))] = draw(values | st.just("hi"))
    return rec


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message_records())
def test_a_message_line_with_unknown_fields_decodes_in_one_conversion_as_field_by_field(rec):
    line = _line(rec)
    try:
        want = decode(json.loads(line), _strict=False)
    except codec.DecodeError:
        want = None
    got = codec._general_line(line, tried=True)
    assert got == want
    if got is not None:
        assert codec.encode_line(got) == codec.encode_line(want)


def test_the_built_in_kinds_with_float_fields_take_the_typed_path_and_keep_ints():
    from durable_nb.kinds.verdict import VerdictEntry

    for score in (b"3", b"3.5", b"100000000000000000000000"):
        line = b'{"type":"custom","id":"v","kind":"verdict","target_id":"a","passed":true,"score":' + score + b"}"
        got, want = typed_custom(line), decode(json.loads(line))
        assert type(got) is VerdictEntry and got == want and type(got.score) is type(want.score)


blocks = st.one_of(
    st.builds(ai.Text, st.text(max_size=3)),
    st.builds(
        ai.ToolCall, id=st.just("c1"), name=st.just("f"), arguments=st.dictionaries(st.just("a"), values, max_size=1)
    ),
    st.builds(ai.ToolCall, id=st.just("c2"), output=st.dictionaries(st.just("raw"), values, min_size=1)),
    st.builds(ai.Thinking, st.text(max_size=3), signature=st.just("s")),
)
some = values.filter(lambda v: "None" not in repr(v))  # mostly no null: the probe's case
plain_entries = st.one_of(
    st.builds(
        lambda role, content, usage, model, injected, timing: MessageEntry(
            message=ai.Message(role, content, usage=usage, model=model, injected=injected, timing=timing)
        ),
        st.sampled_from(ai.ROLES),
        st.lists(blocks, max_size=2),
        st.none() | st.dictionaries(st.sampled_from(["input", "output"]), some, max_size=2),
        st.none() | st.just("m1"),
        st.sampled_from([None, "meta"]),
        st.none() | st.just({"total_ms": 3}),
    ),
    st.builds(lambda n: CompactionEntry(summary="s", tokens_before=n), st.integers(0, 9)),
)


@st.composite
def unknown_runs(draw: Any) -> list[dict[str, Any]]:
    """Message lines most of which carry the same unknown fields (a tool's additions), perhaps one
    line with others: a null, a block with one, another name, a value of another type."""
    entries = draw(st.lists(plain_entries, min_size=1, max_size=4))
    recs = chained([json.loads(codec.encode_line(e)) for e in entries])
    top = draw(st.sampled_from(["x_tool", "x_tool", "meta", ""]))
    inner = draw(st.sampled_from(["x_seen", "x_seen", "origin", ""]))
    for rec in recs:
        if rec["type"] == "message" and draw(st.integers(0, 4)):
            if top:
                rec[top] = draw(some)
            if inner:
                rec["message"][inner] = draw(some | st.just("hi"))
    if not draw(st.integers(0, 2)):
        spot = draw(st.sampled_from(recs))
        spots = [spot, *([spot["message"], *spot["message"].get("content", [])] if "message" in spot else [])]
        where = draw(st.sampled_from([s for s in spots if isinstance(s, dict)]))
        where[draw(st.sampled_from([*sorted(where), "y_other"]))] = draw(values | st.just("hi"))
    return recs


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unknown_runs())
def test_lines_with_a_tools_unknown_fields_decode_in_one_pass_as_the_general_path(recs):
    from durable_nb.session.extralines import extra_lines

    data = b"".join(_line(r) + b"\n" for r in recs)
    got = extra_lines(memoryview(data))
    if got is not None:
        TAKEN.append(1)
        want = [decode(json.loads(_line(r))) for r in recs]
        assert got == want and [type(e) for e in got] == [type(e) for e in want]
        assert [codec.encode_line(e) for e in got] == [codec.encode_line(e) for e in want]


TAKEN: list[int] = []


def test_a_log_whose_lines_carry_unknown_fields_takes_the_one_pass_probe():
    es = _entries(3000)
    lines = []
    for e in es:
        d = json.loads(codec.encode_line(e))
        if d["type"] == "message":
            d["x_tool"] = {"version": 3}
            d["message"]["x_seen"] = True
        lines.append(_line(d) + b"\n")
    from durable_nb.session.extralines import extra_lines

    probed = extra_lines(b"".join(line for line in lines if b'"type":"message"' in line))
    assert probed is not None and len(probed) == 2000
    assert not any(gc.is_tracked(e.extra) for e in probed)  # a dict holding a dict: out of the GC's walks
    got = decode_lines(b"".join(lines))
    assert got == [decode(json.loads(line)) for line in lines]
    assert got[0].extra == {"x_tool": {"version": 3}} and got[0].message.extra == {"x_seen": True}


def test_unknown_fields_named_what_a_struct_cannot_declare_take_the_general_path():
    for name in ('x"q', "x\\b", "x\x01", ""):
        line = _line({"type": "message", "id": "a", name: 1, "message": {"role": "user", name: 2}}) + b"\n"
        got = decode_lines(line + line.replace(b'"id":"a"', b'"id":"b","parent_id":"a"'))
        assert got is not None and got[0].extra == {name: 1} and got[0].message.extra == {name: 2}
