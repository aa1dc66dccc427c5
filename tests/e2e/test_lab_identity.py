"""The notebook keeps its session, in real JupyterLab 4 with durable_nb's extension, driven through the UI.

A turn, a rename (File menu), a kernel restart (Kernel menu), the next turn:
the same session, entries continue. Duplicate (file browser): the copy forks
the original's session, and neither the original's file nor its log changes.
A new notebook (File → New), named like a notebook that ran without the
extension: a fresh session, never the old one.
"""

from __future__ import annotations

import json

import nbformat

from durable_nb import durable
from durable_nb.session import JsonlStore

from .lab import (
    accept_dialog,
    menu,
    notebook_json,
    open_notebook,
    require_extension,
    run_cell,
    save,
    stream_text,
    wait_kernel,
    write_notebook,
)


def log(folder, sid: str) -> list[dict]:
    return [json.loads(x) for x in (folder / ".durable" / f"{sid}.jsonl").read_text().splitlines()]


def test_rename_restart_duplicate_and_new_notebook(lab, lab_root, page, screenshots):
    folder = lab_root / "identity"
    folder.mkdir()
    # a session named after "Untitled", written by a front end without the extension
    old = durable.Agent(store=JsonlStore(folder / ".durable"), session_id="Untitled")
    old.append(durable.text("the launch code is 0000"))
    write_notebook(
        folder / "Untitled.ipynb",
        [
            ("c0", "%load_ext durable_nb", []),
            ("c1", "%%durable\nfirst question", []),
            ("c2", "%%durable\nsecond question", []),
            ("c3", "%durable status", []),
        ],
    )

    # 1. a turn: the notebook gets its own session id, not the old "Untitled" session
    open_notebook(page, lab, "identity/Untitled.ipynb")
    require_extension(page)
    run_cell(page, 0)
    first = run_cell(page, 1)
    assert "0000" not in json.dumps(first["outputs"])
    save(page)
    sid = nbformat.read(folder / "Untitled.ipynb", as_version=4).metadata["durable_nb"]["session"]
    assert sid.startswith("nb-") and len(log(folder, sid)) == 3  # session_init + user + reply

    # 2. rename, restart, next turn: same session, the entries continue
    menu(page, "File", "Rename Notebook")
    accept_dialog(page, fill="prompt_lab.ipynb")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.context.path.endsWith('prompt_lab.ipynb')")
    menu(page, "Kernel", "Restart Kernel")
    accept_dialog(page)
    page.wait_for_timeout(500)
    wait_kernel(page)
    run_cell(page, 0)
    run_cell(page, 2)
    status = stream_text(run_cell(page, 3))
    page.screenshot(path=screenshots / "identity_rename_restart.png")
    assert status.startswith(f"session  {sid}  (") and "entries  4: 2 user, 2 assistant" in status, status
    entries = log(folder, sid)[1:]
    assert entries[2]["parent_id"] == entries[1]["id"]  # the second turn continues the first
    save(page)
    md = nbformat.read(folder / "prompt_lab.ipynb", as_version=4).metadata["durable_nb"]
    assert md == {"session": sid, "path": "identity/prompt_lab.ipynb"}

    # 3. Duplicate in the file browser, open the copy: its own session, forked from the original's leaf
    original_file = (folder / "prompt_lab.ipynb").read_bytes()
    original_log = (folder / ".durable" / f"{sid}.jsonl").read_bytes()
    item = page.locator(".jp-DirListing-item", has_text="prompt_lab.ipynb").first
    item.click(button="right")
    page.locator(".lm-Menu-itemLabel:text-is('Duplicate')").click()
    copy = page.locator(".jp-DirListing-item", has_text="prompt_lab-Copy1.ipynb").first
    copy.dblclick()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.context.path.endsWith('prompt_lab-Copy1.ipynb')"
    )
    wait_kernel(page)
    run_cell(page, 0)
    status = stream_text(run_cell(page, 3))
    page.screenshot(path=screenshots / "identity_duplicate.png")
    fork = notebook_json(page)["metadata"]["durable_nb"]
    assert fork["fork_of"] == sid and fork["session"] != sid
    assert status.startswith(
        f"this notebook is a copy: its session {fork['session']} starts as a fork of {sid} (4 entries)"
    )
    assert f"session  {fork['session']}  (" in status
    forked = log(folder, fork["session"])
    assert forked[0]["parent_id"] == sid and len(forked) == 5
    assert [e["message"]["content"] for e in forked[1:]] == [e["message"]["content"] for e in entries]
    assert (folder / "prompt_lab.ipynb").read_bytes() == original_file
    assert (folder / ".durable" / f"{sid}.jsonl").read_bytes() == original_log

    # 4. a new notebook (File → New → Notebook) is called Untitled.ipynb again: a fresh session
    menu(page, "File", "New")
    page.locator(".lm-Menu-itemLabel:text-is('Notebook')").last.click()
    accept_dialog(page)  # the kernel choice
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.context.path.endsWith('Untitled.ipynb')")
    wait_kernel(page)
    page.locator(".jp-NotebookPanel:visible .jp-Cell").first.locator(".jp-InputArea-editor").click()
    page.keyboard.type("%load_ext durable_nb\n%durable status")
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.toJSON().cells[0].outputs.length > 0"
    )
    page.wait_for_timeout(300)
    status = stream_text(notebook_json(page)["cells"][0])
    page.screenshot(path=screenshots / "identity_new_notebook.png")
    new = notebook_json(page)["metadata"]["durable_nb"]["session"]
    assert new not in (sid, fork["session"], "Untitled") and status.startswith(f"session  {new}  (")
    assert "entries  0" in status


def test_a_notebook_from_before_the_extension_keeps_its_named_session(lab, lab_root, page, screenshots):
    """It ran %%durable cells under its name: on opening, the extension records that name as its id, once,
    saying so in one notification line; the turns so far are still there."""
    folder = lab_root / "legacy"
    folder.mkdir()
    old = durable.Agent(store=JsonlStore(folder / ".durable"), session_id="old_lab")
    old.append(durable.text("a question from last week"))
    write_notebook(
        folder / "old_lab.ipynb",
        [
            ("l0", "%load_ext durable_nb", []),
            ("l1", "%%durable\na question from last week", []),
            ("l2", "%durable status", []),
        ],
    )
    nb = nbformat.read(folder / "old_lab.ipynb", as_version=4)
    nb.cells[1].execution_count = 2  # it ran before, without the extension
    nbformat.write(nb, folder / "old_lab.ipynb")

    open_notebook(page, lab, "legacy/old_lab.ipynb")
    require_extension(page)
    toast = page.locator(".Toastify__toast", has_text="was found by its name")
    toast.wait_for()
    assert toast.inner_text().count("\n") <= 2  # one line of text (plus the toast's own close control)
    assert notebook_json(page)["metadata"]["durable_nb"] == {"session": "old_lab", "path": "legacy/old_lab.ipynb"}
    run_cell(page, 0)
    status = stream_text(run_cell(page, 2))
    page.screenshot(path=screenshots / "identity_migrated.png")
    assert status.startswith("session  old_lab  (") and "entries  1: 1 user" in status, status
