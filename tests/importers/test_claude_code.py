"""Claude Code transcripts: isMeta, split responses, parallel tool results, compaction, sidechains."""

from __future__ import annotations

import re

from importer_helpers import opened, raw_lines, synthesized

from durable_nb import ai
from durable_nb.session import CompactionEntry, CustomEntry, MessageEntry, display_text, entry_kind, is_aside, path

TOOL_HEAVY = "spotter-tool_heavy.jsonl"
COMPACTION = "spotter-4d5611e5-compaction-excerpt.jsonl"
SUBAGENT = "spotter-4d5611e5-subagent-agent-acompact-e1f845.jsonl"
CAVEAT = "faf199ff"  # uuid prefix of the isMeta <local-command-caveat> line


def _by_prefix(entries, prefix):
    (e,) = [e for e in entries if e.id.startswith(prefix) and "." not in e.id]
    return e


def test_ismeta_caveat_is_in_the_model_view_and_not_in_the_transcript():
    a = opened(TOOL_HEAVY).agent
    caveat = _by_prefix(a.entries(), CAVEAT)
    assert caveat.message.injected is ai.Injection.META and caveat.message.origin == "claude_code:isMeta"
    assert "<local-command-caveat>" in caveat.message.text()
    assert any(m is caveat.message for m in a.messages())
    assert caveat.id not in {e.id for e in a.transcript()}
    # The command and its output that follow the caveat are ordinary: shown to the reader too.
    shown = [e.message.text() for e in a.transcript() if isinstance(e, MessageEntry)]
    assert any(t.startswith("<command-name>/mcp") for t in shown)


def test_one_api_response_over_several_lines_is_one_assistant_message():
    a = opened(TOOL_HEAVY).agent
    lines = [o for o in raw_lines(TOOL_HEAVY) if o.get("type") == "assistant"]
    split = [o for o in lines if o["message"]["id"].endswith("TgDSj7e6")]
    assert len(split) == 4  # text, thinking, tool_use, tool_use: four lines in the file
    merged = a.entry(split[0]["uuid"])
    calls = [c.id for c in merged.message.tool_calls()]
    assert calls == ["toolu_01DKTWcKpZ2ksZQmoKKfxiw6", "toolu_01JJds55jYrYwd9TktNGndRY"]
    # The thinking block is a Thinking block of the merged message, with its signature (in file order).
    thinking = [b for b in merged.message.content if isinstance(b, ai.Thinking)]
    assert len(thinking) == 1 and thinking[0].text.startswith("The user wants me to research")
    raw = next(b for o in split for b in o["message"]["content"] if b["type"] == "thinking")
    assert thinking[0].signature == raw["signature"] and merged.message.text() != ""
    assert sum(1 for m in a.messages() if m is merged.message) == 1


def test_parallel_tool_results_on_different_parents_all_stay_on_the_path():
    lines = raw_lines(TOOL_HEAVY)
    by_uuid = {o["uuid"]: o for o in lines if o.get("uuid")}
    # A plain leaf-to-root walk of the file loses one of the two parallel results...
    walk, cur = set(), lines[-1]["uuid"]
    while cur:
        walk.add(cur)
        cur = by_uuid[cur].get("parentUuid")
    lost = "d2b1430f-30fc-408e-ad65-bedf7ba75900"
    assert lost in by_uuid and lost not in walk
    # ...the import keeps both, in order, and every call has its real result.
    a = opened(TOOL_HEAVY).agent
    assert lost in {e.id for e in a.path()}
    msgs = a.messages()
    calls = [c.id for m in msgs for c in m.tool_calls()]
    results = [m.tool_call_id for m in msgs if m.role == "tool_result"]
    assert len(calls) == 6 and sorted(calls) == sorted(results)
    assert synthesized(msgs) == []
    # Each result follows the assistant message that made its call (only results in between),
    # and carries that call's tool name.
    for i, m in enumerate(msgs):
        if m.role == "tool_result":
            j = i - 1
            while msgs[j].role == "tool_result":
                j -= 1
            call = {c.id: c for c in msgs[j].tool_calls()}[m.tool_call_id]
            assert m.tool_name == call.name


def test_nothing_in_the_file_is_dropped():
    a = opened(TOOL_HEAVY).agent
    ids = {e.id for e in a.entries()}
    firsts = {}
    for n, o in enumerate(raw_lines(TOOL_HEAVY), start=1):
        if not o.get("uuid"):
            assert f"{o['type']}@{n}" in ids  # kept as a custom entry with its raw record
            assert a.entry(f"{o['type']}@{n}").data == o
        elif o["type"] == "assistant":
            first = firsts.setdefault(o["message"]["id"], o["uuid"])
            assert first in ids
        else:
            assert o["uuid"] in ids
    kinds = {e.kind for e in a.entries() if isinstance(e, CustomEntry)}
    assert {
        "claude_code.progress",
        "claude_code.queue-operation",
        "claude_code.file-history-snapshot",
        "claude_code.system.local_command",
    } <= kinds
    assert "claude_code.thinking" not in kinds  # thinking is part of its message now


def test_compact_summary_reaches_the_model_once_and_replaces_the_earlier_turns():
    imp = opened(COMPACTION)
    a = imp.agent
    msgs = a.messages()
    marker = "This session is being continued from a previous conversation"
    assert sum(marker in m.text() for m in msgs) == 1
    assert marker in msgs[0].text()  # the summary comes first
    comp = [e for e in a.path() if isinstance(e, CompactionEntry)]
    assert len(comp) == 1 and comp[0].tokens_before == 170251
    boundary = a.entry(comp[0].parent_id)
    assert isinstance(boundary, CustomEntry) and boundary.kind == "claude_code.system.compact_boundary"
    assert "Work on bead spotter-dov" not in " ".join(m.text() for m in msgs)  # before the compaction
    assert synthesized(msgs) == []
    # The boundary's logical parent is not in the file (not in the full original either): said so.
    assert any("logical parent" in w for w in imp.warnings)


def test_before_the_compaction_parallel_calls_are_answered_too():
    a = opened(COMPACTION).agent
    a.branch("51b2e9ce-05f7-4100-99c6-6f75c412111b")  # the second parallel result, just before the boundary
    msgs = a.messages()
    assert [m.role for m in msgs] == ["user", "assistant", "tool_result", "tool_result"]
    assert len(msgs[1].tool_calls()) == 2 and synthesized(msgs) == []
    assert msgs[0].text().startswith("Work on bead spotter-dov")


def test_subagent_sidechain_file_with_parents_in_the_main_session():
    imp = opened(SUBAGENT)
    a = imp.agent
    assert any("3 line(s) of a subagent run continue from lines that are not in this file" in w for w in imp.warnings)
    # The run is one labelled branch: one root, the sidechain entry naming the subagent, which keeps
    # the main-session uuids its first lines pointed at.
    roots = [e for e in a.entries() if not e.parent_id]
    assert [r.id for r in roots] == ["sidechain:acompact-e1f845"]
    head = roots[0]
    assert head.kind == "claude_code.sidechain" and head.data["name"] == "agent-acompact-e1f845"
    firsts = [o["parentUuid"] for o in raw_lines(SUBAGENT)[:3]]
    assert head.data["entered_from"] == firsts
    msgs = a.messages()
    assert [m.role for m in msgs] == ["user", "user", "assistant"]
    assert msgs[0].injected is ai.Injection.META and msgs[0].text().startswith("<system-reminder>")
    shown = a.transcript()
    assert shown[0] is a.entry(head.id)  # the transcript names the run
    assert [e.message.role for e in shown[1:]] == ["user", "assistant"]
    assert path(a.entries(), a.leaf_id)[-1].message.text().lstrip().startswith("<analysis>")


def _durable_children(entries, id):
    return [e for e in entries if e.parent_id == id and not is_aside(e)]


def test_bookkeeping_records_hang_off_the_conversation_and_make_no_branch():
    """Progress, hook, snapshot, queue and local-command records are asides: off the path, no
    branch marker anywhere on the main conversation, no hook JSON in the transcript."""
    a = opened(TOOL_HEAVY).agent
    entries = a.entries()
    on_path = a.path()
    assert all(isinstance(e, MessageEntry) for e in on_path)
    # A branch marker is drawn where an entry has more than one child that is not an aside
    # (and at the root level when several roots are not asides): none on this conversation.
    for e in on_path:
        assert len(_durable_children(entries, e.id)) <= 1, e.id
    assert len([e for e in entries if not e.parent_id and not is_aside(e)]) == 1
    side = [e for e in entries if is_aside(e)]
    assert {e.kind for e in side} >= {
        "claude_code.progress",
        "claude_code.queue-operation",
        "claude_code.file-history-snapshot",
        "claude_code.system.local_command",
    }
    assert {entry_kind(e) for e in side} == {"aside"}  # the kind the widget's filter and listings use
    # Each aside hangs off a conversation entry (or is a root before the first one): not off another aside.
    ids = {e.id: e for e in entries}
    assert all(not e.parent_id or not is_aside(ids[e.parent_id]) for e in side)
    # The hook progress of a tool call hangs off the message that made the call.
    hook = next(e for e in side if e.id.startswith("eb76f9cb"))
    assert a.entry(hook.parent_id).message.tool_calls()
    shown = " ".join(display_text(e) for e in a.transcript())
    assert "hook_progress" not in shown and "hookEvent" not in shown and "PostToolUse" not in shown
    assert not [e for e in a.transcript() if isinstance(e, CustomEntry)]
    # Every entry has a valid time, also the records Claude Code wrote without one (snapshots).
    assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", e.created_at) for e in entries)


def test_compaction_excerpt_main_conversation_has_no_branch_marker():
    a = opened(COMPACTION).agent
    entries = a.entries()
    for e in a.path():
        assert len(_durable_children(entries, e.id)) <= 1, e.id
    assert "SessionStart" not in " ".join(display_text(e) for e in a.transcript())


def test_a_sidechain_in_the_main_file_is_its_own_named_branch(tmp_path):
    """Generated here (after the fields of the real files): a main conversation whose assistant line
    starts a subagent run written into the same file (isSidechain lines, an agentId). The run hangs off
    a claude_code.sidechain entry naming it, itself off the line it started from; the main
    conversation goes on with no branch marker from the run's progress."""
    import json

    from durable_nb.importers import open_session

    def line(uuid, parent, type_, content, **extra):
        rec = {"parentUuid": parent, "isSidechain": False, "sessionId": "s1", "type": type_, "uuid": uuid}
        rec["timestamp"] = f"2026-02-10T10:00:{len(uuid):02d}.000Z"
        if type_ in ("user", "assistant"):
            rec["message"] = {
                "role": type_,
                "content": content,
                **({"id": f"m-{uuid}"} if type_ == "assistant" else {}),
            }
        rec.update(extra)
        return json.dumps(rec)

    call = [{"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "look around"}}]
    lines = [
        line("u1", None, "user", "explore the repo"),
        line("a1", "u1", "assistant", call),
        line("s1", "a1", "user", "look around", isSidechain=True, agentId="a7f"),
        line("s2", "s1", "assistant", [{"type": "text", "text": "found 3 files"}], isSidechain=True, agentId="a7f"),
        line("p1", "s2", "progress", None, isSidechain=True, agentId="a7f", data={"type": "hook_progress"}),
        line("r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "found 3 files"}]),
        line("a2", "r1", "assistant", [{"type": "text", "text": "The repo has 3 files."}]),
    ]
    f = tmp_path / "s1.jsonl"
    f.write_text("\n".join(lines) + "\n")
    a = open_session(f).agent
    head = a.entry("sidechain:a7f")
    assert head.kind == "claude_code.sidechain" and head.data["name"] == "agent-a7f" and head.parent_id == "a1"
    assert a.entry("s1").parent_id == "sidechain:a7f" and a.entry("s2").parent_id == "s1"
    assert a.entry("p1").parent_id == "s2" and is_aside(a.entry("p1"))
    assert [e.id for e in a.path()] == ["u1", "a1", "r1", "a2"]  # the leaf is the main conversation's
    entries = a.entries()
    assert [len(_durable_children(entries, e.id)) for e in a.path()] == [1, 2, 1, 0]  # a1: the answer and the run
    a.branch("s2")
    assert [m.text() for m in a.messages()][-2:] == ["look around", "found 3 files"]
