"""Store benchmarks: SQLite and PostgreSQL against the JSONL store and against their raw driver.

    python benchmarks/stores_bench.py                 # ~10 minutes on 2 cores
    python benchmarks/stores_bench.py --search 100000 # quicker

Starts its own PostgreSQL (``tests/pg_server.py``: Debian's postgresql,
fsync on) and prints one table per workload, every figure with its ratio to
the floor measured in the same run; writes ``benchmarks/stores_results.json``.
Not a test. Workloads:

- **append per turn**: a user entry and its reply, two appends (as the agent
  makes them), median over ``--turns`` turns. Floor: the raw driver inserting
  the same JSON text, one transaction per append (``sqlite3`` / ``psycopg``).
- **reload 100k**: ``load_entries`` of a 100k-entry session (typed entries).
  Floor: the raw driver selecting the same rows' JSON text, undecoded.
- **two writers**: two processes appending ``--writer-entries`` entries each,
  one at a time, to one session; entries per second. Floor: two processes
  inserting the same rows with the raw driver.
- **search**: a 2-word query over ``--search`` entries (1M by default, 100
  sessions), hits decoded into :class:`~durable_nb.session.Hit` (at most 50).
  Floor: the raw full-text query returning the matching row ids.

Durability is alike everywhere: each survives the *process* being killed
(JSONL without fsync; SQLite WAL with ``synchronous=NORMAL``; PostgreSQL with
``synchronous_commit=off``, for the store and its floor alike).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from durable_nb import ai  # noqa: E402
from durable_nb.session import JsonlStore, MessageEntry, PostgresStore, SqliteStore, encode_line  # noqa: E402

VOCAB = [f"w{i:04d}" for i in range(5000)]


def entry(i: int, parent: str, rng: random.Random, words: int = 40) -> MessageEntry:
    text = " ".join(rng.choice(VOCAB) for _ in range(words))
    role = "user" if i % 2 == 0 else "assistant"
    return MessageEntry(
        id=f"e{i}",
        parent_id=parent,
        created_at="2026-12-01T00:00:00.000000Z",
        message=ai.Message(role, [ai.Text(text)]),
    )


def chain(n: int, seed: int = 1, prefix: str = "e", words: int = 40) -> list[MessageEntry]:
    rng = random.Random(seed)
    out, parent = [], ""
    for i in range(n):
        e = entry(i, parent, rng, words)
        e.id = f"{prefix}{i}"
        out.append(e)
        parent = e.id
    return out


def body(e) -> str:
    return encode_line(e)[:-1].decode()


# -- raw driver floors ------------------------------------------------------------------


class RawSqlite:
    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS t (session TEXT, id TEXT, body TEXT, PRIMARY KEY (session, id))")

    def append(self, sid: str, bodies: list[tuple[str, str]]) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        self.db.executemany("INSERT INTO t VALUES (?, ?, ?)", [(sid, i, b) for i, b in bodies])
        self.db.execute("COMMIT")

    def load(self, sid: str) -> list:
        return self.db.execute("SELECT body FROM t WHERE session = ? ORDER BY rowid", (sid,)).fetchall()


class RawPg:
    def __init__(self, dsn: str) -> None:
        import psycopg

        self.c = psycopg.connect(dsn, autocommit=True)
        self.c.execute(
            "CREATE TABLE IF NOT EXISTS t (seq bigint GENERATED ALWAYS AS IDENTITY, session text, id text, body jsonb, PRIMARY KEY (session, id))"
        )

    def append(self, sid: str, bodies: list[tuple[str, str]]) -> None:
        with self.c.transaction():
            self.c.cursor().executemany(
                "INSERT INTO t (session, id, body) VALUES (%s, %s, %s::jsonb)", [(sid, i, b) for i, b in bodies]
            )

    def load(self, sid: str) -> list:
        return self.c.execute("SELECT body::text FROM t WHERE session = %s ORDER BY seq", (sid,)).fetchall()


# -- workloads ----------------------------------------------------------------------------


def append_per_turn(stores: dict, raws: dict, turns: int) -> dict:
    es = chain(2 * turns, seed=7, words=60)
    out: dict[str, list[float]] = {k: [] for k in [*stores, *raws]}
    for st in stores.values():
        st.create_session("turns")
    for t in range(turns):  # interleaved, so machine load hits all alike
        pair = es[2 * t : 2 * t + 2]
        for k, st in stores.items():
            t0 = time.perf_counter()
            st.append_entries("turns", [pair[0]])
            st.append_entries("turns", [pair[1]])
            out[k].append(time.perf_counter() - t0)
        for k, raw in raws.items():
            t0 = time.perf_counter()
            raw.append("turns", [(pair[0].id, body(pair[0]))])
            raw.append("turns", [(pair[1].id, body(pair[1]))])
            out[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in out.items()}


def reload(stores: dict, raws: dict, n: int, repeat: int = 3) -> dict:
    es = chain(n, seed=3, prefix="r", words=60)
    for st in stores.values():
        st.create_session("big")
        for i in range(0, n, 2000):
            st.append_entries("big", es[i : i + 2000])
    for raw in raws.values():
        for i in range(0, n, 2000):
            raw.append("big", [(e.id, body(e)) for e in es[i : i + 2000]])
    best = {k: float("inf") for k in [*stores, *raws]}
    for _ in range(repeat):
        for k, st in stores.items():
            t0 = time.perf_counter()
            got = st.load_entries("big")
            best[k] = min(best[k], time.perf_counter() - t0)
            assert len(got) == n
        for k, raw in raws.items():
            t0 = time.perf_counter()
            got = raw.load("big")
            best[k] = min(best[k], time.perf_counter() - t0)
            assert len(got) == n
    return best


WRITER = r"""
import sys, time
sys.path.insert(0, {root!r}); sys.path.insert(0, {tests!r})
from stores_bench import chain, body, RawSqlite, RawPg
from durable_nb.session import open_store
kind, spec, tag, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
es = chain(n, seed=hash(tag) % 1000, prefix=tag)
if kind == "store":
    st = open_store(spec)
    do = lambda e: st.append_entries("two", [e])
elif kind == "rawsqlite":
    raw = RawSqlite(spec); do = lambda e: raw.append("two", [(e.id, body(e))])
else:
    raw = RawPg(spec); do = lambda e: raw.append("two", [(e.id, body(e))])
print("READY", flush=True); sys.stdin.readline()
for e in es:
    do(e)
print("DONE", flush=True)
"""


def two_writers(kind: str, spec: str, n: int) -> float:
    """Return entries per second of two processes appending ``n`` entries each to one session."""
    code = WRITER.format(root=str(HERE.parent), tests=str(HERE))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, kind, spec, tag, str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=HERE,
        )
        for tag in ("A", "B")
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "READY"
    t0 = time.perf_counter()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        assert p.stdout.readline().strip() == "DONE"
        p.wait()
    return 2 * n / (time.perf_counter() - t0)


def search(stores: dict, n: int, sessions: int = 100, repeat: int = 5) -> dict:
    per = n // sessions
    for k, st in stores.items():
        t0 = time.perf_counter()
        for s in range(sessions):
            sid = f"s{s}"
            st.create_session(sid)
            es = chain(per, seed=s, prefix=f"s{s}-", words=12)
            for i in range(0, per, 5000):
                st.append_entries(sid, es[i : i + 5000])
        print(f"  filled {k} with {n:,} entries in {time.perf_counter() - t0:.0f} s", flush=True)
    queries = ["w0042 w0777", "w1234 w4321", "w0001 w0002", "w3000 w3001", "w0100 w0200"]
    best = {}
    for k, st in stores.items():
        ts = []
        for q in queries:
            t0 = time.perf_counter()
            st.search(q)
            ts.append(time.perf_counter() - t0)
        best[k] = statistics.median(ts)
    return best, queries


def raw_search(kind: str, st, queries: list[str]) -> float:
    ts = []
    for q in queries:
        t0 = time.perf_counter()
        if kind == "sqlite":
            st._db.execute("SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? LIMIT 50", (q,)).fetchall()
        else:
            with st._pool.connection() as c:
                c.execute(
                    "SELECT id FROM durable_entries WHERE words @@ plainto_tsquery('simple', %s) LIMIT 50", (q,)
                ).fetchall()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=300)
    ap.add_argument("--reload", type=int, default=100_000)
    ap.add_argument("--writer-entries", type=int, default=1000)
    ap.add_argument("--search", type=int, default=1_000_000)
    ap.add_argument("--out", default=str(HERE / "stores_results.json"))
    a = ap.parse_args()

    from pg_server import PgServer

    server = PgServer(fast=False).start()
    tmp = Path(tempfile.mkdtemp(prefix="stores-bench-"))
    results: dict = {}
    try:

        def pg(schema: str) -> str:
            server.admin(f"CREATE SCHEMA IF NOT EXISTS {schema} AUTHORIZATION durable", "durable")
            return server.dsn(schema) + "%20-csynchronous_commit%3Doff"

        def fresh(tag: str) -> tuple[dict, dict]:
            d = tmp / tag
            d.mkdir()
            stores = {
                "jsonl": JsonlStore(d / "jsonl"),
                "sqlite": SqliteStore(d / "s.db"),
                "postgres": PostgresStore(pg(tag)),
            }
            raws = {"raw sqlite3": RawSqlite(d / "raw.db"), "raw psycopg": RawPg(pg(tag + "_raw"))}
            return stores, raws

        print("append per turn ...", flush=True)
        stores, raws = fresh("turns")
        results["append_per_turn_s"] = append_per_turn(stores, raws, a.turns)
        print(f"reload {a.reload:,} ...", flush=True)
        stores, raws = fresh("reload")
        results["reload_s"] = reload(stores, raws, a.reload)
        print("two writers ...", flush=True)
        tw = {}
        d = tmp / "two"
        d.mkdir()
        for name, kind, spec in [
            ("jsonl", "store", str(d / "jsonl")),
            ("sqlite", "store", f"sqlite://{d / 's.db'}"),
            ("postgres", "store", pg("two")),
            ("raw sqlite3", "rawsqlite", str(d / "raw.db")),
            ("raw psycopg", "rawpg", pg("two_raw")),
        ]:
            if kind == "store":
                from durable_nb.session import open_store

                open_store(spec).create_session("two")
            else:  # the table, made once before the two writers race
                (RawSqlite if kind == "rawsqlite" else RawPg)(spec)
            tw[name] = two_writers(kind, spec, a.writer_entries)
        results["two_writers_per_s"] = tw
        print(f"search over {a.search:,} entries ...", flush=True)
        d = tmp / "search"
        d.mkdir()
        sstores = {
            "jsonl": JsonlStore(d / "jsonl"),
            "sqlite": SqliteStore(d / "s.db"),
            "postgres": PostgresStore(pg("search")),
        }
        best, queries = search(sstores, a.search)
        best["raw sqlite3 FTS5"] = raw_search("sqlite", sstores["sqlite"], queries)
        best["raw psycopg tsquery"] = raw_search("postgres", sstores["postgres"], queries)
        results["search_s"] = best
        results["params"] = vars(a)
    finally:
        server.stop()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    Path(a.out).write_text(json.dumps(results, indent=1))
    print(report(results))


def report(r: dict) -> str:
    ap, rl, tw, se = r["append_per_turn_s"], r["reload_s"], r["two_writers_per_s"], r["search_s"]
    us = lambda s: f"{s * 1e6:,.0f}"
    ms = lambda s: f"{s * 1e3:,.1f}"
    lines = [
        "Append per turn (two appends; median µs; × = ratio)",
        "",
        "| store | µs | × JSONL store | × raw driver |",
        "|---|---:|---:|---:|",
        f"| JSONL | {us(ap['jsonl'])} | 1.00 | — |",
        f"| SQLite | {us(ap['sqlite'])} | {ap['sqlite'] / ap['jsonl']:.2f} | {ap['sqlite'] / ap['raw sqlite3']:.2f} (raw {us(ap['raw sqlite3'])}) |",
        f"| PostgreSQL | {us(ap['postgres'])} | {ap['postgres'] / ap['jsonl']:.2f} | {ap['postgres'] / ap['raw psycopg']:.2f} (raw {us(ap['raw psycopg'])}) |",
        "",
        f"Reload {r['params']['reload']:,} entries (best of 3, ms; typed entries vs the raw driver's undecoded rows)",
        "",
        "| store | ms | × JSONL store | × raw driver |",
        "|---|---:|---:|---:|",
        f"| JSONL | {ms(rl['jsonl'])} | 1.00 | — |",
        f"| SQLite | {ms(rl['sqlite'])} | {rl['sqlite'] / rl['jsonl']:.2f} | {rl['sqlite'] / rl['raw sqlite3']:.2f} (raw {ms(rl['raw sqlite3'])}) |",
        f"| PostgreSQL | {ms(rl['postgres'])} | {rl['postgres'] / rl['jsonl']:.2f} | {rl['postgres'] / rl['raw psycopg']:.2f} (raw {ms(rl['raw psycopg'])}) |",
        "",
        f"Two writers, one session ({r['params']['writer_entries']:,} single-entry appends each; entries/s; × = ratio)",
        "",
        "| store | entries/s | × JSONL store | × raw driver |",
        "|---|---:|---:|---:|",
        f"| JSONL | {tw['jsonl']:,.0f} | 1.00 | — |",
        f"| SQLite | {tw['sqlite']:,.0f} | {tw['sqlite'] / tw['jsonl']:.2f} | {tw['sqlite'] / tw['raw sqlite3']:.2f} (raw {tw['raw sqlite3']:,.0f}) |",
        f"| PostgreSQL | {tw['postgres']:,.0f} | {tw['postgres'] / tw['jsonl']:.2f} | {tw['postgres'] / tw['raw psycopg']:.2f} (raw {tw['raw psycopg']:,.0f}) |",
        "",
        f"Search, two words over {r['params']['search']:,} entries in 100 sessions (median of 5 queries, ms; hits decoded, ≤ 50)",
        "",
        "| store | ms | × JSONL scan | × raw full-text query |",
        "|---|---:|---:|---:|",
        f"| JSONL (scan) | {ms(se['jsonl'])} | 1.00 | — |",
        f"| SQLite FTS5 | {ms(se['sqlite'])} | {se['sqlite'] / se['jsonl']:.4f} | {se['sqlite'] / se['raw sqlite3 FTS5']:.2f} (raw {ms(se['raw sqlite3 FTS5'])}) |",
        f"| PostgreSQL GIN | {ms(se['postgres'])} | {se['postgres'] / se['jsonl']:.4f} | {se['postgres'] / se['raw psycopg tsquery']:.2f} (raw {ms(se['raw psycopg tsquery'])}) |",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
