"""The look of durable_nb in real JupyterLab 4, through the UI (#27 items 6, 10, 11, 14, 17): each tag
button's tooltip names its own shortcut, `%%durable` cells are highlighted as Markdown (prose), and the
widget reads well: branches as lanes, a note and an imported log readable, Markdown drawn safely, three
replies compared without clipping."""

from __future__ import annotations

from pathlib import Path

import pytest

from .lab import LabServer, open_notebook, require_extension, run_all, write_notebook

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


FIXTURES = Path(__file__).resolve().parents[1] / "importers" / "fixtures"

# Two root branches (an edited first turn), a reply with two branches under it, a note on the active path;
# the replies are Markdown (one with raw HTML, a remote image and a javascript: link, drawn harmless).
LOOK = """%load_ext durable_nb
from durable_nb import ai, durable, session
from durable_nb.kinds.note import Note
from durable_nb.session import MessageEntry
reply = lambda text: MessageEntry(message=ai.Message("assistant", [ai.Text(text)]))
agent = durable.Agent(store=session.MemoryStore(), session_id="look")
agent.append(durable.text("What is durable_nb?"), reply("A first try."))
agent.branch("")
(q,) = agent.append(durable.text("What is durable_nb, in two lines?"))
(r,) = agent.append(reply(
    "A **durable session**: an append-only *tree* of entries.\\n\\n- every turn is kept\\n- a branch is cheap\\n\\n"
    "```python\\nagent.branch(entry_id)\\n```\\n\\nRaw <b>HTML</b> stays text, "
    "![a pixel](https://example.invalid/p.png) is not fetched, [this](javascript:alert(1)) is no link."))
agent.append(durable.text("Shorter?"), reply("An append-only tree of turns."))
agent.branch(r.id)
agent.append(Note(body="Note for the reviewer: the **French** branch is the one to keep."))
agent.append(durable.text("In French?"), reply("Un arbre d'entrées, en ajout seul."))
agent"""

IMPORTED = f"""from durable_nb.importers import open_session
open_session({str(FIXTURES / "spotter-tool_heavy.jsonl")!r}).agent"""


def test_the_widget_reads_well_in_jupyterlab(lab, lab_root, page, screenshots):
    """Branches as lanes, a transcript with a note, an imported Claude Code log, three replies compared:
    through the UI, screenshots for docs/widget.md (#27 items 10, 11, 14, 17)."""
    write_notebook(lab_root / "look.ipynb", [("l0", LOOK, []), ("l1", IMPORTED, [])])
    page.set_viewport_size({"width": 1100, "height": 1300})
    open_notebook(page, lab, "look.ipynb")
    run_all(page)
    page.wait_for_function("document.querySelectorAll('.dnb-widget').length === 2", timeout=60_000)
    own, imported = page.locator(".dnb-widget").nth(0), page.locator(".dnb-widget").nth(1)
    own.locator(".dnb-row.dnb-leaf").wait_for()

    # the tree: both root branches are siblings (├ then └), the branches under the reply too
    glyphs = own.locator(".dnb-lanes").evaluate_all("els => els.map(e => e.dataset.glyph)")
    assert glyphs[0] == "●" and glyphs[1] == "├●" and glyphs.count("└●") >= 1, glyphs
    assert own.locator(".dnb-row.dnb-active .dnb-lane-own").count() >= 2  # the branch you are on, marked
    own.locator(".dnb-row", has_text="Note for the reviewer").locator(".dnb-preview").wait_for()
    own.screenshot(path=screenshots / "look_branches.png")

    # the transcript: the note reads as its body; the reply as Markdown, safely
    own.locator(".dnb-tab", has_text="Transcript view").click()
    panel = own.locator(".dnb-transcript-panel")
    note = panel.locator(".dnb-card-note")
    assert note.locator(".dnb-md strong").inner_text() == "French" and '"body"' not in note.inner_text()
    reply = panel.locator(".dnb-card-assistant").first
    assert reply.locator(".dnb-md li").count() == 2 and reply.locator(".dnb-md pre").count() == 1
    assert "Raw <b>HTML</b> stays text" in reply.inner_text() and not reply.locator("b, img").count()
    assert reply.locator("a.dnb-remote-image").inner_text() == "[image: a pixel] (https://example.invalid/p.png)"
    assert not page.locator(".dnb-widget a[href^='javascript']").count()
    own.screenshot(path=screenshots / "look_transcript.png")

    # an imported Claude Code log: asides drawn with their own glyph and read as what they say
    imported.scroll_into_view_if_needed()
    asides = imported.locator(".dnb-row.dnb-aside")
    assert asides.count() > 0 and asides.first.locator(".dnb-glyph").inner_text() == "◇"
    assert not [t for t in asides.locator(".dnb-preview").all_inner_texts() if t.startswith("{")]
    imported.screenshot(path=screenshots / "look_claude_code_tree.png")
    imported.locator(".dnb-tab", has_text="Transcript view").click()
    imported.locator(".dnb-transcript-panel .dnb-card-assistant").first.wait_for()
    imported.screenshot(path=screenshots / "look_claude_code_transcript.png")

    # three replies picked from their details and compared: three columns, nothing clipped
    own.locator(".dnb-tab", has_text="Tree").click()
    for text in ("A first try.", "An append-only tree of turns.", "Un arbre d'entrées"):
        own.locator(".dnb-row", has_text=text).click()
        own.locator(".dnb-details", has_text=text).wait_for()
        own.locator(".dnb-pick").click()
    own.locator(".dnb-compare-go").click()
    sides = own.locator(".dnb-compare-side")
    sides.nth(2).wait_for()
    for i in range(3):
        box, pills = sides.nth(i).bounding_box(), sides.nth(i).locator(".dnb-badge")
        for j in range(pills.count()):
            p = pills.nth(j).bounding_box()
            assert p["x"] >= box["x"] - 1 and p["x"] + p["width"] <= box["x"] + box["width"] + 1  # not clipped
    own.screenshot(path=screenshots / "look_compare.png")


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    root = tmp_path_factory.mktemp("nb7-look")
    with LabServer(root, app="notebook") as server:
        yield server, root


def test_tooltips_and_prose_cells_in_notebook_7(notebook7, page, screenshots):
    """What differs in Notebook 7: its own cell toolbar and editor setup; the same tooltips and highlighting."""
    server, root = notebook7
    write_notebook(root / "look7.ipynb", [("n0", "%%durable\n# Plan\nAnswer **briefly**.", []), ("n1", "x = 1", [])])
    open_notebook(page, server, "look7.ipynb")
    assert not page.locator(".jp-LabShell").count()  # Notebook 7, not Lab
    require_extension(page)
    page.wait_for_function(f"({LANGUAGE})(0) === 'markdown'")
    assert page.evaluate(f"({LANGUAGE})(1)") != "markdown"
    cell = page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(0)
    cell.locator(".jp-InputArea-editor").click()
    for tag, key in (("meta", "M"), ("ephemeral", "E"), ("note", "N"), ("system", "S")):
        button = cell.locator(".jp-cell-toolbar .durable-nb-toggle", has_text=tag)
        title = button.get_attribute("title") or button.locator("button").first.get_attribute("title") or ""
        assert title.endswith(f"(T, {key})"), (tag, title)
    cell.screenshot(path=screenshots / "look7_prose_cell.png")
