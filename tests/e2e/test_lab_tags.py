"""In real JupyterLab: tags on cells reach the kernel, exactly as the headless runner sends them."""

from __future__ import annotations

import json

import nbformat

from durable_nb.run_notebook import request_metadata

from .lab import open_notebook, run_all, stream_text

READ = 'import json; print(json.dumps(get_ipython().kernel.get_parent("shell")["metadata"]))'


def test_jupyterlab_sends_cell_tags_like_the_headless_runner(lab, lab_root, page, screenshots):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, tags in enumerate([["meta"], [], ["ephemeral", "note"]]):
        c = nbformat.v4.new_code_cell(READ)
        c.id = f"cell-{i}"
        if tags:
            c.metadata["tags"] = tags
        nb.cells.append(c)
    nbformat.write(nb, lab_root / "tags.ipynb")

    open_notebook(page, lab, "tags.ipynb")
    ran = run_all(page)
    page.screenshot(path=screenshots / "tags.png")

    for cell, sent_by_lab in zip(nb.cells, (json.loads(stream_text(c)) for c in ran["cells"])):
        assert sent_by_lab.get("tags") == cell.metadata.get("tags")
        assert sent_by_lab["cellId"] == cell.id
        # the headless runner sends exactly this, the notebook's session id (added by the extension) included
        assert request_metadata(cell, ran["metadata"]) == sent_by_lab
        assert sent_by_lab["durable_nb"]["session"] == ran["metadata"]["durable_nb"]["session"]
