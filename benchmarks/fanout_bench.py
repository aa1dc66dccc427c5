"""Fan-out of 3 against the same 3 turns run one after another, in the same run (#15).

``python benchmarks/fanout_bench.py`` (about a minute). One JSONL session of
a few turns (``loop_bench.fill``); from its leaf, each round runs

- **sequential**: three turns, each a sibling of the others (branch back to
  the fork, run), one after another, as a user trying three models would;
- **fan-out**: ``Agent.fan_out`` of the same turn over the same three models;
- **one turn**: a single turn, the floor a fan-out of any width cannot beat.

The models: the offline model **paced** like a provider (a time to first
token, then a per-token delay for each streamed chunk, tokens counted as
characters / 4), a plain **callable** model that sleeps the same way in one
go, and the offline model **unpaced** (no latency at all: what the threads
and the serialised commits cost on their own). The figure is the median over
``ROUNDS`` rounds (interleaved) of each; × = ratio to sequential and to one
turn, measured in the same run. Writes ``benchmarks/fanout_results.json``.
Not a test: run it by hand.
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from loop_bench import fill  # noqa: E402

from durable_nb import ai, durable  # noqa: E402
from durable_nb.models import OfflineModel  # noqa: E402
from durable_nb.session import JsonlStore  # noqa: E402

TTFT_S = 0.25  # time to first token of a hosted model, give or take
PER_TOKEN_S = 0.005  # 200 tokens a second
ROUNDS = 7
WIDTH = 3


class Paced:
    """The offline model streamed at a provider's pace: TTFT, then PER_TOKEN_S per token of each chunk."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.inner = OfflineModel()

    def stream(self, messages, request=None):
        time.sleep(TTFT_S)
        for item in self.inner.stream(messages, request):
            if isinstance(item, str):
                time.sleep(PER_TOKEN_S * max(1, len(item) // 4))
            yield item


def sleeper(name: str) -> Callable[[list[ai.Message]], str]:
    """A callable model answering after TTFT plus the time its 60-token reply would stream."""

    def model(messages):
        time.sleep(TTFT_S + 60 * PER_TOKEN_S)
        return f"{name}: " + "word " * 60

    model.__name__ = name
    return model


KINDS: dict[str, Callable[[int], object]] = {
    "offline, paced": lambda i: Paced(f"paced{i}"),
    "callable, sleeping": lambda i: sleeper(f"sleeper{i}"),
    "offline, no latency": lambda i: "offline",
}


def sequential(agent: durable.Agent, models: list, fork: str) -> float:
    t0 = time.perf_counter()
    for m in models:
        agent.branch(fork)
        agent.model = m
        agent.run("Which of the three answers is best?").wait()
    return time.perf_counter() - t0


def fan(agent: durable.Agent, models: list, fork: str) -> float:
    agent.branch(fork)
    t0 = time.perf_counter()
    out = agent.fan_out("Which of the three answers is best?", variants=models)
    dt = time.perf_counter() - t0
    assert all(b.ok for b in out.branches), out.failed
    return dt


def one(agent: durable.Agent, models: list, fork: str) -> float:
    agent.branch(fork)
    agent.model = models[0]
    t0 = time.perf_counter()
    agent.run("Which of the three answers is best?").wait()
    return time.perf_counter() - t0


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = JsonlStore(Path(tmp))
        fill(store, "s", 6)  # three turns: the offline model's reply lists seven messages
        agent = durable.Agent(store=store, session_id="s")
        fork = agent.leaf_id
        times: dict[str, dict[str, list[float]]] = {k: {"sequential": [], "fan-out": [], "one turn": []} for k in KINDS}
        for _ in range(ROUNDS):
            for kind, make in KINDS.items():
                models = [make(i) for i in range(WIDTH)]
                times[kind]["sequential"].append(sequential(agent, models, fork))
                times[kind]["fan-out"].append(fan(agent, models, fork))
                times[kind]["one turn"].append(one(agent, models, fork))
        for kind, t in times.items():
            seq, fo, single = (statistics.median(t[k]) * 1000 for k in ("sequential", "fan-out", "one turn"))
            rows.append(
                {
                    "models": kind,
                    "sequential_ms": round(seq, 2),
                    "fanout_ms": round(fo, 2),
                    "one_turn_ms": round(single, 2),
                    "fanout_over_sequential": round(fo / seq, 3),
                    "fanout_over_one_turn": round(fo / single, 3),
                }
            )
        print(f"{len(agent.entries())} entries written in all")
    print(f"\nfan-out of {WIDTH} vs {WIDTH} sequential turns (median of {ROUNDS} rounds, ms)\n")
    print("| models | 3 sequential turns | fan-out of 3 | one turn | fan-out × sequential | fan-out × one turn |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['models']} | {r['sequential_ms']:,} | {r['fanout_ms']:,} | {r['one_turn_ms']:,} | "
            f"{r['fanout_over_sequential']:.2f} | {r['fanout_over_one_turn']:.2f} |"
        )
    out = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "ttft_s": TTFT_S,
        "per_token_s": PER_TOKEN_S,
        "rounds": ROUNDS,
        "width": WIDTH,
        "rows": rows,
    }
    (Path(__file__).parent / "fanout_results.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
