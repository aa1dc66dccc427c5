"""Broken, truncated and unknown files: a clear DurableError or a documented partial load, never a crash."""

from __future__ import annotations

import json
import random
import re

import pytest
from importer_helpers import ALL, FIXTURES

from durable_nb.errors import CorruptLog, DurableError
from durable_nb.importers import open_session

# A line of each format whose shape is wrong in a way a converter must notice.
BAD_SHAPE = {
    "durable_nb": {"type": "message", "id": "x", "message": {"content": []}},
    "pi": {"type": "message", "id": "x", "parentId": None, "timestamp": "t", "message": {"role": "user", "content": 7}},
    "claude_code": {
        "type": "assistant",
        "uuid": "x",
        "parentUuid": None,
        "message": {"id": "m", "content": [{"type": "text", "text": 3}]},
    },
    "codex": {
        "timestamp": "t",
        "type": "response_item",
        "payload": {"type": "function_call", "call_id": "c", "arguments": "{}"},
    },
}


def _lines(name: str) -> list[bytes]:
    return (FIXTURES / name).read_bytes().split(b"\n")[:-1]  # every fixture ends with a newline


@pytest.mark.parametrize("name", ALL)
def test_torn_last_line_is_dropped_with_a_warning(name, tmp_path):
    lines = _lines(name)
    torn = tmp_path / name
    torn.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-1][: len(lines[-1]) // 2])
    whole = tmp_path / ("whole-" + name)
    whole.write_bytes(b"\n".join(lines[:-1]) + b"\n")
    imp = open_session(torn)
    assert any(re.search(rf":{len(lines)}: dropped a torn last line|dropped a torn last line", w) for w in imp.warnings)
    assert [w for w in imp.warnings if "torn" in w][0].startswith(name)
    ref = open_session(whole).agent
    assert [e.id for e in imp.agent.entries()] == [e.id for e in ref.entries()]


@pytest.mark.parametrize("name", ALL)
def test_a_bad_line_in_the_middle_names_file_and_line(name, tmp_path):
    lines = _lines(name)
    k = len(lines) // 2 + 1  # 1-based line number of the damaged line (never the first or last)
    lines[k - 1] = b'{"type": "message", "id": "cut here'
    bad = tmp_path / name
    bad.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(CorruptLog, match=rf"{re.escape(name)}:{k}: not valid JSON"):
        open_session(bad)


@pytest.mark.parametrize("name", ALL)
def test_a_record_of_the_wrong_shape_names_file_and_line(name, tmp_path):
    fmt = open_session(FIXTURES / name).format
    lines = _lines(name)
    lines.insert(1, json.dumps(BAD_SHAPE[fmt]).encode())
    bad = tmp_path / name
    bad.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(CorruptLog, match=rf"{re.escape(name)}:2: "):
        open_session(bad)


def test_missing_empty_unknown_and_non_json_files(tmp_path):
    with pytest.raises(DurableError, match="no session log"):
        open_session(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    with pytest.raises(DurableError, match="empty"):
        open_session(tmp_path / "empty.jsonl")
    (tmp_path / "other.jsonl").write_text('{"hello": "world"}\n')
    with pytest.raises(DurableError, match="unrecognised session log format"):
        open_session(tmp_path / "other.jsonl")
    (tmp_path / "notes.txt").write_text("just some notes\n")
    with pytest.raises(CorruptLog, match=r"notes\.txt:1: "):
        open_session(tmp_path / "notes.txt")


def test_the_source_file_is_never_modified(tmp_path):
    for name in ALL:
        p = FIXTURES / name
        before = (p.read_bytes(), p.stat().st_mtime_ns)
        open_session(p).agent.messages()
        assert (p.read_bytes(), p.stat().st_mtime_ns) == before


_JUNK = [None, 0, -1, 2.5, "", "x", [], [1, "a"], {}, {"type": "text"}, True]


def _mutate(obj, rng: random.Random):
    """Replace one randomly chosen value somewhere inside ``obj`` with junk; return obj."""
    spots = []

    def walk(o):
        if isinstance(o, dict):
            for k in o:
                spots.append((o, k))
                walk(o[k])
        elif isinstance(o, list):
            for i in range(len(o)):
                spots.append((o, i))
                walk(o[i])

    walk(obj)
    if spots:
        container, key = rng.choice(spots)
        container[key] = rng.choice(_JUNK)
    return obj


@pytest.mark.parametrize("name", ALL)
def test_fuzzed_files_load_or_raise_durable_error(name, tmp_path):
    """Random truncations and random junk values: the result is a session or a DurableError."""
    rng = random.Random(name)
    data = (FIXTURES / name).read_bytes()
    lines = data.split(b"\n")[:-1]
    target = tmp_path / name
    outcomes = {"loaded": 0, "error": 0}
    for i in range(40):
        if i % 2 == 0:
            target.write_bytes(data[: rng.randrange(1, len(data))])
        else:
            mutated = list(lines)
            for _ in range(3):
                k = rng.randrange(len(mutated))
                mutated[k] = json.dumps(_mutate(json.loads(mutated[k]), rng)).encode()
            target.write_bytes(b"\n".join(mutated) + b"\n")
        try:
            imp = open_session(target)
        except DurableError as e:
            assert str(e).startswith(str(target)) or name in str(e)
            outcomes["error"] += 1
            continue
        a = imp.agent
        a.messages(), a.transcript(), [a.path(e.id) for e in a.entries()[-3:]]
        outcomes["loaded"] += 1
    assert outcomes["loaded"] > 0
