"""Every fixture opens with the right format, and complete logs leave no tool call unanswered."""

from __future__ import annotations

import pytest
from importer_helpers import ALL, INCOMPLETE, opened, synthesized

from durable_nb.importers import detect, safe_session_id
from durable_nb.session import model_view, path, transcript_view

FORMAT = {
    "agent-sessions-pi-v3-small.jsonl": "pi",
    "pi-mono-v1-before-compaction-prefix.jsonl": "pi",
    "pi-v3-branches.generated.jsonl": "pi",
    "pi-current-retained-tail.generated.jsonl": "pi",
    "pi-go-legacy-meta.generated.jsonl": "durable_nb",
    "pi-go-thinking.generated.jsonl": "durable_nb",
    "codex-rollback-compacted.generated.jsonl": "codex",
    "localpush-rollout-019c8a59-compaction-turn-excerpt.jsonl": "codex",
    "localpush-rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl": "codex",
    "simonw-sample_codex_session-871966d.jsonl": "codex",
    "spotter-4d5611e5-compaction-excerpt.jsonl": "claude_code",
    "spotter-4d5611e5-subagent-agent-acompact-e1f845.jsonl": "claude_code",
    "spotter-tool_heavy.jsonl": "claude_code",
}


@pytest.mark.parametrize("name", ALL)
def test_each_fixture_opens_and_complete_logs_answer_every_tool_call(name):
    imp = opened(name)
    assert imp.format == FORMAT[name]
    a = imp.agent
    msgs = a.messages()
    assert msgs and a.transcript()
    # The agent's views are the session module's pure views of the active path.
    p = path(a.entries(), a.leaf_id)
    assert [m.text() for m in model_view(p)] == [m.text() for m in msgs]
    assert [e.id for e in transcript_view(p)] == [e.id for e in a.transcript()]
    assert len(synthesized(msgs)) == (1 if name in INCOMPLETE else 0)
    assert len({e.id for e in a.entries()}) == len(a.entries())  # ids are unique


def test_detect_needs_a_recognisable_first_record():
    assert detect({"type": "session_init", "id": "s"}) == "durable_nb"
    assert detect({"type": "session", "id": "x"}) == "pi"
    assert detect({"timestamp": "t", "type": "session_meta", "payload": {}}) == "codex"
    assert detect({"id": "x", "timestamp": "t", "instructions": ""}) == "codex"  # early rollout header
    assert detect({"type": "file-history-snapshot", "messageId": "m"}) == "claude_code"
    assert detect({"type": ["odd"]}) is None and detect({"hello": 1}) is None


@pytest.mark.parametrize(
    "given, safe",
    [
        ("4d5611e5-241a-462a-8d15-5122611a9569", "4d5611e5-241a-462a-8d15-5122611a9569"),
        ("my session (copy 2)", "my-session-copy-2"),
        ("../../etc/passwd", "etc-passwd"),
        ("..", "imported"),
        ("", "imported"),
        ("x" * 300, "x" * 200),
    ],
)
def test_safe_session_id(given, safe):
    assert safe_session_id(given) == safe


def test_safe_session_id_takes_the_first_usable_candidate():
    assert safe_session_id(None, "", "...", "rollout 1") == "rollout-1"


def test_an_adopted_session_hands_its_entries_over_once_then_copies():
    """MemoryStore.adopt_session: the first load is the importer's own objects (no encode, no decode);
    later loads are copies, with what was appended after them."""
    from durable_nb import ai
    from durable_nb.session import MemoryStore, MessageEntry

    entries = [
        MessageEntry(id="a", message=ai.user_message("hi")),
        MessageEntry(id="b", parent_id="a", message=ai.assistant_message("yo")),
    ]
    store = MemoryStore()
    store.adopt_session("s", entries)
    first = store.load_entries("s")
    assert [e is o for e, o in zip(first, entries)] == [True, True]
    store.append_entries("s", [MessageEntry(id="c", parent_id="b", message=ai.user_message("more"))])
    again = store.load_entries("s")
    assert [e.id for e in again] == ["a", "b", "c"] and not any(e is o for e, o in zip(again, entries))
    assert again[:2] == entries  # equal copies
