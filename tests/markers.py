"""Test markers by what a test starts (kernel, browser, pg, slow); ``tests/conftest.py`` uses these hooks.

``kernel``: an IPython kernel or a Jupyter server (which starts kernels); ``browser``: Chromium;
``pg``: a PostgreSQL server; ``slow``: long without starting any of those (marked by hand; a run
names the unmarked tests over :data:`SLOW_SECONDS`).
``./dev test --fast`` deselects all four. A test gets its markers at collection from:

- the fixtures it uses, directly or through other fixtures (:data:`FIXTURES`);
- a fixture parameter named ``postgres`` (the store fixtures' convention) -> ``pg``;
- what its module imports from a starter module at the top (:data:`MODULES`: the tests' ``Kernel``,
  ``run_notebook``, Playwright ...);
- its folder (:data:`FOLDERS`).

A test that starts one of these processes anyway (in setup or call) without the marker fails, naming
the process and the marker: so the fast subset never silently grows a kernel (:func:`guard`). Cost: one
``startswith`` test per process started.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

KINDS = ("kernel", "browser", "pg", "slow")
FAST = "not kernel and not browser and not pg and not slow"  # ./dev test --fast (written there too; a test compares)

# fixture name -> the markers of every test using it (anywhere in its fixture closure)
FIXTURES: dict[str, tuple[str, ...]] = {
    "kernel": ("kernel",),  # tests/notebook: one kernel per run
    "nb": ("kernel",),
    "lab": ("kernel", "browser"),  # tests/e2e: a Jupyter server, driven by Chromium
    "browser": ("browser",),  # tests/e2e, tests/widget: Chromium through Playwright
    "page": ("browser",),
    "pg_server": ("pg",),  # tests/conftest.py
    "pg_dsn": ("pg",),
    "phoenix": ("slow",),  # tests/otlp: a Phoenix server (and, once, its own virtual environment)
}
# an object imported at a test module's top from one of these modules -> that module's markers
MODULES: dict[str, tuple[str, ...]] = {
    "kernel": ("kernel",),  # tests/notebook/kernel.py (imported by folder: `from kernel import Kernel`)
    "durable_nb.run_notebook": ("kernel",),
    "nbclient": ("kernel",),
    "jupyter_client": ("kernel",),
    "playwright": ("browser",),
    "pg_server": ("pg",),  # tests/pg_server.py: a test's own server
}
# folder under tests/ -> the markers of every test in it
FOLDERS: dict[str, tuple[str, ...]] = {
    "e2e": ("kernel", "browser"),
    "headless": ("kernel",),  # every notebook runs in nbclient's kernel
    "packaging": ("slow",),
}
TESTS = Path(__file__).resolve().parent


def markers_of(item: pytest.Item) -> set[str]:
    """Return the kinds ``item`` gets from its fixtures, parameters, module and folder (see the module)."""
    kinds: set[str] = set()
    for name in getattr(item, "fixturenames", ()):
        kinds.update(FIXTURES.get(name, ()))
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "postgres" in callspec.params.values():
        kinds.add("pg")
    module = getattr(item, "module", None)
    if module is not None:
        kinds.update(_module_kinds(module))
    try:
        folder = Path(str(item.path)).resolve().relative_to(TESTS).parts[0]
    except ValueError:
        folder = ""
    kinds.update(FOLDERS.get(folder, ()))
    return kinds


_seen: dict[str, set[str]] = {}


def _module_kinds(module: Any) -> set[str]:
    if module.__name__ not in _seen:
        kinds: set[str] = set()
        for value in vars(module).values():
            home = getattr(value, "__module__", None) if not isinstance(value, type(sys)) else value.__name__
            if isinstance(home, str):
                for prefix, marks in MODULES.items():
                    if home == prefix or home.startswith(prefix + "."):
                        kinds.update(marks)
        _seen[module.__name__] = kinds
    return _seen[module.__name__]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave out a folder of :data:`FOLDERS` whose markers the ``-m`` expression deselects anyway (``--fast``
    then imports none of its modules: 10 s less)."""
    marks = FOLDERS.get(collection_path.name) if collection_path.parent == TESTS else None
    expr = config.getoption("markexpr", "")
    if not marks or not expr:
        return None
    try:
        from _pytest.mark.expression import Expression

        selected = Expression.compile(expr).evaluate(lambda name, **kw: name in marks)
    except Exception:  # an expression pytest will report itself, or another pytest's private API
        return None
    return True if not selected else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for kind in sorted(markers_of(item)):
            if item.get_closest_marker(kind) is None:
                item.add_marker(kind)


_SERVERS = {"ipykernel", "ipykernel_launcher", "jupyterlab", "notebook", "jupyter_server", "durable_nb.run_notebook"}
_SCRIPTS = ("ipykernel", "jupyter-lab", "jupyter-server", "jupyter-notebook", "jupyter-execute", "jupyter-console")
_SUBCOMMANDS = {"lab", "notebook", "server", "execute", "console", "kernel"}  # `jupyter lab` ...


def started(argv: list[str]) -> str | None:
    """Return the marker a process started with ``argv`` needs (``None``: any test may start it)."""
    names = [os.path.basename(str(a)) for a in argv]
    modules = {str(argv[i + 1]) for i, a in enumerate(argv[:-1]) if a == "-m"}
    if any(n in ("initdb", "pg_ctl", "postgres") for n in names):
        return "pg"
    if any(n.startswith(("chromium", "chrome")) for n in names) or "run-driver" in names:  # Playwright's driver
        return "browser"
    if modules & _SERVERS or any(n.startswith(_SCRIPTS) for n in names):
        return "kernel"
    after_jupyter = {names[i + 1] for i, n in enumerate(names[:-1]) if n == "jupyter"}
    if after_jupyter & _SUBCOMMANDS or ("--execute" in names and any("nbconvert" in n for n in names)):
        return "kernel"
    return None


_current: list[pytest.Item] = []
_refused = pytest.StashKey[list[str]]()


def _running(item: pytest.Item) -> Iterator[None]:
    """Keep ``item`` as the test now running while its setup or call runs (the guard reads it)."""
    _current.append(item)
    try:
        yield
    finally:
        _current.pop()


pytest_runtest_setup = pytest.hookimpl(hookwrapper=True)(_running)
pytest_runtest_call = pytest.hookimpl(hookwrapper=True)(_running)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Fail a test that started an unmarked process with that as the reason, even where the refusal was
    swallowed or turned into another error (another thread, an event loop's transport)."""
    outcome = yield
    report = outcome.get_result()
    refused = item.stash.get(_refused, [])
    if refused and report.when in ("setup", "call"):
        report.outcome = "failed"
        report.longrepr = refused[0]


_execute_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]


def guard(self: subprocess.Popen, args: Any, *rest: Any, **kw: Any) -> Any:
    """``Popen._execute_child`` refusing a kernel, browser or PostgreSQL process the running test
    (setup or call; teardown may stop what an earlier test started) is not marked for."""
    if _current:
        argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
        if len(argv) == 1 and isinstance(argv[0], str):
            argv = argv[0].split()
        kind = started(argv)
        item = _current[-1]
        if kind is not None and item.get_closest_marker(kind) is None:
            msg = (
                f"{item.nodeid} starts {' '.join(os.path.basename(str(a)) for a in argv)[:120]!r} but is not marked {kind!r}: use the "
                f"fixture that starts it, or mark the test @pytest.mark.{kind} (see tests/markers.py)"
            )
            item.stash.setdefault(_refused, []).append(msg)
            pytest.fail(msg, pytrace=False)
    return _execute_child(self, args, *rest, **kw)


subprocess.Popen._execute_child = guard  # type: ignore[attr-defined]

SLOW_SECONDS = 15.0
_long: list[tuple[float, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.duration > SLOW_SECONDS and not any(k in report.keywords for k in KINDS):
        _long.append((report.duration, report.nodeid))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Name the unmarked tests that took over :data:`SLOW_SECONDS`: candidates for ``slow`` (the fast subset)."""
    if _long:
        terminalreporter.section(f"unmarked tests over {SLOW_SECONDS:.0f} s (mark them slow, or make them quicker)")
        for seconds, nodeid in sorted(_long, reverse=True):
            terminalreporter.write_line(f"{seconds:6.1f}s {nodeid}")
