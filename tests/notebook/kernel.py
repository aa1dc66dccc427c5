"""A real ipykernel driven through jupyter_client, with cell metadata sent the way JupyterLab 4 does."""

from __future__ import annotations

import queue
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.manager import KernelManager

from tests.support import child_env

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    """What one execute request produced on iopub, and its reply."""

    status: str = ""
    stdout: str = ""
    stderr: str = ""
    displays: list[dict] = field(default_factory=list)  # display_data / update_display_data / execute_result contents
    updates: int = 0
    error: dict | None = None  # the iopub "error" content, if any
    reply: dict = field(default_factory=dict)

    @property
    def shown(self) -> str:
        """What a reader sees as text: stdout, then each display's ``text/plain`` (a widget's too,
        as a frontend without widgets shows it: ``%durable sessions``)."""
        return self.stdout + "".join(d.get("data", {}).get("text/plain", "") for d in self.displays)

    def html(self) -> str:
        """The last displayed text/html (the reply after its final render)."""
        for d in reversed(self.displays):
            if "text/html" in d.get("data", {}):
                return d["data"]["text/html"]
        return ""


class Kernel:
    """One kernel in ``cwd`` importing the checkout under test."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        env = child_env()
        self.request_metadata: dict = {}  # added to every execute request's metadata (e.g. the notebook's identity)
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=str(cwd), env=env)
        self._connect()

    def _connect(self) -> None:
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def restart(self) -> None:
        """Restart the kernel process (a fresh namespace, the same working directory)."""
        self.kc.stop_channels()
        self.km.restart_kernel(now=True)
        self._connect()

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    def send(self, code: str, tags: tuple[str, ...] = (), cell_id: str | None = None) -> str:
        """Send an execute request carrying ``{"tags": [...], "cellId": ...}`` metadata; return its msg id."""
        content = dict(
            code=code, silent=False, store_history=True, user_expressions={}, allow_stdin=False, stop_on_error=False
        )
        metadata = {"tags": list(tags), "trusted": False, "deletedCells": [], "recordTiming": False}
        metadata.update(self.request_metadata)
        if cell_id is not None:
            metadata["cellId"] = cell_id
        msg = self.kc.session.msg("execute_request", content, metadata=metadata)
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def collect(self, msg_id: str, timeout: float = 30, on_output=None) -> Result:
        """Gather iopub messages for ``msg_id`` until the kernel is idle; then the shell reply."""
        r = Result()
        deadline = time.monotonic() + timeout
        while True:
            try:
                m = self.kc.get_iopub_msg(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no idle from the kernel within {timeout}s; so far {r}") from None
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            t, c = m["msg_type"], m["content"]
            if t == "stream":
                if c["name"] == "stdout":
                    r.stdout += c["text"]
                else:
                    r.stderr += c["text"]
            elif t in ("display_data", "update_display_data", "execute_result"):
                r.displays.append(c)
                r.updates += t == "update_display_data"
            elif t == "error":
                r.error = c
            elif t == "status" and c["execution_state"] == "idle":
                break
            if on_output is not None:
                on_output(t, c)
        while True:
            rep = self.kc.get_shell_msg(timeout=timeout)
            if rep["parent_header"].get("msg_id") == msg_id:
                r.reply = rep["content"]
                r.status = rep["content"]["status"]
                return r

    def run(self, code: str, tags: tuple[str, ...] = (), cell_id: str | None = None, timeout: float = 30) -> Result:
        """Execute ``code`` as a cell with ``tags`` and ``cell_id``; return what it produced."""
        return self.collect(self.send(code, tags, cell_id), timeout)

    def ok(self, code: str, tags: tuple[str, ...] = (), cell_id: str | None = None) -> Result:
        """Like :meth:`run`, but fail the test on an error."""
        r = self.run(code, tags, cell_id)
        assert r.status == "ok" and r.error is None, (r.error, r.stderr, r.stdout)
        return r

    def value(self, expr: str):
        """Return ``expr`` evaluated in the kernel (through ``repr`` and ``ast.literal_eval``)."""
        import ast

        r = self.ok(f"print(repr({expr}))")
        return ast.literal_eval(r.stdout.strip())

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def new_cell_id() -> str:
    return uuid.uuid4().hex[:8]
