"""Widget benchmark: first paint and view toggles in headless Chromium at 100, 1,000 and 10,000 entries.

    python benchmarks/widget_bench.py [--sizes 100 1000 10000] [--rounds 5] [--out benchmarks/widget_bench.json]

For each size it builds a session through the real agent (user/assistant
turns, a branch every 50 turns, a meta entry every 10), makes the real
Python SessionWidget, renders durable_nb/static/widget.js in Debian's headless Chromium via
the test harness (tests/widget/harness.html) and measures, in the page:

- first paint: render() until two animation frames later (the tree drawn),
  and end to end from Python (state handed to the page until painted);
- toggle: clicking "Model view", "Transcript view", "Tree" until the next
  two frames (median over rounds);
- sync: Python-side w.sync() after one new entry, and the bytes it sends.

The baseline is the same measurement on an empty session, in the same run.
Prints a table and writes JSON. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "widget")]

import comm  # noqa: E402
from widget_harness import Page, RecordingComm, launch  # noqa: E402
from widget_sessions import long_agent  # noqa: E402

from durable_nb import ai, durable  # noqa: E402
from durable_nb.session import MessageEntry  # noqa: E402
from durable_nb.widget import SessionWidget  # noqa: E402

TOGGLE = """async (view) => {
  const b = document.querySelector(`.dnb-tab[data-view="${view}"]`);
  const t0 = performance.now();
  b.click();
  const js = performance.now() - t0;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return [js, performance.now() - t0];
}"""


def measure(browser, agent, rounds: int) -> dict:
    w = SessionWidget(agent)
    h = Page(browser, w, bridge=False)
    paints, parses = [h.first_paint_ms], [h.parse_ms]
    for _ in range(rounds - 1):  # more first paints, each in a fresh page
        h2 = Page(browser, w, bridge=False)
        paints.append(h2.first_paint_ms)
        parses.append(h2.parse_ms)
        h2.close()
    toggles = {v: [] for v in ("model", "transcript", "tree")}
    toggles_js = {v: [] for v in toggles}
    for _ in range(rounds):
        for v in toggles:
            js, frame = h.page.evaluate(TOGGLE, v)
            toggles_js[v].append(js)
            toggles[v].append(frame)
    rows = h.page.locator(".dnb-row").count()
    h.close()
    w.comm.sent.clear()
    agent.append(MessageEntry(message=ai.assistant_message("one more entry")))
    t0 = time.perf_counter()
    w.sync()
    sync_ms = (time.perf_counter() - t0) * 1000
    return {
        "entries": len(agent.entries()) - 1,
        "state_bytes": len(json.dumps(w.get_state())),
        "first_paint_ms": statistics.median(paints),
        "parse_ms": statistics.median(parses),
        "toggle_ms": {v: statistics.median(t) for v, t in toggles.items()},
        "toggle_js_ms": {v: statistics.median(t) for v, t in toggles_js.items()},
        "rows_in_dom": rows,
        "sync_one_entry_ms": sync_ms,
        "sync_one_entry_bytes": w.comm.update_bytes(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10_000])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "widget_bench.json")
    args = ap.parse_args()
    comm.create_comm = RecordingComm
    from playwright.sync_api import sync_playwright

    results = []
    with sync_playwright() as p:
        browser = launch(p)
        try:
            measure(browser, long_agent(100), 1)  # warm up the browser and module cache
            results.append({"size": 0, "label": "baseline (empty)", **measure(browser, durable.Agent(), args.rounds)})
            for n in args.sizes:
                results.append({"size": n, "label": f"{n:,} entries", **measure(browser, long_agent(n), args.rounds)})
            version = browser.version
        finally:
            browser.close()
    print("paint: render() to the second frame after it; parse: JSON.parse of the state; toggle: click to the")
    print("second frame after it (in brackets: the click handler's own JS time); sync: w.sync() after one new entry.")
    head = (
        f"{'session':<18}{'state KB':>9}{'parse ms':>9}{'paint ms':>9}{'model ms':>15}{'transcript ms':>15}"
        f"{'tree ms':>15}{'DOM rows':>9}{'sync ms':>8}{'sync KB':>8}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        t, j = r["toggle_ms"], r["toggle_js_ms"]
        cell = {v: f"{t[v]:.1f} ({j[v]:.1f})" for v in t}
        print(
            f"{r['label']:<18}{r['state_bytes'] / 1024:>9.0f}{r['parse_ms']:>9.1f}{r['first_paint_ms']:>9.1f}"
            f"{cell['model']:>15}{cell['transcript']:>15}{cell['tree']:>15}{r['rows_in_dom']:>9}"
            f"{r['sync_one_entry_ms']:>8.1f}{r['sync_one_entry_bytes'] / 1024:>8.1f}"
        )
    out = {
        "chromium": version,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "rounds": args.rounds,
        "results": results,
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
