"""The evaluation grid in headless Chromium: the live widget driven by the real Python SessionWidget
(widget_harness.py), and the exported page from file:// offline. Cells per pair with their outcome, cost
and time; the two filters; a click opens the pair's reply in the tree and the views; session text stays text."""

from __future__ import annotations

import pytest
from test_export_browser import FilePage
from test_grid_static import eval_agent
from widget_harness import Page, shot

from durable_nb.evals import grid
from durable_nb.share import export
from durable_nb.widget import SessionWidget

pytestmark = pytest.mark.usefixtures("recording")


def cells(page, selector=".dnb-grid-cell"):
    return page.eval_on_selector_all(
        selector,
        "els => els.map(e => [Number(e.dataset.case), Number(e.dataset.variant), e.className, e.innerText])",
    )


def visible_rows(page):
    return page.eval_on_selector_all(".dnb-grid tr[data-case]", "els => els.map(e => Number(e.dataset.case))")


def test_the_grid_filters_and_a_click_opens_the_pair_s_branch(browser):
    a, base, v2 = eval_agent()
    w = SessionWidget(a, view="grid", evaluation=grid.state(v2, base))
    h = Page(browser, w, width=1000, height=700)
    page = h.page
    try:
        page.wait_for_selector(".dnb-grid-panel .dnb-grid-cell")
        assert page.locator('.dnb-tab[data-view="grid"]').inner_text() == "Evaluation"
        head = page.locator(".dnb-grid-panel .dnb-view-head").inner_text()
        assert "Evaluation v2" in head and "4/6 passed" in head and "2 regressed" in head
        got = cells(page)
        assert len(got) == 6 and visible_rows(page) == [0, 1, 2]
        by = {(c, v): (cls, text) for c, v, cls, text in got}
        assert "dnb-grid-pass" in by[(0, 1)][0] and "dnb-grid-fail" in by[(1, 1)][0]
        assert "regressed" in by[(1, 1)][1] and "FAIL" in by[(1, 1)][1]
        assert "score 1" in by[(0, 0)][1] and " ms" in by[(0, 0)][1]  # the time a function model took
        label = page.locator('.dnb-grid tr[data-case="2"] .dnb-grid-label').inner_text()
        assert "<b>Peru</b><script>" in label  # text, not HTML
        assert page.locator(".dnb-grid b, .dnb-grid script").count() == 0
        title = page.locator('.dnb-grid-cell[data-case="1"][data-variant="1"]').get_attribute("title")
        assert "contains('{answer}'): fail" in title and "reply: Paris" in title
        shot(page, "eval_grid")
        # filters: failures only, then differs from the baseline
        page.check(".dnb-grid-filter-failures input")
        assert visible_rows(page) == [1, 2]
        assert "dnb-grid-dim" in page.locator('.dnb-grid-cell[data-case="1"][data-variant="0"]').get_attribute("class")
        page.uncheck(".dnb-grid-filter-failures input")
        page.check(".dnb-grid-filter-differs input")
        assert visible_rows(page) == [1, 2]
        shot(page, "eval_grid_differs")
        page.uncheck(".dnb-grid-filter-differs input")
        # a click opens the pair's reply: the tree tab, selected there, the views at it
        reply = next(c for c in w.evaluation["cells"] if (c["case"], c["variant"]) == (1, 1))["entry_id"]
        page.click('.dnb-grid-cell[data-case="1"][data-variant="1"]')
        page.wait_for_selector(f'.dnb-row.dnb-selected[data-id="{reply}"]')
        assert w.selected_id == reply and w.views["at"] == reply and w.view == "tree"
        assert page.locator(".dnb-details").inner_text().count(reply) >= 1
        shot(page, "eval_grid_opened")
        page.click('.dnb-tab[data-view="model"]')
        page.wait_for_function("document.querySelector('.dnb-model-panel').innerText.includes('Capital of Japan')")
        assert h.requests == []
    finally:
        h.close()


def test_the_exported_page_shows_the_newest_run_s_grid(browser, tmp_path):
    a, _, v2 = eval_agent()
    out = export(a, tmp_path / "evals.html")
    h = FilePage(browser, out)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row")
        page.click('.dnb-tab[data-view="grid"]')
        page.wait_for_selector(".dnb-grid-panel .dnb-grid-cell")
        assert len(cells(page)) == 6 and "Evaluation v2" in page.locator(".dnb-grid-panel").inner_text()
        assert page.locator(".dnb-grid-filter-differs input").is_disabled()  # no baseline on the page
        page.click('.dnb-grid-cell[data-case="0"][data-variant="0"]')
        reply = v2.results[0].entry_id
        page.wait_for_selector(f'.dnb-row.dnb-selected[data-id="{reply}"]')
        shot(page, "eval_grid_page")
        assert h.requests == [] and h.errors == []
    finally:
        h.close()
