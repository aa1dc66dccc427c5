"""pi's session format: the whole tree out (harness durable_nb), and the project's own pi importer reads
it back to the same entries, except what docs/exports.md says is lost (checked here, field by field)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from interop_sessions import every_kind_agent
from test_export import build, op
from widget_sessions import EVIL, hostile_agent

from durable_nb import ai
from durable_nb.importers import open_session
from durable_nb.session import CustomEntry, MessageEntry, decode, encode, is_ephemeral, leaf_last
from durable_nb.session.labels import label_of
from durable_nb.share import export

STOP = {"end_turn": "stop", "tool_use": "toolUse", "max_tokens": "length"}


def _block(b: ai.Block) -> ai.Block:
    """A block as pi keeps it: a reminder is text, a file a line naming it, a call its id, name, arguments."""
    if isinstance(b, (ai.Text, ai.Reminder)):
        return ai.Text(b.text)
    if isinstance(b, ai.File):
        return ai.Text(f"[file {b.name or b.url or b.file_id} ({b.mime_type})]")
    if isinstance(b, ai.ToolCall):
        return ai.ToolCall(b.id, b.name, b.arguments)
    return b


def _usage(u):
    u = u or {}
    i, o = u.get("input_tokens", 0), u.get("output_tokens", 0)
    return {"input": i, "output": o, "cacheRead": 0, "cacheWrite": 0, "totalTokens": i + o,
            "input_tokens": i, "output_tokens": o}  # fmt: skip


def expected(e, sid):
    """``e`` as it comes back from the .pi.jsonl (the losses docs/exports.md lists)."""
    if isinstance(e, CustomEntry):  # as a store reads it back: into its registered class
        return msgspec.structs.replace(decode(encode(e)), parent_id=e.parent_id or sid)
    e = msgspec.structs.replace(e, parent_id=e.parent_id or sid, extra=msgspec.UNSET)
    if isinstance(e, MessageEntry):
        m = e.message
        if m.role == "system" or (m.injected is not None and m.role != "user"):
            return e  # kept whole in a custom record
        kept = ai.Message(m.role, [_block(b) for b in m.content], injected=m.injected)
        if m.injected is not None or (m.origin or "").startswith("pi:"):  # pi's extension messages keep theirs
            kept = msgspec.structs.replace(kept, origin=m.origin)
        if m.role == "assistant":
            stop = STOP.get(m.stop_reason or "", m.stop_reason or ("toolUse" if m.tool_calls() else "stop"))
            kept = msgspec.structs.replace(kept, usage=_usage(m.usage), stop_reason=stop, model=m.model or None)
        if m.role == "tool_result":
            kept = msgspec.structs.replace(
                kept, tool_call_id=m.tool_call_id, tool_name=m.tool_name, is_error=m.is_error
            )
        return msgspec.structs.replace(e, message=kept)
    return e


def round_trip(a, tmp_path):
    out = export(a, tmp_path / "s.pi.jsonl")
    back = open_session(out)
    assert back.format == "pi" and back.warnings == []
    entries = back.agent.entries()
    root, rest = entries[0], entries[1:]
    assert root.kind == "pi.session" and root.data["harness"] == "durable_nb" and root.id == a.session_id
    kept = leaf_last([e for e in a.entries() if not is_ephemeral(e)], a.leaf_id)
    assert len(rest) == len(kept)
    for mine, theirs in zip(kept, rest):
        if label_of(mine) is not None:  # pi's label entry rides along in data["pi"]
            assert (theirs.id, theirs.parent_id or "", label_of(theirs)) == (
                mine.id,
                mine.parent_id or a.session_id,
                label_of(mine),
            )
            continue
        assert theirs == expected(mine, a.session_id), mine.id
    return out, back


def test_every_kind_of_entry_reopens_as_the_same_tree(tmp_path):
    a = every_kind_agent()
    out, back = round_trip(a, tmp_path)
    b = back.agent
    assert b.leaf_id == a.leaf_id and b.labels() == a.labels() == {"first": a.ids["q"], "moved": a.ids["answer"]}
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0] == {"type": "session", "version": 3, "harness": "durable_nb", "id": "tools",
                        "timestamp": lines[0]["timestamp"], "cwd": ""}  # fmt: skip
    by_type = {}
    for r in lines[1:]:
        by_type.setdefault(r["type"], []).append(r)
    assert all(r["parentId"] is None for r in lines[1:] if r["id"] == a.entries()[0].id)
    assert [r.get("label") for r in by_type["label"]] == ["first", "moved", "moved", "gone", None]
    assert by_type["label"][-1]["targetId"] == a.ids["img"]  # a removed name clears its entry's label
    assert by_type["compaction"][0]["firstKeptEntryId"] == a.ids["img"]
    meta = by_type["custom_message"]
    assert [(m["display"], m.get("details")) for m in meta] == [(False, {"origin": "skill:ctx"}), (False, None)]
    shown = {r["customType"]: r["display"] for r in by_type["custom"]}
    assert shown["note"] is True and shown["annotation"] is False and shown["durable_nb.message"] is False
    assert shown["weird"] is False
    (calls,) = [r["message"] for r in by_type["message"] if r["id"] == a.ids["calls"]]
    assert (calls["usage"]["input"], calls["usage"]["totalTokens"], calls["stopReason"]) == (120, 165, "toolUse")
    thinking = [b for r in by_type["message"] for b in r["message"]["content"] if b["type"] == "thinking"]
    assert {b.get("redacted", False) for b in thinking} == {True, False}

    # pi's model view is ours: the importer's agent sends the same messages down the leaf's path
    def said(agent):
        return [(m.role, [getattr(x, "text", x) for x in m.content]) for m in agent.messages()]

    assert said(b) == said(a)  # a reminder's text is text there
    assert b.system == a.system


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st_ops=__import__("hypothesis").strategies.lists(op, max_size=20))
def test_any_session_reopens_as_the_same_tree(tmp_path_factory, st_ops):
    round_trip(build(st_ops), tmp_path_factory.mktemp("pi"))


def test_hostile_text_keeps_every_line_valid_json(tmp_path):
    a = hostile_agent()
    out, back = round_trip(a, tmp_path)
    records = [json.loads(line) for line in out.read_bytes().splitlines()]
    assert sum(EVIL in s for s in strings(records)) > 10  # kept as text, inside JSON strings


def strings(v):
    """Every string in a JSON value, keys too."""
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)


FIXTURES = Path(__file__).resolve().parent.parent / "importers" / "fixtures"


@pytest.mark.parametrize(
    "name",
    ["agent-sessions-pi-v3-small.jsonl", "pi-v3-branches.generated.jsonl", "pi-current-retained-tail.generated.jsonl",
     "pi-mono-v1-before-compaction-prefix.jsonl"],
)  # fmt: skip
def test_a_pi_session_opened_here_goes_back_to_pi_as_it_was(tmp_path, name):
    """pi -> durable_nb -> .pi.jsonl -> durable_nb: the same entries. pi's own records (model changes, an
    extension's custom entries, branch summaries, extension messages) are written back as pi's; the header
    keeps its fields and time. Lost: a reply without usage comes back with zero counts."""
    a = open_session(FIXTURES / name).agent
    out = export(a, tmp_path / "back.pi.jsonl")
    header = json.loads(out.read_text().splitlines()[0])
    first = a.entries()[0]
    assert header["timestamp"] == first.data["timestamp"] and header.get("cwd") == first.data.get("cwd", "")
    b = open_session(out).agent
    assert b.leaf_id == a.leaf_id and b.labels() == a.labels()
    mine, theirs = a.entries(), b.entries()
    assert [e.id for e in theirs] == [e.id for e in mine]
    for x, y in zip(mine[1:], theirs[1:]):
        if isinstance(x, MessageEntry) and x.message.usage is None and x.message.role == "assistant":
            y = msgspec.structs.replace(y, message=msgspec.structs.replace(y.message, usage=None))
        assert y == x, x.id
    records = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert not any(r["type"] == "custom" and r["customType"].startswith("pi.") for r in records)
