"""The widget in a real JupyterLab 4 with a real kernel: it renders through anywidget, a receipt-driven
sync updates it live, and "Continue from here" moves the agent's leaf in the kernel.

(The server fixture is small on purpose; when branches merge it can use the shared lab helper.)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from widget_harness import launch

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(__file__).resolve().parent / "screenshots" / "last"

CELLS = [
    """from durable_nb import durable, session
agent = durable.Agent(model=lambda m: "Hi! <img src=x onerror=window.__pwned=1>", store=session.MemoryStore(), session_id="lab")
agent.run(durable.meta("Answer briefly.", origin="skill:brief"), durable.ephemeral("It is Monday.", origin="cell:clock"),
          durable.text("Hello?")).wait()
agent""",
    """from durable_nb.widget import sync_widgets
for ev in agent.run("Second question"):
    if ev.type in ("agent_start", "message_end"):
        sync_widgets(agent)""",
]


@pytest.fixture
def lab(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = os.urandom(8).hex()
    cfg = tmp_path / "config"
    (cfg / "lab/user-settings/@jupyterlab/apputils-extension").mkdir(parents=True)
    (cfg / "lab/user-settings/@jupyterlab/apputils-extension/notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false"}))
    work = tmp_path / "work"
    work.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, work / "w.ipynb")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(cfg),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    log = open(tmp_path / "server.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
         "--expose-app-in-browser", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "jupyter lab did not start"
                time.sleep(0.2)
        yield f"{base}/lab/tree/w.ipynb?token={token}"
    finally:
        try:  # shutting the server down stops its kernels
            urllib.request.urlopen(urllib.request.Request(f"{base}/api/shutdown?token={token}", method="POST"),
                                   timeout=5).close()
            proc.wait(timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        log.close()


KERNEL_READY = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""

# Run code in the notebook's kernel and return its stdout.
RUN = """async (code) => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let out = '';
  const f = k.requestExecute({ code });
  f.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
  await f.done;
  return out;
}"""


def test_widget_in_jupyterlab(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            requests = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(lab)
            page.wait_for_function(KERNEL_READY, timeout=60_000)
            page.click('.lm-MenuBar-itemLabel:text-is("Run")')
            page.click('.lm-Menu-itemLabel:text-is("Run All Cells")')
            # the agent displayed itself as the widget; cell 2's receipts updated it live: 6 entries
            page.wait_for_selector(".dnb-widget .dnb-row.dnb-leaf", timeout=30_000)
            page.wait_for_function("document.querySelectorAll('.dnb-widget .dnb-row').length === 6", timeout=30_000)
            rows = page.locator(".dnb-widget .dnb-row")
            assert "meta · skill:brief" in rows.nth(0).inner_text()
            assert "ephemeral · cell:clock" in rows.nth(1).inner_text()
            first_reply = page.locator(".dnb-widget .dnb-row").nth(3)
            assert first_reply.locator(".dnb-preview").text_content() == "Hi! <img src=x onerror=window.__pwned=1>"
            target = first_reply.get_attribute("data-id")
            first_reply.click()
            page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{target}')")
            page.click(".dnb-continue")
            page.wait_for_selector(f'.dnb-widget .dnb-row.dnb-leaf[data-id="{target}"]', timeout=15_000)
            assert page.evaluate(RUN, "print(agent.leaf_id)").strip() == target
            page.click('.dnb-widget .dnb-tab[data-view="transcript"]')
            transcript = page.locator(".dnb-widget .dnb-transcript-panel").inner_text()
            assert "Hello?" in transcript and "Answer briefly." not in transcript and "It is Monday." not in transcript
            page.click('.dnb-widget .dnb-tab[data-view="model"]')
            model = page.locator(".dnb-widget .dnb-model-panel").inner_text()
            assert "Answer briefly." in model and "meta · skill:brief" in model
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.locator(".dnb-widget").screenshot(path=str(SHOTS / "jupyterlab.png"))
            assert page.evaluate("window.__pwned") is None
            assert not [u for u in requests if u.endswith("/x") or "/files/x" in u]
        finally:
            browser.close()
