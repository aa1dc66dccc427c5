"""`inspect view` (Inspect AI's own viewer, started here on 127.0.0.1 and stopped after) renders the
.eval of a session and of an evaluation run in headless Chromium: the task list, the run's samples
with their scores, a sample's messages with its tool calls and its transcript of model and tool
events. Screenshots: screenshots/last/."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from interop_sessions import eval_agent, every_kind_agent
from playwright.sync_api import sync_playwright

from durable_nb.share import export
from tests.support import launch_chromium

pytest.importorskip("inspect_ai")
pytestmark = pytest.mark.slow  # a server of its own (inspect view), besides Chromium

SHOTS = Path(__file__).resolve().parent / "screenshots" / "last"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    """``(url, logs folder)`` of a running ``inspect view`` over a session's and an eval run's .eval."""
    logs = tmp_path_factory.mktemp("inspect-logs")
    export(every_kind_agent(), logs / "session.eval")
    export(eval_agent(), logs / "capitals.eval", run="capitals")
    port = _free_port()
    cmd = [str(Path(sys.executable).parent / "inspect"), "view", "--log-dir", str(logs), "--host", "127.0.0.1",
           "--port", str(port)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"inspect view did not start: {proc.stderr.read().decode()[-2000:]}")
                time.sleep(0.5)
        yield url, logs
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_inspect_view_renders_a_session_and_an_eval_run(viewer):
    url, _ = viewer
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 560})
            page.goto(url)
            page.get_by_text("durable_nb/capitals").first.wait_for(timeout=60_000)
            assert page.get_by_text("durable_nb/tools").first.is_visible()
            page.screenshot(path=str(SHOTS / "inspect-tasks.png"))

            page.goto(url + "#/tasks/capitals.eval")
            page.get_by_text("Capital of Peru? One word.").first.wait_for(timeout=60_000)
            body = page.inner_text("body")
            assert "ACCURACY" in body and "0.5" in body and "contains('{answer}')" in body
            assert body.count("Capital of France? One word.") == 2 and body.count("I do not know") == 2
            page.screenshot(path=str(SHOTS / "inspect-eval-run.png"))

            page.set_viewport_size({"width": 1100, "height": 900})
            page.goto(url + "#/tasks/session.eval/samples/sample/1/1/")
            page.get_by_text("Define durable and session.").first.wait_for(timeout=60_000)
            page.locator("a#messages[role=tab]").click()  # it opens on the Transcript
            page.get_by_text("Looking both up.").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            for said in ("Looking both up.", "lasting; able to endure", "Durable means lasting", "lookup"):
                assert said in body, said
            assert page.evaluate("window.__pwned") is None  # hostile thinking text stayed text
            page.screenshot(path=str(SHOTS / "inspect-session-sample.png"))
            page.locator("a#transcript[role=tab]").click()
            page.get_by_text("MODEL CALL: CLAUDE-TEST (165 TOKENS)").first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            assert "3 turns" in body and body.count("TOOL: LOOKUP") == 2, body[:3000]
            assert page.evaluate("window.__pwned") is None
            page.screenshot(path=str(SHOTS / "inspect-session-transcript.png"))
        finally:
            browser.close()
