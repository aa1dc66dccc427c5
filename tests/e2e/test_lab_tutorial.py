"""The tutorials run in real JupyterLab (tags from the saved notebooks, widgets rendered)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .lab import open_notebook, run_all

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def scroll_to_cell(page, cell_id: str) -> None:
    """Hide the file browser and scroll the notebook so the cell ``cell_id`` is at the top."""
    page.evaluate(
        """async (id) => {
        const app = window.jupyterapp, nb = app.shell.currentWidget.content;
        app.shell.collapseLeft();
        const i = nb.widgets.findIndex(c => c.model.id === id);
        nb.activeCellIndex = i;
        await nb.scrollToItem(i, 'start');
    }""",
        cell_id,
    )
    page.wait_for_timeout(500)


@pytest.fixture
def ran(lab, lab_root, page, request):
    """Run the tutorial named by the test's parameter in JupyterLab; return (name, notebook JSON)."""
    name = request.param
    shutil.copy(NOTEBOOKS / name, lab_root / name)
    if (NOTEBOOKS / "data").is_dir() and not (lab_root / "data").exists():
        shutil.copytree(NOTEBOOKS / "data", lab_root / "data")
    open_notebook(page, lab, name)
    return name, run_all(page, timeout_ms=90_000)  # raises naming the cell if any cell failed


@pytest.mark.parametrize("ran", ["01_entry_semantics.ipynb"], indirect=True)
def test_tutorial_01_shows_both_views_side_by_side(ran, page, screenshots):
    cells = {c["id"]: c for c in ran[1]["cells"]}
    assert any("staged meta" in "".join(o.get("text", "")) for o in cells["skill"]["outputs"])
    pair = page.locator(".widget-hbox").filter(has=page.locator(".dnb-widget")).first
    widgets = pair.locator(".dnb-widget")
    widgets.nth(1).wait_for(state="visible", timeout=20_000)
    scroll_to_cell(page, "widgets")
    page.screenshot(path=screenshots / "tutorial_01_views.png")  # docs/jupyterlab.png is a copy of it
    assert widgets.nth(0).locator(".dnb-tab.dnb-on").inner_text() == "Model view"
    assert widgets.nth(1).locator(".dnb-tab.dnb-on").inner_text() == "Transcript view"
    left, right = widgets.nth(0).bounding_box(), widgets.nth(1).bounding_box()
    assert right["x"] >= left["x"] + left["width"] - 1  # side by side, not stacked
    # the model view marks the meta skill; the transcript shows no injected entry at all
    badge = widgets.nth(0).locator(".dnb-model-panel .dnb-badge.dnb-meta").first.inner_text()
    assert badge == "meta · cell:skill"  # the origin as recorded: never an execution count (#27.13)
    assert widgets.nth(1).locator(".dnb-transcript-panel .dnb-badge.dnb-meta").count() == 0
    assert "What is an entry?" in widgets.nth(1).locator(".dnb-transcript-panel").inner_text()
    # pinned (#27.16): the later turns of the notebook are not in them, and their header says so
    assert "read-only copy of this session at " in widgets.nth(0).locator(".dnb-status").inner_text()
    later = "And what is an ephemeral entry?"  # asked below, after a rewind
    assert later not in widgets.nth(0).inner_text() + widgets.nth(1).inner_text()
    # the last %durable show draws the branch just made: two branches, the new one active
    scroll_to_cell(page, "show")
    shown = page.locator('.jp-Cell[data-durable-cell-id="show"] .dnb-widget')
    shown.locator(".dnb-row.dnb-leaf").wait_for()
    assert shown.locator(".dnb-row", has_text="2 branches").count() == 1
    assert shown.locator(".dnb-row.dnb-active", has_text=later).count() == 1
    page.screenshot(path=screenshots / "tutorial_01_show.png")


@pytest.mark.parametrize("ran", ["02_prompt_design.ipynb"], indirect=True)
def test_tutorial_02_compares_branches_in_jupyterlab(ran, page, screenshots):
    cells = {c["id"]: c for c in ran[1]["cells"]}
    fan = "".join("".join(o.get("text", "")) for o in cells["fanout"]["outputs"])
    assert "labels: offline@t1, terse@t1, costed@t1" in fan  # the fan-out ran in JupyterLab's kernel
    scroll_to_cell(page, "fanout-compare")
    view = page.locator('.jp-Cell[data-durable-cell-id="fanout-compare"]')  # the extension marks cells by id
    panel = view.locator(".dnb-compare-panel")
    panel.locator(".dnb-compare-side").first.wait_for(state="visible", timeout=20_000)
    sides = panel.locator(".dnb-compare-side")
    assert sides.count() == 3
    assert [t.split("\n")[0] for t in panel.locator(".dnb-compare-title").all_inner_texts()][0].startswith(
        "offline@t1 ("
    )
    diff = panel.locator(".dnb-compare-diff").all_inner_texts()
    assert "model: offline → terse" in diff[0] and "model: offline → gpt-4o-mini" in diff[1]
    assert "$0.0000" in sides.nth(2).inner_text() and "cost unknown" in sides.nth(0).inner_text()
    view.screenshot(path=screenshots / "tutorial_02_compare.png")
    widgets = page.locator(".dnb-widget")
    scroll_to_cell(page, "show")
    page.screenshot(path=screenshots / "tutorial_02_show.png")
    assert widgets.last.locator(".dnb-row").count() > 3  # the session's tree is drawn


LAST_WIDGET = {"03_inspecting_sessions.ipynb": "claude-view"}


@pytest.mark.parametrize("ran", list(LAST_WIDGET), indirect=True)
def test_tutorial_03_runs_in_jupyterlab(ran, page, screenshots):
    name, _ = ran
    widgets = page.locator(".dnb-widget")
    widgets.first.wait_for(state="visible", timeout=20_000)
    scroll_to_cell(page, LAST_WIDGET[name])
    page.screenshot(path=screenshots / f"tutorial_{name[:2]}_{LAST_WIDGET[name]}.png")
    assert widgets.last.locator(".dnb-row").count() > 3  # the session's tree is drawn


@pytest.mark.parametrize("ran", ["04_agents_and_tools.ipynb"], indirect=True)
def test_tutorial_04_runs_in_jupyterlab(ran, page, screenshots):
    _, nb = ran
    cells = {c["id"]: c for c in nb["cells"]}

    def out(cell_id: str) -> str:
        return "".join(
            "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
            for o in cells[cell_id]["outputs"]
        )

    assert "system prompt set" in out("system")  # the cell's `system` tag came from JupyterLab
    assert '⚙ add({"a": 2, "b": 40}) → 42' in out("turn")
    assert "the transcript has: '42'" in out("reminder-views")
    assert "interrupted; the last stored entries: ['user', 'assistant']" in out("interrupt")  # a real SIGINT
    assert "tool_result (error): The tool call was interrupted" in out("resume")
    widgets = page.locator(".dnb-widget")
    widgets.first.wait_for(state="visible", timeout=20_000)
    scroll_to_cell(page, "show")
    page.screenshot(path=screenshots / "tutorial_04_show.png")
    assert widgets.last.locator(".dnb-row").count() > 20  # both branches of the session's tree are drawn


@pytest.mark.parametrize("ran", ["05_evaluation.ipynb"], indirect=True)
def test_tutorial_05_draws_the_grid_and_a_cell_opens_its_branch(ran, page, screenshots):
    _, nb = ran
    cells = {c["id"]: c for c in nb["cells"]}
    killed = "".join("".join(o.get("text", "")) for o in cells["killed"]["outputs"])
    assert "exit code: 137" in killed and "3/8 replied" in killed
    widget = page.locator(".dnb-widget").filter(has=page.locator(".dnb-grid-panel")).nth(1)  # grid-v2's
    grid = widget.locator(".dnb-grid-panel")
    grid.locator(".dnb-grid-cell").first.wait_for(state="visible", timeout=20_000)
    scroll_to_cell(page, "grid-v2")
    assert grid.locator(".dnb-grid-cell").count() == 8
    assert grid.locator(".dnb-grid-mark.dnb-grid-improved").count() == 3
    assert "against capitals-v1: 0 regressed, 3 improved" in grid.locator(".dnb-view-head").inner_text()
    page.screenshot(path=screenshots / "tutorial_05_grid.png")
    grid.locator(".dnb-grid-filter-differs input").check()
    assert grid.locator("tr[data-case]").count() == 4  # every case has a pair that changed reply
    grid.locator('.dnb-grid-cell[data-case="2"][data-variant="1"]').click()  # chatty on Peru: still wrong
    widget.locator(".dnb-row.dnb-selected").wait_for(state="visible", timeout=20_000)
    assert "Cusco" in widget.locator(".dnb-details").inner_text()
    page.screenshot(path=screenshots / "tutorial_05_opened.png")
