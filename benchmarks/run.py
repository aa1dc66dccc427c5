"""durable_nb benchmarks: reload, append and per-turn cost, side by side with peers.

Run by hand from the repository root (not part of the test suite)::

    python benchmarks/run.py                 # 1k / 10k / 100k entries
    python benchmarks/run.py --sizes 1000    # a quick look

Prints a table and writes ``benchmarks/results.json``. Every ratio is
against the floor measured in the same run on the same machine.

What is measured, for one conversation of N entries (alternating user and
assistant messages, the same text everywhere):

- reload: durable_nb ``JsonlStore.load_entries`` (entry objects), and the
  same log with a torn final line, which takes the general path; the floor,
  bare ``json.loads`` of each line of the same file; simonw/llm's logs.db
  written and read by llm's own ``LogStore`` (``append`` / ``thread_messages``,
  which runs llm's migrations first, as every llm reader does); the OpenAI
  Agents SDK's ``SQLiteSession`` (``add_items`` / ``get_items``), each on a
  fresh object so nothing is cached in Python; and the Agents SDK's store
  holding durable_nb's own entry dicts (same JSON, other storage engine);
- append: one turn's persistence (user entry, then reply entry: two appends,
  as the agent makes them) at that size, and the peers' equivalent;
- turn: a whole ``durable.Agent`` turn with the offline model at 10 / 1k / 10k
  entries (must be flat: no whole-log work per turn);
- peak memory (tracemalloc) of the largest reload, durable_nb and floor.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from durable_nb import ai, durable  # noqa: E402
from durable_nb.session import JsonlStore, MessageEntry, new_id  # noqa: E402

WORDS = (
    "the session store keeps every entry append only so a kernel restart resumes where it was and "
    "the model view differs from the transcript because injected context is hidden from readers"
).split()


def conversation(n: int) -> list[tuple[str, str]]:
    """Return ``n`` (role, text) pairs: user asks (~30 words), assistant answers (~120 words)."""
    rng = random.Random(n)
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        k = rng.randint(10, 50) if role == "user" else rng.randint(60, 180)
        out.append((role, " ".join(rng.choice(WORDS) for _ in range(k))))
    return out


def timed(fns: dict, repeat: int) -> tuple[dict[str, float], dict[str, object]]:
    """Time each function ``repeat`` times, interleaved (so machine load hits all alike).

    Returns ({name: best seconds}, {name: last result}). The best of several
    runs is the least disturbed by other processes (as ``timeit`` advises).
    """
    best = {k: float("inf") for k in fns}
    results: dict[str, object] = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            results.pop(name, None)
            gc.collect()
            t = time.perf_counter()
            results[name] = fn()
            best[name] = min(best[name], time.perf_counter() - t)
    return best, results


# -- durable_nb -------------------------------------------------------------------


def durable_entries(conv):
    entries, parent = [], ""
    for role, text in conv:
        extra = (
            {"model": "offline", "stop_reason": "end_turn", "usage": {"input": 120, "output": 80}}
            if role == "assistant"
            else {}
        )
        e = MessageEntry(
            id=new_id(),
            parent_id=parent,
            created_at="2026-11-30T04:00:00.000000Z",
            message=ai.Message(role, [ai.Text(text)], **extra),
        )
        entries.append(e)
        parent = e.id
    return entries


def write_durable(root: Path, conv) -> JsonlStore:
    store = JsonlStore(root)
    store.create_session("bench")
    entries = durable_entries(conv)
    for i in range(0, len(entries), 1000):
        store.append_entries("bench", entries[i : i + 1000])
    return store


def sessions(sizes: list[int], tmp: Path) -> dict[int, Path]:
    """Write each size's session once (``<tmp>/src<n>/bench.jsonl``); return size -> log file."""
    out = {}
    for n in sizes:
        t = time.perf_counter()
        out[n] = write_durable(tmp / f"src{n}", conversation(n)).file("bench")
        print(f"wrote {n:,} entries in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return out


def floor(f: Path):
    """The floor: read the file and ``json.loads`` each line (plain dicts, no entries)."""
    return [json.loads(line) for line in f.read_bytes().splitlines()]


def floor_gc_paused(f: Path):
    """The floor with the cyclic GC paused, as durable_nb's load does."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return floor(f)
    finally:
        if paused:
            gc.enable()


# -- peers ---------------------------------------------------------------------------


def write_llm(path: Path, conv) -> str:
    """Write the conversation with llm's own LogStore (slow: ~2.5 ms a message); cached by the caller."""
    import sqlite_utils
    from llm.logs import LogStore
    from llm.parts import Message, TextPart

    if path.exists():
        path.unlink()
    store = LogStore(sqlite_utils.Database(path))
    thread = store.create_thread(name="bench")
    msgs = [Message(role=role, parts=[TextPart(text=text)]) for role, text in conv]
    for i in range(0, len(msgs), 1000):
        with store.db.conn:
            store.append(thread, msgs[i : i + 1000])
    store.db.close()
    return thread


def load_llm(path: Path, thread: str):
    import sqlite_utils
    from llm.logs import LogStore

    db = sqlite_utils.Database(path)
    try:
        return LogStore(db).thread_messages(thread)
    finally:
        db.close()


def agents_items(conv):
    items = []
    for i, (role, text) in enumerate(conv):
        if role == "user":
            items.append({"role": "user", "content": text})
        else:
            items.append(
                {
                    "id": f"msg_{i:08d}",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            )
    return items


def write_agents(path: Path, conv, items=None) -> None:
    """Write the conversation as Agents SDK items (or write ``items`` as given)."""
    from agents import SQLiteSession

    s = SQLiteSession("bench", path)
    items = agents_items(conv) if items is None else items
    for i in range(0, len(items), 1000):
        asyncio.run(s.add_items(items[i : i + 1000]))
    s.close()


def load_agents(path: Path):
    from agents import SQLiteSession

    s = SQLiteSession("bench", path)
    try:
        return asyncio.run(s.get_items())
    finally:
        s.close()


# -- measurements ------------------------------------------------------------------------


def cached_llm(n: int, conv, cache: Path) -> tuple[Path, str]:
    """Return (logs.db, thread id) for the conversation, written once by llm and kept in ``cache``."""
    from importlib.metadata import version

    cache.mkdir(parents=True, exist_ok=True)
    tag = f"llm-{version('llm')}-{n}"
    db, meta = cache / f"{tag}.db", cache / f"{tag}.thread"
    if not (db.exists() and meta.exists()):
        print(f"writing {n:,} messages with llm's LogStore (once; cached in {cache})", file=sys.stderr)
        meta.write_text(write_llm(db, conv))
    return db, meta.read_text()


def reload_row(n: int, tmp: Path, repeat: int, peers: bool, cache: Path) -> dict:
    conv = conversation(n)
    d = tmp / f"d{n}"
    store = write_durable(d, conv)
    f = store.file("bench")
    row = {"entries": n, "file_mb": round(f.stat().st_size / 1e6, 2)}
    # The same log after a crash mid-write (a torn final line): it loads through the general path
    # (parse to dicts, then decode each), which is also what any lenient or legacy log takes.
    torn = tmp / f"torn{n}"
    torn.mkdir()
    (torn / f.name).write_bytes(f.read_bytes() + b'{"type":"message","id":"torn-')
    fns = {
        "floor": lambda: floor(f),
        "floor_gc_paused": lambda: floor_gc_paused(f),
        "durable_nb": lambda: JsonlStore(d).load_entries("bench"),
        "durable_nb_general": lambda: JsonlStore(torn).load_entries("bench"),
    }
    if peers:
        llm_db, thread = cached_llm(n, conv, cache)
        ag_db = tmp / f"agents{n}.db"
        write_agents(ag_db, conv)
        # The same store holding durable_nb's own entry dicts: storage engine against storage engine.
        same_db = tmp / f"agents-same{n}.db"
        write_agents(same_db, conv, [json.loads(line) for line in f.read_bytes().splitlines()[1:]])
        fns["llm"] = lambda: load_llm(llm_db, thread)
        fns["agents"] = lambda: load_agents(ag_db)
        fns["agents_same_json"] = lambda: load_agents(same_db)
    best, res = timed(fns, repeat)
    assert len(res["floor"]) == n + 1
    assert len(res["durable_nb"]) == n and res["durable_nb"][-1].message.text() == conv[-1][1]
    assert res["durable_nb_general"] == res["durable_nb"]
    if peers:
        assert len(res["llm"]) == n and res["llm"][-1].parts[0].text == conv[-1][1]
        assert len(res["agents"]) == n and res["agents"][-1]["content"][0]["text"] == conv[-1][1]
        assert res["agents_same_json"] == res["floor"][1:]
    for name, t in best.items():
        row[f"{name}_ms"] = t * 1e3
        row[f"{name}_x_floor"] = t / best["floor"]
    return row


def append_row(n: int, tmp: Path, turns: int, peers: bool, cache: Path) -> dict:
    """Median time to persist one turn (user entry, reply entry) into a session of ``n`` entries."""
    conv = conversation(n)
    store = write_durable(tmp / f"a{n}", conv)
    leaf = store.load_entries("bench")[-1].id
    pair = durable_entries(conversation(2))

    def persist_turns(st: JsonlStore, count: int) -> float:
        """Append ``count`` turns (user entry, then reply entry) at the leaf; return the median µs per turn."""
        nonlocal leaf
        times = []
        for _ in range(count):
            u = MessageEntry(id=new_id(), parent_id=leaf, created_at=pair[0].created_at, message=pair[0].message)
            a = MessageEntry(id=new_id(), parent_id=u.id, created_at=pair[1].created_at, message=pair[1].message)
            t = time.perf_counter()
            st.append_entries("bench", [u])
            st.append_entries("bench", [a])
            times.append(time.perf_counter() - t)
            leaf = a.id
        return statistics.median(times) * 1e6

    row = {"entries": n, "durable_nb_us": persist_turns(store, turns)}
    row["durable_nb_fsync_us"] = persist_turns(JsonlStore(store.root, fsync=True), max(20, turns // 5))
    if peers:
        import sqlite_utils
        from agents import SQLiteSession
        from llm.logs import LogStore
        from llm.parts import Message, TextPart

        cached, thread = cached_llm(n, conv, cache)
        llm_db = tmp / f"llm-a{n}.db"
        shutil.copyfile(cached, llm_db)  # appends change it; the cached copy stays as written
        ls = LogStore(sqlite_utils.Database(llm_db))
        times = []
        for i in range(turns):
            t = time.perf_counter()
            ls.append(thread, [Message("user", [TextPart(f"{i} {pair[0].message.text()}")])])
            ls.append(thread, [Message("assistant", [TextPart(f"{i} {pair[1].message.text()}")])])
            times.append(time.perf_counter() - t)
        ls.db.close()
        row["llm_us"] = statistics.median(times) * 1e6
        ag_db = tmp / f"agents-a{n}.db"
        write_agents(ag_db, conv)
        s = SQLiteSession("bench", ag_db)
        items = agents_items(conversation(2))

        async def go():
            out = []
            for _ in range(turns):
                t = time.perf_counter()
                await s.add_items([items[0]])
                await s.add_items([items[1]])
                out.append(time.perf_counter() - t)
            return out

        row["agents_us"] = statistics.median(asyncio.run(go())) * 1e6
        s.close()
    return row


def turn_row(n: int, tmp: Path, turns: int) -> dict:
    """Median wall time of one durable.Agent turn (offline model, JsonlStore) at ``n`` entries."""
    store = write_durable(tmp / f"t{n}", conversation(n))
    agent = durable.Agent(store=store, session_id="bench")
    times = []
    for i in range(turns):
        t = time.perf_counter()
        agent.run(f"turn {i}").wait()
        times.append(time.perf_counter() - t)
    return {"entries": n, "turn_us": statistics.median(times) * 1e6}


def _execute(kc, code: str, cell_id: str) -> float:
    """Run one cell in a real kernel as JupyterLab sends it (``cellId`` in the request metadata).

    Returns seconds from sending the execute request to its reply.
    """
    from queue import Empty

    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    msg = kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
    t = time.perf_counter()
    kc.shell_channel.send(msg)
    while True:
        reply = kc.get_shell_msg(timeout=120)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            break
    elapsed = time.perf_counter() - t
    assert reply["content"]["status"] == "ok", reply["content"]
    while True:  # drain outputs (not timed)
        try:
            kc.get_iopub_msg(timeout=0.001)
        except Empty:
            break
    return elapsed


def cell_row(n: int, tmp: Path, cells: int, source: Path | None = None) -> dict:
    """Median time of a ``%%durable`` cell (offline model) in a real kernel, at ``n`` entries.

    Each cell has a new cell id (a new cell at the leaf, the common case).
    The baseline is an empty cell (``pass``) in the same kernel; no widget is
    displayed. ``rerun_cell_ms``: the last cell run again with new text (the
    cell-as-position rule rewinds to before its turn first). ``source``: a session log of ``n`` entries written before
    (copied as session ``bench``) instead of writing one now.
    """
    from jupyter_client.manager import KernelManager

    d = tmp / f"nb{n}"
    if source is None:
        write_durable(d / ".durable", conversation(n))
    else:
        (d / ".durable").mkdir(parents=True)
        shutil.copyfile(source, d / ".durable" / "bench.jsonl")
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(d), env={**os.environ, "PYTHONPATH": str(HERE.parent)})
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        _execute(kc, "%load_ext durable_nb\n%config DurableMagics.session = 'bench'", "setup")
        _execute(kc, "%%durable\nwarm up", "warm")
        empty = [_execute(kc, "pass", f"p{i}") for i in range(cells)]
        turn = [_execute(kc, f"%%durable\nturn {i}", f"c{i}") for i in range(cells)]
        # the last cell again, edited each time: it rewinds to before its turn and grows a sibling there
        rerun = [_execute(kc, f"%%durable\nturn {cells - 1}, edit {i}", f"c{cells - 1}") for i in range(cells)]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    e, t, r = statistics.median(empty), statistics.median(turn), statistics.median(rerun)
    return {
        "entries": n,
        "empty_cell_ms": e * 1e3,
        "durable_cell_ms": t * 1e3,
        "overhead_ms": (t - e) * 1e3,
        "rerun_cell_ms": r * 1e3,
    }


def memory_row(n: int, tmp: Path) -> dict:
    store = write_durable(tmp / f"m{n}", conversation(n))
    f = store.file("bench")
    out = {"entries": n}
    for name, fn in (("floor", lambda: floor(f)), ("durable_nb", lambda: JsonlStore(f.parent).load_entries("bench"))):
        gc.collect()
        tracemalloc.start()
        result = fn()
        out[f"{name}_peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        del result
    return out


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    from importlib.metadata import PackageNotFoundError, version

    for dist in ("llm", "openai-agents"):
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:  # a missing peer is reported, not fatal
            versions[dist] = None
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "commit": subprocess.run(
            ["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        **versions,
    }


def fmt(x, unit=""):
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:,.2f}{unit}" if x < 100 else f"{x:,.0f}{unit}"
    return f"{x:,}{unit}"


def table(results: dict) -> str:
    lines = [
        "Reload a session (best of N, ms; × = ratio to the floor measured in the same run)",
        "",
        "| entries | file MB | floor: json.loads per line | floor, GC paused | durable_nb JsonlStore | × floor "
        "| × floor GC paused | durable_nb, torn tail (general path) | × floor | llm LogStore | × floor "
        "| Agents SDK SQLiteSession | × floor | Agents SDK, durable_nb's entry dicts | × floor |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results["reload"]:
        lines.append(
            f"| {r['entries']:,} | {r['file_mb']} | {fmt(r['floor_ms'])} | {fmt(r['floor_gc_paused_ms'])} "
            f"| {fmt(r['durable_nb_ms'])} | {fmt(r['durable_nb_x_floor'])} "
            f"| {fmt(r['durable_nb_ms'] / r['floor_gc_paused_ms'])} | {fmt(r['durable_nb_general_ms'])} "
            f"| {fmt(r['durable_nb_general_x_floor'])} | {fmt(r.get('llm_ms'))} "
            f"| {fmt(r.get('llm_x_floor'))} | {fmt(r.get('agents_ms'))} | {fmt(r.get('agents_x_floor'))} "
            f"| {fmt(r.get('agents_same_json_ms'))} | {fmt(r.get('agents_same_json_x_floor'))} |"
        )
    lines += [
        "",
        "Persist one turn: user entry + reply entry, two appends (median µs)",
        "",
        "| entries | durable_nb JsonlStore | durable_nb, fsync=True | llm LogStore | Agents SDK SQLiteSession |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in results["append"]:
        lines.append(
            f"| {r['entries']:,} | {fmt(r['durable_nb_us'])} | {fmt(r['durable_nb_fsync_us'])} "
            f"| {fmt(r.get('llm_us'))} | {fmt(r.get('agents_us'))} |"
        )
    lines += [
        "",
        "One turn, offline model (median): durable.Agent.run on a JsonlStore, and a %%durable cell in a real "
        "kernel (overhead = cell − empty cell)",
        "",
        "| entries | agent turn µs | %%durable cell ms | empty cell ms | cell overhead ms |",
        "|---:|---:|---:|---:|---:|",
    ]
    cells = {r["entries"]: r for r in results.get("cell", [])}
    for r in results["turn"]:
        c = cells.get(r["entries"], {})
        lines.append(
            f"| {r['entries']:,} | {fmt(r['turn_us'])} | {fmt(c.get('durable_cell_ms'))} "
            f"| {fmt(c.get('empty_cell_ms'))} | {fmt(c.get('overhead_ms'))} |"
        )
    m = results["memory"]
    lines += [
        "",
        f"Peak memory loading {m['entries']:,} entries (tracemalloc): durable_nb "
        f"{fmt(m['durable_nb_peak_mb'])} MB, floor {fmt(m['floor_peak_mb'])} MB",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000", help="reload sizes (entries), comma-separated")
    ap.add_argument("--turn-sizes", default="10,1000,10000", help="session sizes for append and turn timing")
    ap.add_argument("--repeat", type=int, default=5, help="reload repetitions (the best is reported)")
    ap.add_argument("--turns", type=int, default=200, help="agent turns and appends timed per size (median)")
    ap.add_argument("--cells", type=int, default=30, help="%%%%durable cells timed per size (median)")
    ap.add_argument("--cache", default=str(HERE / ".cache"), help="where llm's slow-to-write logs.db files are kept")
    ap.add_argument("--no-peers", action="store_true", help="skip llm and the Agents SDK")
    ap.add_argument("--out", default=str(HERE / "results.json"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    turn_sizes = [int(s) for s in args.turn_sizes.split(",")]
    peers = not args.no_peers
    results = {"machine": machine(), "reload": [], "append": [], "turn": [], "cell": []}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for n in sizes:
            results["reload"].append(reload_row(n, tmp, args.repeat, peers, Path(args.cache)))
            print(results["reload"][-1], file=sys.stderr)
        for n in turn_sizes:
            results["append"].append(append_row(n, tmp, args.turns, peers, Path(args.cache)))
            results["turn"].append(turn_row(n, tmp, args.turns))
            results["cell"].append(cell_row(n, tmp, args.cells))
            print(results["append"][-1], results["turn"][-1], results["cell"][-1], file=sys.stderr)
        results["memory"] = memory_row(max(sizes), tmp)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    m = results["machine"]
    print(f"{m['nproc']} × {m['cpu']}, Python {m['python']}, {m['platform']}, commit {m['commit']}")
    print(table(results))


if __name__ == "__main__":
    main()
