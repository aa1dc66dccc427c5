"""Export benchmark: writing a session as .html, .md and .jsonl, and the exported page's first paint
in headless Chromium, beside the live widget's first paint in the same run.

    python benchmarks/export_bench.py [--sizes 1000 10000] [--rounds 3] [--out benchmarks/export_bench.json]

For each size it builds a session through the real agent (user/assistant
turns, a branch every 50 turns, a meta entry every 10; tests/widget/widget_sessions.py)
and measures:

- export: ``durable_nb.share.export`` to each format (median over rounds), and the file size;
  for .html also how many entries' views the page embeds (its budget);
- page first paint: the exported page opened from file:// in a fresh page of an offline
  context, from its script's start (JSON parsed, tree drawn) until two frames later; and
  end to end, from navigation start;
- fallback: the static text/html and text/plain a widget output carries (computed once, at display);
- widget first paint (the floor): the live SessionWidget's state rendered by the same
  front end in the widget test harness (JSON parse + render until two frames later).

The ratio column is page first paint / widget first paint. Not a test: numbers
depend on the machine; the ratio is what to compare across runs.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "widget")]

import comm  # noqa: E402
from widget_harness import Page, RecordingComm, launch  # noqa: E402
from widget_sessions import long_agent  # noqa: E402

from durable_nb.share import export  # noqa: E402
from durable_nb.share.page import page_data  # noqa: E402
from durable_nb.widget import SessionWidget  # noqa: E402


def page_paint(browser, path: Path) -> tuple[float, float]:
    """Open ``path`` from file:// offline; return (first paint from its script, from navigation) in ms."""
    ctx = browser.new_context(offline=True, viewport={"width": 1000, "height": 900})
    page = ctx.new_page()
    page.goto(path.resolve().as_uri())
    page.wait_for_function("window.__dnbFirstPaintMs !== undefined", timeout=120_000)
    ms = page.evaluate("window.__dnbFirstPaintMs")
    end = page.evaluate("performance.now()")
    assert page.locator(".dnb-row").count() > 0
    ctx.close()
    return ms, end


def measure(browser, n: int, rounds: int, folder: Path) -> dict:
    agent = long_agent(n)
    out: dict = {"entries": len(agent.entries())}
    for fmt in (".jsonl", ".md", ".html"):
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            path = export(agent, folder / f"s{n}{fmt}")
            times.append((time.perf_counter() - t0) * 1000)
        out[f"export{fmt}_ms"] = statistics.median(times)
        out[f"export{fmt}_bytes"] = path.stat().st_size
    out["html_views_embedded"] = len(page_data(agent)["views"])
    paints = [page_paint(browser, folder / f"s{n}.html") for _ in range(rounds)]
    out["page_first_paint_ms"] = statistics.median(p[0] for p in paints)
    out["page_load_ms"] = statistics.median(p[1] for p in paints)
    w = SessionWidget(agent)
    t0 = time.perf_counter()
    w._repr_mimebundle_()
    out["fallback_ms"] = (time.perf_counter() - t0) * 1000
    widget = []
    for _ in range(rounds):
        h = Page(browser, w, bridge=False)
        widget.append(h.parse_ms + h.first_paint_ms)
        h.close()
    out["widget_first_paint_ms"] = statistics.median(widget)
    out["ratio"] = out["page_first_paint_ms"] / out["widget_first_paint_ms"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "export_bench.json"))
    args = ap.parse_args()
    comm.create_comm = RecordingComm  # the widget with no kernel behind it
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = launch(p)
        try:
            for n in args.sizes:
                rows.append(measure(browser, n, args.rounds, Path(tmp)))
        finally:
            browser.close()
    head = f"{'entries':>8} {'.jsonl ms':>10} {'.md ms':>8} {'.html ms':>9} {'.html MB':>9} {'views':>6} {'page paint':>11} {'page load':>10} {'widget paint':>13} {'ratio':>6} {'fallback':>9}"
    print(head)
    for r in rows:
        print(
            f"{r['entries']:>8} {r['export.jsonl_ms']:>10.0f} {r['export.md_ms']:>8.0f} {r['export.html_ms']:>9.0f} "
            f"{r['export.html_bytes'] / 1e6:>9.1f} {r['html_views_embedded']:>6} {r['page_first_paint_ms']:>9.0f}ms "
            f"{r['page_load_ms']:>8.0f}ms {r['widget_first_paint_ms']:>11.0f}ms {r['ratio']:>6.2f} {r['fallback_ms']:>7.0f}ms"
        )
    Path(args.out).write_text(
        json.dumps({"machine": platform.platform(), "python": platform.python_version(), "rows": rows}, indent=1) + "\n"
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
