"""Search benchmark: the widget's find over a whole session tree, against a bare scan of the same text.

    python benchmarks/search_bench.py [--sizes 10000 100000] [--rounds 5] [--out benchmarks/search_bench.json]

For each size it builds a tree of N entries in memory (user/assistant turns of ~20 and ~80 words
from a 5,000-word vocabulary, a sibling branch every 50 turns, a meta entry every 10 turns, a
custom note every 25) and times, best of ``--rounds``:

- **floor**: a bare substring scan of the entries' text, already case-folded in a list
  (``[i for i, t in enumerate(texts) if word in t]``): the least any find must do;
- **find** (warm): ``session.Finder.find`` as the widget's ``search`` action calls it, its
  per-entry texts already read: the same pass plus the word rule (every query word a whole word);
- **find, first**: a fresh ``Finder`` (reads every entry's text once, then finds);
- **scan**: ``session.search.scan``, the plain store search (no cache, word rule on every entry);
- **widget action**: the ``search`` request a page sends to a ``SessionWidget`` (warm): the find, each
  hit's line in the drawn tree, the hits in drawn order, the reply message built.

Queries: a rare word (in 12 entries, spread over branches), two words (a rare and a common one),
and a common word (in about a third of the entries). Ratios are to the floor of the same query in
the same run. Not a test: the figures depend on the machine; the ratios are what to compare.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "widget")]

import comm  # noqa: E402
from widget_harness import RecordingComm, front_end_send  # noqa: E402

from durable_nb import ai, durable  # noqa: E402
from durable_nb.session import CustomEntry, Finder, MemoryStore, MessageEntry, search  # noqa: E402
from durable_nb.widget import SessionWidget  # noqa: E402


def vocabulary(rng: random.Random, n: int = 5000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(n)]


def build(n: int) -> tuple[durable.Agent, dict[str, str]]:
    """Return an agent holding ``n`` entries and the queries to time (name -> query)."""
    rng = random.Random(n)
    vocab = vocabulary(rng)
    common = "prompt"
    a = durable.Agent(store=MemoryStore())
    batch: list = []
    turn = 0
    while len(a.entries()) + len(batch) < n:
        turn += 1
        if turn % 10 == 0:
            batch.append(durable.meta(" ".join(rng.choices(vocab, k=15)), origin=f"cell:{turn}"))
        if turn % 25 == 0:
            batch.append(CustomEntry(kind="note", data={"body": " ".join(rng.choices(vocab, k=10))}))
        ask = rng.choices(vocab, k=20) + ([common] if turn % 3 == 0 else [])
        batch.append(durable.text(" ".join(ask)))
        batch.append(MessageEntry(message=ai.assistant_message(" ".join(rng.choices(vocab, k=80)))))
        if turn % 50 == 0:
            a.append(*batch)
            batch = []
            a.branch(a.entries()[-3].id)  # the next turns grow a sibling branch
    if batch:
        a.append(*batch)
    entries = a.entries()
    for k in range(12):  # the needle, in entries spread over the log (and so over branches)
        e = entries[(k * 7919 + 13) % len(entries)]
        if isinstance(e, MessageEntry):
            e.message.content.append(ai.Text(" needleword and " + common))
    return a, {"rare word": "needleword", "rare + common": "Needleword PROMPT", "common word": common}


def best(fn, rounds: int) -> tuple[float, object]:
    out, times = None, []
    for _ in range(rounds):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1000, out


def measure(n: int, rounds: int) -> dict:
    agent, queries = build(n)
    entries = agent.entries()
    texts = [search.search_text(e).casefold() for e in entries]
    warm = Finder()
    warm.find(entries, "x")
    comm.create_comm = RecordingComm  # the widget's comm with no kernel behind it
    widget = SessionWidget(agent)
    front_end_send(widget, {"action": "search", "query": "x"})  # its texts read once
    rows = []
    for name, q in queries.items():
        word = max(search.words(q), key=len)
        floor_ms, floor_hits = best(lambda: [i for i, t in enumerate(texts) if word in t], rounds)
        find_ms, hits = best(lambda: warm.find(entries, q), rounds)
        first_ms, first = best(lambda: Finder().find(entries, q), max(1, rounds // 2))
        scan_ms, scanned = best(lambda: search.scan([("s", entries)], q, 10**9), max(1, rounds // 2))
        action_ms, _ = best(lambda: front_end_send(widget, {"action": "search", "query": q}), rounds)
        reply = widget.comm.sent[-1][1]["content"]
        assert first == hits == [h.entry_id for h in scanned]  # type: ignore[union-attr]
        assert reply["total"] == len(hits)  # type: ignore[arg-type]
        rows.append(
            {
                "query": name,
                "text": q,
                "hits": len(hits),  # type: ignore[arg-type]
                "floor_hits": len(floor_hits),  # type: ignore[arg-type]
                "floor_ms": round(floor_ms, 2),
                "find_ms": round(find_ms, 2),
                "find_x": round(find_ms / floor_ms, 2),
                "first_find_ms": round(first_ms, 1),
                "first_x": round(first_ms / floor_ms, 1),
                "scan_ms": round(scan_ms, 1),
                "scan_x": round(scan_ms / floor_ms, 1),
                "action_ms": round(action_ms, 1),
                "action_x": round(action_ms / floor_ms, 1),
            }
        )
    return {"entries": len(entries), "mb_text": round(sum(map(len, texts)) / 1e6, 1), "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "search_bench.json")
    args = ap.parse_args()
    results = {"python": platform.python_version(), "machine": platform.machine(), "sizes": []}
    print(
        "| entries | text MB | query | hits | floor ms | find ms | × floor | first find ms | × floor | scan ms | × floor "
        "| widget action ms | × floor |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        r = measure(n, args.rounds)
        results["sizes"].append(r)
        for x in r["rows"]:
            print(
                f"| {r['entries']:,} | {r['mb_text']} | {x['query']} | {x['hits']:,} | {x['floor_ms']} | "
                f"{x['find_ms']} | {x['find_x']} | {x['first_find_ms']} | {x['first_x']} | {x['scan_ms']} | {x['scan_x']} | "
                f"{x['action_ms']} | {x['action_x']} |"
            )
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
