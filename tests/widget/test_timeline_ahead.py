"""The timeline's turns are built once, with the rest of the first look (#32): the page's first timeline
request after a prepared show takes in no entry (it took in every one of the log before), a later one
takes in only the new entries and rebuilds only the bars they change. Work is counted, never timed."""

from __future__ import annotations

from widget_harness import front_end_send
from widget_sessions import long_agent

from durable_nb import kept
from durable_nb.widget import SessionWidget, preparation, turns
from durable_nb.widget.turns import timeline, turns_of


def read_entries(monkeypatch) -> list[int]:
    """Count the entries the timeline's turns take in (each is asked whether it starts a turn)."""
    count, started = [0], turns.is_turn_start

    def counted(e):
        count[0] += 1
        return started(e)

    monkeypatch.setattr(turns, "is_turn_start", counted)
    return count


def ask(w, **req):
    front_end_send(w, {"action": "timeline", **req})
    return w.comm.sent[-1][1]["content"]


def test_the_first_timeline_request_after_a_prepared_show_reads_no_entry(recording, monkeypatch):
    monkeypatch.setattr(preparation, "PREPARE_MIN", 100)
    a = long_agent(2000)
    n = len(a.entries())
    count = read_entries(monkeypatch)
    p = preparation.prepare(a)
    assert p is not None
    p.thread._thread.join(60)  # the layout, then the turns (which no widget waits for)
    assert count[0] == n  # built ahead, in the preparation's thread, once
    w = SessionWidget(a)
    first = ask(w)
    assert count[0] == n, count  # the first request took in nothing
    assert first["base"] == -1 and first["turns"] == timeline(a)["turns"]  # (timeline(a): built anew)
    count[0] = 0
    a.run("one more").wait()
    w.sync()
    before = turns_of(a).bars
    change = ask(w, have=first["seq"])
    assert count[0] == len(a.entries()) - n, count  # only the turn's entries
    after = turns_of(a).bars
    assert sum(x is y for x, y in zip(before, after)) >= len(before) - 2  # the rest are the bars built before
    assert first["turns"][: change["start"]] + change["turns"] == timeline(a)["turns"]
    other = SessionWidget(a)  # a second show of the agent shares its turns
    count[0] = 0
    whole = ask(other)
    assert count[0] == 0 and whole["turns"] == timeline(a)["turns"]


def test_without_a_preparation_the_first_request_reads_the_log_once(recording, monkeypatch):
    """The floor the first test is read against, in the same run: nothing ahead, every entry once."""
    a = long_agent(2000)
    kept.forget(a)
    count = read_entries(monkeypatch)
    w = SessionWidget(a)
    ask(w)
    assert count[0] == len(a.entries())
    ask(w)
    assert count[0] == len(a.entries())  # kept: the next request reads none again
