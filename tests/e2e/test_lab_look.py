"""The look of durable_nb in real JupyterLab 4, through the UI (#27 items 6 and 14): each tag button's
tooltip names its own shortcut, and `%%durable` cells are highlighted as Markdown (prose), not Python."""

from __future__ import annotations

from .lab import open_notebook, require_extension, write_notebook

LANGUAGE = "(i) => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')[i].querySelector('.cm-content').dataset.language"


def test_each_tag_button_names_its_own_shortcut(lab, lab_root, page, screenshots):
    write_notebook(lab_root / "tips.ipynb", [("t0", "%%durable\nAnswer briefly.", [])])
    open_notebook(page, lab, "tips.ipynb")
    require_extension(page)
    cell = page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(0)
    cell.locator(".jp-InputArea-editor").click()
    toolbar = cell.locator(".jp-cell-toolbar")
    for tag, key in (("meta", "M"), ("ephemeral", "E"), ("note", "N"), ("system", "S")):
        button = toolbar.locator(".durable-nb-toggle", has_text=tag)
        title = button.get_attribute("title") or button.locator("button").first.get_attribute("title") or ""
        assert f"toggle the {tag} tag" in title and title.endswith(f"(T, {key})"), (tag, title)
    toolbar.locator(".durable-nb-toggle", has_text="note").hover()
    page.wait_for_timeout(600)
    cell.screenshot(path=screenshots / "tag_tooltip.png")


def test_durable_cells_are_highlighted_as_markdown(lab, lab_root, page, screenshots):
    write_notebook(
        lab_root / "prose.ipynb",
        [("p0", "%%durable --models terse\n# Plan\nAnswer **briefly**: `x = 1` is code.", []), ("p1", "x = 1", [])],
    )
    open_notebook(page, lab, "prose.ipynb")
    require_extension(page)
    page.wait_for_function(f"({LANGUAGE})(0) === 'markdown'")
    assert page.evaluate(f"({LANGUAGE})(1)") != "markdown"
    # a cell that becomes a %%durable cell turns to prose; back again, to the kernel's language
    cells = page.locator(".jp-NotebookPanel:visible .jp-Cell")
    cells.nth(1).locator(".cm-content").click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("%%durable\n")
    page.wait_for_function(f"({LANGUAGE})(1) === 'markdown'")
    page.keyboard.press("Control+Home")
    page.keyboard.press("Shift+ArrowDown")
    page.keyboard.press("Delete")
    page.wait_for_function(f"({LANGUAGE})(1) !== 'markdown'")
    cells.nth(0).screenshot(path=screenshots / "durable_cell_markdown.png")
