"""The widget's find, kind filter and compare view in headless Chromium, driven by the real Python
SessionWidget (see widget_harness.py): a match on a branch that is not active is found and revealed;
two picked leaves are compared side by side with their diff; custom entries and tool results hide."""

from __future__ import annotations

import pytest
from test_compare_static import two_branches
from widget_harness import Page, front_end_send, row, shot
from widget_sessions import HOSTILE, long_agent

from durable_nb import ai, durable
from durable_nb.session import CustomEntry, MessageEntry
from durable_nb.widget import SessionWidget

pytestmark = pytest.mark.usefixtures("recording")


def in_view(page, entry_id) -> bool:
    """Whether the row of ``entry_id`` is drawn inside the tree's scrolled window."""
    return page.evaluate(
        """id => {
        const r = document.querySelector(`.dnb-row[data-id="${id}"]`), s = document.querySelector('.dnb-scroll');
        if (!r) return false;
        const a = r.getBoundingClientRect(), b = s.getBoundingClientRect();
        return a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
    }""",
        entry_id,
    )


def needle_agent():
    """A long session (2,000 entries, a branch every 50 turns) plus a turn holding 'zebra' on an early
    branch that is not the active one, and one more 'zebra' in a custom note on the active path."""
    a = long_agent(2000)
    leaf = a.leaf_id
    early = next(e for e in a.entries()[:200] if not a.on_path(e.id) and getattr(e, "message", None))
    a.branch(early.id)
    a.append(
        durable.text("Where do zebras sleep? zebra facts please"),
        MessageEntry(message=ai.assistant_message("Standing up.")),
    )
    hidden_q, hidden_r = a.entries()[-2:]
    a.branch(leaf)
    (note,) = a.append(CustomEntry(kind="note", data={"body": "ask about the Zebra again"}))
    return a, hidden_q.id, hidden_r.id, note.id


def test_find_reveals_a_match_on_a_branch_that_is_not_active(browser):
    a, hidden_q, hidden_r, note = needle_agent()
    assert not a.on_path(hidden_q) and a.on_path(note)
    w = SessionWidget(a)
    h = Page(browser, w, height=700)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        assert not in_view(page, hidden_q)  # far above the leaf the tree opened at
        page.fill(".dnb-find-input", "zebra")
        page.press(".dnb-find-input", "Enter")
        page.wait_for_function("document.querySelector('.dnb-find-count').textContent.includes('of 2')")
        first = page.locator(".dnb-find-count").text_content()
        # hits come in drawn order: the early branch's question first, then the note near the leaf
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{hidden_q}')")
        assert first == "1 of 2" and w.selected_id == hidden_q
        assert in_view(page, hidden_q)
        cls = row(page, hidden_q).get_attribute("class")
        assert "dnb-hit-current" in cls and "dnb-active" not in cls  # revealed, highlighted, off the active path
        assert "Where do zebras sleep?" in page.locator(".dnb-details").inner_text()
        shot(page, "find_other_branch")
        page.click(".dnb-find-next")
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{note}')")
        assert page.locator(".dnb-find-count").text_content() == "2 of 2" and w.selected_id == note
        assert in_view(page, note) and "dnb-hit-current" in row(page, note).get_attribute("class")
        page.press(".dnb-find-input", "Enter")  # wraps round to the first
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{hidden_q}')")
        # words, not substrings (the rule of %durable search): 'zebr' finds nothing
        page.fill(".dnb-find-input", "zebr")
        page.press(".dnb-find-input", "Enter")
        page.wait_for_function("document.querySelector('.dnb-find-count').textContent === 'no match'")
        # hidden by the kind filter: the note's hit stands on its nearest drawn ancestor
        page.check(".dnb-filter-custom input")
        page.wait_for_function(f"!document.querySelector('.dnb-row[data-id=\"{note}\"]')")
        assert w.hidden == ["custom"]
        page.fill(".dnb-find-input", "zebra")
        page.press(".dnb-find-input", "Enter")
        page.wait_for_function("document.querySelector('.dnb-find-count').textContent === '1 of 2'")
        page.click(".dnb-find-next")
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{note}')")
        assert "dnb-hit-current" in row(page, a.path()[-2].id).get_attribute("class")  # the note's parent
        assert not h.requests
    finally:
        h.close()


def test_pick_two_leaves_compare_them_and_filter(browser):
    a, first, second = two_branches(HOSTILE)
    a.label("draft", first)
    a.append(CustomEntry(kind="memo", data={"why": "a custom entry the filter hides"}), move=False)
    w = SessionWidget(a)
    h = Page(browser, w, width=1100, height=900)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        assert not page.locator('.dnb-tab[data-view="compare"]').is_visible()  # nothing to compare yet
        for entry in (first, second):
            row(page, entry).click()
            page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{entry}')")
            page.click(".dnb-pick")
        assert "pick 1" in row(page, first).inner_text() and "pick 2" in row(page, second).inner_text()
        assert page.locator(".dnb-picks").inner_text().startswith("2 picked")
        page.click(".dnb-compare-go")
        page.wait_for_selector(".dnb-compare-panel .dnb-compare-side")
        assert w.view == "compare" and [s["entry_id"] for s in w.comparison["sides"]] == [first, second]
        panel = page.locator(".dnb-compare-panel")
        sides = panel.locator(".dnb-compare-side")
        assert sides.count() == 2
        left, right = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
        assert right["x"] >= left["x"] + left["width"] - 1  # side by side
        assert "draft" in sides.nth(0).inner_text() and "gpt-4o-mini" in sides.nth(0).inner_text()
        assert "cost unknown" in sides.nth(1).inner_text() and "$" in sides.nth(0).inner_text()
        assert sides.nth(1).locator(".dnb-card.dnb-diff-added").inner_text().count("Use bullets.") == 1
        assert sides.nth(1).locator(".dnb-card.dnb-diff-changed").count() == 1
        assert sides.nth(0).locator(".dnb-card.dnb-diff-changed").count() == 1
        diff = panel.locator(".dnb-compare-diff").inner_text()
        assert "0 messages the same, 1 changed, 1 added" in diff
        assert "model: gpt-4o-mini → offline" in diff and "setting temperature: 0.2 → 0.7" in diff
        assert "setting seed: (not set) → 1" in diff
        assert HOSTILE in sides.nth(0).locator(".dnb-compare-reply").inner_text()  # text, not HTML
        assert page.evaluate("window.__pwned") is None
        shot(page, "compare")
        # back to the tree; a custom entry (a label is a chip, never a row): the filter hides it
        page.click('.dnb-tab[data-view="tree"]')
        custom_entry = a.entries()[-1]
        row(page, custom_entry.id).wait_for()
        page.check(".dnb-filter-custom input")
        page.wait_for_function(f"!document.querySelector('.dnb-row[data-id=\"{custom_entry.id}\"]')")
        assert w.hidden == ["custom"] and row(page, second).is_visible()
        # clearing the comparison goes back to the tree and hides the tab
        page.click('.dnb-tab[data-view="compare"]')
        page.click(".dnb-compare-clear")
        page.wait_for_function("!document.querySelector('.dnb-tab[data-view=\"compare\"]').offsetParent")
        assert w.comparison == {}
        assert not h.requests
    finally:
        h.close()


def test_a_bad_compare_or_filter_request_is_one_line_and_changes_nothing():
    a, first, second = two_branches()
    w = SessionWidget(a)
    front_end_send(w, {"action": "compare", "ids": [first, "nope"]})
    assert "nope" in w.error and "\n" not in w.error and w.comparison == {}
    front_end_send(w, {"action": "filter", "hide": ["progress"]})
    assert w.error.startswith("no kind filter 'progress'") and w.hidden == []
    front_end_send(w, {"action": "compare", "ids": [first, second]})
    assert w.error == "" and w.view == "compare"
