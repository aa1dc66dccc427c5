"""The exported .html page and the static fallback in headless Chromium, from file://, with the
network blocked and every request recorded: the page works like the widget; hostile text runs nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from widget_sessions import EVIL, hostile_agent

from durable_nb.share import export
from durable_nb.widget import SessionWidget

pytestmark = pytest.mark.usefixtures("recording")

SHOTS_DIR = Path(__file__).resolve().parent / "screenshots" / "last"
SHOTS_DIR.mkdir(parents=True, exist_ok=True)


class FilePage:
    """A page opened from ``file://`` in an offline context: ``requests`` are all the other URLs
    it asked for (each refused), ``errors`` the console errors and page errors it had."""

    def __init__(self, browser, path: Path, width: int = 1000, height: int = 900) -> None:
        self.context = browser.new_context(offline=True, viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: r.url != self.url and self.requests.append(r.url))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.context.route("**/*", lambda route: route.continue_() if route.request.url == self.url else route.abort())
        self.page.goto(self.url)

    def close(self) -> None:
        self.context.close()


def ids_of(page, selector):
    return page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.id)")


def test_exported_page_works_like_the_widget_from_file_with_no_network(browser, agent, tmp_path):
    out = export(agent, tmp_path / "session.html")
    ids = agent.ids
    h = FilePage(browser, out)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        # the tree: every entry, the active path, the leaf, the branch point
        assert len(ids_of(page, ".dnb-row")) == len(agent.entries())
        assert set(ids_of(page, ".dnb-row.dnb-active")) == {e.id for e in agent.path()}
        assert ids_of(page, ".dnb-row.dnb-leaf") == [agent.leaf_id]
        assert "2 branches" in page.locator(f'.dnb-row[data-id="{ids["result"]}"]').inner_text()
        assert set(ids_of(page, ".dnb-row.dnb-elided")) == {ids[k] for k in ("meta", "q1", "r1", "call", "result")}
        # select an entry on the other branch: its details, and the views there
        page.click(f'.dnb-row[data-id="{ids["hostile"]}"]')
        assert ids_of(page, ".dnb-row.dnb-selected") == [ids["hostile"]]
        details = page.locator(".dnb-details").inner_text()
        assert ids["hostile"] in details and "on active path" in details
        assert page.locator(".dnb-details .dnb-text").first.text_content() == agent.entry(ids["hostile"]).message.text()
        page.screenshot(path=str(SHOTS_DIR / "export-tree-selected.png"))
        # toggle the views: the model view at the selected entry (the tool call, the reminder block)
        page.click('.dnb-tab[data-view="model"]')
        model = page.locator(".dnb-model-panel")
        assert model.is_visible() and not page.locator(".dnb-tree-panel").is_visible()
        assert f"Model view at {ids['hostile'][:8]}" in model.inner_text()
        assert (
            "tool call · search · call_1" in model.inner_text() and "reminder block · model only" in model.inner_text()
        )
        page.screenshot(path=str(SHOTS_DIR / "export-model-view.png"))
        page.click('.dnb-tab[data-view="transcript"]')
        transcript = page.locator(".dnb-transcript-panel").inner_text()
        assert "Show it as HTML" in transcript and "Answer briefly." not in transcript  # meta hidden
        # a read-only page offers no kernel action: no "Continue from here", no picks, no find or filter
        page.click('.dnb-tab[data-view="tree"]')
        assert page.locator(".dnb-details").is_visible()
        for kernel_action in (".dnb-continue", ".dnb-pick", ".dnb-tools"):
            assert page.locator(kernel_action).count() and not page.locator(kernel_action).first.is_visible()
        page.click(f'.dnb-row[data-id="{ids["hostile"]}"]')
        # keyboard: arrow up selects the entry drawn above
        page.focus(".dnb-scroll")
        page.keyboard.press("ArrowUp")
        assert ids_of(page, ".dnb-row.dnb-selected") == [ids["html_q"]]
        assert h.requests == [] and h.errors == []
    finally:
        h.close()


def test_hostile_page_runs_no_script_and_requests_nothing(browser, tmp_path):
    agent = hostile_agent()
    out = export(agent, tmp_path / "hostile.html")
    h = FilePage(browser, out)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        for entry_id in (agent.ids["call"], agent.ids["result"], agent.leaf_id):
            page.click(f'.dnb-row[data-id="{entry_id}"]')
            for view in ("model", "transcript", "tree"):
                page.click(f'.dnb-tab[data-view="{view}"]')
        page.click(f'.dnb-row[data-id="{agent.ids["call"]}"]')
        page.click('.dnb-tab[data-view="model"]')
        shown = page.locator(".dnb-model-panel").inner_text()
        assert f"tool call · tool{EVIL} · call{EVIL}" in shown and f"image/png{EVIL}" in shown
        page.wait_for_timeout(200)  # an onerror would have fired by now
        assert page.evaluate("window.__pwned") is None
        assert page.locator(".dnb-widget img, .dnb-widget script").count() == 0
        assert h.requests == [] and h.errors == []
    finally:
        h.close()


def test_static_fallback_runs_no_script_and_requests_nothing(browser, tmp_path):
    agent = hostile_agent()
    pages = []
    for selected in ("", agent.ids["call"]):
        html = SessionWidget(agent, selected_id=selected)._repr_mimebundle_()[0]["text/html"]
        pages.append(html)
    f = tmp_path / "fallback.html"
    f.write_text('<!doctype html><meta charset="utf-8"><body>' + "".join(pages) + "</body>", encoding="utf-8")
    h = FilePage(browser, f)
    page = h.page
    try:
        page.wait_for_selector(".dnb-static")
        for d in page.locator("details").all():  # open every section
            d.evaluate("e => e.open = true")
        page.wait_for_timeout(200)
        text = page.locator("body").inner_text()
        assert f"Question {EVIL}" in text and f"tool call · tool{EVIL}" in text
        assert page.evaluate("window.__pwned") is None
        assert page.locator("img, script").count() == 0
        assert h.requests == [] and h.errors == []
        page.screenshot(path=str(SHOTS_DIR / "fallback-hostile.png"), full_page=True)
    finally:
        h.close()
