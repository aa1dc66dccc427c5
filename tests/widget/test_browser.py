"""The session browser (%durable sessions): one row per session from each store's skeletons, the
static and text fallbacks, opening a row, other tools' logs; in headless Chromium: sort and open."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price
from widget_harness import SHOTS, Page

from durable_nb import ai, durable
from durable_nb.cost import format_cost
from durable_nb.digests import listing, log_digests, store_digests
from durable_nb.errors import DurableError
from durable_nb.importers.found import known_logs
from durable_nb.session import JsonlStore, MemoryStore, MessageEntry, SqliteStore
from durable_nb.widget.browser import SessionBrowser, html

ROOT = Path(__file__).resolve().parents[2]
MODEL = "gpt-4o-mini-2024-07-18"


def reply(text: str, model: str = MODEL, i: int = 1000, o: int = 50) -> MessageEntry:
    return MessageEntry(message=ai.assistant_message(text, model=model, usage={"input_tokens": i, "output_tokens": o}))


def fill(store) -> None:
    """Three sessions: 'small' (1 turn, priced), 'branched' (3 turns on 2 branches, two models, one
    unpriced, a label and an ephemeral turn), 'empty'."""
    a = durable.Agent(store=store, session_id="small")
    a.append("What is 2+2?", reply("4"))
    b = durable.Agent(model=lambda m: "ok", store=store, session_id="branched")
    b.append("plan the trip", reply("a plan", i=2000, o=300))
    first = b.leaf_id
    b.append("more detail", reply("detail", model="offline-local"))  # not in the price table
    b.label("long")
    b.branch(first)
    b.append("shorter, please", reply("short", i=500, o=20))
    b.run(durable.ephemeral("scratch"), "one more").wait()  # an ephemeral entry: never stored
    durable.Agent(store=store, session_id="empty")


def price(i: int, o: int) -> float:
    return float(calc_price(Usage(input_tokens=i, output_tokens=o), MODEL).total_price)


@pytest.mark.parametrize("kind", ["jsonl", "sqlite", "memory"])
def test_every_store_gives_the_same_rows(tmp_path, kind):
    store = {"jsonl": lambda: JsonlStore(tmp_path / "s"), "sqlite": lambda: SqliteStore(tmp_path / "s.db")}.get(
        kind, MemoryStore
    )()
    fill(store)
    rows = {d.name: d for d in store_digests(store)}
    assert list(rows) == ["small", "branched", "empty"]  # oldest first
    s, b, e = rows["small"], rows["branched"], rows["empty"]
    assert (s.entries, s.turns, s.branches, s.models, s.input_tokens, s.output_tokens) == (2, 1, 1, (MODEL,), 1000, 50)
    assert s.cost_text == format_cost(calc_price(Usage(input_tokens=1000, output_tokens=50), MODEL).total_price)
    # 2 + 2 + label + 2 + the offline turn's 2 (the ephemeral entry is never stored)
    assert (b.entries, b.turns, b.branches) == (9, 4, 2)
    assert b.models == (MODEL, "offline-local", "<lambda>") and b.cost is None and b.cost_text == "cost unknown"
    assert (b.input_tokens, b.output_tokens) == (3500, 370)
    assert (e.entries, e.turns, e.branches, e.cost_text, e.models) == (0, 0, 0, "$0.0000", ())
    assert all(d.size and d.size > 0 for d in (s, b)) and not any(d.read_only for d in rows.values())
    assert s.last >= s.last[:4] and b.last > s.last


def test_postgres_gives_the_same_rows(pg_dsn):
    from durable_nb.session import PostgresStore

    st = PostgresStore(pg_dsn)
    try:
        fill(st)
        rows = {d.name: (d.entries, d.turns, d.branches, d.cost_text) for d in store_digests(st)}
        assert rows["small"][:3] == (2, 1, 1) and rows["branched"] == (9, 4, 2, "cost unknown")
        assert rows["empty"][:3] == (0, 0, 0)
    finally:
        st.close()


def test_a_bad_log_is_a_row_saying_why_and_the_listing_is_the_old_text(tmp_path):
    store = JsonlStore(tmp_path / "s")
    fill(store)
    bad = store.file("small")
    bad.write_text(bad.read_text() + '{"type": "message", "id": 7}\n')
    (tmp_path / "s" / "junk.jsonl").write_text("not json\n")
    rows = store_digests(store)
    by = {d.name: d for d in rows}
    assert by["small"].entries is None and f"{bad}:4" in by["small"].problem
    assert by["junk.jsonl"].problem and by["branched"].entries == 9  # one bad log hides nothing
    text = listing(rows, str(tmp_path / "s"), current="branched")
    assert text.startswith(f"4 session(s) in {tmp_path / 's'}:\n")  # as %durable sessions always printed
    assert re.search(r"\n\* branched +9 entries  last 20\d\d-", text) and re.search(r"\n! small +unreadable: ", text)


def test_open_a_row_and_the_static_fallback_is_escaped(tmp_path):
    store = MemoryStore()
    fill(store)
    durable.Agent(store=store, session_id="evil").append("x", reply("y", model="<img src=x onerror=alert(1)>"))
    opened = []

    def on_open(ref):
        if ref == "empty":
            raise DurableError("cannot open 'empty': it is empty")
        opened.append(ref)
        return f"opened {ref}"

    w = SessionBrowser(store_digests(store), where="memory", current="small", on_open=on_open)
    w.open_row("branched")
    assert (w.opened, w.status, opened) == ("branched", "opened branched", ["branched"])
    w.open_row("empty")
    assert (w.opened, w.status) == ("", "cannot open 'empty': it is empty")
    w.open_row("nope")
    assert w.status == "no row 'nope' in this table" and opened == ["branched"]
    data, _ = w._repr_mimebundle_()
    page = data["text/html"]
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page and "<script" not in page
    assert "small (notebook)" in page and page.index("evil") < page.index(">small")  # newest first
    assert data["text/plain"].startswith("4 session(s) in memory:\n* small ")
    assert html({"rows": [], "where": "x", "current": ""}).count("<tr>") == 1  # the header alone


def test_other_tools_logs_are_read_only_rows_counted_once(tmp_path, monkeypatch):
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-work-demo"
    project.mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "data" / "claude-code-tool-heavy.jsonl", project / "s1.jsonl")
    (project / "broken.jsonl").write_text("{not json\n")
    found = known_logs(home=home, env={})
    rows = {Path(d.ref).name: d for d in log_digests(found)}
    good, broken = rows["s1.jsonl"], rows["broken.jsonl"]
    assert good.read_only and good.tool == "claude_code" and good.turns and good.entries and good.size
    assert broken.problem and broken.entries is None
    import durable_nb.importers as importers

    def never(*a, **k):
        raise AssertionError("imported again")

    monkeypatch.setattr(importers, "open_session", never)
    assert log_digests(found)[0] == rows[Path(log_digests(found)[0].ref).name]  # same size and time: cached
    assert [d.entries for d in log_digests(found, read=0)] == [None, None]  # beyond the newest: size and date


def claude_home(tmp_path, monkeypatch) -> Path:
    """A home folder holding one Claude Code log (the tutorials' own), set as $HOME."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-work-demo"
    project.mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "data" / "claude-code-tool-heavy.jsonl", project / "s1.jsonl")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.mark.usefixtures("recording")
def test_the_table_sorts_and_a_click_opens_the_row(browser, tmp_path, monkeypatch):
    store = JsonlStore(tmp_path / ".durable")
    fill(store)
    for i in range(3):
        durable.Agent(store=store, session_id=f"run-{i}").append(f"question {i}", reply("answer", i=100 * (i + 1)))
    opened = []
    logs = log_digests(known_logs(home=claude_home(tmp_path, monkeypatch), env={}))
    w = SessionBrowser(
        store_digests(store) + logs,
        where=".durable",
        current="branched",
        on_open=lambda ref: opened.append(ref) or f"opened {ref} read-only",
    )
    h = Page(browser, w, width=1100, height=420)
    page = h.page
    try:
        page.wait_for_selector(".dnb-browser-row")
        every = lambda: page.locator(".dnb-browser-row td:first-child").all_inner_texts()  # noqa: E731
        names = lambda: [n for n in every() if not n.endswith(".jsonl")]  # noqa: E731  (the store's rows)
        assert names()[0] == "run-2" and names()[-1] == "small"  # newest activity first
        assert every()[-1] == "-work-demo/s1.jsonl"  # its project and file; its last entry is older
        assert "6 sessions in .durable · 1 log of other tools" in page.locator(".dnb-browser-head").inner_text()
        log_row = page.locator(".dnb-browser-row").last
        assert log_row.locator("td").last.inner_text() == "Claude Code"  # read-only: whose log it is
        page.locator('th[data-col="turns"] button').click()
        page.wait_for_function(
            "document.querySelector('th[data-col=turns]').getAttribute('aria-sort') === 'descending'"
        )
        assert names()[0] == "branched (notebook)" and w.sort == "-turns"  # the page told the kernel
        page.locator('th[data-col="cost"] button').click()
        page.wait_for_function("document.querySelector('th[data-col=cost]').getAttribute('aria-sort') === 'descending'")
        order = names()
        assert order[0] == "small" and order[-1].startswith("branched")  # unknown cost last
        page.locator('th[data-col="cost"] button').click()  # again: ascending, unknown still last
        page.wait_for_function("document.querySelector('th[data-col=cost]').getAttribute('aria-sort') === 'ascending'")
        assert names()[0] == "empty" and names()[-1].startswith("branched")
        page.locator('.dnb-browser-row[data-ref="run-1"]').click()
        page.wait_for_selector('.dnb-browser-row.dnb-opened[data-ref="run-1"]')
        assert opened == ["run-1"] and page.locator(".dnb-browser-status").inner_text() == "opened run-1 read-only"
        page.locator('.dnb-browser-row[data-ref="small"]').focus()
        page.keyboard.press("Enter")
        page.wait_for_selector('.dnb-browser-row.dnb-opened[data-ref="small"]')
        assert opened == ["run-1", "small"] and h.requests == []  # nothing fetched
        page.locator('th[data-col="last"] button').click()
        page.evaluate("document.querySelector('.dnb-browser').scrollLeft = 0")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(".dnb-browser").screenshot(path=str(SHOTS / "session-browser.png"))  # docs/ has a copy
    finally:
        h.close()


def test_a_terminal_prints_the_listing_with_the_logs(shell, tmp_path, monkeypatch, capsys):
    claude_home(tmp_path, monkeypatch)
    fill(JsonlStore(tmp_path / "kept"))
    sh = shell
    sh.run_line_magic("config", f"DurableMagics.store = {str(tmp_path / 'kept')!r}")
    try:
        capsys.readouterr()
        assert sh.run_line_magic("durable", "sessions --logs") is None  # no kernel, no widget: text
        out = capsys.readouterr().out
        assert out.startswith(f"3 session(s) in {tmp_path / 'kept'}:\n") and "  branched      9 entries  last " in out
        assert "\n1 log(s) of other tools (%durable open PATH opens one read-only):\n" in out
        assert re.search(r"\n  -work-demo/s1\.jsonl  34 entries  6 turns  [\d.]+ KB  20\d\d-", out), out
        assert "log(s)" not in (sh.run_line_magic("durable", "sessions"), capsys.readouterr().out)[1]
    finally:
        sh.run_line_magic("config", "DurableMagics.store = '.durable'")


def test_a_jsonl_store_is_counted_without_loading_a_session(tmp_path, monkeypatch):
    store = JsonlStore(tmp_path / "s")
    fill(store)
    for i in range(100):
        durable.Agent(store=store, session_id=f"r{i:03d}").append("q " * 200, reply("a " * 500))
    want = {d.name: d for d in store_digests(store)}

    def never(self, id):
        raise AssertionError(f"session {id} loaded in full")

    monkeypatch.setattr(JsonlStore, "load_entries", never)
    got = {d.name: d for d in store_digests(store)}  # the skeletons only: ids, roles, models, usage
    assert got == want and len(got) == 103 and got["r042"].entries == 2 and got["branched"].turns == 4
