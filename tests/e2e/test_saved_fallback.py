"""In real JupyterLab and Notebook 7: the display's short fallback, and the whole one in the saved file.

The kernel sends a short static fallback (each view's last 12 items) only to a page that told it it
saves the whole one (durable_nb/notebook/page.py, js/labextension/src/page.ts): a turn then sends no
fallback, and the notebook's save writes the session's whole fallback, as of that save, into the
widget's output first (js/labextension/src/output.ts). A notebook executed without a page keeps the
whole fallback the kernel sent (tests/headless/test_static_fallback.py).
"""

from __future__ import annotations

import json

import pytest

from .lab import LabServer, notebook_json, open_notebook, require_extension, run_cell, save, write_notebook

OUTPUT_MIME = "application/vnd.durable-nb.widget+json"
MARKER = "Which colour is the saved-fallback marker?"
FILL = """from durable_nb import ai, durable
from durable_nb.notebook import current
from durable_nb.session import MessageEntry
current().agent.append(*[
    durable.text(f"Question {i}?") if i % 2 == 0 else MessageEntry(message=ai.assistant_message(f"Answer {i}."))
    for i in range(40)
])"""
CELLS = [
    ("setup", "%load_ext durable_nb\n%config DurableMagics.session = 'saved-fallback'", []),
    ("fill", FILL, []),
    ("show", "%durable show", []),
    ("turn", f"%%durable\n{MARKER}", []),
]


@pytest.fixture(scope="module", params=["jupyterlab", "notebook"])
def server(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"saved-fallback-{request.param}")
    with LabServer(root, app=request.param) as s:
        yield s, root


def _show_output(cells: list[dict]) -> dict:
    (out,) = [o for o in cells[2]["outputs"] if OUTPUT_MIME in o.get("data", {})]
    return out["data"]


def _html(data: dict) -> str:
    html = data["text/html"]
    return html if isinstance(html, str) else "".join(html)


def test_the_saved_notebook_has_the_whole_fallback_as_of_the_save(server, page, screenshots):
    s, root = server
    write_notebook(root / "saved.ipynb", CELLS)
    open_notebook(page, s, "saved.ipynb")
    require_extension(page)
    for i in range(2):
        run_cell(page, i)
    run_cell(page, 2)
    shown = _show_output(notebook_json(page)["cells"])
    # the page answered the kernel's question at %load_ext: the display carries the short fallback
    assert shown[OUTPUT_MIME].get("fallback") == "short", shown[OUTPUT_MIME]
    assert "earlier not shown" in _html(shown)
    page.wait_for_selector(".dnb-widget .dnb-row.dnb-leaf", timeout=30_000)
    # once drawn, the widget's whole fallback replaces it (once)
    page.wait_for_function(
        "() => !JSON.stringify(window.jupyterapp.shell.currentWidget.content.model.toJSON().cells[2].outputs)"
        ".includes('earlier not shown')",
        timeout=20_000,
    )
    assert "fallback" not in _show_output(notebook_json(page)["cells"])[OUTPUT_MIME]
    # a turn sends no fallback: the output the page holds does not follow it ...
    run_cell(page, 3, timeout_ms=60_000)
    page.wait_for_timeout(2000)  # longer than the widget's old refresh after a change (0.7 s)
    assert MARKER not in _html(_show_output(notebook_json(page)["cells"]))
    # ... until the notebook is saved: the file has the session's whole fallback as of the save
    save(page)
    page.screenshot(path=screenshots / f"saved_fallback_{s.app}.png")
    on_disk = json.loads((root / "saved.ipynb").read_text())
    saved = _show_output(on_disk["cells"])
    assert MARKER in _html(saved) and "earlier not shown" not in _html(saved)
    assert saved[OUTPUT_MIME] == {"session": "saved-fallback"}
    text = saved["text/plain"] if isinstance(saved["text/plain"], str) else "".join(saved["text/plain"])
    assert MARKER in text
