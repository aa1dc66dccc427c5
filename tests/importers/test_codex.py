"""Codex rollouts: injected context by role and prefix, merged responses, compaction, rollback."""

from __future__ import annotations

import json

from importer_helpers import opened, raw_lines, synthesized, texts

from durable_nb import ai
from durable_nb.session import CompactionEntry, CustomEntry, MessageEntry, encode, entry_kind, is_aside

SIMONW = "simonw-sample_codex_session-871966d.jsonl"
LOCALPUSH = "localpush-rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
COMPACTED = "localpush-rollout-019c8a59-compaction-turn-excerpt.jsonl"
GENERATED = "codex-rollback-compacted.generated.jsonl"


def test_agents_md_and_environment_context_are_meta():
    a = opened(SIMONW).agent
    msgs = a.messages()
    assert [(m.injected, m.origin) for m in msgs] == [
        (ai.Injection.META, "codex:AGENTS.md"),
        (ai.Injection.META, "codex:environment_context"),
        (None, None),
    ]
    assert msgs[0].text().startswith("# AGENTS.md instructions for /Users/macmini/Code/homelab-migration")
    assert msgs[2].text().startswith("can you analyse the MD files")
    shown = [e.message.text() for e in a.transcript() if isinstance(e, MessageEntry)]
    assert shown == [msgs[2].text()]
    # The system prompt stays in the session_meta custom entry, whole.
    meta = a.entries()[0]
    assert meta.kind == "codex.session_meta" and meta.data == raw_lines(SIMONW)[0]


def test_developer_messages_and_untyped_user_context_are_meta_in_a_redacted_rollout():
    # Text is redacted upstream, so prefixes cannot tell; the user_message events can.
    a = opened(LOCALPUSH).agent
    msgs = a.messages()
    head = [(m.role, m.origin) for m in msgs[:7]]
    assert head == [("user", "codex:developer")] * 2 + [("user", "codex:injected")] * 2 + [
        ("user", "codex:developer")
    ] * 2 + [("user", None)]
    assert all(m.injected is ai.Injection.META for m in msgs[:6]) and msgs[6].injected is None
    # One response = one assistant message: its text and its function call together.
    assert isinstance(msgs[7].content[0], ai.Text) and msgs[7].tool_calls()[0].id == "call_OIMY41RetdVChp5U51mMLGOD"
    assert msgs[8].role == "tool_result" and msgs[8].tool_name == "mcp__cloud-associates__search_workflows"
    assert synthesized(msgs) == []
    calls = sorted(c.id for m in msgs for c in m.tool_calls())
    assert calls == sorted(m.tool_call_id for m in msgs if m.role == "tool_result") and len(calls) == 5
    # Every line is kept: one entry per line (the merged response reuses its first line's id).
    merged = sum(1 for m in msgs if m.role == "assistant" and m.tool_calls())
    assert len(a.entries()) + merged + 13 == len(raw_lines(LOCALPUSH))  # 13 UI events folded (see below)


def test_compacted_with_replacement_history():
    a = opened(COMPACTED).agent
    msgs = a.messages()
    comp = [e for e in a.path() if isinstance(e, CompactionEntry)]
    assert len(comp) == 1 and comp[0].id == "L58"
    payload = raw_lines(COMPACTED)[57]["payload"]
    history = payload["replacement_history"]
    n_msgs = sum(1 for h in history if h["type"] == "message")
    # The summary marker, then the replacement history as meta messages, then what followed.
    assert msgs[0].origin == "compaction:L58"
    replaced = msgs[1 : 1 + n_msgs]
    assert all(m.injected is ai.Injection.META and m.origin == "codex:replacement_history" for m in replaced)
    assert [[b.text for b in m.content if not b.text.startswith("[image")] for m in replaced] == [
        [b["text"] for b in h["content"] if "text" in b] for h in history if h["type"] == "message"
    ]
    assert (
        sum(b.text.startswith("[image: [REDACTED_IMAGE_URL") for m in replaced for b in m.content)
        == sum(b["type"] == "input_image" for h in history if h["type"] == "message" for b in h["content"])
        == 4
    )
    assert all(m.injected is None for m in msgs[1 + n_msgs :])
    # A person does not read the replayed copies; the encrypted summary item is kept as a custom entry.
    shown_ids = {e.id for e in a.transcript()}
    assert not any(e.id.startswith("L58.r") and isinstance(e, MessageEntry) for e in a.transcript())
    assert any(isinstance(e, CustomEntry) and e.kind == "codex.replacement_history.compaction" for e in a.entries())
    assert "L3" in shown_ids  # the turn's user message before the compaction is still in the transcript
    assert synthesized(msgs) == []
    assert "call_92HyjbTAKX5W3mJQzcLehuz6" not in {c.id for m in msgs for c in m.tool_calls()}  # elided
    assert msgs[-1].text() == "[REDACTED_TEXT len=3093 sha=087a4bc4]"


def test_rollback_leaves_the_undone_turn_on_a_side_branch():
    a = opened(GENERATED).agent
    on_path = texts([e.message for e in a.path() if isinstance(e, MessageEntry)])
    everything = texts([e.message for e in a.entries() if isinstance(e, MessageEntry)])
    assert "Delete the build folder." in everything and "Deleted build/." in everything
    assert "Delete the build folder." not in on_path and "Deleted build/." not in on_path
    assert "Show the build folder size instead." in on_path
    messages = [e for e in a.entries() if isinstance(e, MessageEntry)]
    undone = next(e for e in messages if e.message.text() == "Delete the build folder.")
    redo = next(e for e in messages if e.message.text().startswith("Show the build"))
    assert a.entry(redo.parent_id).kind == "codex.event_msg.thread_rolled_back"
    assert a.entry(redo.parent_id).parent_id == undone.parent_id  # same place in the tree: siblings


def test_plain_compacted_summary_and_parallel_calls():
    a = opened(GENERATED).agent
    msgs = a.messages()
    assert [m.text() for m in msgs[1:]] == ["Thanks, that's all.", "You're welcome."]
    assert "12 pass" in msgs[0].text() and msgs[0].text().count("The user ran the tests") == 1
    # Before the compaction: both parallel calls in one assistant message, both answered.
    before = next(e for e in a.entries() if isinstance(e, MessageEntry) and e.message.text() == "build/ is 4 MB.")
    a.branch(before.id)
    msgs = a.messages()
    assert [m.origin for m in msgs[:3]] == ["codex:developer", "codex:AGENTS.md", "codex:environment_context"]
    running = next(m for m in msgs if m.text() == "Running them.")
    assert [c.arguments for c in running.tool_calls()] == [{"cmd": "make test"}, {"cmd": "git status"}]
    patch = next(m for m in msgs if m.role == "assistant" and [c.name for c in m.tool_calls()] == ["apply_patch"])
    assert patch.tool_calls()[0].arguments == {"input": "*** Begin Patch\n*** End Patch"}
    assert synthesized(msgs) == []


REPEATS = ("user_message", "agent_message", "agent_reasoning")


def test_one_entry_per_message_ui_events_are_folded_into_their_item():
    """Codex writes what a person sees twice (a response item for the model, an event_msg for its UI):
    each message is one entry, and the events that only repeat it are folded into it."""
    lines = raw_lines(LOCALPUSH)
    events = [o for o in lines if o["type"] == "event_msg" and o["payload"]["type"] in REPEATS]
    assert len(events) == 13  # 1 user_message, 6 agent_message, 6 agent_reasoning
    a = opened(LOCALPUSH).agent
    kinds = [getattr(e, "kind", "") for e in a.entries()]
    assert not [k for k in kinds if k.split(".")[-1] in REPEATS]
    # Each redacted text is in exactly one entry (the event repeats it under the same hash).
    for o in events[:7]:
        sha = (o["payload"].get("message") or o["payload"].get("text")).split("sha=")[1]
        holders = [e for e in a.entries() if sha in json.dumps(encode(e))]
        assert len(holders) == 1, sha
    # The other records hang off the conversation as asides: the path holds messages only, no branch.
    assert all(isinstance(e, MessageEntry) for e in a.path())
    side = [e for e in a.entries() if is_aside(e)]
    assert side and {entry_kind(e) for e in side} == {"aside"}
    assert all(not isinstance(e, MessageEntry) or len(children(a, e.id, durable=True)) <= 1 for e in a.entries())
    # The simonw opening has a typed prompt and its user_message event: one entry for both.
    b = opened(SIMONW).agent
    assert sum("analyse the MD files" in json.dumps(encode(e)) for e in b.entries()) == 1


def children(agent, id, durable=False):
    return [e for e in agent.entries() if e.parent_id == id and not (durable and is_aside(e))]
