"""A Claude Code log opened read-only, in the real widget in headless Chromium (see widget_harness.py).

The real fixture's progress, hook, snapshot and queue records hang off the
conversation (asides): no branch marker anywhere on the main conversation,
no hook JSON in the transcript, the header says the copy is read-only, and
the kind filter hides the asides from the tree. Screenshots go to
screenshots/last/ (looked at by hand).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from widget_harness import Page, shot

from durable_nb.importers import open_session
from durable_nb.session import is_aside
from durable_nb.widget import SessionWidget

FIXTURE = Path(__file__).resolve().parents[1] / "importers" / "fixtures" / "spotter-tool_heavy.jsonl"

pytestmark = pytest.mark.usefixtures("recording")


def test_claude_code_log_no_branch_markers_no_hook_json_read_only_header(browser):
    imp = open_session(FIXTURE)
    a = imp.agent
    asides = [e.id for e in a.entries() if is_aside(e)]
    assert len(asides) == 17
    w = SessionWidget(a, read_only=str(imp.source))
    h = Page(browser, w, height=1100)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        status = page.locator(".dnb-status").inner_text()
        assert status.startswith(f"read-only copy of {FIXTURE} · ")
        # The lines Python lays out for the page: no entry of the main conversation has two children
        # drawn as branches (asides hang off, like ephemeral entries).
        lines = w.lines(0, len(w._layout))
        assert len(lines) == len(a.entries())
        assert [ln["row"]["id"] for ln in lines if ln["on"]] == [e.id for e in a.path()]
        assert max(ln["kids"] for ln in lines) == 1
        assert {ln["mark"] for ln in lines if ln["row"].get("aside") and ln["row"]["parent_id"]} == {"eph"}
        # In the page: the rows drawn, none with a branch marker.
        assert page.locator(".dnb-row.dnb-active").count() >= 10
        assert page.locator(".dnb-fork").count() == 0
        # The asides are drawn off the chain (never on the active path).
        drawn_asides = [i for i in asides if page.locator(f'.dnb-row[data-id="{i}"]').count()]
        assert drawn_asides and all(
            "dnb-active" not in page.locator(f'.dnb-row[data-id="{i}"]').get_attribute("class") for i in drawn_asides
        )
        shot(page, "claude_code_tree")
        # The kind filter hides them; the conversation stays as it was.
        page.check(".dnb-filter-aside input")
        page.wait_for_function(f"!document.querySelector('.dnb-row[data-id=\"{drawn_asides[0]}\"]')")
        assert w.hidden == ["aside"]
        assert page.locator(".dnb-fork").count() == 0
        shot(page, "claude_code_tree_asides_hidden")
        # The transcript: what a person reads, without hook output.
        page.click(".dnb-tab:has-text('transcript')")
        panel = page.locator(".dnb-transcript-panel")
        panel.wait_for(state="visible")
        panel.locator(".dnb-card").first.wait_for()  # the tab's part of the views, asked for when shown
        text = panel.inner_text()
        assert "start phoenix in background" in text
        for hook in ("hook_progress", "hookEvent", "PostToolUse", "PreToolUse", "queue-operation"):
            assert hook not in text, hook
        shot(page, "claude_code_transcript")
    finally:
        h.close()
