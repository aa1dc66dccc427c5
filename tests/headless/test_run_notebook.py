"""The headless runner: real kernel, cell tags delivered as JupyterLab delivers them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from durable_nb.run_notebook import NotebookError, main, run_notebook
from tests.support import child_env, write_notebook

ROOT = Path(__file__).resolve().parents[2]
READ_METADATA = 'import json; print(json.dumps(get_ipython().kernel.get_parent("shell")["metadata"]))'


def stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


def test_tags_and_cell_id_reach_the_kernel_and_do_not_leak(tmp_path):
    import json

    src = write_notebook(
        tmp_path / "t.ipynb",
        [
            (READ_METADATA, ["meta"]),
            (READ_METADATA, []),
            (READ_METADATA, ["ephemeral", "note"]),
            ("import os, durable_nb; print(os.getcwd()); print(durable_nb.__file__); print(__session__)", []),
        ],
    )
    before = src.read_bytes()
    nb = run_notebook(src)
    seen = [json.loads(stdout(c)) for c in nb.cells[:3]]
    assert seen[0]["tags"] == ["meta"] and seen[0]["cellId"] == "c0"
    assert "tags" not in seen[1] and seen[1]["cellId"] == "c1"  # the previous cell's tags are cleared
    assert seen[2]["tags"] == ["ephemeral", "note"] and seen[2]["cellId"] == "c2"
    cwd, pkg, session_name = stdout(nb.cells[3]).split()
    assert session_name == str(src)  # as jupyter_server sets it: the kernel knows its notebook
    assert Path(cwd) == tmp_path  # the kernel starts in the notebook's folder, as in JupyterLab
    assert Path(pkg).parent.parent == ROOT  # and imports this checkout
    assert src.read_bytes() == before  # the source notebook is not modified


def test_a_failing_cell_stops_the_run_and_names_the_cell(tmp_path):
    src = write_notebook(
        tmp_path / "bad.ipynb", [("x = 1", []), ("raise ValueError('boom here')", []), ("print('never')", [])]
    )
    with pytest.raises(NotebookError) as ei:
        run_notebook(src)
    assert ei.value.cell_index == 1
    assert "cell 1" in str(ei.value) and "'c1'" in str(ei.value) and "ValueError: boom here" in str(ei.value)
    assert ei.value.notebook.cells[2].outputs == []  # nothing after the failure ran


def test_command_line_exit_status_output_and_cwd(tmp_path):
    env = child_env()
    work = tmp_path / "work"
    work.mkdir()
    ok = write_notebook(tmp_path / "ok.ipynb", [("import os; open('here.txt', 'w').write(os.getcwd())", ["meta"])])
    out = tmp_path / "out.ipynb"
    r = subprocess.run(
        [sys.executable, "-m", "durable_nb.run_notebook", str(ok), "--output", str(out), "--cwd", str(work)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "1 code cells (1 tagged)" in r.stdout
    assert (work / "here.txt").read_text() == str(work)
    assert nbformat.read(out, as_version=4).cells[0].execution_count == 1

    bad = write_notebook(tmp_path / "bad.ipynb", [("1/0", [])])
    r = subprocess.run(
        [sys.executable, "-m", "durable_nb.run_notebook", str(bad), "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert r.returncode == 1
    assert "FAILED" in r.stderr and "ZeroDivisionError" in r.stderr and "Traceback" not in r.stderr
    assert nbformat.read(out, as_version=4).cells[0].outputs[0]["ename"] == "ZeroDivisionError"


def test_command_line_refuses_a_missing_notebook(tmp_path, capsys):
    with pytest.raises(SystemExit) as ei:
        main([str(tmp_path / "missing.ipynb")])
    assert ei.value.code == 2 and "no notebook at" in capsys.readouterr().err


def test_a_notebook_without_cell_ids_gets_stable_ones(tmp_path):
    import json

    old = {
        "nbformat": 4,
        "nbformat_minor": 4,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "metadata": {"tags": ["meta"]},
                "source": READ_METADATA,
                "outputs": [],
                "execution_count": None,
            }
        ],
    }
    src = tmp_path / "old.ipynb"
    src.write_text(json.dumps(old))
    nb = run_notebook(src)
    assert json.loads(stdout(nb.cells[0])) == {
        "tags": ["meta"],
        "trusted": False,
        "deletedCells": [],
        "recordTiming": False,
        "cellId": "cell-0",
    }


def test_the_notebooks_session_id_reaches_the_kernel_as_the_extension_sends_it(tmp_path):
    """metadata.durable_nb goes with every cell; the turn lands in that session, not one named after the file."""
    src = write_notebook(tmp_path / "Untitled.ipynb", [("%load_ext durable_nb", []), ("%%durable\nhello", [])])
    nb = nbformat.read(src, as_version=4)
    nb.metadata["durable_nb"] = {"session": "nb-7f3a", "path": "Untitled.ipynb"}
    nbformat.write(nb, src)
    ran = run_notebook(src)
    assert " · nb-7f3a · leaf" in stdout(ran.cells[1])
    assert sorted(p.name for p in (tmp_path / ".durable").iterdir()) == ["nb-7f3a.jsonl"]
    # without it, the session is named after the file, as in front ends without the extension
    del nb.metadata["durable_nb"]
    nbformat.write(nb, src)
    assert " · Untitled · leaf" in stdout(run_notebook(src).cells[1])
