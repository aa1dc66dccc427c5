"""Widget benchmark: the harness part (first paint and view toggles in headless Chromium at 100,
1,000 and 10,000 entries) and the #18 parts (a real kernel and real JupyterLab, 10 to 300,000 entries).

    python benchmarks/widget_bench.py [--sizes 100 1000 10000] [--rounds 5] [--out benchmarks/widget_bench.json]
    python benchmarks/widget_bench.py --scale [--scale-sizes 10 100 10000 100000 300000] [--cells 10]
                                      [--parts kernel lab] [--scale-out benchmarks/widget_scale.json]

**#18 parts** (``--scale``; sessions of ``run.py``'s conversation, written once):

- *kernel*: one real kernel per size (jupyter_client, cells sent as JupyterLab
  sends them, a new ``cellId`` each): the floors, an empty cell and a
  ``%%durable`` turn with no widget shown; then ``%durable show``, a page's
  request for the lines around the leaf (the comm message ``widget.js`` sends),
  and the same turns with the widget shown: each turn's time and the comm bytes
  it publishes (``comm_msg`` contents on iopub: what the page receives); the
  saved widget state (the ``comm_open`` state) and the kernel's RSS growth.
- *lab*: real JupyterLab in headless Chromium per size: ``%durable show`` in a
  notebook whose session is loaded, ``--pauses`` seconds after the loading cell
  ended (0: at once, waiting for the widget's background preparation; 5: as a
  person who reads the status first), each in a kernel of its own; bytes the page receives on its kernel
  websockets from the key press to the first paint (the leaf's row drawn, no
  row waiting for its line) and until the kernel is idle, the time to that first
  paint (in the page, ``performance.now()``), and the page's JS heap growth
  (after a forced GC, Chrome DevTools protocol).

Ratios are against the 100-entry figure of the same run (the floor). To
measure an older checkout (the "before" column), copy this file into it and
run it there: kernels and JupyterLab import durable_nb from the checkout the
file is in.

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
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "widget"), str(ROOT / "benchmarks")]

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
        "sync_one_entry_bytes": w.comm.update_bytes() + w.comm.custom_bytes(),
    }


# -- #18: a real kernel ------------------------------------------------------------------------------


def _place(log: Path, d: Path) -> None:
    (d / ".durable").mkdir(parents=True)
    shutil.copyfile(log, d / ".durable" / "bench.jsonl")


def cell(kc, code: str, cell_id: str, timeout: float = 600) -> tuple[float, list[dict]]:
    """Run one cell as JupyterLab sends it; return (seconds to its reply, its iopub messages until idle)."""
    msg = kc.session.msg(
        "execute_request",
        {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        },
        metadata={"cellId": cell_id},
    )
    t = time.perf_counter()
    kc.shell_channel.send(msg)
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            break
    elapsed = time.perf_counter() - t
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{code!r} failed: {reply['content']}")
    return elapsed, _iopub_until_idle(kc, msg["header"]["msg_id"])


def _iopub_until_idle(kc, msg_id: str) -> list[dict]:
    out = []
    while True:
        m = kc.get_iopub_msg(timeout=120)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return out
        out.append(m)


def comm_bytes(msgs: list[dict]) -> int:
    """Bytes of the widget traffic in ``msgs``: the JSON of every comm message's content."""
    return sum(len(json.dumps(m["content"])) for m in msgs if m["msg_type"].startswith("comm_"))


def kernel_row(n: int, log: Path, tmp: Path, cells: int) -> dict:
    from jupyter_client.manager import KernelManager

    d = tmp / f"kernel{n}"
    _place(log, d)
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(d), env={**os.environ, "PYTHONPATH": str(ROOT)})
    kc = km.client()
    kc.start_channels()
    rss = "int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0]) // 1024"
    try:
        kc.wait_for_ready(timeout=120)
        cell(kc, "%load_ext durable_nb\n%config DurableMagics.session = 'bench'", "setup")
        cell(kc, "%%durable\nwarm up", "warm")
        empty = [cell(kc, "pass", f"p{i}")[0] for i in range(cells)]
        plain = [cell(kc, f"%%durable\nturn {i}", f"c{i}")[0] for i in range(cells)]
        _, out = cell(kc, f"print({rss})", "rss0")
        rss0 = int(next(m["content"]["text"] for m in out if m["msg_type"] == "stream"))
        show_s, msgs = cell(kc, "%durable show", "show")
        show_bytes = sum(len(json.dumps(m["content"])) for m in msgs)
        (opened,) = [m for m in msgs if m["msg_type"] == "comm_open" and "session_id" in m["content"]["data"]["state"]]
        state = opened["content"]["data"]["state"]
        comm_id = opened["content"]["comm_id"]
        tree = state.get("tree") or {}
        page_bytes = 0
        if tree:  # a drawn page asks for the lines around the leaf (widget.js's first request)
            leaf = max(0, tree["leaf_line"])
            content = {
                "comm_id": comm_id,
                "data": {
                    "method": "custom",
                    "content": {"action": "lines", "start": max(0, leaf - 40), "stop": leaf + 40},
                },
            }
            req = kc.session.msg("comm_msg", content)
            kc.shell_channel.send(req)
            page_bytes = comm_bytes(_iopub_until_idle(kc, req["header"]["msg_id"]))
        shown, sent = [], []
        for i in range(cells):
            t, msgs = cell(kc, f"%%durable\nshown {i}", f"s{i}")
            shown.append(t)
            sent.append(comm_bytes(msgs))
        _, out = cell(kc, f"print({rss})", "rss1")
        rss1 = int(next(m["content"]["text"] for m in out if m["msg_type"] == "stream"))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    med = statistics.median
    return {
        "entries": n,
        "empty_cell_ms": med(empty) * 1e3,
        "cell_ms": med(plain) * 1e3,
        "cell_shown_ms": med(shown) * 1e3,
        "turn_comm_bytes": med(sent),
        "turn_comm_bytes_max": max(sent),
        "show_ms": show_s * 1e3,
        "show_kernel_bytes": show_bytes,
        "first_lines_bytes": page_bytes,
        "saved_state_bytes": len(json.dumps(state)),
        "kernel_rss_growth_mb": rss1 - rss0,
    }


# -- #18: real JupyterLab ------------------------------------------------------------------------------

SHOTS = ROOT / "benchmarks" / ".cache" / "widget"  # screenshots of each size's first paint (not in git)
PAINTED = """(t0) => {
  const w = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .dnb-widget');
  const ok = !!w && !!w.querySelector('.dnb-row.dnb-leaf') && !w.querySelector('.dnb-row.dnb-loading');
  if (ok && window.__dnbPaint === undefined) window.__dnbPaint = performance.now() - t0;
  return ok;
}"""


def _kind(payload) -> str:
    """A websocket frame's kind for the per-turn breakdown: its message type, and for a comm
    message the widget reply or action it carries (``comm_msg:lines``), or the synced traits."""
    text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
    m = re.search(r'"msg_type":\s*"(\w+)"', text)
    kind = m.group(1) if m else "?"
    if kind == "comm_msg":
        r = re.search(r'"(?:reply|action)":\s*"(\w+)"', text) or re.search(r'"method":\s*"(\w+)"', text)
        kind += ":" + (r.group(1) if r else "?")
        if r and r.group(1) == "update":
            st = re.search(r'"state":\s*\{"(\w+)"', text)
            kind += ":" + (st.group(1) if st else "?")
    return kind


def _detail(payload) -> str:
    text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
    m = re.search(r'"tree":\s*(\{[^}]*\})', text) or re.search(r'"(start|rev)":\s*\d+,\s*"(stop|start)":\s*\d+', text)
    return " " + m.group(0)[:200] if m else ""


def lab_rows(
    sizes: list[int], logs: dict[int, Path], tmp: Path, pauses: list[float], turns: int = 0, tab: str = "tree"
) -> list[dict]:
    """Per size and pause: ``%durable show`` run ``pause`` seconds after the cell that loaded the
    session ended (0: at once; a pause lets the kernel prepare the widget in the background, as it
    does while a person reads the status), each in a notebook and kernel of its own. Then ``turns``
    ``%%durable`` turns with the widget shown: the bytes the page receives per turn, from the key
    press until 1.5 s after the kernel is idle (so a fallback the page asks for once the widget is
    quiet, 0.7 s, is counted), on tab ``tab`` (clicked before the turns); a reply to a request the page
    sent before the key press (the show's first timeline, late at 1M entries) is not the turn's: told
    apart by its parent message and counted as ``late``. Then a save (Ctrl+S): the bytes until it is
    written."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.lab import LabServer, frame_ids, open_notebook, run_cell, wait_kernel
    from tests.support import write_notebook

    root = tmp / "lab"
    for n in sizes:
        _place(logs[n], root / f"s{n}")
        for pause in pauses:
            write_notebook(
                root / f"s{n}" / f"bench-{pause:g}.ipynb",
                [
                    ("%load_ext durable_nb\n%config DurableMagics.session = 'bench'\n%durable status", []),
                    ("%durable show", []),
                    ("%%durable\nanother turn", []),
                ],
            )
    rows = []
    with LabServer(root) as server, sync_playwright() as p:
        browser = launch(p)
        try:
            for n, pause in ((n, pause) for n in sizes for pause in pauses):
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                frames: list[int] = []
                kinds: dict[str, int] = {}
                comms: list[tuple[int, str]] = []  # comm frames (the widget's, the page comm's): size, parent id
                sent: list[str] = []
                asked: list[str] = []  # the id of every message the page sent

                def got(payload, frames=frames, kinds=kinds, comms=comms) -> None:
                    frames.append(len(payload))
                    k = _kind(payload)
                    if k.startswith("comm_"):
                        comms.append((len(payload), frame_ids(payload)[1]))
                    if k in ("comm_msg:update:tree", "comm_msg:lines"):
                        sent.append("<" + k + _detail(payload))
                    kinds[k] = kinds.get(k, 0) + len(payload)

                def ws_open(ws, sent=sent, asked=asked) -> None:
                    ws.on("framereceived", got)
                    ws.on("framesent", lambda payload: sent.append(_kind(payload) + _detail(payload)))
                    ws.on("framesent", lambda payload: asked.append(frame_ids(payload)[0]))

                page.on("websocket", ws_open)
                cdp = page.context.new_cdp_session(page)

                def heap() -> float:
                    cdp.send("HeapProfiler.collectGarbage")
                    return cdp.send("Runtime.getHeapUsage")["usedSize"] / 1e6

                open_notebook(page, server, f"s{n}/bench-{pause:g}.ipynb", timeout_ms=300_000)
                run_cell(page, 0, timeout_ms=900_000)  # loads the session
                page.wait_for_timeout(pause * 1000)
                heap0 = heap()
                page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(1).locator(".jp-InputArea-editor").click()
                page.evaluate("() => { delete window.__dnbPaint; }")
                frames.clear()
                t0 = page.evaluate("() => performance.now()")
                page.keyboard.press("Shift+Enter")
                page.wait_for_function(PAINTED, arg=t0, polling="raf", timeout=900_000)
                paint_ms = page.evaluate("() => window.__dnbPaint")
                bytes_paint = sum(frames)
                wait_kernel(page, timeout_ms=900_000)
                page.wait_for_timeout(500)
                row = {
                    "entries": n,
                    "pause_s": pause,
                    "first_paint_ms": paint_ms,
                    "bytes_to_first_paint": bytes_paint,
                    "bytes_until_idle": sum(frames),
                    "heap_growth_mb": heap() - heap0,
                }
                if turns:
                    if tab != "tree":
                        page.locator(f'.jp-NotebookPanel:visible .dnb-tab[data-view="{tab}"]').first.click()
                    page.wait_for_timeout(2000)  # anything the page asks for once the show is quiet
                    row["bytes_after_show"] = sum(frames) - row["bytes_until_idle"]
                    per_turn, comm_turn, late_turn, added = [], [], [], []
                    log = root / f"s{n}" / ".durable" / "bench.jsonl"
                    for _ in range(turns):
                        frames.clear()
                        kinds.clear()
                        sent.clear()
                        comms.clear()
                        earlier = set(asked) - {""}  # a reply to one of these is late: not the turn's
                        size = log.stat().st_size
                        run_cell(page, 2, timeout_ms=900_000)
                        wait_kernel(page, timeout_ms=900_000)
                        page.wait_for_timeout(1500)
                        late = sum(b for b, parent in comms if parent in earlier)
                        per_turn.append(sum(frames) - late)
                        comm_turn.append(sum(b for b, parent in comms if parent not in earlier))
                        late_turn.append(late)
                        added.append(log.stat().st_size - size)  # the JSON of the entries the turn added
                        print(
                            {
                                "turn_bytes": sum(frames),
                                "comm_bytes": comm_turn[-1],
                                "late_comm_bytes": late,
                                "new_entries_bytes": added[-1],
                                "by_kind": kinds.copy(),
                                "sent": sent.copy(),
                            },
                            file=sys.stderr,
                        )
                    row["turn_page_bytes"] = statistics.median(per_turn)
                    row["turn_page_bytes_max"] = max(per_turn)
                    row["turn_comm_bytes"] = statistics.median(comm_turn)
                    row["turn_comm_bytes_max"] = max(comm_turn)
                    row["turn_late_comm_bytes_max"] = max(late_turn)  # replies to what the page asked before
                    row["turn_new_entries_bytes"] = statistics.median(added)
                    row["turn_comm_ratio"] = max(c / a for c, a in zip(comm_turn, added, strict=True))
                    frames.clear()
                    page.keyboard.press("Control+s")
                    page.wait_for_function(
                        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=120_000
                    )
                    row["save_page_bytes"] = sum(frames)
                rows.append(row)
                print(rows[-1], file=sys.stderr)
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.locator(".dnb-widget").first.screenshot(path=str(SHOTS / f"lab-show-{n}-{pause:g}.png"))
                page.evaluate(
                    "() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()"
                )  # its memory back
                page.close()
        finally:
            browser.close()
    return rows


def scale_main(args) -> None:
    with tempfile.TemporaryDirectory(prefix="widget-scale-") as t:
        tmp = Path(t)
        from run import sessions

        logs = sessions(args.scale_sizes, tmp)
        out: dict = {"python": platform.python_version(), "cells": args.cells, "checkout": str(ROOT)}
        if "kernel" in args.parts:
            out["kernel"] = []
            for n in args.scale_sizes:
                out["kernel"].append(kernel_row(n, logs[n], tmp, args.cells))
                print(out["kernel"][-1], file=sys.stderr)
        if "lab" in args.parts:
            out["lab"] = lab_rows(args.scale_sizes, logs, tmp, args.pauses, args.turns, args.tab)
    print(scale_table(out))
    args.scale_out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.scale_out}")


def scale_table(out: dict) -> str:
    lines = []
    ks = out.get("kernel") or []
    ref = next((r for r in ks if r["entries"] == 100), None)
    if ks:
        lines.append(
            "| entries | empty cell ms | %%durable cell ms | × 100 | widget shown ms | × 100 | × not shown | comm bytes/turn | saved state KB | show ms (kernel) | show KB (kernel) | kernel +MB |"
        )
        lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in ks:
            x = (lambda k: f"{r[k] / ref[k]:.2f}") if ref else (lambda k: "—")
            lines.append(
                f"| {r['entries']:,} | {r['empty_cell_ms']:.1f} | {r['cell_ms']:.1f} | {x('cell_ms')} | {r['cell_shown_ms']:.1f} | "
                f"{x('cell_shown_ms')} | {r['cell_shown_ms'] / r['cell_ms']:.2f} | {r['turn_comm_bytes']:,} | "
                f"{r['saved_state_bytes'] / 1024:.0f} | {r['show_ms']:.0f} | {r['show_kernel_bytes'] / 1024:.0f} | {r['kernel_rss_growth_mb']} |"
            )
    ls = out.get("lab") or []
    if ls:
        lines.append("")
        lines.append(
            "| entries | shown s after the load cell | %durable show: first paint ms | bytes to first paint | KB until idle | page heap +MB | KB after (2 s) | page bytes/turn (max) | comm bytes/turn (max) | new entries' JSON | × (worst turn) | KB at save |"
        )
        lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in ls:
            turn = f"{r['turn_page_bytes']:,.0f} ({r['turn_page_bytes_max']:,})" if "turn_page_bytes" in r else "—"
            after = f"{r['bytes_after_show'] / 1024:.0f}" if "bytes_after_show" in r else "—"
            save = f"{r['save_page_bytes'] / 1024:.0f}" if "save_page_bytes" in r else "—"
            comm = f"{r['turn_comm_bytes']:,.0f} ({r['turn_comm_bytes_max']:,})" if "turn_comm_bytes" in r else "—"
            new = f"{r['turn_new_entries_bytes']:,.0f}" if "turn_new_entries_bytes" in r else "—"
            ratio = f"{r['turn_comm_ratio']:.2f}" if "turn_comm_ratio" in r else "—"
            lines.append(
                f"| {r['entries']:,} | {r.get('pause_s', 0):g} | {r['first_paint_ms']:.0f} | {r['bytes_to_first_paint']:,} | "
                f"{r['bytes_until_idle'] / 1024:.0f} | {r['heap_growth_mb']:.1f} | {after} | {turn} | {comm} | {new} | {ratio} | {save} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10_000])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "widget_bench.json")
    ap.add_argument("--scale", action="store_true", help="the #18 parts (real kernel, real JupyterLab) instead")
    ap.add_argument("--scale-sizes", type=int, nargs="+", default=[10, 100, 10_000, 100_000, 300_000])
    ap.add_argument("--parts", nargs="+", default=["kernel", "lab"], choices=["kernel", "lab"])
    ap.add_argument("--cells", type=int, default=10)
    ap.add_argument(
        "--pauses", type=float, nargs="+", default=[0, 5], help="lab: seconds between the load cell and %%durable show"
    )
    ap.add_argument("--turns", type=int, default=0, help="lab: %%durable turns after the show (bytes per turn)")
    ap.add_argument(
        "--tab", default="tree", choices=["tree", "model", "transcript"], help="lab: the tab shown during the turns"
    )
    ap.add_argument("--scale-out", type=Path, default=ROOT / "benchmarks" / "widget_scale.json")
    args = ap.parse_args()
    if args.scale:
        return scale_main(args)
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
