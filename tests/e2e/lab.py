"""A real JupyterLab 4 server and a headless Debian Chromium, for end-to-end tests.

:class:`LabServer` starts ``jupyter lab`` on 127.0.0.1 (free port, token, a
fresh config dir with the news pop-up off, root dir a temp dir, this checkout
on the kernel's ``PYTHONPATH``, folder listings that never race a rename:
``tests/e2e/contents.py``) and stops it, and every kernel it started, by
PID. The server loads durable_nb's front-end extension as built in this
checkout (``durable_nb/labextension``, built by ``./dev build``) through its
own ``JUPYTER_PATH``, ahead of any copy installed in the environment; without
a build it runs with the installed copy, if any (:func:`require_extension`
fails the tests that need it).
:func:`launch_chromium` starts Debian's chromium through Playwright.
:func:`run_all` opens a notebook, waits until its kernel is really connected,
runs every cell from the ``Run`` menu and returns the notebook as the browser
holds it (nbformat JSON, outputs included). :func:`kernel_stdout` runs code in
that kernel outside any cell. Kernels get no ``$DURABLE_NB_MODEL``: offline model.

Recipes and pitfalls: ``/work/shared/notes/JUPYTER.md``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tests.support import CHROMIUM, ROOT, child_env, launch_chromium, write_notebook  # noqa: F401  (re-exported)

EXTENSION = ROOT / "durable_nb" / "labextension"  # the build of js/labextension/ (./dev builds it)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """A JupyterLab (or, with ``app="notebook"``, Notebook 7) server on 127.0.0.1 serving
    ``root_dir``; use as a context manager.

    ``url(path)`` gives an authenticated URL of a notebook. ``stop()``
    asks the server to shut down (which stops its kernels), then terminates
    anything still alive that it started, by PID.
    """

    def __init__(self, root_dir: Path, log_path: Path | None = None, app: str = "jupyterlab") -> None:
        self.root_dir = Path(root_dir)
        self.app = app  # "jupyterlab", or "notebook" for Notebook 7 (the same front-end code, one document per tab)
        self.port = free_port()
        self.token = os.urandom(12).hex()
        self._tmp = tempfile.TemporaryDirectory(prefix="durable-nb-lab-")
        home = Path(self._tmp.name)
        self.config_dir = home / "config"
        self.runtime_dir = home / "runtime"
        settings = self.config_dir / "lab/user-settings/@jupyterlab/apputils-extension"
        settings.mkdir(parents=True)
        (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
        self.data_dir = home / "data"  # first on JUPYTER_PATH: this checkout's build of the extension
        (self.data_dir / "labextensions").mkdir(parents=True)
        if (EXTENSION / "package.json").is_file():
            (self.data_dir / "labextensions" / "durable_nb").symlink_to(EXTENSION, target_is_directory=True)
        self.log_path = log_path or home / "server.log"
        self.proc: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, notebook: str) -> str:
        where = "lab/tree" if self.app == "jupyterlab" else "notebooks"
        return f"{self.base}/{where}/{notebook}?token={self.token}"

    def start(self, timeout: float = 60) -> LabServer:
        env = child_env(  # kernels use the offline model unless a notebook says otherwise
            JUPYTER_CONFIG_DIR=str(self.config_dir),
            JUPYTER_RUNTIME_DIR=str(self.runtime_dir),
            JUPYTER_PATH=os.pathsep.join([str(self.data_dir), *filter(None, [os.environ.get("JUPYTER_PATH")])]),
        )
        cmd = [
            sys.executable,
            "-m",
            self.app,
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
            "--ServerApp.contents_manager_class=tests.e2e.contents.ListingContentsManager",  # see that module
            "--expose-app-in-browser",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, env=env, stdout=self._log, stderr=subprocess.STDOUT, cwd=self.root_dir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"jupyter lab did not answer within {timeout} s:\n{self.log()}")

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def kernel_pids(self) -> list[int]:
        """PIDs of kernel processes this server started (their connection files are in our runtime dir)."""
        pids = []
        marker = str(self.runtime_dir).encode()
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    if marker in (d / "cmdline").read_bytes():
                        pids.append(int(d.name))
                except OSError:
                    pass
        return pids

    def stop(self) -> None:
        if self.proc is None:
            return
        kernels = self.kernel_pids()
        if self.proc.poll() is None:
            try:
                req = urllib.request.Request(f"{self.base}/api/shutdown?token={self.token}", method="POST")
                urllib.request.urlopen(req, timeout=5).close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        for pid in kernels:  # normally already gone with the server
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._log.close()
        self.proc = None
        self._tmp.cleanup()

    def __enter__(self) -> LabServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


KERNEL_READY = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""

# Done when every code cell has an execution count, or a cell holds an error
# (Run All stops there), and the kernel is idle.
RUN_FINISHED = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  if (!k || k.status !== 'idle') return false;
  const cells = w.content.model.toJSON().cells.filter(c => c.cell_type === 'code' && c.source.length);
  const failed = cells.some(c => c.outputs.some(o => o.output_type === 'error'));
  return failed || cells.every(c => c.execution_count !== null);
}"""


def open_notebook(page, server: LabServer, notebook: str, timeout_ms: int = 60_000) -> None:
    """Open ``notebook`` (relative to the server's root) and wait until its kernel is connected and idle.

    ``?reset`` starts from an empty workspace, so tabs of earlier tests are not restored.
    """
    page.goto(server.url(notebook) + "&reset")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout_ms)
    try:
        page.wait_for_function(KERNEL_READY, timeout=timeout_ms)
    except Exception:
        page.screenshot(path=Path(__file__).parent / "screenshots" / "kernel-not-ready.png")
        raise


def require_extension(page) -> None:
    """Fail unless durable_nb's front-end extension is active in the open page."""
    if not page.evaluate("() => window.jupyterapp.hasPlugin('durable_nb:plugin')"):
        raise AssertionError(
            f"durable_nb's JupyterLab extension is not loaded: run ./dev build (it builds {EXTENSION})"
        )


def run_all(page, timeout_ms: int = 60_000) -> dict:
    """Run every cell through the ``Run`` menu; return the notebook JSON once the run is over.

    Raises ``AssertionError`` naming the cell and error when a cell failed.
    """
    page.locator('.lm-MenuBar-itemLabel:text-is("Run")').click()
    page.locator('.lm-Menu-itemLabel:text-is("Run All Cells")').click()
    page.wait_for_timeout(300)  # let the first execute request leave before polling for idle
    try:
        page.wait_for_function(RUN_FINISHED, timeout=timeout_ms, polling=200)
    except Exception:
        page.screenshot(path=Path(__file__).parent / "screenshots" / "run-not-finished.png")
        raise
    nb = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.model.toJSON()")
    for i, c in enumerate(nb["cells"]):
        for o in c.get("outputs", []):
            if o.get("output_type") == "error":
                raise AssertionError(f"cell {i} ({c.get('id')}) failed in JupyterLab: {o['ename']}: {o['evalue']}")
    return nb


# Run code in the current notebook's kernel (not in a cell) and return its stdout.
EXECUTE = """async (code) => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let out = '';
  const f = k.requestExecute({ code });
  f.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
  await f.done;
  return out;
}"""


def kernel_stdout(page, code: str) -> str:
    """Run ``code`` in the open notebook's kernel, outside any cell; return what it printed (stdout and stderr)."""
    return page.evaluate(EXECUTE, code)


def stream_text(cell: dict) -> str:
    """The concatenated stdout of a cell in nbformat JSON."""
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream" and o.get("name") == "stdout":
            out.append(o["text"] if isinstance(o["text"], str) else "".join(o["text"]))
    return "".join(out)


def menu(page, top: str, item: str) -> None:
    """Click ``item`` (its label's start) in the menu-bar menu ``top``, e.g. ``menu(page, "Kernel", "Restart Kernel")``."""
    page.locator(f'.lm-MenuBar-itemLabel:text-is("{top}")').click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()


def accept_dialog(page, fill: str | None = None) -> None:
    """Type ``fill`` into the open dialog's input (if given) and press its accept button."""
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    if fill is not None:
        dialog.locator("input").first.fill(fill)
    dialog.locator(".jp-Dialog-footer .jp-mod-accept").click()
    dialog.wait_for(state="detached")


def notebook_json(page) -> dict:
    """The open notebook as the browser holds it (nbformat JSON)."""
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.content.model.toJSON()")


# Cell i's model announces its next execution count (a restarted kernel counts from 1 again).
WATCH_CELL = """(i) => {
  const m = window.jupyterapp.shell.currentWidget.content.widgets[i].model;
  window.__durableCellDone = false;
  const f = (_, change) => {
    if (change.name === 'executionCount' && change.newValue !== null) {
      window.__durableCellDone = true;
      m.stateChanged.disconnect(f);
    }
  };
  m.stateChanged.connect(f);
}"""

CELL_DONE = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle' && window.__durableCellDone === true;
}"""


def run_cell(page, i: int, timeout_ms: int = 60_000) -> dict:
    """Click cell ``i``'s editor and press Shift+Enter; return the cell (nbformat JSON) once it ran."""
    page.evaluate(WATCH_CELL, i)
    page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(i).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    try:
        page.wait_for_function(CELL_DONE, timeout=timeout_ms, polling=100)
    except Exception:
        page.screenshot(path=Path(__file__).parent / "screenshots" / "cell-not-finished.png")
        raise
    return notebook_json(page)["cells"][i]


def save(page) -> None:
    """Save the open notebook (Ctrl+S) and wait until it is no longer dirty."""
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")


def wait_kernel(page, timeout_ms: int = 60_000) -> None:
    """Wait until the open notebook's kernel is connected and idle (e.g. after a restart)."""
    page.wait_for_function(KERNEL_READY, timeout=timeout_ms, polling=100)


def frame_ids(payload: str | bytes) -> tuple[str, str]:
    """A kernel websocket frame's message id and its parent's ("" where there is none or the frame is
    not a kernel message): JupyterLab's binary protocol (``v1.kernel.websocket.jupyter.org``: the part
    count and offsets as little-endian 64-bit integers, then the channel, header, parent header,
    metadata, content and buffers) or the older JSON one. O(frame)."""
    try:
        if isinstance(payload, bytes) and len(payload) >= 8 and payload[:1] != b"{":
            n = int.from_bytes(payload[:8], "little")
            at = [int.from_bytes(payload[8 + 8 * i : 16 + 8 * i], "little") for i in range(n)]
            header, parent = (json.loads(payload[at[k] : at[k + 1]]) for k in (1, 2))
        else:
            msg = json.loads(payload)
            header, parent = msg.get("header") or {}, msg.get("parent_header") or {}
        return str(header.get("msg_id", "")), str(parent.get("msg_id", ""))
    except (ValueError, IndexError, AttributeError, TypeError):
        return "", ""
