"""Frame benchmark: ``durable_nb.frame`` of one big session against reloading it, in the same run.

    python benchmarks/frame_bench.py [--sizes 100000 1000000] [--rounds 3] [--out benchmarks/frame_bench.json]

For each size it writes one session of N entries to a JSONL store (turns of a user message, an
assistant reply calling a tool with usage and a priced model, the tool's result, an assistant
answer; a label every 1,000 entries, an annotation every 500) and times, best of ``--rounds``:

- **reload** (the floor): ``store.load_entries(session)``, what any reader of the session pays;
- **frame**: ``durable_nb.frame(store)``: the same load, then the columns and the DataFrame;
- **frame, built** (frame minus reload): what the columns and pandas add.

The ratio frame / reload is what issue 29 bounds (at most ~3x). Not a test: the figures depend on
the machine; the ratio is what to compare.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import durable_nb  # noqa: E402
from durable_nb import ai, session  # noqa: E402
from durable_nb.kinds.annotation import AnnotationEntry  # noqa: E402
from durable_nb.session.labels import label_entry  # noqa: E402


def entries(n: int) -> list[session.Entry]:
    out: list[session.Entry] = []
    parent = ""
    usage = {"input_tokens": 1200, "output_tokens": 80}
    while len(out) < n:
        i = len(out)
        turn = [
            ai.Message(role="user", content=[ai.Text(f"question {i}: how many files are in the folder?")]),
            ai.Message(
                role="assistant",
                content=[ai.Text("let me look"), ai.ToolCall(id=f"c{i}", name="ls", arguments={"path": "."})],
                model="gpt-4o-mini",
                usage=usage,
            ),  # fmt: skip
            ai.Message(role="tool_result", content=[ai.Text("a.py\nb.py")], tool_call_id=f"c{i}", tool_name="ls"),
            ai.Message(
                role="assistant", content=[ai.Text(f"there are {i % 7} files")], model="gpt-4o-mini", usage=usage
            ),
        ]
        for m in turn:
            e = session.MessageEntry(id=session.new_id(), parent_id=parent, created_at=session.now(), message=m)
            out.append(e)
            parent = e.id
        if len(out) % 1000 < 4:
            out.append(label_entry(f"l{len(out)}", parent))
            out[-1].id, out[-1].parent_id, out[-1].created_at = session.new_id(), parent, session.now()
            parent = out[-1].id
        if len(out) % 500 < 4:
            out.append(AnnotationEntry(id=session.new_id(), parent_id=parent, created_at=session.now(),
                                       target_id=parent, note="look", score=1.0, by="bench"))  # fmt: skip
    return out[:n]


def best(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "frame_bench.json")
    args = ap.parse_args()
    results = []
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as d:
            store = session.JsonlStore(Path(d))
            store.create_session("big", entries=entries(n))
            reload = best(lambda: store.load_entries("big"), args.rounds)
            frame = best(lambda: durable_nb.frame(store), args.rounds)
            rows = len(durable_nb.frame(store))
        row = {"entries": n, "rows": rows, "reload_s": round(reload, 3), "frame_s": round(frame, 3),
               "built_s": round(frame - reload, 3), "ratio": round(frame / reload, 2)}  # fmt: skip
        results.append(row)
        print(f"{n:>9,} entries: reload {reload:.2f} s, frame {frame:.2f} s ({frame / reload:.2f}x the reload)")
    meta = {"python": platform.python_version(), "machine": platform.machine(), "rounds": args.rounds}
    args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
