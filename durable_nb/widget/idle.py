"""Background work that keeps out of the kernel's way: started once the kernel has been idle a while,
paused between its steps while a cell runs.

    when_idle(start)        # on the kernel's loop: start() once no cell has run for IDLE_S
    gate = Gate()           # made on the kernel's thread; in the worker, between steps:
    gate.wait()             #   returns at once while no cell runs, else once it has ended

A cell and a Python thread share one GIL: a worker busy in Python makes every wait of the cell for
the GIL (dozens for an empty cell) cost up to the switch interval, and a 300k-entry layout turned a
following empty cell into a 1.7 s one (#32). Nothing here outside a kernel: :func:`when_idle` then
calls at once, :meth:`Gate.wait` returns at once.
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

IDLE_S = 0.25  # how long the kernel stays idle (no cell run) before background work starts
SWITCH_S = 0.0005  # the GIL switch interval while background work runs (Python's default: 0.005 s)
WAIT_S = 600.0  # the longest a step waits for a running cell to end before it goes on anyway
POLL_S = 0.05  # how often a waiting step checks whether its gate was opened (a cell now waits for it)


class _Cells:
    """Which cells a shell runs, from IPython's ``pre_run_cell`` / ``post_run_cell`` events."""

    def __init__(self, shell: Any) -> None:
        self.started = 0  # cells started so far
        self.ended = 0.0  # time.monotonic() when the last one ended
        self.idle = threading.Event()  # set while no cell runs
        self.idle.set()
        shell.events.register("pre_run_cell", self._pre)
        shell.events.register("post_run_cell", self._post)

    def _pre(self, _info: Any) -> None:
        self.started += 1
        self.idle.clear()

    def _post(self, _result: Any) -> None:
        self.ended = time.monotonic()
        self.idle.set()


_cells: weakref.WeakKeyDictionary[Any, _Cells] = weakref.WeakKeyDictionary()


def _kernel() -> tuple[Any, _Cells] | None:
    """The running kernel's io loop and its shell's :class:`_Cells`, or ``None`` outside a kernel.
    Call it on the kernel's thread."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        loop = shell.kernel.io_loop
    except AttributeError:
        return None
    if shell not in _cells:
        _cells[shell] = _Cells(shell)
    return loop, _cells[shell]


def when_idle(start: Callable[[], None]) -> None:
    """Call ``start()`` on the kernel's loop once no cell has run for :data:`IDLE_S` seconds (a cell
    run meanwhile starts the wait over: one that started before a check and ended after it, the
    next cell of Run All right behind it, too); at once outside a kernel. Call it on the kernel's thread."""
    k = _kernel()
    if k is None:
        start()
        return
    loop, cells = k

    def check(seen: int) -> None:  # on the loop, between cells
        if cells.started != seen or not cells.idle.is_set() or time.monotonic() - cells.ended < IDLE_S:
            loop.call_later(IDLE_S, check, cells.started)
        else:
            start()

    loop.call_later(IDLE_S, check, cells.started)


class Gate:
    """Made on the kernel's thread; :meth:`wait` in a worker between steps; :meth:`open` when a cell
    itself waits for the worker (else each would wait for the other until :data:`WAIT_S`)."""

    def __init__(self) -> None:
        k = _kernel()
        self._cells = k[1] if k is not None else None
        self._open = threading.Event()

    def open(self) -> None:
        """Let the worker go on at once from now on, cell or not. O(1)."""
        self._open.set()

    def wait(self) -> None:
        """Return at once while no cell runs or once opened; else once the cell has ended (at most
        :data:`WAIT_S` later), seeing an :meth:`open` within :data:`POLL_S`. O(1)."""
        if self._cells is None:
            return
        deadline = time.monotonic() + WAIT_S
        while not self._open.is_set() and not self._cells.idle.wait(POLL_S) and time.monotonic() < deadline:
            pass


_switch_lock = threading.Lock()
_switch_users = [0, 0.0]  # workers running, the interval before the first


@contextmanager
def quick_switches() -> Iterator[None]:
    """Lower the interpreter's GIL switch interval to :data:`SWITCH_S` while inside (restored when the
    last worker leaves): a cell started meanwhile waits that long, not 5 ms, each time it needs the
    GIL back from the worker's current step. Costs the worker a few percent more switches."""
    with _switch_lock:
        if _switch_users[0] == 0:
            _switch_users[1] = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_S, _switch_users[1]))
        _switch_users[0] += 1
    try:
        yield
    finally:
        with _switch_lock:
            _switch_users[0] -= 1
            if _switch_users[0] == 0:
                sys.setswitchinterval(_switch_users[1])
