"""The test markers (tests/markers.py): which processes need which marker, and an unmarked test that starts
one fails at once, before the process starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from markers import FAST, KINDS, _refused, started


@pytest.mark.parametrize(
    ("argv", "kind"),
    [
        ([sys.executable, "-m", "ipykernel_launcher", "-f", "/tmp/k.json"], "kernel"),  # jupyter_client
        ([sys.executable, "-m", "jupyterlab", "--no-browser", "--port=1"], "kernel"),  # tests/e2e/lab.py
        ([sys.executable, "-m", "notebook", "--no-browser"], "kernel"),
        ([sys.executable, "-m", "durable_nb.run_notebook", "a.ipynb"], "kernel"),
        (["/usr/lib/node", "/x/playwright/driver/package/cli.js", "run-driver"], "browser"),
        (["/usr/bin/chromium", "--headless"], "browser"),
        (["runuser", "-u", "postgres", "--", "/usr/lib/postgresql/17/bin/initdb", "-D", "/d"], "pg"),
        (["/usr/lib/postgresql/17/bin/pg_ctl", "-D", "/d", "stop"], "pg"),
        (["jupyter", "lab", "--no-browser"], "kernel"),
        ([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute", "a.ipynb"], "kernel"),
        ([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "a.ipynb"], None),
        ([sys.executable, "-c", "print(1)"], None),
        ([sys.executable, "-m", "jupyterlab.labextensions", "list"], None),
        ([sys.executable, "-m", "durable_nb", "export", "s"], None),
        (["mount", "-t", "tmpfs"], None),
    ],
)
def test_each_process_needs_its_marker(argv, kind):
    assert started(argv) == kind


def test_an_unmarked_test_that_starts_postgres_fails_before_it_starts(request):
    with pytest.raises(pytest.fail.Exception, match=r"starts 'initdb -D x' but is not marked 'pg'"):
        subprocess.Popen(["/nowhere/initdb", "-D", "x"])  # would be FileNotFoundError had it run
    request.node.stash[_refused].clear()  # this test passes: the refusal was the point


@pytest.mark.pg
def test_a_marked_test_may(tmp_path):
    with pytest.raises(FileNotFoundError):
        subprocess.Popen([str(tmp_path / "initdb")])


def test_dev_fast_deselects_every_kind():
    dev = (Path(__file__).resolve().parents[2] / "dev").read_text()
    assert f'-m "{FAST}"' in dev and all(f"not {kind}" in FAST for kind in KINDS)
