"""Each entry kind reads the way a person reads it: in the transcript, on its tree row (#27 item 10)."""

from __future__ import annotations

from pathlib import Path

import durable_nb  # noqa: F401  (the kinds register)
from durable_nb.importers import open_session
from durable_nb.kinds import text
from durable_nb.kinds.note import Note
from durable_nb.session import CustomEntry, transcript_view
from durable_nb.widget.encoding import row, view_entry

FIXTURES = Path(__file__).resolve().parents[1] / "importers" / "fixtures"


def test_a_note_reads_as_its_body_not_as_its_json():
    note = Note(body="Note for the reviewer: compare both answers.", cell="c1")
    item = view_entry(note)
    assert item["text"] == "Note for the reviewer: compare both answers." and item["readable"] is True
    assert row(note)["preview"] == "Note for the reviewer: compare both answers."
    assert "{" not in row(note)["preview"]


def test_pi_records_read_as_what_they_say():
    agent = open_session(FIXTURES / "pi-v3-branches.generated.jsonl").agent
    items = {e.kind: view_entry(e) for e in transcript_view(agent.path()) if isinstance(e, CustomEntry)}
    assert items["pi.model_change"]["text"] == "model → anthropic/claude-sonnet-4-5"
    assert items["pi.thinking_level_change"]["text"] == "thinking level → high"
    assert items["pi.session_info"]["text"] == "session named “file tidy-up”"
    assert items["pi.session"]["text"] == "session started in /tmp/demo"
    assert items["pi.custom"]["text"] == 'todo-ext extension state: {"open": 0}'
    assert all(i["readable"] for i in items.values())
    assert all('"type"' in i["data"] for k, i in items.items() if k.startswith("pi."))  # the record is kept


def test_claude_code_records_read_as_what_they_say_and_are_drawn_as_asides():
    agent = open_session(FIXTURES / "spotter-tool_heavy.jsonl").agent
    rows = [row(e) for e in agent.store.load_entries(agent.session_id) if isinstance(e, CustomEntry)]
    previews = {r["preview"] for r in rows}
    assert "hook progress · SessionStart:startup" in previews and "file snapshot" in previews
    assert "queued input enqueue: /mcp" in previews
    assert "system.local command: MCP dialog dismissed" in previews  # the tags around it are read through
    assert not any(p.startswith("{") for p in previews)
    assert all(r["aside"] for r in rows)  # drawn off the chain with the aside glyph, not the ephemeral one


def test_a_kind_nobody_registered_keeps_its_json():
    e = CustomEntry(kind="artifact", data={"path": "out.csv"})
    item = view_entry(e)
    assert text(e) is None and "readable" not in item and '"path": "out.csv"' in item["data"]
    assert row(e)["preview"] == '{"path": "out.csv"}'


def test_the_static_fallback_reads_a_note_as_its_body():
    from durable_nb.widget import fallback

    note = Note(body="Note for the <reviewer>: compare both.", cell="c1")
    html = fallback.transcript_html({"transcript": [view_entry(note)], "transcript_total": 1})
    body = html.split("<details>")[0]
    assert "Note for the &lt;reviewer&gt;: compare both." in body and "&quot;body&quot;" not in body
    assert "<summary>record</summary>" in html  # the record is kept, folded
