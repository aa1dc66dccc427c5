"""An evaluation run's overhead per pair, and its wall time against the concurrency bound (#28).

``python benchmarks/evals_bench.py`` (about a minute). In one JSONL store:

- **offline**: 1,000 cases × 3 variants (the offline model, three
  temperatures), one ``contains`` grader, concurrency 4: wall time per pair,
  against a fan-out turn's per-branch time (``Agent.fan_out`` over the same
  three variants, from the same history, median of ``ROUNDS``) in the same run.
- **paced**: a model answering after 100 ms, ``PACED_CASES`` cases × 3
  variants at concurrency 4 and 16: wall time against the floor
  pairs × 100 ms ÷ concurrency.

Writes ``benchmarks/evals_results.json``. Not a test: run it by hand.
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from durable_nb import durable, evals  # noqa: E402
from durable_nb.session import JsonlStore  # noqa: E402

CASES = 1000
PACED_CASES = 120
PACE_S = 0.1
ROUNDS = 30
VARIANTS = [{"model": "offline", "temperature": t} for t in (0, 0.5, 1)]


def paced(messages):
    time.sleep(PACE_S)
    return "answer " + messages[-1].text()


def main() -> None:
    out: dict[str, object] = {"python": platform.python_version(), "cases": CASES, "variants": len(VARIANTS)}
    with tempfile.TemporaryDirectory() as tmp:
        store = JsonlStore(Path(tmp) / "s")
        agent = durable.Agent(store=store, session_id="bench")
        agent.run("a short history the cases continue from").wait()
        history = agent.leaf_id
        cases = [{"q": f"question {i}", "want": "received"} for i in range(CASES)]
        t = time.perf_counter()
        r = evals.run("Answer {q}", cases, variants=VARIANTS, graders=[evals.contains("{want}")], agent=agent,
                      name="offline", history=history, concurrency=4)  # fmt: skip
        wall = time.perf_counter() - t
        pairs = len(r.results)
        fan = []
        for _ in range(ROUNDS):
            agent.branch(history)
            t = time.perf_counter()
            agent.fan_out("Answer question 0", variants=VARIANTS)
            fan.append((time.perf_counter() - t) / len(VARIANTS))
        per_pair, per_branch = wall / pairs * 1000, statistics.median(fan) * 1000
        out["offline"] = {"pairs": pairs, "passed": r.pass_rate, "wall_s": round(wall, 2),
                          "per_pair_ms": round(per_pair, 3), "fan_out_per_branch_ms": round(per_branch, 3),
                          "ratio": round(per_pair / per_branch, 2)}  # fmt: skip
        print(f"offline: {pairs} pairs in {wall:.2f} s = {per_pair:.2f} ms a pair (graded, stored); "
              f"a fan-out turn: {per_branch:.2f} ms a branch; × {per_pair / per_branch:.2f}")  # fmt: skip
        out["paced"] = []
        for conc in (4, 16):
            rows = [{"q": f"paced {conc} {i}"} for i in range(PACED_CASES)]
            t = time.perf_counter()
            pr = evals.run("{q}", rows, variants=[paced, {"model": paced, "label": "b"}, {"model": paced, "label": "c"}],
                           agent=agent, name=f"paced-{conc}", history=history, concurrency=conc)  # fmt: skip
            wall = time.perf_counter() - t
            floor = len(pr.results) * PACE_S / conc
            out["paced"].append({"pairs": len(pr.results), "concurrency": conc, "wall_s": round(wall, 2),
                                 "floor_s": round(floor, 2), "ratio": round(wall / floor, 3)})  # type: ignore[union-attr]  # fmt: skip
            print(f"paced 100 ms, concurrency {conc}: {len(pr.results)} pairs in {wall:.2f} s; "
                  f"floor {floor:.2f} s; × {wall / floor:.3f}")  # fmt: skip
    (Path(__file__).parent / "evals_results.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
