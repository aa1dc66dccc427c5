"""A turn on another branch (a re-run cell) changes only the lines past the fork: the page keeps the rest."""

from __future__ import annotations

from test_widget_state import all_lines
from widget_harness import front_end_send
from widget_sessions import long_agent

from durable_nb.widget import SessionWidget


def switch_and_check(w, agent, move) -> int:
    """Run ``move`` (it switches the active path), sync; check the lines before ``changed_from``
    are the ones the page holds and every line is a fresh widget's. Return ``changed_from``."""
    before = all_lines(w)
    move()
    w.sync()
    after, cf = all_lines(w), w.tree["changed_from"]
    assert before[:cf] == after[:cf]
    assert after == all_lines(SessionWidget(agent))
    return cf


def test_a_new_branch_and_a_switch_back_change_only_the_lines_past_the_fork(recording):
    agent = long_agent(300)
    w = SessionWidget(agent)
    front_end_send(w, {"action": "lines", "start": 0, "stop": 50})
    old_leaf, fork = agent.leaf_id, agent.path()[-3].id
    n = len(all_lines(w))

    def rerun():
        agent.branch(fork)
        agent.run("again").wait()

    assert switch_and_check(w, agent, rerun) >= n - 5  # the re-run turn: near the end, not 0
    new_leaf = agent.leaf_id
    assert switch_and_check(w, agent, lambda: agent.branch(old_leaf)) > 0  # back, no new entry
    assert switch_and_check(w, agent, lambda: agent.branch(new_leaf)) > 0


def test_a_turn_sends_the_timeline_as_its_last_bars(recording):
    agent = long_agent(300)
    w = SessionWidget(agent)

    def timeline(**req):
        front_end_send(w, {"action": "timeline", **req})
        return w.comm.sent[-1][1]["content"]

    whole = timeline()
    assert whole["base"] == -1 and whole["start"] == 0
    agent.run("one more").wait()
    w.sync()
    change = timeline(have=whole["seq"])
    assert change["base"] == whole["seq"] and change["start"] >= len(whole["turns"]) - 2
    again = timeline()  # no have (or another): the whole timeline
    assert again["base"] == -1 and whole["turns"][: change["start"]] + change["turns"] == again["turns"]
    assert timeline(have=whole["seq"])["base"] == -1  # a seq that is not the last sent's


def test_a_widget_shown_twice_sends_each_view_its_timeline_change(recording):
    """Two views of one widget (an output shown twice) each hold a timeline and each receive every reply:
    each asks with its ``view`` id and gets the change of its own, never the whole timeline again."""
    from durable_nb.widget.listing import TIMELINE_VIEWS

    agent = long_agent(300)
    w = SessionWidget(agent)

    def timeline(**req):
        front_end_send(w, {"action": "timeline", **req})
        return w.comm.sent[-1][1]["content"]

    held = {v: timeline(view=v) for v in ("a", "b")}
    assert all(r["base"] == -1 and r["view"] == v for v, r in held.items())
    for i in range(3):
        agent.run(f"turn {i}").wait()
        w.sync()
        for v in ("a", "b"):  # both ask at the turn's tree update, each with the seq it holds
            r = timeline(view=v, have=held[v]["seq"])
            assert r["view"] == v and r["base"] == held[v]["seq"] and r["start"] >= len(held[v]["turns"]) - 2
            held[v] = {**r, "turns": held[v]["turns"][: r["start"]] + r["turns"]}
    assert held["a"]["turns"] == held["b"]["turns"] == timeline()["turns"]
    for k in range(TIMELINE_VIEWS):  # views enough to forget the oldest: it gets the whole timeline
        timeline(view=f"other {k}")
    assert timeline(view="b", have=held["b"]["seq"])["base"] == -1


def test_a_turn_regroups_the_timeline_only_when_the_turns_double():
    """Bars group a power of two turns, so a turn regroups (and re-sends) every bar once per doubling of
    the turns, not each time their count passes a multiple of the bars (#32: at 300k entries, the turn
    that made 150,001 turns sent 27 KB of timeline)."""
    from durable_nb import durable
    from durable_nb.session import MemoryStore
    from durable_nb.widget.listing import Turns, timeline

    agent = durable.Agent(model=lambda messages: "ok", store=MemoryStore())
    turns, before, regrouped = Turns(), [], []
    for t in range(1, 101):
        agent.run(f"turn {t}").wait()
        bars = [b["id"] for b in timeline(agent, buckets=8, turns=turns)["turns"]]
        assert len(bars) <= 8 and (t <= 8 or len(bars) >= 4)
        if bars[: len(before)] != before[: len(bars)] or len(bars) < len(before):
            regrouped.append(t)
        before = bars
    assert regrouped == [9, 17, 33, 65], regrouped  # groups of 2, 4, 8 and 16 turns


class PageLines:
    """The lines a page holds, as js/widget/src/lines.ts and panels/tree.ts keep them: replies at the
    page's revision, pushes held until their ``tree`` update, which drops from ``changed_from`` on but
    the range a push of its revision says is ``kept`` (the push's lines skip it)."""

    def __init__(self, w) -> None:
        self.rev, self.at, self.ahead = w.tree["rev"], {}, []

    def take(self, msgs: list[dict]) -> None:
        for m in msgs:
            r, t = m.get("custom", {}), m.get("update", {}).get("tree")
            if r.get("reply") == "lines":
                if r["rev"] == self.rev:
                    self.at.update({r["start"] + k: x for k, x in enumerate(r["lines"])})
                elif r["rev"] > self.rev:
                    self.ahead.append(r)
            if t is not None and t["rev"] != self.rev:
                nxt = t["rev"] == self.rev + 1
                kept = [p["kept"] for p in self.ahead if p["rev"] == t["rev"] and "kept" in p]
                lo, hi = kept[0] if nxt and kept else (0, 0)
                cf = t["changed_from"] if nxt else 0
                self.at = {i: x for i, x in self.at.items() if i < cf or lo <= i < hi}
                self.rev = t["rev"]
                for p in [p for p in self.ahead if p["rev"] == self.rev]:
                    lo, hi = p.get("kept", (0, 0))
                    at = [p["start"] + k for k in range(len(p["lines"]))]
                    self.at.update({i + (hi - lo if i >= lo else 0): x for i, x in zip(at, p["lines"])})
                self.ahead = [p for p in self.ahead if p["rev"] > self.rev]


def test_re_running_a_cell_pushes_the_same_few_lines_however_often(recording):
    """Each re-run of one cell adds a sibling branch after the older ones: the lines between the fork
    and the new branch do not change, so the page keeps them (the tree's ``kept``) and a re-run pushes
    the fork's line, the previous attempt's and the new ones, not two more lines each time (#32)."""
    agent = long_agent(300)
    w = SessionWidget(agent)
    leaf = w.tree["leaf_line"]
    front_end_send(w, {"action": "lines", "start": max(0, leaf - 40), "stop": leaf + 41})  # the page is drawn
    page = PageLines(w)
    page.take(w.comm.messages())
    fork = agent.path()[-3].id
    pushed = []
    for i in range(8):
        mark = len(w.comm.sent)
        agent.branch(fork)  # the cell re-run: its rewind and turn, one sync (syncs_held)
        agent.run(f"again {i}").wait()
        w.sync()
        msgs = w.comm.messages(mark)
        page.take(msgs)
        (push,) = [m["custom"] for m in msgs if m.get("custom", {}).get("reply") == "lines"]
        pushed.append(len(push["lines"]))
        fresh = all_lines(SessionWidget(agent))
        assert all(fresh[i] == x for i, x in page.at.items()), i  # every line the page holds is current
        assert set(range(w.tree["leaf_line"] - 10, w.tree["leaf_line"] + 1)) <= set(page.at)  # the leaf's screen
    assert max(pushed[2:]) <= 6 and pushed[-1] == pushed[2], pushed
