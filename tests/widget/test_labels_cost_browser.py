"""Labels and cost in the widget: names drawn on their entries' rows (live), tokens and cost on replies,
'cost unknown' for a model the price table does not know; headless Chromium, the real SessionWidget."""

from __future__ import annotations

import pytest
from genai_prices import Usage, calc_price
from widget_harness import SHOTS, Page, row

from durable_nb import ai, durable
from durable_nb.cost import format_cost
from durable_nb.widget import SessionWidget

pytestmark = pytest.mark.usefixtures("recording")


def priced(messages):
    return ai.assistant_message(
        "Bonjour !", model="gpt-4o-mini-2024-07-18", usage={"input_tokens": 1234, "output_tokens": 56}
    )


def test_labels_and_cost_on_rows_and_details(browser):
    a = durable.Agent(model=priced)
    a.run("Say hello in French.").wait()
    paid = a.leaf_id
    question = a.path()[0].id
    a.label("best")
    a.label("start", question)
    a.branch(question)
    a.model = "offline"
    a.run("and offline?").wait()  # a sibling branch: its reply has no usage and no price
    free = a.leaf_id
    w = SessionWidget(a)
    h = Page(browser, w)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        price = calc_price(Usage(input_tokens=1234, output_tokens=56), "gpt-4o-mini-2024-07-18").total_price
        paid_row = row(page, paid)
        assert paid_row.locator(".dnb-name").all_inner_texts() == ["best"]  # off the active path, still named
        assert paid_row.locator(".dnb-cost").inner_text() == f"1,234 in / 56 out · {format_cost(price)}"
        assert row(page, question).locator(".dnb-name").all_inner_texts() == ["start"]
        assert row(page, free).locator(".dnb-name, .dnb-cost").count() == 0  # no usage: nothing to count
        label_rows = page.locator(".dnb-row", has_text=f"label best → {paid}")
        assert label_rows.count() == 0  # the label entry is bookkeeping: a chip on its entry, never a row (#27.12)
        # the active branch (offline) and the whole session, summed in Python
        paid_text = f"1,234 in / 56 out tokens · {format_cost(price)}"
        unknown_part = f"cost unknown (1 of 2 replies unpriced; {format_cost(price)} for the rest)"
        assert page.locator(".dnb-costline").inner_text() == (
            f"tokens and cost · this branch: cost unknown · whole session: 1,234 in / 56 out tokens · {unknown_part}"
        )

        paid_row.click()
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{paid}')")
        details = page.locator(".dnb-details").inner_text()
        assert "labels\nbest" in details and f"cost\n{format_cost(price)}" in details
        assert (
            f"this branch up to the selected entry: {paid_text} · whole" in page.locator(".dnb-costline").inner_text()
        )
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(".dnb-widget").screenshot(path=str(SHOTS / "labels-cost.png"))

        row(page, free).click()
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{free}')")
        assert "cost\ncost unknown" in page.locator(".dnb-details").inner_text()

        # live: a new label, a moved one and a removed one reach the drawn rows with the next sync
        a.label("offline-try", free)
        a.label("start", paid)
        a.unlabel("best")
        w.sync()
        h.push()  # what the kernel publishes reaches the page
        page.wait_for_function(
            f"document.querySelector('.dnb-row[data-id=\"{free}\"] .dnb-name')?.textContent === 'offline-try'"
        )
        assert row(page, paid).locator(".dnb-name").all_inner_texts() == ["start"]
        assert row(page, question).locator(".dnb-name").count() == 0
        page.locator(".dnb-widget").screenshot(path=str(SHOTS / "labels-cost-live.png"))
        assert h.requests == []
    finally:
        h.close()


def test_the_static_fallback_names_labelled_rows_and_prices_replies():
    a = durable.Agent(model=priced)
    a.run("Say hello in French.").wait()
    paid = a.leaf_id
    a.label("best")
    a.label("start", a.path()[0].id)
    html = SessionWidget(a)._repr_mimebundle_()[0]["text/html"]
    price = calc_price(Usage(input_tokens=1234, output_tokens=56), "gpt-4o-mini-2024-07-18").total_price
    paid_row = html.split(f'data-id="{paid}"')[1].split("</tr>")[0]
    assert "[# best]" in paid_row and f"[1,234 in / 56 out · {format_cost(price)}]" in paid_row
    first_row = html.split(f'data-id="{a.path()[0].id}"')[1].split("</tr>")[0]
    assert "[# start]" in first_row and "# best" not in first_row
