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

    def take(self, r: dict) -> None:
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
                    d = r[part]
                    nxt[part] = self.views[part][d["drop"] : d["drop"] + d["keep"]] + d["add"]
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


def test_list_delta_keeps_the_overlap_by_identity():
    a, b, c, d = ({"i": i} for i in range(4))
    assert list_delta([a, b, c], [b, c, d]) == {"drop": 1, "keep": 2, "add": [d]}
    assert list_delta([a, b], [a, b]) == {"drop": 0, "keep": 2, "add": []}
    assert list_delta([a, b, c], [b, dict(c)]) == {"drop": 1, "keep": 1, "add": [dict(c)]}  # equal is not the same
    assert list_delta([a], [b]) == {"drop": 1, "keep": 0, "add": [b]}
    assert list_delta([], []) == {"drop": 0, "keep": 0, "add": []}


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
