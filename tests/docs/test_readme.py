"""Every code block of the README and of the documentation site (``docs/**/*.md``) runs.

Python and magic blocks run in a real kernel, one kernel per file, in the file's order; bash blocks
run in bash. Both start in a folder with the tutorials copied in, so relative paths work and nothing
lands in the checkout. A block that cannot run says why, in an HTML comment right above it:
``<!-- readme-test: skip (the reason) -->``. A block of any other kind without such a reason fails
the first test, so a new snippet is run or explicitly excused.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from durable_nb.run_notebook import run_notebook

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
SKIP = re.compile(r"<!-- readme-test: skip \((.+)\) -->")


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    skip: str  # the reason given, or ""

    @property
    def runs_in_kernel(self) -> bool:
        return self.lang == "python" or (self.lang == "" and self.code.lstrip().startswith("%"))


def blocks_of(path: Path) -> list[Block]:
    """Return the fenced code blocks of the Markdown file ``path`` in order, with the skip reason written above each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while not lines[j].startswith("```"):
            j += 1
        above = lines[i - 1] if i else ""
        skip = SKIP.fullmatch(above.strip())
        out.append(Block(i + 1, m.group(1), "\n".join(lines[i + 1 : j]) + "\n", skip.group(1) if skip else ""))
        i = j + 1
    return out


def readme_blocks() -> list[Block]:
    """Return the README's fenced code blocks (see :func:`blocks_of`)."""
    return blocks_of(README)


def name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def with_blocks(want) -> list:
    """Return a pytest parameter per file that has a block ``want(block)`` accepts and that is not skipped."""
    return [pytest.param(p, id=name(p)) for p in DOCS if any(want(b) and not b.skip for b in blocks_of(p))]


def test_every_block_runs_here_or_says_why_not():
    blocks = [(p, b) for p in DOCS for b in blocks_of(p)]
    assert len(blocks) > 10
    unaccounted = [(p, b) for p, b in blocks if not b.skip and not b.runs_in_kernel and b.lang != "bash"]
    assert not unaccounted, "code blocks neither run nor skipped with a reason: " + ", ".join(
        f"{name(p)} line {b.line} ({b.lang or 'no language'})" for p, b in unaccounted
    )
    assert all(len(b.skip) > 10 for _, b in blocks if b.skip), "a skip needs a real reason"


@pytest.fixture
def workdir(tmp_path):
    """A folder with the tutorials copied in, so the docs' relative paths work and nothing lands in the checkout."""
    shutil.copytree(
        ROOT / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns(".durable", "*.ipynb_checkpoints")
    )
    return tmp_path


@pytest.mark.parametrize("doc", with_blocks(lambda b: b.runs_in_kernel))
def test_python_and_magic_blocks_run_in_order_in_one_kernel(workdir, doc):
    blocks = [b for b in blocks_of(doc) if b.runs_in_kernel and not b.skip]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(b.code.rstrip("\n")) for b in blocks]
    path = workdir / "doc.ipynb"
    nbformat.write(nb, path)
    done = run_notebook(path, cwd=workdir, timeout=240)  # raises NotebookError naming the first failing cell
    if doc == README:
        first = "".join(o.get("text", "") for o in done.cells[0].outputs)
        assert "Answer in French." in first and "What day is it?" in first  # the offline model lists what it got


@pytest.mark.parametrize("doc", with_blocks(lambda b: b.lang == "bash"))
def test_bash_blocks_run(workdir, doc):
    blocks = [b for b in blocks_of(doc) if b.lang == "bash" and not b.skip]
    assert blocks
    bin_dir = workdir / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python"  # the docs say `python`; Debian has only python3
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # not a symlink: a venv's python finds its
    python.chmod(0o755)  # environment from the path it is started by
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    for b in blocks:
        r = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", b.code],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, f"{name(doc)} line {b.line}:\n{b.code}\n{r.stdout}\n{r.stderr}"


def test_the_readme_runs_python_magic_and_bash_blocks():
    """The README keeps an example of each kind the tests run (its own tests are the ones above)."""
    kinds = {("kernel" if b.runs_in_kernel else b.lang) for b in readme_blocks() if not b.skip}
    assert {"kernel", "bash"} <= kinds
