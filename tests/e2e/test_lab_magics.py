"""In real JupyterLab: tags reach the magic, and a reply's raw HTML stays text."""

from __future__ import annotations

import nbformat

from .lab import open_notebook, run_all

CELLS = [
    ("%load_ext durable_nb", []),
    ("%%durable\nAnswer in French.", ["meta"]),
    ("%%durable\nToday is Monday.", ["ephemeral"]),
    ("who = 'Ada'", []),
    ('%%durable\nI am {{who}}. JSON: {"a": {"b": 1}} <img src=x onerror="alert(1)"> **bold**', []),
]


def test_notebook_in_jupyterlab(lab, lab_root, page, screenshots):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    for src, tags in CELLS:
        cell = nbformat.v4.new_code_cell(src)
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    nbformat.write(nb, lab_root / "demo.ipynb")

    page.set_viewport_size({"width": 1200, "height": 1000})
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_notebook(page, lab, "demo.ipynb", timeout_ms=90_000)
    ran = run_all(page)
    page.wait_for_selector(".durable-reply >> text=JSON", timeout=60_000)
    page.wait_for_selector("text=3 entries written", timeout=30_000)
    reply = page.inner_text(".durable-reply")
    reply_html = page.inner_html(".durable-reply")
    page.screenshot(path=screenshots / "magics.png")

    assert dialogs == []
    assert "<img" not in reply_html and '<img src=x onerror="alert(1)">' in reply  # shown as text
    assert "<strong>bold</strong>" in reply_html  # Markdown still renders
    lines = [line for line in reply.splitlines() if line.strip()]
    assert any("user [meta · cell:" in line and "Answer in French." in line for line in lines)
    assert any("user [ephemeral · cell:" in line and "Today is Monday." in line for line in lines)
    assert any('I am Ada. JSON: {"a": {"b": 1}}' in line for line in lines)
    sid = ran["metadata"]["durable_nb"]["session"]  # the id the notebook keeps (durable_nb's extension)
    log = (lab_root / ".durable" / f"{sid}.jsonl").read_text()
    assert '"injected":"meta"' in log and '"injected":"ephemeral"' not in log
