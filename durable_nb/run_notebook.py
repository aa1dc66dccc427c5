"""Run a notebook headlessly, delivering cell tags to the kernel as JupyterLab does.

    python -m durable_nb.run_notebook notebooks/01_entry_semantics.ipynb [--output out.ipynb] [--cwd dir]

Every code cell runs in order in a real kernel (through nbclient). JupyterLab 4
sends each cell's metadata (``tags`` included) and its ``cellId`` as the
execute request's ``metadata``; nbclient sends none. This runner puts them
there the same way, so ``%%durable`` and tagged ``meta``/``ephemeral`` cells
behave headlessly as they do in the browser. The first failing cell stops the
run with a message naming it and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, DeadKernelError
from nbformat import NotebookNode

# The directory that holds this durable_nb package: the kernel gets it first on
# PYTHONPATH so it imports the same checkout as the runner.
PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


class NotebookError(Exception):
    """A cell failed (or the kernel died); the message names the cell and the error.

    ``notebook`` holds the notebook as executed so far (outputs of the failing
    cell included); ``cell_index`` is the failing cell's position (``-1`` when
    no cell is to blame).
    """

    def __init__(self, message: str, notebook: NotebookNode, cell_index: int = -1) -> None:
        super().__init__(message)
        self.notebook = notebook
        self.cell_index = cell_index


def request_metadata(cell: NotebookNode, notebook_metadata: dict | None = None) -> dict:
    """Return the execute request ``metadata`` JupyterLab 4 (with durable_nb's extension) sends for ``cell``.

    That is a copy of the cell's whole metadata (``tags`` included) plus
    ``trusted``, ``deletedCells``, ``recordTiming`` and ``cellId``, as
    JupyterLab 4.6 sends them for a freshly opened notebook (the end-to-end
    test compares the two), plus the notebook's session identity
    (``notebook_metadata["durable_nb"]``) under ``"durable_nb"`` when the
    notebook keeps one, as the extension adds it (see
    :mod:`durable_nb.notebook.identity`). A notebook without one gets no
    such key: its session is named after the file, as in front ends without
    the extension. Nothing is invented: the file is never modified.
    """
    md = copy.deepcopy(dict(cell.get("metadata", {})))
    md.update({"trusted": False, "deletedCells": [], "recordTiming": False, "cellId": cell.get("id", "")})
    ident = (notebook_metadata or {}).get("durable_nb")
    if isinstance(ident, dict) and ident.get("session"):
        md["durable_nb"] = copy.deepcopy(dict(ident))
    return md


def ensure_cell_ids(nb: NotebookNode) -> None:
    """Give every cell an ``id`` (nbformat 4.5) if the notebook predates them.

    Ids are ``cell-<index>``, so reruns of one notebook send the same ids.
    """
    if any("id" not in c for c in nb.cells):
        nb.nbformat_minor = max(nb.get("nbformat_minor", 0), 5)
        for i, c in enumerate(nb.cells):
            c.setdefault("id", f"cell-{i}")


def kernel_env(notebook: Path) -> dict[str, str]:
    """Return the kernel's environment: ours, with :data:`PACKAGE_ROOT` first on
    ``PYTHONPATH`` and ``JPY_SESSION_NAME`` set to the notebook's absolute path,
    as jupyter_server sets it (so the kernel knows its notebook's name)."""
    env = dict(os.environ)
    env["JPY_SESSION_NAME"] = str(notebook.resolve())
    parts = [PACKAGE_ROOT, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != PACKAGE_ROOT]]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


def _describe_error(cell: NotebookNode) -> str:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return f"{out.get('ename', 'Error')}: {out.get('evalue', '')}".rstrip(": ")
    return "the cell raised an error"


def _first_line(cell: NotebookNode) -> str:
    lines = [ln for ln in cell.source.splitlines() if ln.strip()]
    first = lines[0] if lines else ""
    return first if len(first) <= 60 else first[:57] + "..."


def summary(nb: NotebookNode) -> str:
    """Return e.g. ``"12 code cells (3 tagged)"`` for an executed notebook."""
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    return f"{len(code)} code cells ({sum(bool(c.metadata.get('tags')) for c in code)} tagged)"


def run_notebook(
    path: str | os.PathLike[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    timeout: int = 120,
    kernel_name: str | None = None,
) -> NotebookNode:
    """Execute the notebook at ``path`` and return it with its outputs.

    The kernel starts in ``cwd`` (default: the notebook's folder, as in
    JupyterLab) with this checkout first on ``PYTHONPATH`` and
    ``JPY_SESSION_NAME`` naming the notebook (see :func:`kernel_env`). Each
    code cell's metadata and id reach the kernel in its execute request (see
    :func:`request_metadata`), and so does the notebook's session id
    (``metadata.durable_nb``) when it keeps one. No widget state is saved
    (``metadata.widgets`` stays absent, as with JupyterLab's default): a widget
    output keeps its static fallback for renderers with no kernel. Cells run in order; a cell that takes longer
    than ``timeout`` seconds fails. The file at ``path`` is not modified.

    Raises :class:`NotebookError` naming the first failing cell (index, id,
    first line) and its error; the partly executed notebook rides on the
    exception. Cost: one kernel start (about 1 s) plus the cells.
    """
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    ensure_cell_ids(nb)
    workdir = Path(cwd) if cwd is not None else path.resolve().parent
    client = NotebookClient(
        nb,
        timeout=timeout,
        record_timing=False,  # as JupyterLab's default; keeps cell metadata as it was
        # As JupyterLab's default: no widget state in the notebook, so static renderers show each
        # widget output's text/html fallback (see durable_nb.share.fallback) instead of trying to
        # run the widget from a CDN, and GitHub accepts the file (no `metadata.widgets` at all).
        store_widget_state=False,
        kernel_name=kernel_name or nb.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": str(workdir)}},
    )

    def on_execute(cell: NotebookNode, cell_index: int) -> None:
        assert client.kc is not None  # the kernel client exists while cells run
        client.kc.session.metadata = request_metadata(cell, nb.metadata)

    def on_complete(cell: NotebookNode, cell_index: int) -> None:
        assert client.kc is not None
        client.kc.session.metadata = {}

    client.on_cell_execute = on_execute
    client.on_cell_complete = on_complete
    try:
        client.execute(env=kernel_env(path))
    except CellExecutionError:
        # the failing cell is the last one with an error output (a cell tagged raises-exception may fail earlier)
        i = max(
            (k for k, c in enumerate(nb.cells) if any(o.get("output_type") == "error" for o in c.get("outputs", []))),
            default=-1,
        )
        cell = nb.cells[i] if i >= 0 else None
        where = f"cell {i} (id {cell.get('id')!r}: {_first_line(cell)!r})" if cell is not None else "a cell"
        what = _describe_error(cell) if cell is not None else "error"
        raise NotebookError(f"{path}: {where} failed: {what}", nb, i) from None
    except DeadKernelError as e:
        raise NotebookError(f"{path}: the kernel died ({e})", nb) from None
    except TimeoutError as e:
        raise NotebookError(f"{path}: {e}", nb) from None
    return nb


def _write(nb: NotebookNode, output: str) -> None:
    """Write ``nb`` to ``output``, making its folder first."""
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, output)


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (0 ok, 1 a cell failed, 2 bad arguments)."""
    p = argparse.ArgumentParser(prog="python -m durable_nb.run_notebook", description=__doc__.split("\n\n")[0])
    p.add_argument("notebook", help="the .ipynb file to run (not modified)")
    p.add_argument("--output", "-o", help="write the executed notebook here (also written when a cell fails)")
    p.add_argument("--cwd", help="the kernel's working directory (default: the notebook's folder)")
    p.add_argument("--timeout", type=int, default=120, help="seconds one cell may take (default 120)")
    args = p.parse_args(argv)
    if not Path(args.notebook).is_file():
        p.error(f"no notebook at {args.notebook}")
    if args.cwd is not None and not Path(args.cwd).is_dir():
        p.error(f"--cwd {args.cwd} is not a directory")
    start = time.monotonic()
    try:
        nb = run_notebook(args.notebook, cwd=args.cwd, timeout=args.timeout)
    except NotebookError as e:
        if args.output:
            _write(e.notebook, args.output)
        print(f"FAILED: {e}", file=sys.stderr)
        if args.output:
            print(f"the partly executed notebook is in {args.output}", file=sys.stderr)
        return 1
    if args.output:
        _write(nb, args.output)
    print(
        f"ok: {args.notebook}: {summary(nb)} ran in {time.monotonic() - start:.1f} s"
        + (f"; output in {args.output}" if args.output else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
