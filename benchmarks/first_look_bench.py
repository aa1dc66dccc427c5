"""The first look at a long session in a real kernel (#32): `%durable status`, the empty cell right
after it, and `%durable show`, on a session just opened.

    python benchmarks/first_look_bench.py [--sizes 300000 1000000] [--rounds 2]

Per size and round, a fresh kernel opens run.py's conversation of that many entries (a JSONL log
written once) and runs, as JupyterLab sends them: ``%load_ext`` and the settings; five empty cells
(the floor: their median); ``%durable status`` (its time: the session is opened and counted); an
empty cell at once (what background work after a cell adds to the next one: its time minus the
floor); ``%durable show`` (the kernel's time to the widget's display, and the bytes the cell
publishes); another empty cell. Prints one row per size and round, and the load average.
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


def row(root: Path) -> dict:
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(root), env={**os.environ, "PYTHONPATH": str(ROOT)})
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        run(
            kc,
            f"%load_ext durable_nb\n%config DurableMagics.store = {str(root)!r}\n%config DurableMagics.session = 'bench'",
        )
        floor = statistics.median(run(kc, "pass")[0] for _ in range(5))
        status, _ = run(kc, "%durable status")
        after_status, _ = run(kc, "pass")
        show, show_bytes = run(kc, "%durable show")
        after_show, _ = run(kc, "pass")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    ms = lambda s: round(s * 1000, 1)  # noqa: E731
    return {
        "empty_ms": ms(floor),
        "status_ms": ms(status),
        "next_cell_added_ms": ms(after_status - floor),
        "show_ms": ms(show),
        "show_kb": round(show_bytes / 1000, 1),
        "after_show_added_ms": ms(after_show - floor),
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[300_000])
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="first_look_"))
    try:
        roots = {n: write_logs(n, tmp, ["plain"])["plain"] for n in args.sizes}
        for r in range(args.rounds):
            for n in args.sizes:
                load = os.getloadavg()[0]
                print(json.dumps({"entries": n, "round": r, "load": round(load, 1), **row(roots[n])}), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
