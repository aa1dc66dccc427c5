"""The agent loop's overhead per step, from 100 to 100,000 entries, against a floor measured in the same run.

``python benchmarks/loop_bench.py`` (about a minute). A step is one model
call and one tool call: an in-process model that answers with a tool call
at once (reading only the last message), a tool that returns at once, and
the two entries the loop persists (the assistant message and the tool
result) in a ``JsonlStore``. The **floor** is those two appends alone, made
directly on the same store and session: what any durable loop must pay per
step. Each size is a session of N stored entries (user / assistant
alternating), reopened by a fresh ``durable.Agent``; each run takes
``STEPS`` steps; the figure is the median over ``RUNS`` runs of (run time /
steps), runs interleaved across the sizes. It prints a table and writes ``benchmarks/loop_results.json``.
Not a test: run it by hand.
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

from durable_nb import ai, durable  # noqa: E402
from durable_nb.session import JsonlStore, MessageEntry, new_id, now  # noqa: E402

SIZES = (100, 1_000, 10_000, 100_000)
STEPS = 50
RUNS = 9


def fill(store: JsonlStore, sid: str, n: int) -> None:
    """Write a session of ``n`` entries (alternating user and assistant messages, one chain)."""
    store.create_session(sid)
    entries, parent = [], ""
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"message {i}: " + "lorem ipsum dolor sit amet " * (4 if role == "user" else 16)
        e = MessageEntry(id=new_id(), parent_id=parent, created_at=now(), message=ai.Message(role, [ai.Text(text)]))
        entries.append(e)
        parent = e.id
    for k in range(0, n, 10_000):
        store.append_entries(sid, entries[k : k + 10_000])


class StepModel:
    """Answers with one tool call until ``steps`` calls, then with text; reads only the last message."""

    name = "bench"

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.calls = 0

    def stream(self, messages, request=None):
        self.calls += 1
        last = messages[-1]
        if self.calls < self.steps:
            yield ai.Message("assistant", [ai.ToolCall(f"call_{self.calls}", "tick", {"n": self.calls})])
        else:
            yield ai.Message("assistant", [ai.Text(f"done after {last.role}")])


def tick(n: int) -> int:
    """Return n + 1."""
    return n + 1


def loop_step_us(agent: durable.Agent) -> float:
    """Return the time per step (µs) of one run of STEPS steps on ``agent``."""
    agent.model = StepModel(STEPS)
    t0 = time.perf_counter()
    out = agent.run("go", tools=[tick]).wait()
    dt = time.perf_counter() - t0
    assert len(out) == 2 * STEPS - 1, len(out)  # STEPS replies, STEPS - 1 tool results
    return dt / STEPS * 1e6


def floor_step_us(store: JsonlStore, sid: str, leaf: str) -> float:
    """Return the median time (µs) of the two appends one step persists, made directly on session ``sid``
    (STEPS samples)."""
    samples = []
    parent = leaf
    for _ in range(STEPS):
        call = MessageEntry(
            id=new_id(),
            parent_id=parent,
            created_at=now(),
            message=ai.Message("assistant", [ai.ToolCall("call_1", "tick", {"n": 1})]),
        )
        result = MessageEntry(
            id=new_id(),
            parent_id=call.id,
            created_at=now(),
            message=ai.Message("tool_result", [ai.Text("2")], tool_call_id="call_1", tool_name="tick"),
        )
        t0 = time.perf_counter()
        store.append_entries(sid, [call])
        store.append_entries(sid, [result])
        samples.append((time.perf_counter() - t0) * 1e6)
        parent = result.id
    return statistics.median(samples)


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sessions = []
        for n in SIZES:
            store = JsonlStore(Path(tmp) / f"s{n}")
            fill(store, "s", n)
            agent = durable.Agent(store=JsonlStore(Path(tmp) / f"s{n}"), session_id="s")
            assert len(agent.entries()) == n
            agent.max_steps = STEPS
            agent.run("warm up", tools=[tick]).wait()  # builds the tool's schema and the cached view once
            sessions.append((n, store, agent, [], []))
        for _ in range(RUNS):  # interleaved, so a busy moment of the machine hits every size alike
            for _n, store, agent, loops, floors in sessions:
                loops.append(loop_step_us(agent))
                floors.append(floor_step_us(store, "s", agent.leaf_id))  # the same file
        for n, _, _, loops, floors in sessions:
            loop, floor = statistics.median(loops), statistics.median(floors)
            rows.append({"entries": n, "loop_step_us": round(loop, 1), "floor_us": round(floor, 1)})
            print(f"{n:>7} entries: loop {loop:8.1f} µs/step, floor {floor:6.1f} µs, × floor {loop / floor:5.2f}")
    print()
    print("| entries | loop µs per step | floor µs (two appends) | × floor |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['entries']:,} | {r['loop_step_us']:,} | {r['floor_us']:,} | {r['loop_step_us'] / r['floor_us']:.2f} |"
        )
    out = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "steps_per_run": STEPS,
        "runs": RUNS,
        "rows": rows,
    }
    (Path(__file__).parent / "loop_results.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
