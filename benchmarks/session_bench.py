"""The session layer against its floors: memory, gc, reload, appends (issue 32, items 2, 5, 7).

Run by hand from the repository root (not part of the test suite)::

    python benchmarks/session_bench.py                       # 100k / 300k / 1M entries
    python benchmarks/session_bench.py --sizes 10000 --parts reload append

Writes ``benchmarks/session_results.json`` and prints the tables. Every ratio
is against a floor measured in the same run, interleaved (best of
``--repeat``); the load average is recorded before and after.

- **memory**: a fresh child process per size opens ``durable.Agent`` on a
  JSONL log of N entries (``run.py``'s conversation): resident memory added
  per entry, tracked objects left to the cyclic GC, and ``gc.collect()``
  (best of 3, wall and CPU time) with the session loaded; then what the
  first read adds (``agent.system``: the active path and its model view)
  and the collector's CPU time after it.
- **reload**: three logs of N entries: *plain* (``run.py``'s conversation),
  *custom* (every other entry a registered custom kind with top-level
  fields) and *unknown* (every entry and message carrying a field no type
  declares). ``JsonlStore.load_entries`` and ``durable.Agent`` open against
  the **msgspec typed limit**: reading the file and one
  ``msgspec.json.Decoder(...).decode_lines`` of its lines into structs that
  declare every field, the collector paused (for *unknown*: the unknown
  fields ignored, which is less work than keeping them). Times are CPU
  time (``time.process_time``), best of ``--repeat``: on a shared machine
  wall time moves 2-3x between runs, CPU time much less. SQLite:
  ``SqliteStore.load_entries`` against a bare ``SELECT id, body`` of the same
  rows from the same file (the floor is re-measured here in the same run), in
  CPU time and in wall time (the reload joins on a second thread), then single
  appends to that session against the same row's BEGIN/INSERT/COMMIT.
- **pg** (``--parts pg``): ``PostgresStore.load_entries`` against the bare
  select of the same rows (the store's query, one open connection, read on
  the store's plan: the index's order, sorts off), wall time (the work is in
  the server), on a PostgreSQL the script starts (``tests/pg_server.py``,
  fsync on); ``floor_sorted_ms`` is the same select on the planner's own
  choice (a sort of the whole session, spilled to disk, before 2026-12-07).
- **append**: a single-entry ``append_entries`` (median µs) against the raw
  ``O_APPEND`` write of the same bytes, and batches of 1,000 per entry; a copy of
  1,000 entries into a fresh JSONL and SQLite store, and the first search there
  (the SQLite store indexes at the first search what appends stored), CPU µs an entry.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Union

import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from run import conversation, durable_entries  # noqa: E402

from durable_nb import durable  # noqa: E402
from durable_nb.session import CustomEntry, JsonlStore, MessageEntry, register_custom  # noqa: E402
from durable_nb.session.entry import CompactionEntry  # noqa: E402


class Note(CustomEntry):
    body: str = ""
    tags: list[str] = []


register_custom("bench_note", Note)


class _FloorNote(msgspec.Struct, tag="custom", tag_field="type", gc=False):
    id: str = ""
    parent_id: str = ""
    created_at: str = ""
    kind: str = ""
    body: str = ""
    tags: list[str] = []


class _FloorMessage(msgspec.Struct, gc=False):
    role: str
    content: list[dict] = []
    model: str | None = None
    stop_reason: str | None = None
    usage: dict | None = None


class _FloorEntry(msgspec.Struct, tag="message", tag_field="type", gc=False):
    id: str = ""
    parent_id: str = ""
    created_at: str = ""
    message: _FloorMessage | None = None


LIMIT = msgspec.json.Decoder(Union[MessageEntry, CompactionEntry, CustomEntry])
LIMIT_CUSTOM = msgspec.json.Decoder(Union[MessageEntry, CompactionEntry, _FloorNote])
LIMIT_UNKNOWN = msgspec.json.Decoder(Union[_FloorEntry, _FloorNote])  # ignores unknown fields


def load_avg() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def write_logs(n: int, tmp: Path, kinds: list[str]) -> dict[str, Path]:
    """Write the logs of ``n`` entries of each of ``kinds`` (plain, custom, unknown); return kind -> store root."""
    entries = durable_entries(conversation(n))
    roots = {}
    for kind in kinds:
        root = tmp / f"{kind}{n}"
        st = JsonlStore(root)
        st.create_session("bench")
        lines = []
        for i, e in enumerate(entries):
            if kind == "custom" and i % 2:
                e = Note(
                    id=e.id,
                    parent_id=e.parent_id,
                    created_at=e.created_at,
                    kind="bench_note",
                    body=e.message.text(),
                    tags=["a", "b"],
                )
            elif kind == "unknown":
                d = json.loads(_line(e))
                d["x_tool"] = {"version": 3}
                d["message"]["x_seen"] = True
                lines.append((json.dumps(d, separators=(",", ":")) + "\n").encode())
                continue
            lines.append(_line(e))
        with open(st.file("bench"), "ab") as f:
            f.write(b"".join(lines))
        roots[kind] = root
    return roots


def _line(e) -> bytes:
    from durable_nb.session.codec import encode_line

    return encode_line(e)


def best_of(fns: dict, repeat: int, clock=time.process_time) -> dict[str, float]:
    """Best time of each of ``fns``, interleaved; CPU time by default (what other jobs on a shared
    machine disturb least), wall time for PostgreSQL, whose work is in its server."""
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            gc.collect()
            t = clock()
            fn()
            best[k] = min(best[k], clock() - t)
    return best


def reload_rows(n: int, roots: dict[str, Path], repeat: int) -> list[dict]:
    rows = []
    for kind, root in roots.items():
        limit = {"plain": LIMIT, "custom": LIMIT_CUSTOM, "unknown": LIMIT_UNKNOWN}[kind]

        def floor(f=root / "bench.jsonl", limit=limit):
            was = gc.isenabled()
            gc.disable()
            try:
                data = f.read_bytes()
                return limit.decode_lines(memoryview(data)[data.index(b"\n") + 1 :])
            finally:
                if was:
                    gc.enable()

        fns = {
            "floor": floor,
            "load": lambda root=root: JsonlStore(root).load_entries("bench"),
            "agent": lambda root=root: durable.Agent(store=JsonlStore(root), session_id="bench"),
        }
        assert len(fns["load"]()) == n
        b = best_of(fns, repeat)
        rows.append(
            {
                "entries": n,
                "log": kind,
                "floor_ms": b["floor"] * 1e3,
                "load_ms": b["load"] * 1e3,
                "agent_ms": b["agent"] * 1e3,
                "load_x": b["load"] / b["floor"],
                "agent_x": b["agent"] / b["floor"],
            }
        )
    return rows


def sqlite_row(n: int, tmp: Path, repeat: int) -> dict:
    from durable_nb.session import SqliteStore

    path = tmp / f"s{n}.db"
    st = SqliteStore(path)
    st.create_session("bench")
    es = durable_entries(conversation(n))
    for i in range(0, n, 5000):
        st.append_entries("bench", es[i : i + 5000])

    def bare():
        db = sqlite3.connect(path)
        try:
            return db.execute("SELECT id, body FROM entries WHERE session = ? ORDER BY rowid", ("bench",)).fetchall()
        finally:
            db.close()

    fns = {"floor": bare, "load": lambda: SqliteStore(path).load_entries("bench")}
    assert len(bare()) == n
    b = best_of(fns, repeat)
    wall = best_of(fns, repeat, time.perf_counter)  # the reload overlaps SQLite's joins with the decode
    return {
        "entries": n,
        "floor_ms": b["floor"] * 1e3,
        "load_ms": b["load"] * 1e3,
        "x": b["load"] / b["floor"],
        "wall_floor_ms": wall["floor"] * 1e3,
        "wall_load_ms": wall["load"] * 1e3,
        "wall_x": wall["load"] / wall["floor"],
        "load_avg": load_avg(),
        **sqlite_append(st, es),
    }


def sqlite_append(st, es: list, count: int = 1000) -> dict:
    """Single-entry appends to the store ``st`` (its session ``bench``, N rows), median wall µs, each
    interleaved with its floor: the same row's ``BEGIN IMMEDIATE``, ``INSERT``, ``COMMIT`` on the same
    connection (the body encoded before the clock starts)."""
    from durable_nb.session.codec import encode_line

    db, single, floor = st._db, [], []
    for i, e in enumerate(es[:count]):
        e = msgspec.structs.replace(e, id=f"s{i}")
        t = time.perf_counter()
        st.append_entries("bench", [e])
        single.append(time.perf_counter() - t)
        body = encode_line(e)[:-1].decode()
        t = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO entries VALUES (?, ?, ?)", ("bench", f"f{i}", body))
        db.execute("COMMIT")
        floor.append(time.perf_counter() - t)
    return {"append_us": statistics.median(single) * 1e6, "append_floor_us": statistics.median(floor) * 1e6}


def pg_row(n: int, dsn: str, repeat: int) -> dict:
    """PostgresStore.load_entries against the bare select of the same rows (the store's own query
    text, one connection kept open as the store's pool keeps it); wall time."""
    import psycopg

    from durable_nb.session import PostgresStore
    from durable_nb.session.pgstore import _BODY

    sid = f"bench{n}"
    st = PostgresStore(dsn)
    st.create_session(sid)
    es = durable_entries(conversation(n))
    for i in range(0, n, 5000):
        st.append_entries(sid, es[i : i + 5000])
    del es
    conn = psycopg.connect(dsn)
    sorted_ = psycopg.connect(dsn)
    conn.execute("SET enable_sort = off")  # the floor reads on the store's plan: the index's order, no sort
    sql = f"SELECT id, {_BODY} FROM durable_entries WHERE session = %s ORDER BY seq"
    fns = {
        "floor": lambda: conn.execute(sql, (sid,)).fetchall(),
        "load": lambda: st.load_entries(sid),
        "sorted": lambda: sorted_.execute(sql, (sid,)).fetchall(),  # the planner's own choice (a sort, before)
    }
    try:
        assert len(fns["floor"]()) == n
        wall = best_of(fns, repeat, time.perf_counter)
        cpu = best_of(fns, repeat)
    finally:
        conn.close()
        sorted_.close()
        st.close()
    return {
        "entries": n,
        "floor_ms": wall["floor"] * 1e3,
        "load_ms": wall["load"] * 1e3,
        "x": wall["load"] / wall["floor"],
        "floor_sorted_ms": wall["sorted"] * 1e3,
        "client_cpu_floor_ms": cpu["floor"] * 1e3,
        "client_cpu_load_ms": cpu["load"] * 1e3,
        "load_avg": load_avg(),
    }


def append_row(root: Path, count: int = 2000) -> dict:
    """Append to the log at ``root`` (its size is the row's): single entries, then batches, then a copy."""
    es = durable_entries(conversation(count))
    st = JsonlStore(root)
    st.load_entries("bench")
    raw = root / "raw.jsonl"
    raw.write_bytes(b"")
    from durable_nb.session.codec import encode_line

    single, floor = [], []
    for e in es[: count // 2]:
        t = time.perf_counter()
        st.append_entries("bench", [e])
        single.append(time.perf_counter() - t)
        t = time.perf_counter()
        fd = os.open(raw, os.O_WRONLY | os.O_APPEND)
        os.write(fd, encode_line(e))
        os.close(fd)
        floor.append(time.perf_counter() - t)
    batch = es[count // 2 :]
    t = time.perf_counter()
    for i in range(0, len(batch), 1000):
        st.append_entries("bench", batch[i : i + 1000])
    per = (time.perf_counter() - t) / len(batch)
    t = time.perf_counter()
    JsonlStore(root).create_session("copy", entries=batch)
    per_copy = (time.perf_counter() - t) / len(batch)
    return {
        "single_us": statistics.median(single) * 1e6,
        "floor_us": statistics.median(floor) * 1e6,
        "batch_us": per * 1e6,
        "create_us": per_copy * 1e6,
        **copy_cpu(es, root.parent / f"copy-{root.name}"),
    }


def copy_cpu(es: list, folder: Path) -> dict:
    """``transfer.copy_session`` of ``es`` into a fresh JSONL store and a fresh SQLite store, then the first
    search there: CPU µs an entry."""
    from durable_nb.session import SqliteStore
    from durable_nb.session.store import SessionRecord
    from durable_nb.transfer import copy_session

    rec = SessionRecord("copied", "", "2026-01-01T00:00:00.000000Z")
    out = {}
    for name, make in (("jsonl", lambda: JsonlStore(folder / "j")), ("sqlite", lambda: SqliteStore(folder / "s.db"))):
        best = search = float("inf")
        for _ in range(3):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            st = make()
            t = time.process_time()
            copy_session(rec, es, st)
            best = min(best, time.process_time() - t)
            t = time.process_time()
            st.search("the answer")  # SQLite indexes what was appended at the first search
            search = min(search, time.process_time() - t)
            getattr(st, "close", lambda: None)()
        out[f"copy_{name}_cpu_us"] = best / len(es) * 1e6
        out[f"first_search_{name}_cpu_us"] = search / len(es) * 1e6
    shutil.rmtree(folder, ignore_errors=True)
    return out


MEMORY = r"""
import gc, json, os, sys, time
sys.path.insert(0, {root!r})
from durable_nb import durable
from durable_nb.session import JsonlStore
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
gc.collect()
before, tracked0 = rss(), len(gc.get_objects())
a = durable.Agent(store=JsonlStore({store!r}), session_id="bench")
after = rss()
tracked = len(gc.get_objects()) - tracked0
def collect():  # best of 3: wall ms, CPU ms
    times, cpu = [], []
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time(); gc.collect()
        times.append(time.perf_counter() - t); cpu.append(time.process_time() - c)
    return min(times) * 1e3, min(cpu) * 1e3
gc_ms, gc_cpu_ms = collect()
a.system  # the first read builds the active path and its model view (what a first turn or show does)
viewed = rss()
print(json.dumps({{"bytes_per_entry": (after - before) / {n}, "tracked": tracked, "gc_ms": gc_ms, "gc_cpu_ms": gc_cpu_ms,
                  "view_bytes_per_entry": (viewed - after) / {n}, "view_gc_cpu_ms": collect()[1]}}))
"""


def memory_row(n: int, store: Path) -> dict:
    code = MEMORY.format(root=str(HERE.parent), store=str(store), n=n)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return {"entries": n, **json.loads(out.strip().splitlines()[-1])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    ap.add_argument("--parts", nargs="+", default=["memory", "reload", "sqlite", "append"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--logs", nargs="+", default=["plain", "custom", "unknown"])
    ap.add_argument("--out", default=str(HERE / "session_results.json"))
    args = ap.parse_args()
    res: dict = {
        "argv": sys.argv[1:],
        "load_before": load_avg(),
        "memory": [],
        "reload": [],
        "sqlite": [],
        "pg": [],
        "append": [],
    }
    server = None
    if "pg" in args.parts:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from pg_server import PgServer

        server = PgServer(fast=False).start()
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            for n in args.sizes:
                roots = write_logs(n, tmp, args.logs) if {"memory", "reload", "append"} & set(args.parts) else {}
                if "memory" in args.parts:
                    for _ in range(2):
                        res["memory"].append(memory_row(n, roots["plain"]))
                        print(res["memory"][-1], flush=True)
                if "reload" in args.parts:
                    for r in reload_rows(n, roots, args.repeat):
                        res["reload"].append(r)
                        print({k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()}, flush=True)
                if "sqlite" in args.parts:
                    res["sqlite"].append(sqlite_row(n, tmp, args.repeat))
                    print(res["sqlite"][-1], flush=True)
                if server is not None:
                    res["pg"].append(pg_row(n, server.dsn(), args.repeat))
                    print(res["pg"][-1], flush=True)
                if "append" in args.parts:
                    res["append"].append({"entries": n, **append_row(roots["plain"])})
                    print(res["append"][-1], flush=True)
                for p in tmp.iterdir():
                    if p.is_dir():
                        shutil.rmtree(p)
                    else:
                        p.unlink()
    finally:
        if server is not None:
            server.stop()
    res["load_after"] = load_avg()
    print("load average", res["load_before"], "->", res["load_after"])
    Path(args.out).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
