"""durable_nb's extension and widget in real JupyterLab 4, through the UI: badges toggled from the cell
toolbar and the keyboard, a widget whose kernel restarted, and Stop during a streaming turn."""

from __future__ import annotations

import time

from .lab import (
    accept_dialog,
    menu,
    notebook_json,
    open_notebook,
    require_extension,
    run_cell,
    wait_kernel,
    write_notebook,
)

SLOW_MODEL = """import time
from durable_nb.notebook import current
class Slow:
    name = 'slow'
    def stream(self, messages):
        for i in range(400):
            yield f'word{i} '
            time.sleep(0.05)
current().agent.model = Slow()"""


def tags(page, i: int) -> list[str]:
    return notebook_json(page)["cells"][i]["metadata"].get("tags", [])


def test_badges_toggle_from_the_cell_toolbar_and_the_keyboard(lab, lab_root, page, screenshots):
    write_notebook(lab_root / "badges.ipynb", [("b0", "%%durable\nAnswer briefly.", []), ("b1", "x = 1", ["note"])])
    open_notebook(page, lab, "badges.ipynb")
    require_extension(page)
    cells = page.locator(".jp-NotebookPanel:visible .jp-Cell")
    assert cells.nth(1).locator(".durable-nb-badge").inner_text() == "note"  # a tag saved in the file shows
    assert cells.nth(0).locator(".durable-nb-badge").count() == 0

    cells.nth(0).locator(".jp-InputArea-editor").click()
    toolbar = cells.nth(0).locator(".jp-cell-toolbar")
    toolbar.locator(".durable-nb-toggle", has_text="meta").click()
    assert tags(page, 0) == ["meta"]
    badge = cells.nth(0).locator(".durable-nb-badge")
    badge.wait_for()
    assert badge.inner_text() == "meta"
    assert "lm-mod-toggled" in toolbar.locator(".durable-nb-toggle", has_text="meta").get_attribute("class")
    page.screenshot(path=screenshots / "badge_meta.png")

    toolbar.locator(".durable-nb-toggle", has_text="ephemeral").click()  # one kind at a time
    assert tags(page, 0) == ["ephemeral"] and badge.inner_text() == "ephemeral"
    toolbar.locator(".durable-nb-toggle", has_text="ephemeral").click()
    assert tags(page, 0) == [] and cells.nth(0).locator(".durable-nb-badge").count() == 0

    page.keyboard.press("Escape")  # command mode: T then M toggles meta
    page.keyboard.press("t")
    page.keyboard.press("m")
    assert tags(page, 0) == ["meta"] and badge.inner_text() == "meta"
    page.keyboard.press("t")
    page.keyboard.press("m")
    assert tags(page, 0) == []

    # the command palette lists the toggles
    page.keyboard.press("Control+Shift+c")
    page.keyboard.type("tag of the selected")
    items = page.locator(".lm-CommandPalette-item:visible .lm-CommandPalette-itemLabel").all_inner_texts()
    assert {f"Toggle the {t} tag of the selected cells" for t in ("meta", "ephemeral", "note", "system")} <= set(items)
    page.keyboard.press("Escape")


def test_a_widget_of_a_restarted_kernel_says_so_and_root_branches_show(lab, lab_root, page, screenshots):
    write_notebook(
        lab_root / "stale.ipynb",
        [("s0", "%load_ext durable_nb", []), ("s1", "%%durable\nfirst version", []), ("s2", "%durable show", [])],
    )
    open_notebook(page, lab, "stale.ipynb")
    require_extension(page)
    run_cell(page, 0)
    run_cell(page, 1)
    run_cell(page, 1)  # re-run: the cell's turn grows a sibling at the root
    run_cell(page, 2)
    widget = page.locator(".dnb-widget").first
    widget.wait_for()
    start = widget.locator(".dnb-row.dnb-start")
    assert "2 branches" in start.inner_text()
    page.screenshot(path=screenshots / "widget_root_branches.png")
    # origins as recorded (a generated UUID would read just "cell"): never an execution count (#27.13)
    widget.locator(".dnb-tab", has_text="Model view").click()
    card = widget.locator(".dnb-model-panel .dnb-card-user").first
    assert card.locator(".dnb-badge").first.inner_text() == "cell:s1"
    widget.locator(".dnb-tab", has_text="Tree").click()

    menu(page, "Kernel", "Restart Kernel")
    accept_dialog(page)
    page.wait_for_timeout(500)
    wait_kernel(page)
    rows = widget.locator(".dnb-row[data-id]")
    clicked = time.monotonic()
    rows.nth(1).click()
    message = "this view belongs to a kernel that was restarted — run %durable show"
    widget.locator(".dnb-error", has_text=message).wait_for(timeout=1000)
    assert time.monotonic() - clicked < 1.5
    widget.scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "widget_stale.png")


def test_stop_during_a_streaming_turn_shows_no_traceback(lab, lab_root, page, screenshots):
    write_notebook(
        lab_root / "stop.ipynb",
        [("t0", "%load_ext durable_nb", []), ("t1", SLOW_MODEL, []), ("t2", "%%durable\nstream please", [])],
    )
    open_notebook(page, lab, "stop.ipynb")
    run_cell(page, 0)
    run_cell(page, 1)
    cell = page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(2)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    cell.locator(".jp-OutputArea-output", has_text="word3").wait_for()
    page.locator(".jp-NotebookPanel:visible .jp-Toolbar [data-command='notebook:interrupt-kernel']").click()
    cell.locator(".jp-OutputArea-output", has_text="TurnInterrupted").wait_for(timeout=20_000)
    wait_kernel(page)
    page.screenshot(path=screenshots / "stop_streaming.png")
    outputs = notebook_json(page)["cells"][2]["outputs"]
    errors = [o for o in outputs if o["output_type"] == "error"]
    assert len(errors) == 1 and errors[0]["ename"] == "TurnInterrupted" and len(errors[0]["traceback"]) == 1
    shown = cell.locator(".jp-OutputArea").inner_text()
    assert "interrupted: this partial reply was not saved" in shown
    assert "Traceback" not in shown and "File " not in shown and "KeyboardInterrupt" not in shown
