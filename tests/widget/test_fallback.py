"""The static fallback every widget output carries: the tree and both views as escaped HTML, no script."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from widget_sessions import EVIL, hostile_agent, long_agent

from durable_nb.widget import SessionWidget, fallback

pytestmark = pytest.mark.usefixtures("recording")

# Every tag and attribute the fallback may contain: its own markup, nothing from the session.
TAGS = {"div", "p", "b", "i", "code", "pre", "table", "tr", "td", "details", "summary"}
ATTRS = {"class", "style", "title", "data-id", "colspan", "open"}


class Markup(HTMLParser):
    """Collects tags, attributes and the text of an HTML fragment as a browser's parser sees them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.text: list[str] = []
        self.bold_rows: list[str] = []
        self.rows: list[str] = []
        self._row = ""
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.update(k for k, _ in attrs)
        if tag == "tr":
            self._row = dict(attrs).get("data-id", "")
            if self._row:
                self.rows.append(self._row)
        if tag == "b" and self._row and (not self.bold_rows or self.bold_rows[-1] != self._row):
            self.bold_rows.append(self._row)

    def handle_data(self, data):
        self.text.append(data)


def bundle(agent):
    data, _ = SessionWidget(agent)._repr_mimebundle_()
    return data


def test_widget_output_carries_a_static_view_of_tree_and_both_views(agent):
    data = bundle(agent)
    assert "application/vnd.jupyter.widget-view+json" in data
    page = Markup(data["text/html"])
    assert page.tags <= TAGS and page.attrs <= ATTRS
    ids = agent.ids
    # the tree: every entry, in the widget's order; the active path in bold
    assert set(page.rows) == {e.id for e in agent.entries()}
    assert page.rows.index(ids["eph"]) == page.rows.index(ids["meta"]) + 1
    assert set(page.bold_rows) == {e.id for e in agent.path()}
    text = " ".join(page.text)
    for mark in ("[leaf]", "[2 branches]", "[meta · skill:brief]", "[ephemeral · cell:timer]", "[calls search]"):
        assert mark in text
    assert "elides 5 entries" in text and "[elided by compaction]" in text
    # the views at the leaf: the transcript hides injected context, the model view shows it
    transcript = data["text/html"].split("Transcript view")[1].split("Model view")[0]
    model = data["text/html"].split("Model view")[1]
    assert "Five minutes left." not in transcript + model  # an ephemeral entry is off the chain
    assert "(5 messages)" in data["text/html"] and "Reply to: Thanks, bye." in model
    assert "Thanks, bye." in transcript and "Summary of 5 messages" in transcript
    assert "compaction summary" in model
    # the hostile reply is text, shown as written
    assert "<img src=x onerror=window.__pwned=1>" in text


def test_text_plain_names_the_session_and_shows_the_last_of_the_transcript(agent):
    w = SessionWidget(agent)
    plain = w._repr_mimebundle_()[0]["text/plain"]
    assert "object at 0x" not in plain and "object at 0x" not in repr(w)
    assert "session 'demo'" in plain and f"{len(agent.entries())} entries" in plain
    assert plain.splitlines()[-1] == "  assistant: Reply to: Thanks, bye."
    assert repr(w).startswith("SessionWidget(session 'demo'")


def test_every_untrusted_string_is_escaped():
    agent = hostile_agent()
    at_leaf = SessionWidget(agent)
    at_call = SessionWidget(agent, selected_id=agent.ids["result"])  # views where the tool call is kept
    pages = [
        at_leaf._repr_mimebundle_()[0]["text/html"],
        at_call._repr_mimebundle_()[0]["text/html"],
        fallback.html({**at_call._static_state(), "session_id": f"sess{EVIL}"}),
    ]
    for html in pages:
        page = Markup(html)
        assert page.tags <= TAGS, page.tags - TAGS
        assert page.attrs <= ATTRS, page.attrs - ATTRS
        assert "<script" not in html and "<img" not in html
    leaf, call, renamed = (" ".join(Markup(h).text) for h in pages)
    for shown in (f"Question {EVIL}", f"[meta · cell:{EVIL}]", f"[calls tool{EVIL}]", f"Last {EVIL}", f"kind{EVIL}"):
        assert shown in leaf, shown
    for shown in (
        f"tool call · tool{EVIL} · call{EVIL}",
        json.dumps(EVIL, ensure_ascii=False),  # the tool arguments, as JSON text
        f"image/png{EVIL}",
        f"[file {EVIL} {EVIL}, 3 bytes] (not displayed)",
        f"Result {EVIL}",
        f"Reminder {EVIL}",
    ):
        assert shown in call, shown
    assert f"custom · kind{EVIL}" in leaf
    assert f"session {f'sess{EVIL}'!r}" in renamed


def test_a_big_session_shows_its_first_and_last_rows_and_counts_the_rest():
    agent = long_agent(3000)
    w = SessionWidget(agent)
    html = w._repr_mimebundle_()[0]["text/html"]
    page = Markup(html)
    n = len(agent.entries())
    assert len(page.rows) == 2 * fallback.ROWS
    assert f"… {n - 2 * fallback.ROWS} more entries not shown …" in " ".join(page.text)
    assert agent.leaf_id in page.rows  # the leaf is the last line drawn
    assert len(html) < 120_000


def test_root_level_branches_hang_under_a_start_row_as_in_the_widget():
    from durable_nb import durable
    from durable_nb.session import MemoryStore

    a = durable.Agent(model=lambda messages: "ok", store=MemoryStore())
    a.run("first try").wait()
    a.branch("")  # edit the first turn: a second root
    a.run("second try").wait()
    state = SessionWidget(a)._static_state()
    lines = [(x["row"], x["depth"], x["mark"]) for x in state["lines"]]
    assert [(r["type"], depth, mark) for r, depth, mark in lines][:2] == [
        ("start", 0, "root"),
        ("message", 1, "branch"),
    ]
    assert [r.get("preview") for r, depth, mark in lines if mark == "branch"] == ["first try", "second try"]
    html = SessionWidget(a)._repr_mimebundle_()[0]["text/html"]
    assert "start of the session: the first entries branch here" in html


def test_siblings_are_drawn_oldest_first_whatever_the_log_order():
    rows = [
        {"id": "r", "parent_id": "", "created_at": "2026-01-01T00:00:00Z", "type": "message", "preview": "root"},
        {"id": "b", "parent_id": "r", "created_at": "2026-01-01T00:00:09Z", "type": "message", "preview": "newer"},
        {"id": "a", "parent_id": "r", "created_at": "2026-01-01T00:00:05Z", "type": "message", "preview": "older"},
    ]
    lines = fallback.layout(rows)
    assert [(r["id"], mark) for r, _, mark in lines] == [("r", "root"), ("a", "branch"), ("b", "branch")]


def test_a_recorded_leaf_move_is_drawn_neither_live_nor_in_the_fallback():
    from durable_nb import durable
    from durable_nb.kinds.leaf_move import LeafMove, move_leaf
    from durable_nb.session import MemoryStore

    a = durable.Agent(model=lambda messages: "ok", store=MemoryStore())
    first = a.run("first try").wait()
    a.run("second try").wait()
    live = SessionWidget(a)  # laid out before the move: the move arrives through the incremental path
    move_leaf(a, a.path()[1].id)  # "Continue from here" on the first reply: recorded as a leaf move
    (mark,) = [e for e in a.entries() if isinstance(e, LeafMove)]
    assert first and a.leaf_id == a.path()[-1].id != mark.id
    live.sync()
    fresh = SessionWidget(a)  # laid out at once, the move already logged
    for w in (live, fresh):
        drawn = [x["row"]["id"] for x in w.lines(0, 100)]
        assert mark.id not in drawn and len(drawn) == len(a.entries()) - 1
        assert w.lines(w.tree["leaf_line"], w.tree["leaf_line"] + 1)[0]["row"]["id"] == a.leaf_id
    static = [x["row"].get("id") for x in fresh._static_state()["lines"]]
    html = fresh._repr_mimebundle_()[0]["text/html"]
    assert mark.id not in static and mark.id[:8] not in html and "leaf_move" not in html


def test_the_page_asks_for_the_fallback_as_it_is_now(agent):
    """``{"action": "fallback"}`` replies with the output's text/html and text/plain as a display now
    would carry them (the extension writes them into the output, so a saved notebook is current)."""
    from widget_harness import front_end_send

    from durable_nb.widget.session_widget import OUTPUT_MIME

    w = SessionWidget(agent)
    shown = bundle(agent)
    assert shown[OUTPUT_MIME] == {"session": agent.session_id}
    agent.run("One more question").wait()
    w.sync()
    mark, count = len(w.comm.sent), len(agent.entries())
    front_end_send(w, {"action": "fallback"})
    (reply,) = [m["custom"] for m in w.comm.messages(mark) if "custom" in m]
    assert reply["reply"] == "fallback" and reply["rev"] == w.tree["rev"]
    now = bundle(agent)
    assert (reply["html"], reply["text"]) == (now["text/html"], now["text/plain"])
    assert "One more question" in reply["html"] and "One more question" not in shown["text/html"]
    assert len(agent.entries()) == count  # a read: nothing written
