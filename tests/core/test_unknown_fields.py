"""Fields no type declares survive: random unknown fields at every level of a log written by another
tool (entry, message, content block, custom entry) come back value for value through load → append →
reload on the memory, JSONL and SQLite stores, and through a fork. (PostgreSQL keeps the same JSON;
test_pi_go_wire.py runs pi-go's own log, unknown fields and all, through every store, PostgreSQL included.)"""

from __future__ import annotations

import itertools
import json
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from durable_nb import ai, durable, session
from durable_nb.session import codec

SEQ = itertools.count()

json_value = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
    max_leaves=6,
)


def unknown(*known: str) -> st.SearchStrategy[dict]:
    """Extra fields whose names the level does not declare (any text else, the extra field's own name included)."""
    taken = set(known) | {"type"}
    return st.dictionaries(st.text(min_size=1, max_size=10).filter(lambda k: k not in taken), json_value, max_size=3)


def with_extra(base: dict, level: frozenset[str] | set[str]) -> st.SearchStrategy[dict]:
    return unknown(*level).map(lambda extra: {**extra, **base})


text = st.text(min_size=1, max_size=20)  # a declared field spelled out empty reads as left out (pi-go's omitempty)
blocks = st.one_of(
    text.flatmap(lambda t: with_extra({"type": "text", "text": t}, codec._BLOCK_KEYS[ai.Text])),
    text.flatmap(
        lambda t: with_extra({"type": "thinking", "thinking": t, "signature": "s"}, codec._BLOCK_KEYS[ai.Thinking])
    ),
    text.flatmap(lambda t: with_extra({"type": "reminder", "text": t}, codec._BLOCK_KEYS[ai.Reminder])),
    st.just({"type": "tool_call", "id": "c1", "name": "ls", "arguments": {"dir": "/"}}).flatmap(
        lambda b: with_extra(b, codec._BLOCK_KEYS[ai.ToolCall])
    ),
    st.just({"type": "file", "url": "https://example.com/a.pdf", "mime_type": "application/pdf"}).flatmap(
        lambda b: with_extra(b, codec._BLOCK_KEYS[ai.File])
    ),
    st.just({"type": "image", "data": "iVBORw==", "mime_type": "image/png"}).flatmap(
        lambda b: with_extra(b, codec._BLOCK_KEYS[ai.Image])
    ),
)
messages = st.tuples(
    st.sampled_from(["user", "assistant", "tool_result"]), st.lists(blocks, min_size=1, max_size=3)
).flatmap(lambda rc: with_extra({"role": rc[0], "content": rc[1]}, codec._MESSAGE_KEYS))
records = st.one_of(
    messages.flatmap(
        lambda m: with_extra({"type": "message", "message": m}, codec._ENTRY_KEYS[session.MessageEntry] | {"meta"})
    ),
    st.just({"type": "compaction", "summary": "s", "first_kept_id": "", "tokens_before": 7}).flatmap(
        lambda c: with_extra(c, codec._ENTRY_KEYS[session.CompactionEntry] | {"meta"})
    ),
    st.sampled_from(["k", "pi.thing"]).flatmap(
        lambda k: with_extra({"type": "custom", "kind": k}, {"id", "parent_id", "created_at", "kind"})
    ),
)


def chained(recs: list[dict]) -> list[dict]:
    """Give the records ids, parents (one chain) and times, as a log holds them."""
    out, parent = [], ""
    for i, r in enumerate(recs):
        d = {**r, "id": f"e{i}", "created_at": f"2026-03-02T09:00:{i:02d}Z"}
        if parent:
            d["parent_id"] = parent
        out.append(d)
        parent = d["id"]
    return out


def field_content(entries: list[session.Entry]) -> list[dict]:
    return [json.loads(codec.encode_line(e)) for e in entries]


@pytest.fixture(params=["memory", "jsonl", "sqlite"])
def store(request, tmp_path):
    if request.param == "memory":
        yield session.MemoryStore()
    elif request.param == "jsonl":
        yield session.JsonlStore(tmp_path / "store")
    else:
        st = session.SqliteStore(tmp_path / "store.db")
        yield st
        st.close()


FAST = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


@FAST
@given(st.lists(records, min_size=1, max_size=6))
def test_unknown_fields_at_every_level_survive_load_append_reload_and_fork(store, recs):
    lines = chained(recs)
    n = next(SEQ)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a generated top-level "meta": true is the legacy flag (reported, kept)
        src = session.JsonlStore(tmp)
        (Path(tmp) / "other-tool.jsonl").write_text(
            "\n".join(json.dumps(x) for x in [{"type": "session_init", "id": "other-tool"}, *lines]) + "\n"
        )
        loaded = src.load_entries("other-tool")
        assert field_content(loaded) == lines  # load: every field, declared or not, at its level
        sid = f"copy{n}"
        store.create_session(sid, entries=loaded[:1])
        store.append_entries(sid, loaded[1:])
        again = store.load_entries(sid)
        assert again == loaded and field_content(again) == lines  # append → reload, on this store
        child = durable.Agent(store=store, session_id=sid).fork(f"fork{n}")
        forked = field_content(store.load_entries(child.session_id))
        for d in [*forked, *lines]:
            d.pop("id"), d.pop("parent_id", None)
        assert forked == lines  # a fork copies every field but the ids
