"""The Codex and pi importers read a log in one pass: a record is dropped once it has become
what it becomes, and what a later record decides (a UI event folded into the item after it,
a prompt no event repeats, a compaction naming a later record) comes out as a whole read would."""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from importer_helpers import FIXTURES

from durable_nb import ai
from durable_nb.importers import codex, open_session, pi
from durable_nb.importers.common import Records
from durable_nb.session import CompactionEntry, MessageEntry

CODEX = "localpush-rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
PI_V1 = "pi-mono-v1-before-compaction-prefix.jsonl"
PI_V3 = "pi-v3-branches.generated.jsonl"


class Rec(dict):
    """A record that can be watched (a plain dict takes no weak reference)."""


def watched(path: Path, alive: list[tuple[int, weakref.ref]]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield the file's records, each a :class:`Rec`, the messages watched in ``alive`` (with
    their line); before each record, check that the messages read two records ago or earlier are gone."""
    before = [0, 0]  # the lines of the last two records
    for lineno, obj in Records(path):
        stale = [line for line, r in alive if line < before[0] and r() is not None]
        assert not stale, f"{path.name}: the message record(s) of line(s) {stale[:5]} still held at line {lineno}"
        rec = Rec(obj)
        if is_message(rec):  # a message becomes an entry of its own: its record is not kept
            alive.append((lineno, weakref.ref(rec)))
        before = [before[1], lineno]
        yield lineno, rec


def is_message(obj: dict[str, Any]) -> bool:
    payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else {}
    return obj.get("type") == "message" or (obj.get("type") == "response_item" and payload.get("type") == "message")


@pytest.mark.parametrize(("module", "name"), [(codex, CODEX), (pi, PI_V1), (pi, PI_V3)])
def test_a_message_record_is_dropped_once_read(module, name):
    # A loader that lists the records first (or keeps them) holds every one of them to the end.
    alive: list[tuple[int, weakref.ref]] = []
    loaded = module.load(FIXTURES / name, watched(FIXTURES / name, alive))
    assert len(alive) > 5 and any(isinstance(e, MessageEntry) for e in loaded.entries)


def write(tmp_path: Path, name: str, records: list[dict[str, Any]]) -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p


def item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2025-01-01T00:00:00Z", "type": "response_item", "payload": payload}


def said(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return item({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"timestamp": "2025-01-01T00:00:00Z", "type": "event_msg", "payload": {"type": kind, **fields}}


META = {"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}}


def test_codex_ui_events_are_folded_whether_they_come_before_or_after_their_item(tmp_path):
    log = [
        META,  # L1
        said("user", "what the harness wrote"),  # L2: no event repeats it, but the log records typed input
        said("user", "hello"),  # L3
        event("user_message", message="hello"),  # L4: the first user_message event, after its item
        event("agent_reasoning", text="hmm"),  # L5: before its item
        item({"type": "reasoning", "summary": []}),  # L6
        said("assistant", "hi there"),  # L7
        event("agent_message", message="hi there", images=["x"]),  # L8: carries more than the item: kept
        event("user_message", message="again"),  # L9: before its item
        said("user", "again"),  # L10
        event("agent_message", message="no item follows"),  # L11: kept
        said("user", "last words"),  # L12: no event follows it
    ]
    a = open_session(write(tmp_path, "rollout.jsonl", log)).agent
    assert [e.id for e in a.entries()] == ["L1", "L2", "L3", "L6", "L7", "L8", "L10", "L11", "L12"]
    users = {e.id: (e.message.injected, e.message.origin) for e in a.entries() if isinstance(e, MessageEntry)}
    assert users == {
        "L2": (ai.Injection.META, "codex:injected"),  # decided only by the event at L4
        "L3": (None, None),
        "L7": (None, None),
        "L10": (None, None),
        "L12": (ai.Injection.META, "codex:injected"),  # decided at the end of the file
    }


def test_codex_without_user_message_events_injects_no_prompt(tmp_path):
    log = [META, said("user", "one"), said("assistant", "a"), said("user", "two"), event("agent_message", message="a")]
    a = open_session(write(tmp_path, "rollout.jsonl", log)).agent
    assert [m.injected for m in a.messages() if m.role == "user"] == [None, None]


def test_codex_rollback_counts_turns_as_the_whole_log_decides_them(tmp_path):
    # When the rollback is read, L2 and L4 both look typed; the event after it makes L4 a typed
    # prompt and L2 one Codex wrote (injected), so only one user turn can be undone.
    log = [
        META,  # L1
        said("user", "A"),  # L2
        said("assistant", "a"),  # L3
        said("user", "B"),  # L4
        said("assistant", "b"),  # L5
        event("thread_rolled_back", num_turns=2),  # L6
        event("user_message", message="B"),  # L7: repeats L4 (the item still waiting for its event)
        said("user", "C"),  # L8
    ]
    imp = open_session(write(tmp_path, "rollout.jsonl", log))
    rollback = imp.agent.entry("L6")
    assert rollback.parent_id == "L3"  # before B, the one turn found
    assert any("rollback of 2 turn(s) found only 1" in w for w in imp.warnings)
    assert imp.agent.entry("L8").parent_id == "L6"


def test_pi_v1_compaction_names_the_record_it_keeps_from_before_or_after_it(tmp_path):
    def msg(text: str) -> dict[str, Any]:
        return {"type": "message", "timestamp": "2025-01-01T00:00:00Z", "message": {"role": "user", "content": text}}

    def compaction(index: Any) -> dict[str, Any]:
        return {"type": "compaction", "timestamp": "2025-01-01T00:00:00Z", "summary": "s", "firstKeptEntryIndex": index}

    log = [{"type": "session", "id": "p", "timestamp": "2025-01-01T00:00:00Z"}, msg("a")]
    log += [compaction(1), compaction(0), compaction(6), compaction(9), msg("b"), compaction(-1)]
    p = tmp_path / "v1.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" + ("\n" if i == 1 else "") for i, r in enumerate(log)))
    kept = [e.first_kept_id for e in open_session(p).agent.entries() if isinstance(e, CompactionEntry)]
    # Record 1 is on line 2; a blank line follows it, so record 6 is on line 8; record 9 does not exist.
    assert kept == ["L2", "p", "L8", "", ""]


def test_codex_event_folded_into_the_item_after_it_is_freed_when_the_item_comes(tmp_path):
    # L2 waits as an aside for its item (L3), which folds it: its record is not kept to the end.
    log = [META, event("agent_message", message="hi"), said("assistant", "hi")]
    log += [event("token_count", info=None) for _ in range(3)]
    path = write(tmp_path, "rollout.jsonl", log)
    seen: dict[int, weakref.ref] = {}

    def records() -> Iterator[tuple[int, dict[str, Any]]]:
        for lineno, obj in Records(path):
            if lineno == 5:
                assert seen[2]() is None, "the folded event's record is still held after its item"
            rec = Rec(obj)
            seen[lineno] = weakref.ref(rec)
            yield lineno, rec

    loaded = codex.load(path, records())
    assert [e.id for e in loaded.entries] == ["L1", "L3", "L4", "L5", "L6"]


@pytest.mark.parametrize("fmt", ["codex", "claude_code"])
def test_asides_hold_a_repeated_string_once(tmp_path, fmt):
    # An aside keeps its raw record; the strings records repeat (paths, instructions) are one object.
    cwd = "/home/someone/" + "project" * 20
    if fmt == "codex":
        log = [META, *({**event("turn_context"), "payload": {"type": "x", "cwd": cwd, "n": [cwd]}} for _ in range(3))]
    else:
        log = [
            {"type": "progress", "uuid": f"u{i}", "parentUuid": None, "sessionId": "s", "cwd": cwd, "n": [cwd]}
            for i in range(3)
        ]
    asides = [
        e for e in open_session(write(tmp_path, "log.jsonl", log)).agent.entries() if e.kind != "codex.session_meta"
    ]
    held = {id(s) for e in asides for s in (_find(e.data, "cwd"), _find(e.data, "n")[0])}
    assert len(asides) == 3 and len(held) == 1
    assert all(_find(e.data, "cwd") == cwd for e in asides)


def _find(d: dict[str, Any], key: str) -> Any:
    return d[key] if key in d else _find(d["payload"], key)
