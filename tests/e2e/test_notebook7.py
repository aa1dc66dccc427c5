"""In real Notebook 7: tagged cells reach the kernel, the meta entry is stored with its cell, the ephemeral
one is not stored, a turn runs, and the session widget renders."""

from __future__ import annotations

import json

import pytest

from .lab import (
    LabServer,
    accept_dialog,
    menu,
    notebook_json,
    open_notebook,
    require_extension,
    run_all,
    run_cell,
    save,
    stream_text,
    wait_kernel,
    write_notebook,
)
from .test_lab_extension import SLOW_MODEL

CELLS = [
    ("setup", "%load_ext durable_nb\n%config DurableMagics.session = 'nb7'", []),
    ("skill", "%%durable\nAnswer in one short sentence.", ["meta"]),
    ("clock", "%%durable\nIt is Monday.", ["ephemeral"]),
    ("ask", "%%durable\nWhat day is it?", []),
    ("show", "%durable show", []),
]


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    root = tmp_path_factory.mktemp("nb7-root")
    with LabServer(root, app="notebook") as server:
        yield server, root


def test_tagged_cells_a_turn_and_the_widget_in_notebook_7(notebook7, page, screenshots):
    server, root = notebook7
    write_notebook(root / "nb7.ipynb", CELLS)

    page.set_viewport_size({"width": 1100, "height": 1200})
    open_notebook(page, server, "nb7.ipynb")
    assert "/notebooks/nb7.ipynb" in page.url and not page.locator(".jp-LabShell").count()  # Notebook 7, not Lab
    ran = run_all(page)
    page.wait_for_selector(".dnb-widget .dnb-row.dnb-leaf", timeout=30_000)
    page.screenshot(path=screenshots / "notebook7.png", full_page=True)

    lines = [json.loads(x) for x in (root / ".durable" / "nb7.jsonl").read_text().splitlines()[1:]]
    meta = [e for e in lines if e["message"].get("injected") == "meta"]
    assert [(m["message"]["content"][0]["text"], m["message"]["origin"]) for m in meta] == [
        ("Answer in one short sentence.", "cell:skill")
    ]
    users = [e["message"]["content"][0]["text"] for e in lines if e["message"]["role"] == "user"]
    assert users == ["Answer in one short sentence.", "What day is it?"]  # the ephemeral one: sent, never stored
    assert not any(e["message"].get("injected") == "ephemeral" for e in lines)
    reply = json.dumps(ran["cells"][3]["outputs"], ensure_ascii=False)  # the offline model lists what it got
    assert "[meta · cell:skill]" in reply and "[ephemeral · cell:clock]" in reply and "What day is it?" in reply
    rows = page.locator(".dnb-widget .dnb-row")
    assert rows.count() == 4  # meta, ephemeral (off the chain), question, reply


def test_rename_restart_and_badges_in_notebook_7(notebook7, page, screenshots):
    """Notebook 7 with the extension, through its UI: a turn, a rename (click on the title), a kernel restart
    (Kernel menu), the next turn in the same session; a badge toggled from the cell toolbar."""
    server, root = notebook7
    write_notebook(
        root / "Untitled7.ipynb",
        [
            ("n0", "%load_ext durable_nb", []),
            ("n1", "%%durable\nfirst question", []),
            ("n2", "%%durable\nsecond question", []),
            ("n3", "%durable status", []),
        ],
    )
    open_notebook(page, server, "Untitled7.ipynb")
    require_extension(page)
    run_cell(page, 0)
    run_cell(page, 1)
    save(page)
    sid = json.loads((root / "Untitled7.ipynb").read_text())["metadata"]["durable_nb"]["session"]

    page.locator("#jp-title h1").click()  # Notebook 7's rename: the title at the top
    accept_dialog(page, fill="renamed7.ipynb")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.context.path === 'renamed7.ipynb'")
    menu(page, "Kernel", "Restart Kernel")
    accept_dialog(page)
    page.wait_for_timeout(500)
    wait_kernel(page)
    run_cell(page, 0)
    run_cell(page, 2)
    status = stream_text(run_cell(page, 3))
    assert status.startswith(f"session  {sid}  (") and "entries  4: 2 user, 2 assistant" in status, status

    cell = page.locator(".jp-NotebookPanel .jp-Cell").nth(1)
    cell.locator(".jp-InputArea-editor").click()
    cell.locator(".jp-cell-toolbar .durable-nb-toggle", has_text="meta").click()
    cell.locator(".durable-nb-badge", has_text="meta").wait_for()
    assert notebook_json(page)["cells"][1]["metadata"]["tags"] == ["meta"]
    page.screenshot(path=screenshots / "notebook7_identity_badge.png")
    cell.locator(".jp-cell-toolbar .durable-nb-toggle", has_text="meta").click()
    assert "tags" not in notebook_json(page)["cells"][1]["metadata"]
    assert cell.locator(".durable-nb-badge").count() == 0


def test_stop_unanswered_and_a_stale_widget_in_notebook_7(notebook7, page, screenshots):
    """Notebook 7, through its UI: Stop during a streaming turn is two lines and no traceback, the widget
    marks the unanswered message, and after a kernel restart a click on the old widget says so at once."""
    server, root = notebook7
    write_notebook(
        root / "stop7.ipynb",
        [
            ("p0", "%load_ext durable_nb", []),
            ("p1", "%%durable\nhello", []),
            ("p2", "%durable show", []),
            ("p3", SLOW_MODEL, []),
            ("p4", "%%durable\nstream please", []),
        ],
    )
    page.set_viewport_size({"width": 1100, "height": 1300})
    open_notebook(page, server, "stop7.ipynb")
    for i in range(4):
        run_cell(page, i)
    cell = page.locator(".jp-NotebookPanel .jp-Cell").nth(4)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    cell.locator(".jp-OutputArea-output", has_text="word3").wait_for()
    page.locator(".jp-NotebookPanel .jp-Toolbar [data-command='notebook:interrupt-kernel']").click()
    cell.locator(".jp-OutputArea-output", has_text="TurnInterrupted").wait_for(timeout=20_000)
    wait_kernel(page)
    errors = [o for o in notebook_json(page)["cells"][4]["outputs"] if o["output_type"] == "error"]
    assert len(errors) == 1 and len(errors[0]["traceback"]) == 1
    shown = cell.locator(".jp-OutputArea").inner_text()
    assert "interrupted: this partial reply was not saved" in shown and "Traceback" not in shown
    widget = page.locator(".dnb-widget").first
    unanswered = widget.locator(".dnb-row", has_text="stream please")
    assert "no reply" in unanswered.inner_text()

    menu(page, "Kernel", "Restart Kernel")
    accept_dialog(page)
    page.wait_for_timeout(500)
    wait_kernel(page)
    widget.locator(".dnb-row[data-id]").first.click()
    widget.locator(".dnb-error", has_text="this view belongs to a kernel that was restarted").wait_for(timeout=1000)
    page.screenshot(path=screenshots / "notebook7_stop_stale.png", full_page=True)


def test_duplicate_and_new_notebook_in_notebook_7(notebook7, page, screenshots):
    """Notebook 7's file browser: Duplicate gives the copy a session forked from the original's (the original
    untouched); New → Notebook gets a fresh session."""
    server, root = notebook7
    write_notebook(root / "orig7.ipynb", [("o0", "%load_ext durable_nb", []), ("o1", "%%durable\nhello", [])])
    open_notebook(page, server, "orig7.ipynb")
    run_cell(page, 0)
    run_cell(page, 1)
    save(page)
    sid = json.loads((root / "orig7.ipynb").read_text())["metadata"]["durable_nb"]["session"]
    original = (root / "orig7.ipynb").read_bytes(), (root / ".durable" / f"{sid}.jsonl").read_bytes()

    page.goto(f"{server.base}/tree?token={server.token}")
    page.locator(".jp-DirListing-item", has_text="orig7.ipynb").first.click(button="right")
    page.locator(".lm-Menu-itemLabel:text-is('Duplicate')").click()
    page.locator(".jp-DirListing-item", has_text="orig7-Copy1.ipynb").first.wait_for()
    open_notebook(page, server, "orig7-Copy1.ipynb")
    run_cell(page, 0)
    out = stream_text(run_cell(page, 1))
    fork = notebook_json(page)["metadata"]["durable_nb"]
    assert fork["fork_of"] == sid and out.startswith(f"this notebook is a copy: its session {fork['session']} ")
    page.screenshot(path=screenshots / "notebook7_duplicate.png")
    assert ((root / "orig7.ipynb").read_bytes(), (root / ".durable" / f"{sid}.jsonl").read_bytes()) == original

    page.goto(f"{server.base}/tree?token={server.token}")
    page.locator(".jp-DirListing-item", has_text="orig7.ipynb").first.click(button="right")
    with page.context.expect_page() as opened:
        page.locator(".lm-Menu-itemLabel:text-is('New Notebook')").click()
    new = opened.value
    try:
        new.wait_for_selector(".jp-NotebookPanel .jp-Cell")
        accept_dialog(new)  # Select Kernel
        wait_kernel(new)
        new.locator(".jp-NotebookPanel .jp-Cell").first.locator(".jp-InputArea-editor").click()
        new.keyboard.type("%load_ext durable_nb\n%durable status")
        new.keyboard.press("Shift+Enter")
        new.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.content.model.toJSON().cells[0].outputs.length > 0"
        )
        new.wait_for_timeout(300)
        status = stream_text(notebook_json(new)["cells"][0])
        fresh = notebook_json(new)["metadata"]["durable_nb"]["session"]
        assert (
            fresh not in (sid, fork["session"]) and status.startswith(f"session  {fresh}  (") and "entries  0" in status
        )
        new.screenshot(path=screenshots / "notebook7_new.png")
    finally:
        new.close()
