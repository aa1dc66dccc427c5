"""In real JupyterLab: what a page receives on the widget's comm during a turn is bounded by what the turn logged.

Issue #32: a turn with the widget shown sends at most 2x the JSON of the entries it added, at every
size (``benchmarks/widget_bench.py --scale --parts lab --turns 3`` measures it at 100 to 1M entries).
``tests/notebook/test_comm_bytes_kernel.py`` pins the kernel's side without a page; this test counts
every websocket frame of a comm message (``comm_open``, ``comm_msg``, ``comm_close``) the page
receives, JupyterLab's framing included, from the key press until the page has been quiet after the
kernel went idle (the replies to what the page asks for once the turn ended count too), on each tab,
for a new cell and for the same cell re-run twice (each a branch before the old leaf, after the last).
A reply to a request the page sent before the key press (the show's first timeline, when the kernel
answers it late: at 1M entries it takes seconds) is not the turn's: it is told apart by its parent
message and reported as ``late``, not counted.
"""

from __future__ import annotations

import re

from .lab import LabServer, frame_ids, open_notebook, require_extension, run_cell, wait_kernel, write_notebook

LIMIT = 1.8  # comm bytes a turn may send per byte of JSON its entries add: 10% below #32's 2x
QUIET_MS = 1500  # after the kernel is idle: what the page asks for then (the timeline) counts too
SESSION = "turn-bytes"
FILL = """from durable_nb import ai, durable
from durable_nb.notebook import current
from durable_nb.session import MessageEntry
current().agent.append(*[
    durable.text(f"Question {i}: " + "what about this item? " * 8) if i % 2 == 0
    else MessageEntry(message=ai.assistant_message(f"Answer {i}: " + "it is **fine**, as said. " * 30))
    for i in range(400)
])"""
TABS = ("tree", "model", "transcript")
CELLS = [
    ("setup", f"%load_ext durable_nb\n%config DurableMagics.session = {SESSION!r}", []),
    ("fill", FILL, []),  # a session whose views are full (100 items each) and long
    ("show", "%durable show", []),
    *((f"turn-{tab}", f"%%durable\nOn the {tab} tab: " + "tell me more. " * 20, []) for tab in TABS),
]


def _is_comm(payload: str | bytes) -> bool:
    text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
    m = re.search(r'"msg_type":\s*"(\w+)"', text)
    return bool(m) and m.group(1).startswith("comm_")


def test_a_turn_sends_the_page_at_most_what_it_logged(tmp_path, page, screenshots):
    root = tmp_path / "lab"
    root.mkdir()
    write_notebook(root / "bytes.ipynb", CELLS)
    comm: list[tuple[int, str]] = []  # each comm frame the page received: its size and its parent's id
    asked: list[str] = []  # the id of every message the page sent

    def on_ws(ws) -> None:
        ws.on("framesent", lambda payload: asked.append(frame_ids(payload)[0]))
        ws.on(
            "framereceived",
            lambda payload: comm.append((len(payload), frame_ids(payload)[1])) if _is_comm(payload) else None,
        )

    page.on("websocket", on_ws)
    with LabServer(root) as server:
        open_notebook(page, server, "bytes.ipynb")
        require_extension(page)
        for i in range(3):
            run_cell(page, i)
        page.wait_for_selector(".dnb-widget .dnb-row.dnb-leaf", timeout=30_000)
        page.wait_for_timeout(2500)  # the whole fallback once drawn (1.5 s) and anything else after the show
        (log,) = root.rglob(f"{SESSION}.jsonl")
        seen = []
        for k, tab in enumerate(TABS):
            if tab != "tree":
                page.locator(f'.dnb-widget .dnb-tab[data-view="{tab}"]').click()
                page.wait_for_selector(f".dnb-widget .dnb-{tab}-panel .dnb-card", timeout=30_000)
                page.wait_for_timeout(500)
                page.locator(".dnb-widget").screenshot(path=screenshots / f"turn_bytes_{tab}_tab.png")
            for run in ("new cell", "re-run", "re-run again"):  # a re-run: a branch before the old leaf
                before = log.stat().st_size
                comm.clear()
                earlier = set(asked) - {""}  # a reply to one of these answers what the page asked before the turn
                run_cell(page, 3 + k)
                wait_kernel(page)
                page.wait_for_timeout(QUIET_MS)
                added = log.stat().st_size - before
                sent = sum(n for n, parent in comm if parent not in earlier)
                late = sum(n for n, parent in comm if parent in earlier)
                assert all(parent for _, parent in comm), "a comm frame without a parent: frame_ids misread it"
                seen.append((tab, run, sent, added, round(sent / added, 2), late))
                assert added > 5000, seen  # the user message and the offline model's listing of the last 40
                assert sent <= LIMIT * added, seen
            page.locator(".dnb-widget").screenshot(path=screenshots / f"turn_bytes_{tab}_after_turn.png")
        print(seen)
        # the page shows what the kernel holds: the last turn in the view, and in the tree once back there
        assert "On the transcript tab" in (page.locator(".dnb-widget .dnb-transcript-panel").text_content() or "")
        page.locator('.dnb-widget .dnb-tab[data-view="tree"]').click()
        # the tree, hidden during the last six turns, scrolls to the leaf once shown
        leaf = page.locator(".dnb-widget .dnb-row.dnb-leaf")
        leaf.wait_for(timeout=30_000)
        assert "I received" in (leaf.text_content() or "")
        assert "I received" in (page.locator(".dnb-widget .dnb-details").text_content() or "")  # the leaf's details
        page.locator(".dnb-widget").screenshot(path=screenshots / "turn_bytes_tree_again.png")
