"""What many test folders need, written once: a child process's environment, a notebook file, a Chromium,
a store reopened as another object.

Import it as ``from tests.support import ...`` (pytest puts the checkout on ``sys.path``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]  # the checkout under test
CHROMIUM = "/usr/bin/chromium"  # Debian's; ./dev test installs it
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def child_env(**extra: str) -> dict[str, str]:
    """Return this process's environment for a child (a kernel, a server, ``python -c``) that imports
    durable_nb from this checkout: the checkout first on ``PYTHONPATH``, ``DURABLE_NB_MODEL`` and
    ``JPY_SESSION_NAME`` removed (children use the offline model and name no notebook unless told),
    then ``extra`` on top."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("DURABLE_NB_MODEL", None)
    env.pop("JPY_SESSION_NAME", None)
    env.update(extra)
    return env


def write_notebook(path: Path, cells: Sequence[tuple], kernelspec: bool = True) -> Path:
    """Write a notebook of code cells to ``path`` and return ``path``.

    Each cell is ``(source, tags)`` (its id is then ``c0``, ``c1``, …) or
    ``(cell id, source, tags)``. With ``kernelspec`` the notebook names the
    ``python3`` kernel, as JupyterLab writes it.
    """
    import nbformat

    nb = nbformat.v4.new_notebook()
    if kernelspec:
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, cell in enumerate(cells):
        cid, src, tags = cell if len(cell) == 3 else (f"c{i}", *cell)
        c = nbformat.v4.new_code_cell(src)
        c.id = cid
        if tags:
            c.metadata["tags"] = list(tags)
        nb.cells.append(c)
    nbformat.write(nb, path)
    return path


def launch_chromium(playwright, user_data_dir: Path | None = None, viewport=(1280, 900)):
    """Start Debian's headless Chromium through Playwright.

    With ``user_data_dir``: a persistent browser context on that (fresh)
    profile folder, ``viewport`` wide (what JupyterLab tests drive); without:
    a browser with a temporary profile (pages open their own contexts).
    """
    if user_data_dir is None:
        return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    return playwright.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": viewport[0], "height": viewport[1]},
    )


@contextmanager
def store_opener(kind: str, tmp_path: Path, request: Any) -> Iterator[tuple[Callable[[], Any], str | None]]:
    """Yield ``(open, spec)`` for one store of ``kind`` (``memory``, ``jsonl``, ``sqlite``, ``postgres``):
    ``open()`` gives another store object on the same data (memory: always the same object) and
    ``spec`` is its store string (``None`` for memory). PostgreSQL takes a fresh schema from the
    ``pg_dsn`` fixture through ``request``; every object opened is closed afterwards."""
    from durable_nb import session

    if kind == "memory":
        st = session.MemoryStore()
        yield (lambda: st), None
        return
    spec = (
        request.getfixturevalue("pg_dsn")
        if kind == "postgres"
        else str(tmp_path / {"jsonl": "s", "sqlite": "s.db"}[kind])
    )
    opened: list[Any] = []

    def reopen() -> Any:
        opened.append(session.open_store(spec))
        return opened[-1]

    try:
        yield reopen, spec
    finally:
        for st in opened:
            getattr(st, "close", lambda: None)()
