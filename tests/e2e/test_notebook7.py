"""In real Notebook 7: tagged cells reach the kernel, the meta entry is stored with its cell, the ephemeral
one is not stored, a turn runs, and the session widget renders."""

from __future__ import annotations

import json

import pytest

from .lab import LabServer, open_notebook, run_all, write_notebook

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
