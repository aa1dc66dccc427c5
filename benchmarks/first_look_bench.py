"""The first look at a long session in a real kernel (#32): `%durable status`, the empty cell right
after it, and `%durable show`, on a session just opened.

    python benchmarks/first_look_bench.py [--sizes 300000 1000000] [--rounds 2] [--logs DIR]

Per size and round, a fresh kernel opens run.py's conversation of that many entries (a JSONL log
written once) and runs, as JupyterLab sends them: ``%load_ext`` and the settings; five empty cells
(the floor: their median); ``%durable staged`` (the open: the first ``%durable`` line opens the
session, the reload plus what the open computes ahead; the verb itself is O(1)); then at once
``%durable status``; an empty cell (what background work after a cell adds to the next one: its
time minus the floor); ``%durable show`` (the kernel's time to the widget's display, and the bytes
the cell publishes); another empty cell; a cell of pure Python work (~0.3 s of CPU: its wall over its CPU
is what the load alone makes of a cell's CPU). Each cell's kernel CPU to the next cell's start, and
inside the cell its wall, the kernel's and the cell's thread's CPU, and the client's wall outside it
(the queue and the loop's work before the cell). Then, in a second fresh kernel, the open and at once a
``%%durable`` turn of the offline model (the first turn), and four more (their median: a steady
turn; the 100-entry size's is the floor of the first turn's target). Prints one row per size and
round, and the load average. ``--logs``: keep the logs there and reuse them (a 1M log takes ~1 min).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from session_bench import write_logs  # noqa: E402
from widget_bench import cell  # noqa: E402


def run(kc, code: str) -> tuple[float, int]:
    """Run ``code`` as a cell of its own (:func:`widget_bench.cell`); return (seconds to its reply,
    bytes of its iopub messages' content)."""
    elapsed, messages = cell(kc, code, uuid.uuid4().hex)
    return elapsed, sum(len(json.dumps(m["content"])) for m in messages)


@contextmanager
def kernel(root: Path) -> Iterator:
    """Start a kernel in ``root`` with the extension loaded, the bench session configured and the
    CPU clock registered (:data:`CPU`); yield its client; on leaving, stop its channels and the kernel."""
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(root), env={**os.environ, "PYTHONPATH": str(ROOT)})
    kc = km.client()
    try:
        kc.start_channels()
        kc.wait_for_ready(timeout=120)
        run(
            kc,
            f"%load_ext durable_nb\n%config DurableMagics.store = {str(root)!r}\n%config DurableMagics.session = 'bench'",
        )
        run(kc, CPU)
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# The kernel's CPU time (all its threads) as each later cell starts: what other jobs on a shared
# machine disturb least. A cell's cost is the difference to the next cell's start, so what the kernel
# does on its loop after the cell ends (the widget's preparation) is counted with it. Beside it, per
# cell from its start to its end: the clock, the kernel's CPU and the cell's own thread's CPU (where a
# cell's wall time goes: waiting for a core, another thread of the kernel, or outside the cell).
CPU = """import time as _bench_time
_bench_cpu, _bench_cells = [], []
def _bench_pre(info, t=_bench_time):
    _bench_cpu.append(t.process_time())
    _bench_cells.append([t.monotonic(), t.process_time(), t.thread_time()])
def _bench_post(result, t=_bench_time):
    if _bench_cells:
        _bench_cells[-1] += [t.monotonic(), t.process_time(), t.thread_time()]
get_ipython().events.register("pre_run_cell", _bench_pre)
get_ipython().events.register("post_run_cell", _bench_post)"""

# A cell of pure Python work on the kernel's thread, ~0.3 s of CPU: its wall time over its CPU time is
# what the machine's load alone makes of a cell's CPU in the same run (the floor of status's wall).
BUSY = "_bench_x = 0\nfor _bench_i in range(6_000_000):\n    _bench_x += _bench_i & 7"


def cpu(kc) -> tuple[list[float], list[dict]]:
    """Return the CPU seconds of each cell run since :data:`CPU` (to the next one's start; this read
    ends the last) and, per cell, its wall, kernel CPU and own thread's CPU in ms from start to end."""
    _, messages = cell(kc, "print([_bench_cpu, _bench_cells])", uuid.uuid4().hex)
    starts, spans = json.loads("".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream"))
    inside = [
        {"wall": ms(x[3] - x[0]), "cpu": ms(x[4] - x[1]), "thread": ms(x[5] - x[2])} for x in spans if len(x) == 6
    ]
    return [b - a for a, b in zip(starts, starts[1:])], inside


def row(root: Path) -> dict:
    """The first look: the floor, the open (``%durable staged``: the first ``%durable`` line opens the
    session, and this verb adds O(1)), then at once status, an empty cell, show, an empty cell."""
    with kernel(root) as kc:
        floor = statistics.median(run(kc, "pass")[0] for _ in range(5))
        opened, _ = run(kc, "%durable staged")
        status, _ = run(kc, "%durable status")
        after_status, _ = run(kc, "pass")
        show, show_bytes = run(kc, "%durable show")
        after_show, _ = run(kc, "pass")
        busy, _ = run(kc, BUSY)
        cpus, inside = cpu(kc)
        cpus, inside = cpus[5:], inside[5:]  # the open, status, the empty cell, show, the empty cell, busy
    names = ("open", "status", "next", "show", "after_show", "busy")
    walls = dict(zip(names, map(ms, (opened, status, after_status, show, after_show, busy))))
    return {
        "empty_ms": ms(floor),
        "open_ms": ms(opened),
        "status_ms": ms(status),
        "next_cell_added_ms": ms(after_status - floor),
        "show_ms": ms(show),
        "show_kb": round(show_bytes / 1000, 1),
        "after_show_added_ms": ms(after_show - floor),
        "cpu_ms": dict(zip(names, map(ms, cpus))),
        # per cell, start to end inside the kernel: wall, the kernel's CPU, the cell's thread's CPU;
        # "outside": the client's wall minus the kernel's (the queue, the loop's work before the cell, messages)
        "inside_ms": {k: {**v, "outside": round(walls[k] - v["wall"], 1)} for k, v in zip(names, inside)},
    }


def turns(root: Path, cells: int = 4) -> dict:
    """The first turn after the open, in a kernel of its own: the open, then at once a ``%%durable``
    turn of the offline model (no widget shown), then ``cells`` more (their median: a steady turn)."""
    with kernel(root) as kc:
        run(kc, "%durable staged")
        first, _ = run(kc, "%%durable\nthe first turn")
        steady = statistics.median(run(kc, f"%%durable\nturn {i}")[0] for i in range(cells))
        cpus, _ = cpu(kc)
    return {
        "first_turn_ms": ms(first),
        "steady_turn_ms": ms(steady),
        "turn_cpu_ms": {"first": ms(cpus[1]), "steady": ms(statistics.median(cpus[2:]))},
    }


def ms(s: float) -> float:
    return round(s * 1000, 1)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[300_000])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--no-turns", action="store_true", help="leave out the kernels that time the first turn")
    p.add_argument("--logs", type=Path, help="a folder to keep the logs in (plain<n>), written once and reused")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="first_look_"))
    keep = args.logs or tmp
    try:
        roots = {
            n: keep / f"plain{n}" if (keep / f"plain{n}").exists() else write_logs(n, keep, ["plain"])["plain"]
            for n in args.sizes
        }
        for r in range(args.rounds):
            for n in args.sizes:
                load = os.getloadavg()[0]
                out = {"entries": n, "round": r, "load": round(load, 1), **row(roots[n])}
                if not args.no_turns:
                    out.update(turns(roots[n]))
                print(json.dumps(out), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
