"""A saved, executed tutorial shows its sessions with no kernel: nbconvert's HTML carries each
widget's static fallback (escaped entry text) where the widget was."""

from __future__ import annotations

import re
import shutil
from html import escape
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter

from durable_nb.importers import open_session
from durable_nb.run_notebook import run_notebook
from durable_nb.session import display_text, transcript_view
from durable_nb.widget import VIEW_LIMIT, views_at

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.mark.browser  # the converted page in Chromium (Playwright imported inside)
def test_tutorial_converted_to_html_shows_each_session_where_its_widget_was(tmp_path, monkeypatch):
    for var in ("DURABLE_NB_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    name = "03_inspecting_sessions.ipynb"
    shutil.copy(NOTEBOOKS / name, tmp_path / name)
    shutil.copytree(NOTEBOOKS / "data", tmp_path / "data")
    nb = run_notebook(tmp_path / name)
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nb, saved)
    nb = nbformat.read(saved, as_version=4)
    assert "widgets" not in nb.metadata  # no widget state: GitHub accepts the file, renderers use the fallback

    widget_cells = [
        c for c in nb.cells if c.cell_type == "code" and any(WIDGET in o.get("data", {}) for o in c.outputs)
    ]
    assert [c.id for c in widget_cells] == ["magic-show", "claude-view"]
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert "object at 0x" not in body
    assert WIDGET not in body  # nothing for a widget manager to run: the fallback is what shows

    cells = {
        m.group(1): m.group(2)
        for m in re.finditer(r'id="cell-id=([^"]+)">(.*?)(?=<div[^>]*id="cell-id=|$)', body, re.S)
    }
    for cell_id, log in (("magic-show", "release-notes.jsonl"), ("claude-view", "claude-code-tool-heavy.jsonl")):
        html = cells[cell_id]
        agent = open_session(tmp_path / "data" / log).agent
        # the tree: every entry of the session (a small one: no rows left out)
        assert set(re.findall(r'<tr data-id="([^"]+)"', html)) == {e.id for e in agent.entries()}
        # the transcript view at the leaf: the last of what a reader sees (as much as the widget
        # sends), each entry's text escaped
        views, _ = views_at(agent.path(), agent.leaf_id, True, VIEW_LIMIT)
        assert views["transcript"][-1]["id"] == transcript_view(agent.path())[-1].id
        for item in views["transcript"]:
            text = display_text(agent.entry(item["id"]))
            if text and item["type"] != "custom":
                # nbconvert re-serialises the output: quotes in text lose their entities, < > & keep them
                assert escape(text[:200], quote=False) in html, (cell_id, text[:80])
        assert f"({views['transcript_total']} entries)" in html

    # the converted page in Chromium, offline: the fallback shows, nothing of the session runs
    html_file = tmp_path / "saved.html"
    html_file.write_text(body, encoding="utf-8")
    from playwright.sync_api import sync_playwright

    shots = Path(__file__).resolve().parent / "screenshots" / "last"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(offline=True, viewport={"width": 1000, "height": 900}).new_page()
            page.goto(html_file.as_uri())
            fallback = page.locator("#cell-id\\=magic-show .dnb-static")
            assert fallback.is_visible()
            assert fallback.locator("tr[data-id]").count() == len(
                open_session(tmp_path / "data/release-notes.jsonl").agent.entries()
            )
            assert page.evaluate("window.__pwned") is None
            page.locator("#cell-id\\=magic-show").screenshot(path=str(shots / "saved-notebook.png"))
        finally:
            browser.close()


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"]
