"""Issue 27 #5: ``./dev tutorial`` opens tutorial 01 from a working copy; the URL it prints opens it.

The tracked ``notebooks/*.ipynb`` stay as committed (outputs, session metadata and the ``.durable``
store go to the copy); the URL Jupyter prints is the one that opens tutorial 01, not the Launcher.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _get(url: str) -> int:
    """GET ``url``, retrying while the server has printed its URL but does not answer yet; its status."""
    for _ in range(60):
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return r.status
        except OSError:
            time.sleep(1)
    raise AssertionError(f"nothing answers at {url}")


@pytest.mark.kernel  # a Jupyter server
def test_dev_tutorial_prints_the_url_of_tutorial_01_and_opens_a_working_copy(tmp_path):
    work = tmp_path / "tutorials"
    tracked = {p.name: p.read_bytes() for p in (ROOT / "notebooks").glob("*.ipynb")}
    env = {**os.environ, "PYTHON": sys.executable, "DURABLE_NB_TUTORIALS": str(work), "BROWSER": "true"}
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "runtime")
    p = subprocess.Popen(
        [str(ROOT / "dev"), "tutorial"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    url = None
    try:
        deadline = time.monotonic() + 240
        assert p.stdout is not None
        while url is None and time.monotonic() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"(http://127\.0\.0\.1:\d+/\S+)", line)
            if m:
                url = m.group(1)
        assert url is not None, "".join(lines[-30:])
        said = "".join(lines)
        assert f"the tutorials run from a working copy in {work}/" in said
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/lab/tree/01_entry_semantics\.ipynb\?token=[0-9a-f]+", url), url
        assert _get(url) == 200
        assert sorted(x.name for x in work.glob("*.ipynb")) == sorted(tracked)
        assert (work / "data" / "SOURCES.md").is_file()  # tutorial 03 reads its logs from data/
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=30)
    assert {p.name: p.read_bytes() for p in (ROOT / "notebooks").glob("*.ipynb")} == tracked
