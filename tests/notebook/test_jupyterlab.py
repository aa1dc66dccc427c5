"""One real JupyterLab + headless Chromium run: tags reach the magic, and a reply's raw HTML stays text."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from kernel import ROOT

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists() or shutil.which("jupyter") is None,
                                reason="needs Debian's chromium and jupyterlab")

KERNEL_READY = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def lab(tmp_path):
    root, cfg = tmp_path / "root", tmp_path / "cfg"
    root.mkdir()
    news = cfg / "lab/user-settings/@jupyterlab/apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port = free_port()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(cfg), PYTHONPATH=str(ROOT))
    env.pop("DURABLE_NB_MODEL", None)
    srv = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--allow-root", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         "--IdentityProvider.token=tok", f"--ServerApp.root_dir={root}", "--expose-app-in-browser",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token=tok", timeout=1)
                break
            except OSError:
                time.sleep(0.25)
        yield root, f"http://127.0.0.1:{port}"
    finally:
        srv.send_signal(signal.SIGINT)
        try:
            srv.wait(10)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait(10)


def test_notebook_in_jupyterlab(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    root, url = lab
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    for src, tags in [
        ("%load_ext durable_nb", []),
        ("%%durable\nAnswer in French.", ["meta"]),
        ("%%durable\nToday is Monday.", ["ephemeral"]),
        ("who = 'Ada'", []),
        ('%%durable\nI am {{who}}. JSON: {"a": {"b": 1}} <img src=x onerror="alert(1)"> **bold**', []),
    ]:
        cell = nbformat.v4.new_code_cell(src)
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    nbformat.write(nb, root / "demo.ipynb")

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"],  # launch() uses a fresh temporary profile
        )
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1000})
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(f"{url}/lab/tree/demo.ipynb?token=tok")
            page.wait_for_function(KERNEL_READY, timeout=90_000)
            page.click('.lm-MenuBar-itemLabel:text-is("Run")')
            page.click('.lm-Menu-itemLabel:text-is("Run All Cells")')
            page.wait_for_selector(".durable-reply >> text=JSON", timeout=60_000)
            page.wait_for_selector("text=3 entries written", timeout=30_000)
            reply = page.inner_text(".durable-reply")
            reply_html = page.inner_html(".durable-reply")
            page.screenshot(path=str(tmp_path / "lab.png"))
        finally:
            browser.close()

    assert dialogs == []
    assert "<img" not in reply_html and '<img src=x onerror="alert(1)">' in reply  # shown as text
    assert "<strong>bold</strong>" in reply_html  # Markdown still renders
    lines = [line for line in reply.splitlines() if line.strip()]
    assert any("user [meta · cell:" in line and "Answer in French." in line for line in lines)
    assert any("user [ephemeral · cell:" in line and "Today is Monday." in line for line in lines)
    assert any('I am Ada. JSON: {"a": {"b": 1}}' in line for line in lines)
    log = (root / ".durable" / "demo.jsonl").read_text()  # named after the notebook
    assert '"injected":"meta"' in log and '"injected":"ephemeral"' not in log
