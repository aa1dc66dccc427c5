"""`%load_ext durable_nb` in a fresh kernel, against `import anywidget` in a fresh kernel (#32).

    python benchmarks/load_ext_bench.py [--rounds 5] [--before DIR]

Each round starts two kernels (one per figure, interleaved) and times, inside the kernel, the one
statement (``perf_counter`` around it): the floor is ``import anywidget`` (what any widget pays), the
figure ``%load_ext durable_nb``. Prints the medians, their ratio, the load average, and the modules
``%load_ext`` added to ``sys.modules`` (top-level names). ``--before DIR``: also time ``%load_ext``
from another checkout (e.g. ``git archive`` of the commit before, byte-compiled), interleaved.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[1]
TIMED = (
    "import sys as _s, time as _t\n_b = set(_s.modules)\n_t0 = _t.perf_counter()\n{stmt}\n"
    "print(_t.perf_counter() - _t0)\nprint(' '.join(sorted({{m.split('.')[0] for m in set(_s.modules) - _b}})))"
)
STATEMENTS = {"anywidget": "import anywidget", "load_ext": "get_ipython().run_line_magic('load_ext', 'durable_nb')"}


def timed(stmt: str, root: Path = ROOT) -> tuple[float, str]:
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd="/tmp", env={**os.environ, "PYTHONPATH": str(root)})
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        out: list[str] = []
        kc.execute_interactive(
            TIMED.format(stmt=stmt), output_hook=lambda m: out.append(m["content"].get("text", "")), timeout=120
        )
        seconds, modules = "".join(out).strip().split("\n", 1)
        return float(seconds), modules
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--before", type=Path, default=None)
    args = p.parse_args()
    runs = [("anywidget", STATEMENTS["anywidget"], ROOT), ("load_ext", STATEMENTS["load_ext"], ROOT)]
    if args.before:
        runs.append(("before: load_ext", STATEMENTS["load_ext"], args.before))
    times: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    modules: dict[str, str] = {}
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for name, stmt, root in runs:
            t, mods = timed(stmt, root)
            times[name].append(t * 1000)
            modules[name] = mods
        loads.append(os.getloadavg()[0])
    floor = statistics.median(times["anywidget"])
    print(f"load average {min(loads):.1f}-{max(loads):.1f}, {args.rounds} rounds, interleaved")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name}: {med:.1f} ms ({med / floor:.2f}x import anywidget)  {sorted(round(x) for x in ts)}")
    for name, mods in modules.items():
        if name != "anywidget":
            print(f"modules {name} adds: {mods}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
