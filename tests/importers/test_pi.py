"""pi coding-agent sessions: v1 (no ids) and v3 trees, compaction, custom messages, branches."""

from __future__ import annotations

from importer_helpers import opened, raw_lines, synthesized

from durable_nb import ai
from durable_nb.session import CompactionEntry, CustomEntry, MessageEntry

V1 = "pi-mono-v1-before-compaction-prefix.jsonl"
V3 = "agent-sessions-pi-v3-small.jsonl"
GEN = "pi-v3-branches.generated.jsonl"


def test_v3_latest_compaction_wins_and_its_summary_appears_once():
    a = opened(V3).agent
    msgs = a.messages()
    assert msgs[0].origin == "compaction:2c19d326"  # the second of the two compactions
    assert sum("hello.py prints a fixture greeting." in m.text() and m.role == "user" for m in msgs) == 1
    # firstKeptEntryId points at the first entry, so every message after the summary is kept verbatim.
    assert [m.text() for m in msgs[1:]] == [
        "Read hello.py and summarize what it prints without editing files.",
        "hello.py prints a fixture greeting.",
        "Add one concise follow-up sentence.",
        "hello.py prints a fixture greeting.",
    ]
    kinds = [e.kind for e in a.entries() if isinstance(e, CustomEntry)]
    assert kinds == ["pi.session", "pi.model_change", "pi.thinking_level_change"]
    assert msgs[2].usage == {"input": 12, "output": 7, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 19} | {
        "input_tokens": 12,
        "output_tokens": 7,
    }  # the names durable_nb.cost reads, added


def test_v1_file_without_ids_is_a_chain_and_its_compaction_keeps_from_the_indexed_line():
    a = opened(V1).agent
    lines = raw_lines(V1)
    comp = [e for e in a.path() if isinstance(e, CompactionEntry)]
    assert len(comp) == 1 and comp[0].id == "L360" and comp[0].first_kept_id == "L294"
    assert lines[359]["firstKeptEntryIndex"] == 293  # index 293 of the file's records = line 294
    msgs = a.messages()
    assert msgs[0].text().endswith(lines[359]["summary"])
    assert msgs[1].role == "user" and msgs[1].text() == lines[293]["message"]["content"][0]["text"]
    # The fixture is cut right after a tool call: exactly that one call gets a synthesized result.
    (made_up,) = synthesized(msgs)
    assert made_up.tool_call_id == lines[-1]["message"]["content"][-1]["id"]
    # Without the compaction (branch just before it) every other call has its real result.
    a.branch("L359")
    assert synthesized(a.messages()) == []


def test_custom_message_display_false_is_injected_and_display_true_is_shown():
    a = opened(GEN).agent
    hidden = a.entry("cm000001").message
    shown = a.entry("cm000002").message
    assert hidden.injected is ai.Injection.META and hidden.origin == "pi:git-status"
    assert shown.injected is None and shown.origin == "pi:notes"
    assert any(m is hidden for m in a.messages()) and any(m is shown for m in a.messages())
    ids = [e.id for e in a.transcript()]
    assert "cm000001" not in ids and "cm000002" in ids


def test_branch_summary_branches_labels_and_model_changes():
    a = opened(GEN).agent
    path_ids = [e.id for e in a.path()]
    # The abandoned branch is in the log, off the active path; its summary is on the path.
    assert {"u0000002", "a0000003"} <= {e.id for e in a.entries()}
    assert "u0000002" not in path_ids and "bs000001" in path_ids
    summary = a.entry("bs000001").message
    assert summary.role == "user" and summary.origin == "pi:branch_summary"
    assert summary.text().endswith("then went back to try something else.")
    assert a.path()[-1].id == "a0000005"  # pi resumes at the last entry
    label = a.entry("lb000001")  # pi's label is a label entry (contract A): the name works as an entry id
    assert label.kind == "label" and label.data["pi"] == next(o for o in raw_lines(GEN) if o.get("id") == "lb000001")
    assert a.labels() == {"good answer": "a0000004"} and a.resolve("good answer") == "a0000004"
    for id, kind in [
        ("cu000001", "pi.custom"),
        ("si000001", "pi.session_info"),
        ("mc000001", "pi.model_change"),
        ("tl000001", "pi.thinking_level_change"),
    ]:
        e = a.entry(id)
        assert isinstance(e, CustomEntry) and e.kind == kind
        assert e.data == next(o for o in raw_lines(GEN) if o.get("id") == id)
    # The thinking block is a Thinking block of its assistant message, in place.
    assert a.entry("a0000001").message.content[0] == ai.Thinking("Use ls.", "sig")
    msgs = a.messages()
    assert synthesized(msgs) == []
    assert isinstance(a.entry("t0000001"), MessageEntry) and a.entry("t0000001").message.tool_name == "bash"


def test_pi_thinking_blocks_become_thinking_signed_or_redacted():
    from durable_nb.importers.pi import blocks

    content = [
        {"type": "thinking", "thinking": "Plan.", "thinkingSignature": "sig-1"},
        {"type": "thinking", "thinking": "[Reasoning redacted]", "thinkingSignature": "ENC-1", "redacted": True},
        {"type": "redactedThinking", "data": "ENC-2"},
        {"type": "text", "text": "Done."},
    ]
    assert blocks(content) == [
        ai.Thinking("Plan.", "sig-1"),
        ai.Thinking(redacted="ENC-1"),
        ai.Thinking(redacted="ENC-2"),
        ai.Text("Done."),
    ]


CURRENT = "pi-current-retained-tail.generated.jsonl"


def test_current_pi_format_retained_tail_labels_and_branch_summary():
    """pi's current JSONL (earendil-works/pi docs/session-format.md): a compaction carrying its
    retainedTail, a label set then cleared, a branch summary with fromId, a custom entry."""
    imp = opened(CURRENT)
    a = imp.agent
    assert imp.format == "pi" and not imp.warnings
    # At the compaction's continuation the model reads: the summary, the retained tail (meta), then what followed.
    a.branch("a1000003")
    msgs = a.messages()
    assert msgs[0].text().endswith("it is defined once in src/parser.ts.")
    assert [(m.role, m.origin) for m in msgs[1:3]] == [("user", "pi:retained_tail"), ("assistant", "pi:retained_tail")]
    assert all(m.injected is ai.Injection.META for m in msgs[1:3])
    assert msgs[2].text() == "One definition in src/parser.ts; renaming it."
    assert [m.text() for m in msgs[3:]] == ["Also update the tests.", "Tests updated."]
    # A person already read the retained messages: the transcript shows them once (the originals).
    shown = [e.message.text() for e in a.transcript() if isinstance(e, MessageEntry)]
    assert shown.count("One definition in src/parser.ts; renaming it.") == 1  # the original, not its retained copy
    assert "Also update the tests." in shown
    # The label was set, then cleared: no label left; the label entries keep pi's records.
    assert a.labels() == {}
    set_, cleared = a.entry("lb100001"), a.entry("lb100002")
    assert set_.data["name"] == "before-compact" and set_.data["target_id"] == "a1000002"
    assert cleared.data == {"name": "before-compact", "target_id": "", "pi": raw_lines(CURRENT)[10]}
    # The leaf is the last entry (pi resumes there): the branch that came back, after the branch summary.
    a = opened(CURRENT).agent
    assert a.leaf_id == "u1000003"
    assert [(m.role, m.origin) for m in a.messages()][-2:] == [("user", "pi:branch_summary"), ("user", None)]
    assert isinstance(a.entry("cu100001"), CustomEntry) and a.entry("cu100001").data["data"] == {"open": 1}
