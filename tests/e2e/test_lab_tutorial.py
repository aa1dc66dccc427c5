"""Tutorial 01 runs in real JupyterLab (tags from the saved notebook, widgets rendered)."""

from __future__ import annotations

import shutil
from pathlib import Path

from .lab import open_notebook, run_all

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "01_entry_semantics.ipynb"


def test_tutorial_01_runs_in_jupyterlab(lab, lab_root, page, screenshots):
    shutil.copy(NOTEBOOK, lab_root / NOTEBOOK.name)
    open_notebook(page, lab, NOTEBOOK.name)
    ran = run_all(page, timeout_ms=90_000)  # raises naming the cell if any cell failed
    cells = {c["id"]: c for c in ran["cells"]}
    assert "staged meta" in "".join(o.get("text", "") if isinstance(o.get("text"), str) else "".join(o.get("text", []))
                                    for o in cells["skill"]["outputs"])

    # the two views side by side: two session widgets in one row, one on each view
    pair = page.locator(".widget-hbox").filter(has=page.locator(".dnb-widget")).first
    widgets = pair.locator(".dnb-widget")
    widgets.nth(1).wait_for(state="visible", timeout=20_000)
    page.evaluate("""async () => {
        const app = window.jupyterapp, nb = app.shell.currentWidget.content;
        app.shell.collapseLeft();
        const i = nb.widgets.findIndex(c => c.model.id === 'widgets');
        nb.activeCellIndex = i;
        await nb.scrollToItem(i, 'start');
    }""")
    page.wait_for_timeout(500)
    page.screenshot(path=screenshots / "tutorial_01_views.png")
    assert widgets.nth(0).locator(".dnb-tab.dnb-on").inner_text() == "Model view"
    assert widgets.nth(1).locator(".dnb-tab.dnb-on").inner_text() == "Transcript view"
    left, right = widgets.nth(0).bounding_box(), widgets.nth(1).bounding_box()
    assert right["x"] >= left["x"] + left["width"] - 1  # side by side, not stacked
    # the model view marks the meta skill; the transcript shows no injected entry at all
    assert widgets.nth(0).locator(".dnb-model-panel .dnb-badge.dnb-meta").first.inner_text() == "meta · cell:skill"
    assert widgets.nth(1).locator(".dnb-transcript-panel .dnb-badge.dnb-meta").count() == 0
    assert "What is an entry?" in widgets.nth(1).locator(".dnb-transcript-panel").inner_text()
