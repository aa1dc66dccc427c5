"""durable_nb/static/widget.js in headless Chromium, driven by the real Python SessionWidget (see widget_harness.py)."""

from __future__ import annotations

import pytest
from widget_harness import SHOTS, Page, row, shot
from widget_sessions import HOSTILE, REMINDER, long_agent, tool_agent

from durable_nb.widget import SessionWidget

pytestmark = pytest.mark.usefixtures("recording")


def visible_text(page, selector):
    return page.locator(selector).inner_text()


def test_tree_views_details_and_branch_round_trip(browser, agent):
    w = SessionWidget(agent)
    ids = agent.ids
    h = Page(browser, w)
    page = h.page
    try:
        # -- the tree ----------------------------------------------------------
        page.wait_for_selector(".dnb-row.dnb-leaf")
        leaf = row(page, ids["last_r"])
        assert "dnb-leaf" in leaf.get_attribute("class") and "leaf" in leaf.inner_text()
        active = set(page.eval_on_selector_all(".dnb-row.dnb-active", "els => els.map(e => e.dataset.id)"))
        assert active == {e.id for e in agent.path()}
        order = page.eval_on_selector_all(".dnb-row", "els => els.map(e => e.dataset.id)")
        assert len(order) == len(agent.entries())
        # ephemeral entries hang right under the entry that was the leaf when they ran, off the chain
        for eph, parent in ((ids["eph"], ids["meta"]), (ids["eph2"], ids["compaction"])):
            assert order.index(eph) == order.index(parent) + 1
            cls = row(page, eph).get_attribute("class")
            assert "dnb-eph" in cls and "dnb-active" not in cls
            indent = lambda i: row(page, i).locator(".dnb-indent").evaluate("e => e.offsetWidth")  # noqa: E731
            assert indent(eph) > indent(parent)
        assert "ephemeral · cell:timer" in row(page, ids["eph2"]).inner_text()
        assert "meta · skill:brief" in row(page, ids["meta"]).inner_text()
        assert "elides 5 entries" in row(page, ids["compaction"]).inner_text()
        elided = set(page.eval_on_selector_all(".dnb-row.dnb-elided", "els => els.map(e => e.dataset.id)"))
        assert elided == {ids["meta"], ids["q1"], ids["r1"], ids["call"], ids["result"]}
        assert "custom · artifact" in row(page, ids["custom"]).inner_text()
        assert "calls search" in row(page, ids["call"]).inner_text()
        assert "2 branches" in row(page, ids["result"]).inner_text()
        assert row(page, ids["hostile"]).locator(".dnb-preview").text_content() == HOSTILE
        shot(page, "tree")

        # -- click an entry: its details come from Python ---------------------
        row(page, ids["hostile"]).click()
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['hostile']}')")
        details = visible_text(page, ".dnb-details")
        assert HOSTILE in details and ids["html_q"] in details and "assistant" in details
        assert "dnb-selected" in row(page, ids["hostile"]).get_attribute("class")
        row(page, ids["call"]).click()
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['call']}')")
        assert '"q": "weather Paris"' in visible_text(page, ".dnb-details")  # full content, tool call included
        row(page, ids["hostile"]).click()
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['hostile']}')")
        shot(page, "details")

        # -- model view at the selected entry: meta and the reminder are there --
        page.click('.dnb-tab[data-view="model"]')
        assert page.locator(".dnb-model-panel").is_visible() and not page.locator(".dnb-tree-panel").is_visible()
        model = visible_text(page, ".dnb-model-panel")
        assert "Answer briefly." in model and "meta · skill:brief" in model
        assert REMINDER in model and "reminder block · model only" in model
        assert "tool call · search · call_1" in model
        assert "Today is Monday." not in model  # ephemeral: only the run it was passed to saw it
        assert HOSTILE in model
        assert page.locator(".dnb-model-panel .dnb-card").count() == 7
        shot(page, "model")

        # -- transcript view: injected context and reminder blocks are hidden ----
        page.click('.dnb-tab[data-view="transcript"]')
        transcript = visible_text(page, ".dnb-transcript-panel")
        assert "Answer briefly." not in transcript and REMINDER not in transcript
        assert "Sunny, 21 C" in transcript and "forecast chart" in transcript and HOSTILE in transcript
        assert "custom · artifact" in transcript
        shot(page, "transcript")

        # -- hostile text ran nothing and loaded nothing --------------------------
        assert page.evaluate("window.__pwned") is None
        assert page.locator(".dnb-widget img, .dnb-widget script, .dnb-widget iframe").count() == 0
        assert h.requests == []

        # -- back at the leaf: the compaction summary stands in for elided entries
        page.click('.dnb-tab[data-view="tree"]')
        page.click(".dnb-follow")
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['last_r']}')")
        page.click('.dnb-tab[data-view="model"]')
        model = visible_text(page, ".dnb-model-panel")
        assert "compaction summary" in model and "Answer briefly." not in model and "Thanks, bye." in model

        # -- continue from here: a request Python handles, then syncs back --------
        page.click('.dnb-tab[data-view="tree"]')
        row(page, ids["hostile"]).click()
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['hostile']}')")
        page.click(".dnb-continue")
        page.wait_for_selector(f'.dnb-row.dnb-leaf[data-id="{ids["hostile"]}"]')
        sent = page.evaluate("window.__sent")
        assert [m for m in sent if m["action"] not in Page.READS] == [{"action": "branch", "id": ids["hostile"]}]
        assert agent.leaf_id == ids["hostile"] and w.leaf_id == ids["hostile"]
        active = set(page.eval_on_selector_all(".dnb-row.dnb-active", "els => els.map(e => e.dataset.id)"))
        assert active == {e.id for e in agent.path()}
        assert page.locator(".dnb-continue").is_disabled()  # it is the leaf now
        shot(page, "branched")
        # an ephemeral entry cannot be branched to: the button says so
        row(page, ids["eph2"]).click()
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['eph2']}')")
        assert page.locator(".dnb-continue").is_disabled()
        assert page.evaluate("window.__pwned") is None and h.requests == []
    finally:
        h.close()


def test_live_updates_arrive_as_increments(browser, agent):
    w = SessionWidget(agent)
    h = Page(browser, w)
    page = h.page
    asked = "() => window.__sent.filter(m => m.action === 'lines').length"
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        before = page.locator(".dnb-row").count()
        requests = page.evaluate(asked)
        stream = agent.run("Live question?")
        for ev in stream:
            if ev.type in ("agent_start", "message_end"):
                w.sync()
                h.push()
        page.wait_for_selector(f'.dnb-row.dnb-leaf[data-id="{agent.leaf_id}"]')
        assert page.locator(".dnb-row").count() == before + 2
        assert "Reply to: Live question?" in visible_text(page, ".dnb-details")
        # the new lines came with the syncs (a kernel running a turn answers no request until it ends):
        # the page asked for nothing, and no synced state carries a row
        assert page.evaluate(asked) == requests
        assert all(not {"base", "tail", "rows", "lines"} & set(u) for u in w.comm.updates())
        # many entries at once: the page draws the window at the new leaf, as Python lays it out
        n = len(agent.entries())
        agent.append(*[f"note {i}" for i in range(70)])
        w.sync()
        h.push()
        agent.append("after the notes")
        w.sync()
        h.push()
        page.wait_for_selector(f'.dnb-row.dnb-leaf[data-id="{agent.leaf_id}"]')
        assert page.locator(".dnb-status").inner_text().split(" · ")[1] == f"{n + 71} entries"
        page.wait_for_function("!document.querySelector('.dnb-row.dnb-loading')")
        drawn = page.eval_on_selector_all(".dnb-row", "els => els.map(e => e.dataset.id)")
        lines = w._layout.lines
        start = lines.index(drawn[0])
        assert drawn == lines[start : start + len(drawn)] and drawn[-1] == agent.leaf_id
        # the syncs sent the tree's part of the views only: the model view, shown, asks for the rest once
        page.click('.dnb-tab[data-view="model"]')
        page.wait_for_function("document.querySelector('.dnb-model-panel').innerText.includes('after the notes')")
        assert "Reply to: Live question?" in visible_text(page, ".dnb-model-panel")
        assert page.evaluate("() => window.__sent.filter(m => m.action === 'views').length") == 1
    finally:
        h.close()


def test_a_turn_while_another_tab_is_shown_scrolls_the_tree_to_the_leaf_when_shown(browser):
    """The tree's tab is hidden while a turn runs (the model tab is shown): showing the tree again
    brings the new leaf into view, as a turn with the tree shown does (a hidden element cannot scroll)."""
    from test_compare_find_browser import in_view

    agent = long_agent(400)
    w = SessionWidget(agent)
    h = Page(browser, w, height=700)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        old_leaf = agent.leaf_id
        assert in_view(page, old_leaf)
        page.click('.dnb-tab[data-view="model"]')
        page.wait_for_selector(".dnb-tree-panel", state="hidden")
        asked = "() => window.__sent.filter(m => m.action === 'lines').length"
        before = page.evaluate(asked)
        agent.append(*[f"note {i}" for i in range(60)])  # far more than a screen of new lines
        w.sync()
        h.push()
        page.wait_for_function(f"document.querySelector('.dnb-status').innerText.includes('leaf {agent.leaf_id[:8]}')")
        assert page.evaluate(asked) == before  # the hidden tree draws nothing, so it asks for no lines
        page.click('.dnb-tab[data-view="tree"]')
        page.wait_for_selector(f'.dnb-row.dnb-leaf[data-id="{agent.leaf_id}"]')
        page.wait_for_function("!document.querySelector('.dnb-row.dnb-loading')")
        assert in_view(page, agent.leaf_id) and not in_view(page, old_leaf)
        shot(page, "leaf_after_hidden_turn")
        assert h.requests == []
    finally:
        h.close()


def test_a_widget_shown_twice_gets_each_view_its_timeline_change_at_a_turn(browser):
    """Two views of one model (an output shown twice) each receive every reply: a turn sends each view
    its timeline's last bars, never the whole timeline again, and both draw the session's timeline."""
    from durable_nb.widget.listing import timeline

    agent = long_agent(300)
    w = SessionWidget(agent)
    h = Page(browser, w)
    page = h.page
    label = "() => [...document.querySelectorAll('.dnb-timeline-label')].map(e => e.textContent.split(' ')[0])"
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        page.evaluate(
            "() => { const d = document.createElement('div'); d.id = 'again'; document.body.append(d); window.__render(d); }"
        )
        page.wait_for_selector("#again .dnb-row.dnb-leaf")
        total = str(timeline(agent)["total"])
        page.wait_for_function(f"() => ({label})().join() === '{total},{total}'")
        mark = page.evaluate("() => window.__received.length")
        for i in range(3):
            agent.run(f"turn {i}").wait()
            w.sync()
            h.push()
            total = str(timeline(agent)["total"])
            page.wait_for_function(f"() => ({label})().join() === '{total},{total}'")
        got = page.evaluate("m => window.__received.slice(m).filter(r => r.reply === 'timeline')", mark)
        assert len(got) == 6 and len({r["view"] for r in got}) == 2
        assert all(r["base"] != -1 and len(r["turns"]) <= 2 for r in got), [(r["base"], len(r["turns"])) for r in got]
        bars = "sel => [...document.querySelectorAll(sel + ' .dnb-timeline-bar')].map(b => b.dataset.id)"
        assert (
            page.evaluate(bars, "#out") == page.evaluate(bars, "#again") == [b["id"] for b in timeline(agent)["turns"]]
        )
        page.screenshot(path=str(SHOTS / "shown_twice.png"), full_page=True)  # both views
    finally:
        h.close()


def test_ten_thousand_entries_render_a_window_of_rows(browser):
    agent = long_agent(10_000)
    w = SessionWidget(agent)
    h = Page(browser, w, bridge=False)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        drawn = page.locator(".dnb-row").count()
        assert 10 <= drawn <= 60, drawn  # only the visible window (plus overscan) is in the DOM
        (asked,) = page.evaluate("() => window.__sent.filter(m => m.action === 'lines')")
        assert asked["start"] <= w.tree["leaf_line"] < asked["stop"]  # the leaf's lines only, not the top's too
        assert row(page, agent.leaf_id).is_visible()
        page.locator(".dnb-scroll").evaluate("e => e.scrollTop = 0")
        first = agent.entries()[0].id
        page.wait_for_selector(f'.dnb-row[data-id="{first}"]')
        assert page.locator(".dnb-row").count() <= 60
        assert "10000 entries" in visible_text(page, ".dnb-status")
        assert h.first_paint_ms < 5000
        shot(page, "10k")
    finally:
        h.close()


def test_tool_calls_results_and_thinking_in_the_tree_details_and_both_views(browser):
    agent = tool_agent()
    ids = agent.ids
    h = Page(browser, SessionWidget(agent))
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        calls = row(page, ids["calls"]).inner_text()
        assert "thinking" in calls and "calls lookup, lookup" in calls and "malformed arguments" in calls
        assert "result · 12 ms" in row(page, ids["ok"]).inner_text()
        failed = row(page, ids["failed"])
        assert "result · error · 1.5 s" in failed.inner_text() and failed.locator(".dnb-failed").count() == 1
        shot(page, "tools-tree")

        # details: the call's arguments, the raw malformed ones, thinking collapsed until opened
        row(page, ids["calls"]).click()
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['calls']}')")
        details = visible_text(page, ".dnb-details")
        assert '"q": "durable"' in details and '{"q": "<b>sess' in details and "not valid JSON" in details
        assert "thinking · " in details and "thinking · redacted by the provider" in details
        assert "The user wants two words." not in details  # collapsed
        assert (
            "first token\n310 ms" in details and "total time\n1.3 s" in details and "stop reason\ntool_use" in details
        )
        page.locator(".dnb-details .dnb-thinking > summary").first.click()
        assert HOSTILE in visible_text(page, ".dnb-details")  # opened: the reasoning, as text
        shot(page, "tools-details-call")
        failed.click()
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['failed']}')")
        details = visible_text(page, ".dnb-details")
        assert "duration\n1.5 s" in details and "error\nyes" in details and "tool\nlookup" in details
        shot(page, "tools-details-result")

        # model view at the leaf: calls, results with error and duration, the reminder, thinking collapsed
        page.click(".dnb-follow")
        page.click('.dnb-tab[data-view="model"]')
        model = visible_text(page, ".dnb-model-panel")
        assert "tool call · lookup · call_0" in model and "malformed arguments" in model
        assert "result for call_0 · 12 ms" in model and "result for call_1 · error · 1.5 s" in model
        assert REMINDER in model and "The user wants" not in model
        assert page.locator(".dnb-model-panel details.dnb-thinking").count() == 2
        shot(page, "tools-model")

        # transcript view: what was called and what came back, no reminder, thinking collapsed
        page.click('.dnb-tab[data-view="transcript"]')
        transcript = visible_text(page, ".dnb-transcript-panel")
        assert "tool call · lookup · call_0" in transcript and '"q": "durable"' in transcript
        assert "result of lookup · 12 ms" in transcript and "result of lookup · error · 1.5 s" in transcript
        assert "lasting; able to endure" in transcript and REMINDER not in transcript
        assert page.locator(".dnb-transcript-panel details.dnb-thinking").count() == 2
        assert "The user wants" not in transcript
        page.locator(".dnb-transcript-panel .dnb-thinking > summary").first.click()
        assert HOSTILE in visible_text(page, ".dnb-transcript-panel")
        shot(page, "tools-transcript")
        assert page.evaluate("window.__pwned") is None
        assert page.locator(".dnb-widget img, .dnb-widget script, .dnb-widget b").count() == 0
        assert h.requests == []
    finally:
        h.close()


def test_root_level_branches_unanswered_messages_and_a_kernel_that_does_not_answer(browser):
    from durable_nb import ai, durable
    from durable_nb.session import MemoryStore, MessageEntry

    agent = durable.Agent(store=MemoryStore())
    (first,) = agent.append(durable.text("first version"))  # its turn failed: no reply
    agent.branch("")
    edited, reply = agent.append(
        durable.text("first, edited"), MessageEntry(message=ai.Message("assistant", [ai.Text("ok")]))
    )
    (lost,) = agent.append(durable.text("lost question"))  # stopped: the leaf went back before it
    agent.branch(reply.id)
    w = SessionWidget(agent)
    h = Page(browser, w, bridge=False)  # nobody answers: a kernel that is busy, or gone
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        start = page.locator(".dnb-row.dnb-start")
        assert "start" in start.inner_text() and "2 branches" in start.inner_text()
        order = page.eval_on_selector_all(".dnb-row", "els => els.map(e => e.dataset.id)")
        assert order == ["", first.id, edited.id, reply.id, lost.id]
        marks = page.eval_on_selector_all(
            ".dnb-row", "els => els.map(e => e.querySelector('.dnb-lanes').dataset.glyph)"
        )
        assert marks[:3] == ["●", "├●", "└●"]  # both first versions are branches of the start: siblings, ├ then └
        assert [("no reply" in row(page, i).inner_text()) for i in order[1:]] == [True, False, False, True]
        shot(page, "root_branches")

        # a click nobody answers says so, instead of "Loading…" for good
        row(page, lost.id).click()
        page.wait_for_selector(".dnb-notice:has-text('waiting for the kernel')", timeout=3000)
        # the kernel restarts (ipywidgets marks the model's comm dead): the next click says what to do, at once
        page.evaluate("window.__fire('comm_live_update')")
        row(page, first.id).click()
        stale = "this view belongs to a kernel that was restarted — run %durable show"
        assert page.locator(".dnb-error").inner_text() == stale
        assert page.locator(".dnb-notice").is_hidden()
        shot(page, "stale")
    finally:
        h.close()
