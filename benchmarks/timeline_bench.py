"""The widget's timeline requests on a session just opened (#32): what the kernel spends on them.

    python benchmarks/timeline_bench.py [--sizes 100000 300000 1000000] [--logs DIR] [--root TREE]

Per size, in this process (the kernel's side, no page): open run.py's conversation of that many
entries (a JSONL log, session_bench.write_logs; ``--logs``: kept there and reused, each run on a copy), prepare the first
widget as the notebook does after a ``%durable`` cell (``preparation.prepare``; outside a kernel its
thread starts at once) and wait for that thread to end (its CPU: ``ahead_s``), show the widget, then
time the page's first timeline request (its CPU on this thread and its wall: ``first_*``), and three
turns (a user and an assistant entry appended, the widget synced) each followed by the page's
timeline request for the change (``later_*``: their median). ``--root``: import durable_nb from
that tree (a ``git archive`` of an older commit: the "before"). Prints one JSON row per size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
parser.add_argument("--logs", type=Path, default=None)
parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
args = parser.parse_args()
ROOT = args.root.resolve()
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests" / "widget")]

import comm  # noqa: E402
from session_bench import write_logs  # noqa: E402
from widget_harness import RecordingComm, front_end_send  # noqa: E402

from durable_nb import ai, durable  # noqa: E402
from durable_nb.session import JsonlStore, MessageEntry  # noqa: E402
from durable_nb.widget import SessionWidget, preparation  # noqa: E402

comm.create_comm = RecordingComm


def ask(w, **req) -> tuple[float, float, dict]:
    """The page's timeline request: (thread CPU s, wall s, the reply)."""
    c, t = time.thread_time(), time.perf_counter()
    front_end_send(w, {"action": "timeline", **req})
    return time.thread_time() - c, time.perf_counter() - t, w.comm.sent[-1][1]["content"]


def row(n: int, logs: Path, tmp: Path) -> dict:
    kept = logs / f"plain{n}"
    if not kept.exists():
        write_logs(n, logs, ["plain"])
    root = tmp / f"run{n}"
    shutil.copytree(kept, root)  # the turns below append to it: the kept log stays as written
    a = durable.Agent(store=JsonlStore(root), session_id="bench")
    c = time.process_time()
    p = preparation.prepare(a)
    p.thread._thread.join()  # the whole thread: the layout, and after it (now) the timeline's turns
    ahead = time.process_time() - c
    w = SessionWidget(a)
    first_cpu, first_wall, r = ask(w)
    later = []
    for k in range(3):
        a.append(durable.text(f"one more {k}"), MessageEntry(message=ai.assistant_message(f"ok {k}")))
        w.sync()
        cpu, wall, r = ask(w, have=r["seq"])
        later.append((cpu, wall, len(json.dumps(r))))
    return {
        "entries": len(a.entries()),
        "turns": r["total"],
        "ahead_s": round(ahead, 3),
        "first_cpu_s": round(first_cpu, 4),
        "first_wall_s": round(first_wall, 4),
        "later_cpu_ms": round(statistics.median(x[0] for x in later) * 1000, 2),
        "later_wall_ms": round(statistics.median(x[1] for x in later) * 1000, 2),
        "later_reply_bytes": statistics.median(x[2] for x in later),
        "load": os.getloadavg()[0],
        "root": str(ROOT),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        logs = args.logs or Path(tmp)
        logs.mkdir(parents=True, exist_ok=True)
        for n in args.sizes:
            print(json.dumps(row(n, logs, Path(tmp))), flush=True)
            shutil.rmtree(Path(tmp) / f"run{n}")


if __name__ == "__main__":
    main()
