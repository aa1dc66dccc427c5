"""Inspecting a session in headless Chromium: chips (labels, verdicts, annotations) on their entries, the
List panel's filters and sorts (answered by the real SessionWidget), keyboard steps, the timeline strip,
and deep links into an exported page opened from file:// with no request at all (#29.2-4, #27.12)."""

from __future__ import annotations

import re

import pytest
from test_export_browser import FilePage
from widget_harness import SHOTS, Page, row

from durable_nb import ai, durable
from durable_nb.kinds.verdict import VerdictEntry
from durable_nb.session import MessageEntry, new_id, now
from durable_nb.share import export
from durable_nb.widget import SessionWidget

pytestmark = pytest.mark.usefixtures("recording")


def model(messages):
    text = messages[-1].text()
    usage = {"input_tokens": 100 * len(messages), "output_tokens": 20}
    return ai.assistant_message(f"About {text}", model="gpt-4o-mini-2024-07-18", usage=usage)


def inspected_agent():
    """Three turns, a failed tool call, two annotations by ana (a correction) and one by bob, a verdict,
    and a label at the leaf (the agent's leaf is the label entry)."""
    a = durable.Agent(model=model)
    a.run("What is the capital of France?").wait()
    first = a.leaf_id
    call = MessageEntry(message=ai.Message(role="assistant", content=[ai.ToolCall("c1", "search", {"q": "x"})]))
    failed = MessageEntry(
        message=ai.Message(
            role="tool_result", content=[ai.Text("boom")], tool_call_id="c1", tool_name="search", is_error=True
        )
    )
    _, failed = a.append(call, failed)
    a.run("And of Italy?").wait()
    second = a.leaf_id
    a.run("And of Spain?").wait()
    third = a.leaf_id
    a.annotate(first, note="missed the tool", tags=["wrong-tool"], score=0.2, by="ana")
    a.annotate(first, note="fine after all", tags=["wrong-tool"], score=0.6, by="ana")
    a.annotate(second, note="terse", tags=["style"], score=0.9, by="bob")
    verdict = VerdictEntry(id=new_id(), parent_id=second, created_at=now(), target_id=second, run="r1", grader="exact",
                           passed=True, score=1.0)  # fmt: skip
    a.append(verdict, move=False)
    a.label("v1")
    return a, first, second, third, failed.id


def ids(page, selector):
    return page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.id)")


def test_chips_filters_keys_and_timeline_in_the_live_widget(browser):
    a, first, second, third, failed = inspected_agent()
    w = SessionWidget(a)
    h = Page(browser, w, width=1100, height=860)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        # chips on their entries; no bookkeeping row; the leaf badge on the labelled reply
        assert page.locator(".dnb-row", has_text="custom ·").count() == 0
        assert ids(page, ".dnb-row.dnb-leaf") == [third] and a.entry(a.leaf_id).kind == "label"
        assert row(page, third).locator(".dnb-name").all_inner_texts() == ["v1"]
        assert row(page, first).locator(".dnb-chip-note").all_inner_texts() == ["★ 0.6 #wrong-tool · ana ×2"]
        assert row(page, second).locator(".dnb-chip-pass").inner_text() == "pass · exact · 1"
        assert row(page, second).locator(".dnb-chip-note").inner_text() == "★ 0.9 #style · bob"
        # the timeline: one bar per turn; a click selects that turn
        bars = page.locator(".dnb-timeline-bar")
        bars.first.wait_for()
        assert bars.count() == 3
        bars.nth(1).click()
        turn2 = a.entry(second).parent_id
        page.locator(f'.dnb-row.dnb-selected[data-id="{turn2}"]').wait_for()
        # keys: n steps to the next turn (Python finds it), ? opens the help
        page.focus(".dnb-scroll")
        page.keyboard.press("n")
        page.locator(f'.dnb-row.dnb-selected[data-id="{a.entry(third).parent_id}"]').wait_for()
        page.keyboard.press("?")
        assert (
            page.locator(".dnb-keys-help").is_visible()
            and "next branch point" in page.locator(".dnb-keys-help").inner_text()
        )
        page.keyboard.press("Escape")
        assert not page.locator(".dnb-keys-help").is_visible()
        # the List panel: filtered and sorted in Python
        page.click('.dnb-tab[data-view="list"]')
        count = page.locator(".dnb-list-count")
        page.wait_for_function("document.querySelector('.dnb-list-count').innerText.includes('match')")
        assert count.inner_text() == "8 entries match"  # every entry but the 5 bookkeeping ones
        page.select_option(".dnb-list-tag select", "wrong-tool")
        page.wait_for_function("document.querySelector('.dnb-list-count').innerText.startsWith('1 ')")
        assert ids(page, ".dnb-list-item") == [first]
        page.fill(".dnb-list-score", "0.7")
        page.dispatch_event(".dnb-list-score", "change")
        page.wait_for_function("document.querySelector('.dnb-list-count').innerText.startsWith('0 ')")
        page.fill(".dnb-list-score", "")
        page.dispatch_event(".dnb-list-score", "change")
        page.select_option(".dnb-list-tag select", "")
        page.check(".dnb-list-error input")
        page.wait_for_function("document.querySelector('.dnb-list-count').innerText.startsWith('1 ')")
        assert ids(page, ".dnb-list-item") == [failed]
        page.uncheck(".dnb-list-error input")
        page.select_option(".dnb-list-role select", "assistant")
        page.select_option(".dnb-list-sort", "cost")
        page.wait_for_function("document.querySelectorAll('.dnb-list-item').length === 4")
        listed = ids(page, ".dnb-list-item")
        assert (
            listed[:3] == [third, second, first] and listed[3] != failed
        )  # the priciest first; the call (no price) last
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(".dnb-widget").screenshot(path=str(SHOTS / "list-filters.png"))  # docs/widget-list.png
        page.select_option(".dnb-list-role select", "")
        page.select_option(".dnb-list-tag select", "style")
        page.wait_for_function("document.querySelectorAll('.dnb-list-item').length === 1")
        page.locator(".dnb-list-item").click()  # opens it in the tree
        page.locator(f'.dnb-row.dnb-selected[data-id="{second}"]').wait_for()
        details = page.locator(".dnb-details").inner_text()
        assert "pass · exact" in details and "terse" in details  # the chips, with the note, in the details
        assert page.locator(".dnb-copy").get_attribute("data-link") == f"%durable show {second}"
        page.locator(".dnb-widget").screenshot(path=str(SHOTS / "chips-filters.png"))  # docs/widget-chips.png
        assert h.requests == []
    finally:
        h.close()


def test_a_turn_after_a_label_is_drawn_on_the_chain(browser):
    a, first, second, third, _ = inspected_agent()
    w = SessionWidget(a)
    h = Page(browser, w)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        a.run("And of Portugal?").wait()  # hangs under the label entry
        w.sync()
        h.push()
        page.locator(f'.dnb-row.dnb-leaf[data-id="{a.leaf_id}"]').wait_for()
        drawn = ids(page, ".dnb-row")
        assert drawn[-3:] == [third, a.entry(a.leaf_id).parent_id, a.leaf_id]
        assert page.locator(".dnb-row .dnb-glyph").last.inner_text() == "●"  # continues: no branch glyph
        assert page.locator(".dnb-badge.dnb-fork").count() == 0
    finally:
        h.close()


def test_show_entry_opens_the_widget_at_that_entry(browser):
    from widget_sessions import long_agent

    a = long_agent(300)
    far = a.path()[5].id
    a.label("early", far)
    w = SessionWidget(a, selected_id=a.resolve("early"))  # what %durable show early does
    h = Page(browser, w)
    page = h.page
    try:
        sel = page.locator(f'.dnb-row.dnb-selected[data-id="{far}"]')
        sel.wait_for()
        assert sel.is_visible() and sel.bounding_box()["y"] < 860
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{far}')")
    finally:
        h.close()


def test_deep_links_into_an_exported_page_from_file_with_no_request(browser, tmp_path):
    a, first, second, third, failed = inspected_agent()
    out = export(a, tmp_path / "session.html")
    for ref, want in ((second, second), (first[:6], first), ("v1", third)):
        h = FilePage(browser, out)
        try:
            h.page.goto(f"{h.url}#entry={ref}")
            h.page.reload()
            sel = h.page.locator(f'.dnb-row.dnb-selected[data-id="{want}"]')
            sel.wait_for()
            assert sel.is_visible()
            h.page.locator(f".dnb-details:has-text('{want}')").wait_for()
            link = h.page.locator(".dnb-copy").get_attribute("data-link")
            assert link == f"{h.url}#entry={want}"
            assert h.requests == [] and h.errors == []
        finally:
            h.close()
    h = FilePage(browser, out)
    try:
        h.page.goto(f"{h.url}#entry=nothing-here")
        h.page.reload()
        h.page.locator(".dnb-row.dnb-leaf").wait_for()
        assert "#entry=nothing-here names no entry" in h.page.locator(".dnb-error").inner_text()
        assert ids(h.page, ".dnb-row.dnb-leaf") == [third] and ids(h.page, ".dnb-row.dnb-selected") == []
        # the List panel works offline too, from the page's own data
        h.page.click('.dnb-tab[data-view="list"]')
        h.page.select_option(".dnb-list-tag select", "wrong-tool")
        # locator waits, not wait_for_function: the page's CSP (no 'unsafe-eval') refuses a string predicate
        h.page.locator(".dnb-list-count", has_text=re.compile(r"^1 entry")).wait_for()
        assert ids(h.page, ".dnb-list-item") == [first]
        h.page.check(".dnb-list-error input")
        h.page.locator(".dnb-list-count", has_text=re.compile(r"^0 entries")).wait_for()
        h.page.screenshot(path=str(SHOTS / "export-deep-link-list.png"))
        h.page.evaluate(f"location.hash = 'entry={second[:6]}'")  # a link followed within the page
        h.page.locator(f'.dnb-row.dnb-selected[data-id="{second}"]').wait_for()
        assert h.requests == [] and h.errors == []
    finally:
        h.close()
