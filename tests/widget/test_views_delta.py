"""Once a page is drawn, a sync sends the views' change (a "views" reply), never the whole ``views`` trait:
the page rebuilds from it exactly what the kernel holds, for the parts its tab draws."""

from __future__ import annotations

import json

from widget_harness import front_end_send, front_end_update
from widget_sessions import long_agent

from durable_nb import ai, durable
from durable_nb.session import MemoryStore, MessageEntry
from durable_nb.widget import SessionWidget, views_at
from durable_nb.widget.views_delta import SHOWN, list_delta


class Page:
    """What js/widget/src/viewsync.ts keeps, restated: the views, their revision, the parts held stale."""

    def __init__(self, w: SessionWidget) -> None:
        self.views, self.seq, self.stale = json.loads(json.dumps(w.views)), w.views_rev, set()
        self.gone: dict[str, list] = {}  # per list, what its last delta dropped

    def take(self, r: dict) -> None:
        gone, self.gone = self.gone, {}
        if r["base"] < 0:
            self.views, self.stale = r["views"], set()
        else:
            nxt = {**self.views, **r["views"]}
            for part in ("entry", "model", "transcript"):
                carried = part in r["views"] if part == "entry" else part in r
                if not carried or (r["base"] != self.seq and part != "entry"):
                    self.stale.add(part)
                elif part == "entry":
                    self.stale.discard(part)
                elif part not in self.stale:
                    d, held = r[part], self.views[part]
                    back = gone.get(part, [])[len(gone.get(part, [])) - d.get("back", 0) :] if d.get("back") else []
                    assert len(back) == d.get("back", 0), "a delta names dropped items the page does not hold"
                    nxt[part] = d.get("head", []) + back + held[d["drop"] : d["drop"] + d["keep"]] + d["add"]
                    if d["keep"]:
                        self.gone[part] = held[: d["drop"]]
            self.views = nxt
        self.seq = r["seq"]

    def fresh(self, w: SessionWidget) -> dict:
        """The fields the page holds current, as they are in the kernel."""
        return {k: v for k, v in json.loads(json.dumps(w.views)).items() if k not in self.stale}


def replies(w: SessionWidget, since: int) -> tuple[list[dict], list[dict]]:
    msgs = w.comm.messages(since)
    return [m["custom"] for m in msgs if m.get("custom", {}).get("reply") == "views"], [
        m["update"] for m in msgs if "update" in m
    ]


def shown(w: SessionWidget, tab: str) -> Page:
    """Show ``tab`` as a page does: the ``view`` update, then its request for the tab's part; return the page."""
    front_end_update(w, view=tab)
    front_end_send(w, {"action": "views"})
    return Page(w)


def taken(page: Page, w: SessionWidget, since: int, tab: str) -> list[dict]:
    """Let ``page`` take the "views" replies sent from message ``since`` on; check it holds ``tab`` as the
    kernel does (not stale); return those replies."""
    views, _ = replies(w, since)
    for r in views:
        page.take(r)
    assert page.views[tab] == json.loads(json.dumps(w.views[tab])) and tab not in page.stale
    return views


def test_list_delta_keeps_the_overlap_by_identity():
    a, b, c, d = ({"i": i} for i in range(4))
    assert list_delta([a, b, c], [b, c, d]) == {"drop": 1, "keep": 2, "add": [d]}
    assert list_delta([a, b], [a, b]) == {"drop": 0, "keep": 2, "add": []}
    assert list_delta([a, b, c], [b, dict(c)]) == {"drop": 1, "keep": 1, "add": [dict(c)]}  # equal is not the same
    assert list_delta([a], [b]) == {"drop": 1, "keep": 0, "add": [b]}
    assert list_delta([], []) == {"drop": 0, "keep": 0, "add": []}


def test_list_delta_puts_a_head_before_the_overlap_when_the_window_moved_back():
    a, b, c, d, x = ({"i": i} for i in range(5))
    assert list_delta([b, c, d], [a, b, c, x]) == {"drop": 0, "keep": 2, "add": [x], "head": [a]}
    assert list_delta([c, d], [a, b, c]) == {"drop": 0, "keep": 1, "add": [], "head": [a, b]}


def test_a_re_run_cell_on_the_model_tab_sends_its_new_items_not_the_view(recording):
    """A re-run turn starts a branch before the old leaf: the view's window moves back by the turn it
    drops, so the page gets the items that came into the window's front (a head) and the new ones, not
    all of them again (#32: a re-run on the model tab sent the whole view, ~50 KB, at each sync)."""
    a = durable.Agent(model=lambda messages: "ok " * 50, store=MemoryStore())
    for i in range(130):
        a.run(f"turn {i}").wait()
    w = SessionWidget(a)
    front_end_send(w, {"action": "lines", "start": 0, "stop": 50})  # the page is drawn
    for tab in ("model", "transcript"):
        page = shown(w, tab)
        fork = a.path()[-3].id  # before the last turn: its cell re-run
        mark = len(w.comm.sent)
        a.branch(fork)
        w.sync()
        a.run("the re-run").wait()
        w.sync()
        views = taken(page, w, mark, tab)
        whole = len(json.dumps(w.views[tab]))
        sent = sum(len(json.dumps(r)) for r in views)
        assert sent < whole / 4, (tab, sent, whole)


def test_a_re_run_with_a_long_reply_brings_back_what_its_append_dropped_without_sending_it(recording):
    """A long reply pushes the window's first items out (its JSON budget); re-running its cell brings
    them back: the page still holds them (what the last delta dropped), so they go as ``back``, not again."""
    replies_ = iter(["short"] * 200 + ["long " * 2000] * 20)
    a = durable.Agent(model=lambda messages: next(replies_), store=MemoryStore())
    for i in range(100):
        a.run(f"turn {i} " + "x" * 400).wait()
    w = SessionWidget(a)
    front_end_send(w, {"action": "lines", "start": 0, "stop": 50})
    for tab in ("model", "transcript"):
        page = shown(w, tab)
        a.run("a long one").wait()  # appended in one sync: the window drops its first items
        mark = len(w.comm.sent)
        w.sync()
        for _ in range(3):  # its cell re-run: the branch, then the turn's two syncs
            a.branch(a.path()[-3].id)
            w.sync()
            a.run("a long one").wait()
            w.sync()
        views = taken(page, w, mark, tab)
        assert any(r[tab].get("back") for r in views)
        reply = len(json.dumps(w.views[tab][-1]))
        sent = sum(len(json.dumps(r)) for r in views)
        assert sent < 3 * 1.3 * reply + 4 * 1000, (tab, sent, reply)  # the new reply each time, no more


def test_every_sync_sends_the_change_and_the_page_rebuilds_the_views(recording):
    """Turns, a tool call left dangling, a branch, a compaction, tab switches: after each sync the
    page's parts for its tab equal the kernel's ``views``; a stale part comes whole on request."""
    a = durable.Agent(model=lambda messages: "ok " * 50, store=MemoryStore())
    a.append(durable.system("Answer briefly."))
    for i in range(70):
        a.run(f"turn {i}").wait()
    w = SessionWidget(a)
    front_end_send(w, {"action": "lines", "start": 0, "stop": 50})  # the page is drawn
    page = Page(w)
    tabs = iter(["tree", "model", "transcript", "tree", "model", "compare", "transcript"] * 10)

    def step(change) -> None:
        tab = next(tabs)
        front_end_update(w, view=tab)
        if set(SHOWN.get(tab, ())) & page.stale:  # the page shows a part it holds stale: it asks for the whole
            mark = len(w.comm.sent)
            front_end_send(w, {"action": "views"})
            (whole,), _ = replies(w, mark)
            assert whole["base"] == -1
            page.take(whole)
            assert page.views == json.loads(json.dumps(w.views)) and not page.stale
        mark = len(w.comm.sent)
        change()
        w.sync()
        views, updates = replies(w, mark)
        assert all("views" not in u and "views_rev" not in u for u in updates)  # never the whole trait
        for r in views:
            page.take(r)
        assert page.seq == w.views_rev and w.get_state()["views_rev"] == w.views_rev
        assert w.views == views_at(a.path(), a.leaf_id, True, w.view_limit)[0]  # the kernel's trait is current
        assert not set(SHOWN.get(tab, ())) & page.stale  # what the tab draws is current
        assert {k: v for k, v in page.views.items() if k not in page.stale} == page.fresh(w)

    for i in range(6):
        step(lambda i=i: a.run(f"more {i}").wait())
    call = ai.Message("assistant", [ai.ToolCall(id="c1", name="lookup", arguments={})])
    step(lambda: a.append(MessageEntry(message=call)))  # dangling: the view synthesizes a result
    step(lambda: a.append(durable.text("after the dangling call")))
    step(lambda: a.branch(a.path()[20].id))
    step(lambda: a.run("on a branch").wait())
    step(lambda: a.compact(keep_turns=2))
    step(lambda: a.run("after compaction").wait())
    step(lambda: a.branch(""))
    step(lambda: a.run("a second root").wait())


def test_a_page_never_drawn_gets_the_whole_trait_and_a_selection_too(recording):
    a = long_agent(400)
    w = SessionWidget(a)
    mark = len(w.comm.sent)
    a.append("one more")
    w.sync()
    views, updates = replies(w, mark)
    assert not views and updates[-1]["views"]["at"] == a.leaf_id and updates[-1]["views_rev"] == w.views_rev
    front_end_send(w, {"action": "lines", "start": 0, "stop": 50})
    mark = len(w.comm.sent)
    front_end_update(w, selected_id=a.path()[3].id)  # a selection is the page's own request: the whole value
    views, updates = replies(w, mark)
    assert not views and updates[-1]["views"]["at"] == a.path()[3].id and updates[-1]["views_rev"] == w.views_rev
