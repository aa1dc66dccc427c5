"""One real kernel shared by the notebook tests (tests that restart it reload the extension)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from kernel import Kernel, new_cell_id  # noqa: E402


class Notebook:
    """The shared kernel plus helpers to run %%durable cells the way JupyterLab sends them."""

    def __init__(self, kernel: Kernel) -> None:
        self.k = kernel
        self.n = 0

    def fresh(self) -> str:
        """Start a new session for one test (staged entries cleared); return its id."""
        self.n += 1
        sid = f"t{self.n}-{new_cell_id()}"
        self.k.ok(f"%durable new {sid}\n%durable clear")
        return sid

    def cell(self, body: str, tags=(), cell_id: str | None = None, options: str = ""):
        """Run ``%%durable [options]`` with ``body`` as a cell carrying ``tags`` and ``cell_id``."""
        return self.k.run(f"%%durable {options}\n{body}", tuple(tags), cell_id)

    def log(self, sid: str) -> list[dict]:
        """The session's JSONL log as parsed lines (session_init first)."""
        f = self.k.cwd / ".durable" / f"{sid}.jsonl"
        return [json.loads(line) for line in f.read_text().splitlines()]

    def path_of(self, sid: str) -> Path:
        return self.k.cwd / ".durable" / f"{sid}.jsonl"


@pytest.fixture(scope="session")
def kernel(tmp_path_factory):
    k = Kernel(tmp_path_factory.mktemp("nb"))
    k.ok("%load_ext durable_nb")
    yield k
    k.shutdown()


@pytest.fixture
def nb(kernel):
    return Notebook(kernel)
