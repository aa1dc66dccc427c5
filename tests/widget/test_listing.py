"""The List panel's query, the keyboard's steps and the timeline, answered by the real SessionWidget
(durable_nb.widget.listing): filters by role, kind, model, tool, tag, score, error and the active path;
sorts by tree order, time, cost and tokens; bookkeeping entries never listed; bad input one line."""

from __future__ import annotations

from typing import get_type_hints

from test_inspect_browser import inspected_agent
from widget_harness import front_end_send

from durable_nb.widget import SessionWidget, protocol


def ask(w, action, **req):
    mark = len(w.comm.sent)
    front_end_send(w, {"action": action, **req})
    replies = [m["custom"] for m in w.comm.messages(mark) if "custom" in m]
    return replies[-1] if replies else None


def listed(w, sort="tree", **q):
    r = ask(w, "query", query=q, sort=sort, start=0, seq=7)
    assert r["seq"] == 7 and set(r) == set(get_type_hints(protocol.QueryReply))
    return [i["id"] for i in r["items"]], r


def test_filters_and_sorts(recording):
    a, first, second, third, failed = inspected_agent()
    w = SessionWidget(a)
    everything, r = listed(w)
    assert len(everything) == r["total"] == 8  # no label, verdict or annotation entry
    assert r["facets"]["tag"] == ["style", "wrong-tool"] and r["facets"]["tool"] == ["search"]
    assert r["facets"]["model"] == ["gpt-4o-mini-2024-07-18"] and "tool_result" in r["facets"]["role"]
    assert listed(w, tag="wrong-tool")[0] == [first]
    assert listed(w, tag="wrong-tool", min_score=0.5)[0] == [first]  # ana's correction (0.6) wins over her 0.2
    assert listed(w, tag="wrong-tool", max_score=0.3)[0] == []
    assert listed(w, min_score=0.8)[0] == [second]
    assert listed(w, error=True)[0] == [failed]
    assert listed(w, tool="search")[0] == [a.entry(failed).parent_id, failed]
    assert listed(w, role="assistant", sort="cost")[0][:3] == [third, second, first]
    assert listed(w, role="assistant", sort="tokens")[0][:3] == [third, second, first]
    assert listed(w, sort="time")[0] == everything  # appended in time order
    assert len(listed(w, on_path=True)[0]) == 8
    item = listed(w, tag="style")[1]["items"][0]
    assert (
        item["index"] >= 0
        and item["drawn"] == second
        and [c["kind"] for c in item["chips"]] == ["annotation", "verdict"]
    )


def test_bad_queries_are_one_line(recording):
    a, *_ = inspected_agent()
    w = SessionWidget(a)
    assert ask(w, "query", query={"min_score": "high"}, sort="tree", start=0, seq=1) is None
    assert w.error == "an annotation score filter is a number, not 'high'"
    assert ask(w, "query", query={}, sort="size", start=0, seq=2) is None
    assert w.error.startswith("no sort 'size'")
    assert listed(w)[1]["total"] == 8 and w.error == ""


def test_steps_and_timeline(recording):
    a, first, second, third, _ = inspected_agent()
    w = SessionWidget(a)
    turns = [a.entry(x).parent_id for x in (first, second, third)]
    turns[0] = a.path()[0].id
    r = ask(w, "step", id=first, what="turn", dir=1)
    assert set(r) == set(get_type_hints(protocol.StepReply)) and r["id"] == turns[1]
    assert ask(w, "step", id=turns[1], what="turn", dir=-1)["id"] == turns[0]
    assert ask(w, "step", id=turns[0], what="turn", dir=-1) == {**r, "id": "", "index": -1}
    assert ask(w, "step", id=turns[0], what="entry", dir=1)["id"] == first
    assert ask(w, "step", id="", what="branch", dir=1)["id"] == ""  # no branch point
    t = ask(w, "timeline")
    assert set(t) == set(get_type_hints(protocol.TimelineReply)) and t["total"] == 3
    assert [x["id"] for x in t["turns"]] == turns and all(x["on"] for x in t["turns"])
    assert t["turns"][0]["cost"] is None  # the tool call appended by hand has no usage: its price is unknown
    assert t["turns"][1]["cost"] > 0 and t["turns"][0]["tokens"] == 100 + 20


def test_the_columns_and_turns_follow_the_log(recording):
    a, first, *_ = inspected_agent()
    w = SessionWidget(a)
    assert listed(w, role="user")[1]["total"] == 3 and ask(w, "timeline")["total"] == 3
    a.run("And of Portugal?").wait()  # hangs under the label entry
    w.sync()
    assert listed(w, role="user")[1]["total"] == 4 and ask(w, "timeline")["total"] == 4
    a.annotate(first, tags=["late"], by="cy")
    w.sync()
    assert listed(w, tag="late")[0] == [first]  # a new chip counts at once
