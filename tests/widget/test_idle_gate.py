"""A cell that needs a preparation whose thread is paused for that very cell does not wait for itself (#32)."""

from __future__ import annotations

import threading
import time

from durable_nb.widget import idle, preparation


class Cells:
    """A kernel's cells as :mod:`durable_nb.widget.idle` sees them: one is running."""

    def __init__(self) -> None:
        self.idle = threading.Event()  # never set: the cell runs throughout


def test_an_opened_gate_lets_the_paused_worker_on_while_the_cell_runs():
    gate = idle.Gate()
    gate._cells = Cells()  # type: ignore[assignment]
    done = threading.Event()
    worker = threading.Thread(target=lambda: (gate.wait(), done.set()), daemon=True)
    worker.start()
    assert not done.wait(3 * idle.POLL_S)  # paused while the cell runs
    gate.open()
    assert done.wait(10 * idle.POLL_S)
    t = time.monotonic()
    gate.wait()  # and from then on it does not pause
    assert time.monotonic() - t < idle.POLL_S


def test_a_widget_joining_a_started_preparation_is_not_kept_waiting_by_its_gate():
    gate = idle.Gate()
    gate._cells = Cells()  # type: ignore[assignment]
    steps: list[str] = []

    def work(in_thread: bool) -> None:
        gate.wait()  # what a preparation's thread does between its steps
        steps.append("laid out")

    worker = preparation._Worker(lambda: True, work, gate)
    worker.start()  # the kernel was idle a while: the thread started, then a cell began
    t = time.monotonic()
    worker.join(timeout=30)  # the cell's widget needs it now
    assert steps == ["laid out"] and time.monotonic() - t < 5
