"""A real Arize Phoenix server for tests/otlp: its own virtual environment (made once, cached), started
on 127.0.0.1 by the ``phoenix`` fixture and stopped after; :func:`spans` reads back through Phoenix's client.

Phoenix pulls ~850 MB (pandas, grpcio, SQLAlchemy...), so it never enters the project's environment: the
first run makes ``$DURABLE_NB_PHOENIX_VENV`` (default ``~/.cache/durable_nb/phoenix-<version>``) with pip
from the package index (about 100 s), later runs reuse it. Starting the server takes 10-15 s on 2 cores.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

VERSION = "20.26.1"
PACKAGE = f"arize-phoenix=={VERSION}"


def venv() -> Path:
    """Return Phoenix's virtual environment, making it first if needed (under a lock: one maker at a time)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "durable_nb"
    root = Path(os.environ.get("DURABLE_NB_PHOENIX_VENV") or cache / f"phoenix-{VERSION}")
    done = root / ".durable_nb-complete"
    if done.exists():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(root, ignore_errors=True)  # a half-made one from an interrupted run
            subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
            pip = [str(root / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            subprocess.run([*pip, PACKAGE], check=True, timeout=1800)
            done.write_text(PACKAGE + "\n")
    return root


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(root: Path, workdir: Path) -> tuple[subprocess.Popen, str]:
    """Start ``phoenix serve`` from ``root`` with its data in ``workdir``; return ``(process, base URL)``
    once ``/healthz`` answers (raises ``RuntimeError`` with the log's tail if it never does)."""
    port, grpc = free_port(), free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    log = open(workdir / "phoenix.log", "wb")  # noqa: SIM115 - kept open while the server runs
    proc = subprocess.Popen(
        [str(root / "bin" / "phoenix"), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=workdir
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as r:
                if r.status == 200:
                    return proc, base
        except OSError:
            time.sleep(0.5)
    stop(proc)
    tail = (workdir / "phoenix.log").read_bytes()[-2000:].decode("utf-8", "replace")
    raise RuntimeError(f"phoenix serve did not answer /healthz:\n{tail}")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


READ = """
import json, sys
from phoenix.client import Client
spans = Client(base_url=sys.argv[1]).spans.get_spans(project_identifier="default", limit=10000)
print(json.dumps(spans, default=str))
"""


def _count(base: str, session_id: str) -> int:
    """Return how many spans of ``session_id`` Phoenix's REST API lists now (0 before the project exists)."""
    url = f"{base}/v1/projects/default/spans?limit=1000"
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            data = json.loads(r.read())["data"]
    except OSError:  # 404 until the project's first span is stored
        return 0
    return sum(1 for s in data if s.get("attributes", {}).get("session.id") == session_id)


def spans(root: Path, base: str, session_id: str, want: int, timeout: float = 60) -> list[dict]:
    """Return the spans of ``session_id`` (their ``session.id``) that Phoenix's own client
    (``phoenix.client.Client.spans.get_spans``) gives for the default project, once Phoenix's REST API
    lists at least ``want`` of them (ingestion is asynchronous; polled for ``timeout`` seconds at most)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _count(base, session_id) < want:
        time.sleep(0.5)
    r = subprocess.run([str(root / "bin" / "python"), "-c", READ, base], capture_output=True, text=True, check=True)
    return [s for s in json.loads(r.stdout) if s.get("attributes", {}).get("session.id") == session_id]
