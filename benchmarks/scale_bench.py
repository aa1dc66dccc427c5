"""Issue #18: a turn costs what it adds, from 10 to 300,000 entries, against floors measured in the same run.

Run by hand from the repository root (not a test)::

    python benchmarks/scale_bench.py                       # 10 / 100 / 10k / 100k / 300k, about 5 minutes
    python benchmarks/scale_bench.py --sizes 10,100,10000  # a quick look
    python benchmarks/scale_bench.py --only fsync          # one part: reload, turn, cell or fsync

Prints the tables and writes ``benchmarks/scale_results.json``. The sessions
(``run.py``'s conversation: alternating user and assistant messages, ~30 and
~120 words) are written once into a temporary folder and copied for each
part. What is measured, per size:

- **reload**: ``JsonlStore.load_entries`` (best of N) against two floors: a
  bare ``json.loads`` of each line (plain dicts), and the msgspec limit (one
  ``msgspec`` ``decode_lines`` of the same bytes straight into the entry
  types, nothing checked); **legacy-meta check**: the one scan
  (:func:`~durable_nb.session.jsonlstore.may_carry_legacy_meta`) and, for
  comparison, the two counts it replaced, as a share of the reload; the
  count of lines, the reload's other scan, is shown beside it;
- **turn in process**: ``agent.run(text).wait()`` with a trivial callable
  model on a ``JsonlStore`` (median of ``--turns`` turns per round,
  ``--rounds`` rounds interleaved across the sizes, the median of the
  rounds), against the 100-entry turn, an empty session's turn, and the
  bare append (the turn's two entries appended directly to the same file);
  and a retry (the leaf moved back before the turn just run, and a turn
  there: what an edited or re-run cell does);
- **%%durable cell in a real kernel**, no widget shown: ``run.py``'s
  ``cell_row`` (a new cell id each time; median), against the 100-entry cell
  and an empty cell (``pass``) in the same kernel; and the last cell run
  again with new text (the cell rewinds to before its turn, then runs);
- **two writers with fsync**: two processes appending one entry at a time to
  one session with ``JsonlStore(fsync=True)``, total appends per second,
  against one writer alone on the same file.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Union

import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from run import cell_row, conversation, durable_entries, floor, machine, sessions, timed  # noqa: E402

from durable_nb import ai, durable  # noqa: E402
from durable_nb.session import CompactionEntry, CustomEntry, JsonlStore, MessageEntry, new_id, now  # noqa: E402

REFERENCE = 100
_entries = msgspec.json.Decoder(Union[MessageEntry, CompactionEntry, CustomEntry]).decode_lines


def copy_of(log: Path, dest: Path) -> JsonlStore:
    """Return a JsonlStore in ``dest`` holding a copy of ``log`` (so each part starts from the same bytes)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(log, dest / log.name)
    return JsonlStore(dest)


# -- reload and the legacy-meta check --------------------------------------------------------------


def msgspec_limit(f: Path):
    """The msgspec limit: read the file and decode its entry lines straight into the entry types."""
    data = f.read_bytes()
    return _entries(memoryview(data)[data.index(b"\n") + 1 :])


def reload_row(n: int, log: Path, repeat: int) -> dict:
    from durable_nb.session.jsonlstore import may_carry_legacy_meta

    fns = {
        "json_loads": lambda: floor(log),
        "msgspec": lambda: msgspec_limit(log),
        "reload": lambda: JsonlStore(log.parent).load_entries("bench"),
    }
    best, res = timed(fns, repeat)
    assert len(res["reload"]) == n == len(res["msgspec"]) and res["reload"] == res["msgspec"]
    data = log.read_bytes()
    scans = {
        "legacy_check": lambda: may_carry_legacy_meta(data),
        "legacy_two_counts": lambda: data.count(b'"meta"') != data.count(b'"injected":"meta"'),
        "line_count": lambda: data.count(b"\n"),
    }
    sbest, sres = timed(scans, max(repeat, 5))
    assert sres["legacy_check"] is False and sres["legacy_two_counts"] is False
    row = {"entries": n, "file_mb": round(len(data) / 1e6, 2)}
    row.update({f"{k}_ms": v * 1e3 for k, v in {**best, **sbest}.items()})
    row["x_json_loads"] = best["reload"] / best["json_loads"]
    row["x_msgspec"] = best["reload"] / best["msgspec"]
    for k in scans:
        row[f"{k}_share"] = sbest[k] / best["reload"]
    return row


# -- a turn in process --------------------------------------------------------------------------------


def trivial(messages) -> str:
    """The trivial callable model: answers at once, reads nothing."""
    return "ok"


def turns_us(agent: durable.Agent, k: int) -> float:
    """Return the median µs of ``k`` turns on ``agent``."""
    times = []
    for i in range(k):
        t = time.perf_counter()
        agent.run(f"turn {i}").wait()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def retries_us(agent: durable.Agent, k: int) -> float:
    """Return the median µs of ``k`` retries: the leaf moved back before the last turn, and a turn there."""
    times = []
    for i in range(k):
        before = agent.leaf_id
        agent.run(f"turn {i}").wait()
        t = time.perf_counter()
        agent.branch(before)
        agent.run(f"turn {i}, again").wait()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def bare_append_us(store: JsonlStore, leaf: str, k: int) -> tuple[float, str]:
    """Return the median µs of a turn's two appends (user entry, then reply) made directly on the store, and the new leaf."""
    pair = durable_entries(conversation(2))
    times = []
    for _ in range(k):
        u = MessageEntry(id=new_id(), parent_id=leaf, created_at=now(), message=ai.user_message("turn"))
        a = MessageEntry(id=new_id(), parent_id=u.id, created_at=now(), message=pair[1].message)
        t = time.perf_counter()
        store.append_entries("bench", [u])
        store.append_entries("bench", [a])
        times.append(time.perf_counter() - t)
        leaf = a.id
    return statistics.median(times) * 1e6, leaf


def turn_rows(logs: dict[int, Path], tmp: Path, turns: int, rounds: int) -> list[dict]:
    agents = {}
    for n, log in [(0, None), *logs.items()]:
        d = tmp / f"turn{n}"
        store = copy_of(log, d) if log is not None else JsonlStore(d)
        agent = durable.Agent(model=trivial, store=store, session_id="bench")
        assert len(agent.entries()) == n
        agent.run("warm up").wait()  # the cached view is built once, on the first run after loading
        agents[n] = (agent, JsonlStore(d), [], [], [])
    for _ in range(rounds):  # interleaved, so a busy moment of the machine hits every size alike
        for agent, store, turn, append, retry in agents.values():
            turn.append(turns_us(agent, turns))
            retry.append(retries_us(agent, turns))
            append.append(bare_append_us(store, agent.leaf_id, turns)[0])  # a sibling branch the agent never reads
    rows = [
        {
            "entries": n,
            "turn_us": statistics.median(t),
            "append_us": statistics.median(a),
            "retry_us": statistics.median(r),
        }
        for n, (_, _, t, a, r) in agents.items()
    ]
    ref_row = next(r for r in rows if r["entries"] == REFERENCE)
    ref = ref_row["turn_us"]
    empty = rows[0]["turn_us"]
    for r in rows:
        r["retry_x_reference"] = r["retry_us"] / ref_row["retry_us"]
        r["x_reference"] = r["turn_us"] / ref
        r["x_empty"] = r["turn_us"] / empty
        r["x_append"] = r["turn_us"] / r["append_us"]
    return rows


# -- a %%durable cell in a real kernel ------------------------------------------------------------------


def cell_rows(logs: dict[int, Path], tmp: Path, cells: int) -> list[dict]:
    rows = []
    for n, log in logs.items():
        rows.append(cell_row(n, tmp / f"cell{n}", cells, source=log))
        print(rows[-1], file=sys.stderr)
    ref = next(r for r in rows if r["entries"] == REFERENCE)
    for r in rows:
        r["x_reference"] = r["durable_cell_ms"] / ref["durable_cell_ms"]
        r["x_empty_cell"] = r["durable_cell_ms"] / r["empty_cell_ms"]
        r["overhead_x_reference"] = r["overhead_ms"] / ref["overhead_ms"]
        r["rerun_x_reference"] = r["rerun_cell_ms"] / ref["rerun_cell_ms"]
    return rows


# -- two writers with fsync ---------------------------------------------------------------------------


def _writer(root: str, tag: str, k: int, go, done) -> None:
    store = JsonlStore(root, fsync=True)
    go.wait()
    t = time.perf_counter()
    for _ in range(k):
        store.append_entries(
            "w", [MessageEntry(id=new_id(), parent_id="", created_at=now(), message=ai.user_message(tag))]
        )
    done.put(time.perf_counter() - t)


def writers(root: Path, count: int, k: int) -> float:
    """Return the appends per second of ``count`` processes appending ``k`` entries each (fsync=True) to one session."""
    ctx = multiprocessing.get_context("fork")
    go, done = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(root), f"{count}{c}-", k, go, done)) for c in range(count)]
    for p in procs:
        p.start()
    time.sleep(0.2)
    t = time.perf_counter()
    go.set()
    for p in procs:
        p.join()
    wall = time.perf_counter() - t
    assert all(p.exitcode == 0 for p in procs)
    return count * k / wall


def fsync_row(tmp: Path, appends: int, rounds: int) -> dict:
    root = tmp / "fsync"
    JsonlStore(root).create_session("w")
    one, two = [], []
    for _ in range(rounds):
        one.append(writers(root, 1, appends))
        two.append(writers(root, 2, appends))
    total = len(JsonlStore(root).load_entries("w"))
    assert total == rounds * 3 * appends, total
    o, t = statistics.median(one), statistics.median(two)
    return {"appends_per_writer": appends, "one_writer_per_s": o, "two_writers_per_s": t, "x_one_writer": t / o}


# -- output ---------------------------------------------------------------------------------------------


def fmt(x: float) -> str:
    return f"{x:,.2f}" if abs(x) < 100 else f"{x:,.0f}"


def table(res: dict) -> str:
    out = []
    if res.get("reload"):
        out += [
            "Reload (best of N, ms) and the legacy-meta check (share of the reload)",
            "",
            "| entries | MB | json.loads | msgspec limit | reload | × json.loads | × msgspec "
            "| legacy check (one scan) | share | the two counts it replaced | share | line count | share |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in res["reload"]:
            out.append(
                f"| {r['entries']:,} | {r['file_mb']} | {fmt(r['json_loads_ms'])} | {fmt(r['msgspec_ms'])} "
                f"| {fmt(r['reload_ms'])} | {r['x_json_loads']:.2f} | {r['x_msgspec']:.2f} "
                f"| {fmt(r['legacy_check_ms'])} | {r['legacy_check_share']:.1%} | {fmt(r['legacy_two_counts_ms'])} "
                f"| {r['legacy_two_counts_share']:.1%} | {fmt(r['line_count_ms'])} | {r['line_count_share']:.1%} |"
            )
        out.append("")
    if res.get("turn"):
        out += [
            "A turn in process: agent.run(text).wait(), trivial callable model, JsonlStore (median µs)",
            "",
            f"| entries | turn µs | × {REFERENCE}-entry turn | × empty session | bare append µs | × bare append "
            f"| retry µs (branch back + turn) | × {REFERENCE}-entry retry |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in res["turn"]:
            out.append(
                f"| {r['entries']:,} | {fmt(r['turn_us'])} | {r['x_reference']:.2f} | {r['x_empty']:.2f} "
                f"| {fmt(r['append_us'])} | {r['x_append']:.2f} | {fmt(r['retry_us'])} | {r['retry_x_reference']:.2f} |"
            )
        out.append("")
    if res.get("cell"):
        out += [
            "A %%durable cell in a real kernel, offline model, no widget shown (median ms)",
            "",
            f"| entries | cell ms | × {REFERENCE}-entry cell | empty cell ms | overhead ms "
            f"| overhead × {REFERENCE} entries | re-run cell ms (rewind + turn) | × {REFERENCE}-entry re-run |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in res["cell"]:
            out.append(
                f"| {r['entries']:,} | {fmt(r['durable_cell_ms'])} | {r['x_reference']:.2f} | {fmt(r['empty_cell_ms'])} "
                f"| {fmt(r['overhead_ms'])} | {r['overhead_x_reference']:.2f} | {fmt(r['rerun_cell_ms'])} "
                f"| {r['rerun_x_reference']:.2f} |"
            )
        out.append("")
    if res.get("fsync"):
        r = res["fsync"]
        out.append(
            f"Two writers with fsync=True: {fmt(r['two_writers_per_s'])} appends/s together, one writer alone "
            f"{fmt(r['one_writer_per_s'])} appends/s: × {r['x_one_writer']:.2f} ({r['appends_per_writer']} appends "
            "per writer, median of the rounds)"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,10000,100000,300000", help="session sizes (entries); must include 100")
    ap.add_argument("--only", choices=["reload", "turn", "cell", "fsync"], action="append", help="run only these parts")
    ap.add_argument("--repeat", type=int, default=3, help="reload repetitions (the best is reported)")
    ap.add_argument("--turns", type=int, default=20, help="turns per round per size (median)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of turns, interleaved across the sizes")
    ap.add_argument("--cells", type=int, default=15, help="%%%%durable cells per size in the kernel (median)")
    ap.add_argument("--appends", type=int, default=200, help="fsync appends per writer")
    ap.add_argument("--out", default=str(HERE / "scale_results.json"))
    args = ap.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")} | {REFERENCE})
    parts = args.only or ["reload", "turn", "cell", "fsync"]
    res: dict = {"machine": machine(), "sizes": sizes}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        logs = sessions(sizes, tmp) if set(parts) - {"fsync"} else {}
        if "reload" in parts:
            res["reload"] = []
            for n in sizes:
                res["reload"].append(reload_row(n, logs[n], args.repeat))
                print(res["reload"][-1], file=sys.stderr)
                gc.collect()
        if "turn" in parts:
            res["turn"] = turn_rows(logs, tmp, args.turns, args.rounds)
        if "cell" in parts:
            res["cell"] = cell_rows(logs, tmp, args.cells)
        if "fsync" in parts:
            res["fsync"] = fsync_row(tmp, args.appends, args.rounds)
    Path(args.out).write_text(json.dumps(res, indent=2) + "\n")
    m = res["machine"]
    print(f"{m['nproc']} × {m['cpu']}, Python {m['python']}, {m['platform']}, commit {m['commit']}")
    print(table(res))


if __name__ == "__main__":
    main()
