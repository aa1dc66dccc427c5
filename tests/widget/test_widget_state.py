"""What SessionWidget sends: small synced state, lines on request, views, increments, and the branch round trip."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from widget_harness import front_end_send, front_end_update
from widget_sessions import HOSTILE, REMINDER, long_agent

from durable_nb import ai, durable, kept
from durable_nb.session import MessageEntry, codec, elided_count, model_view, transcript_view
from durable_nb.widget import (
    MAX_LINES,
    SessionWidget,
    agent_layout,
    preparation,
    sync_widgets,
    views_at,
)
from tests.support import child_env

ROOT = Path(__file__).resolve().parents[2]


def all_lines(w):
    """Every line of the widget's tree, fetched as the page does (MAX_LINES at a time)."""
    out = []
    while len(out) < w.tree["lines"]:
        front_end_send(w, {"action": "lines", "start": len(out), "stop": len(out) + MAX_LINES})
        reply = w.comm.sent[-1][1]["content"]
        assert reply["reply"] == "lines" and reply["rev"] == w.tree["rev"] and reply["start"] == len(out)
        out += reply["lines"]
    return out


def rows(w):
    return {x["row"]["id"]: x["row"] for x in all_lines(w) if x["row"]["id"]}


def test_rows_describe_every_entry_kind(recording, agent):
    w = SessionWidget(agent)
    ids, r = agent.ids, rows(w)
    assert sorted(r) == sorted(e.id for e in agent.entries()) and w.tree["entries"] == len(agent.entries())
    assert r[ids["meta"]]["injected"] == "meta" and r[ids["meta"]]["origin"] == "skill:brief"
    eph = r[ids["eph"]]
    assert eph["injected"] == "ephemeral" and eph["origin"] == "cell:clock"
    assert not any(x["parent_id"] == ids["eph"] for x in r.values()), "nothing chains onto an ephemeral entry"
    assert r[ids["call"]]["tools"] == ["search"]
    res = r[ids["result"]]
    assert res["role"] == "tool_result" and res["reminders"] == 1 and REMINDER not in res["preview"]
    assert r[ids["custom"]]["type"] == "custom" and r[ids["custom"]]["kind"] == "artifact"
    comp = r[ids["compaction"]]
    assert comp["type"] == "compaction" and comp["first_kept_id"] == ids["alt_q"]
    # the compaction elides the five entries above "And tomorrow?" on its path
    assert comp["elides"] == [ids["meta"], ids["result"], 5]
    assert r[ids["hostile"]]["preview"] == HOSTILE  # sent as data; the front end shows it as text
    assert w.leaf_id == agent.leaf_id == ids["last_r"]
    assert w.session_id == "demo"
    # the widget is told how many entries of the active path are elided; it does not work it out itself
    assert w.elided == 5
    agent.branch(ids["alt_q"])
    w.sync()
    assert w.elided == 0  # the active path no longer passes through the compaction


def test_views_are_the_session_views_at_the_leaf(agent):
    w = SessionWidget(agent)
    v = w.views
    assert v["at"] == agent.leaf_id and v["following_leaf"]
    expected = [codec.encode_message(m) for m in agent.messages()]
    assert [{k: x for k, x in m.items() if k != "entry_id"} for m in v["model"]] == expected
    assert v["model"][0]["entry_id"] == "" and v["model"][0]["origin"].startswith("compaction:")
    assert [t["id"] for t in v["transcript"]] == [e.id for e in agent.transcript()]
    assert v["entry"] == codec.encode(agent.entry(agent.leaf_id))


def test_selecting_an_entry_moves_both_views_there(agent):
    w = SessionWidget(agent)
    at = agent.ids["hostile"]
    front_end_update(w, selected_id=at)
    v = w.views
    path = agent.path(at)
    assert v["at"] == at and not v["following_leaf"]
    assert [codec.encode_message(m) for m in model_view(path)] == [
        {k: x for k, x in m.items() if k != "entry_id"} for m in v["model"]
    ]
    model_texts = [b.get("text") for m in v["model"] for b in m["content"]]
    assert "Answer briefly." in model_texts and REMINDER in model_texts  # meta and reminder reach the model
    assert [t["id"] for t in v["transcript"]] == [e.id for e in transcript_view(path)]
    shown = [t["text"] for t in v["transcript"]]
    assert "Answer briefly." not in shown and not any(REMINDER in s for s in shown)
    assert "Sunny, 21 C" in shown  # the tool result's text block stays
    assert any(t["type"] == "custom" and '"forecast chart"' in t["data"] for t in v["transcript"])
    assert agent.leaf_id == agent.ids["last_r"], "selecting never moves the leaf"
    front_end_update(w, selected_id="")
    assert w.views["at"] == agent.leaf_id


def test_the_first_state_travels_with_the_comm_open_message(recording, agent):
    w = SessionWidget(agent)
    ((kind, data),) = w.comm.sent  # nothing but the open message
    assert kind == "comm_open"
    state = data["state"]
    assert state["tree"]["entries"] == len(agent.entries()) and state["tree"]["leaf_line"] >= 0
    assert not {"base", "tail", "rows", "lines"} & set(state)  # rows travel on request, never in the state
    assert state["leaf_id"] == agent.leaf_id and state["views"]["at"] == agent.leaf_id
    picked = SessionWidget(agent, selected_id=agent.ids["r1"])
    assert picked.comm.sent[0][1]["state"]["views"]["at"] == agent.ids["r1"] and len(picked.comm.sent) == 1


def test_one_new_entry_sends_only_the_increment(recording):
    agent = long_agent(2000)
    w = SessionWidget(agent)
    all_lines(w)  # the page is drawn: it has asked for lines
    w.comm.sent.clear()
    w.sync()
    assert w.comm.sent == [], "a sync with nothing new sends nothing"
    (e,) = agent.append("one more")
    w.sync()
    (pushed, views, update) = w.comm.messages()
    assert set(update["update"]) <= {"tree", "leaf_id"}  # the views go as their change (#32)
    assert update["update"]["leaf_id"] == e.id and update["update"]["tree"]["rev"] == pushed["custom"]["rev"]
    # the new line, pushed ahead of the update that announces it, and the old leaf's (it has a child now)
    assert [x["row"]["id"] for x in pushed["custom"]["lines"]] == [agent.path()[-2].id, e.id]
    assert pushed["custom"]["start"] == update["update"]["tree"]["changed_from"] == w.tree["leaf_line"] - 1
    # the views at the new leaf go as their change: the new entry, not the last view_limit items
    assert views["custom"]["reply"] == "views" and views["custom"]["views"]["entry"]["id"] == e.id
    assert len(json.dumps(views["custom"])) < 2 * len(json.dumps(views["custom"]["views"]["entry"])) + 500
    assert w.views["model_total"] > len(w.views["model"])


def turn_bytes(n: int, turns: int = 5) -> list[int]:
    """Bytes one widget sends per appended turn (user + reply) at about ``n`` entries, with a drawn page."""
    agent = long_agent(n)
    w = SessionWidget(agent)
    front_end_send(w, {"action": "lines", "start": 0, "stop": 50})
    out = []
    for i in range(turns):
        mark = len(w.comm.sent)
        agent.append(f"question {i}", MessageEntry(message=ai.assistant_message(f"reply {i}")))
        w.sync()
        out.append(sum(len(json.dumps(d)) for _, d in w.comm.sent[mark:]))
    return out


def test_bytes_sent_per_turn_do_not_grow_with_the_session(recording):
    small, big = turn_bytes(1_000), turn_bytes(20_000)
    # the same turn costs the same bytes (only ids, counts and dates differ in width)
    assert max(big) < 1.1 * max(small) and max(big) < 60_000, (small, big)


def test_saved_widget_state_stays_small_whatever_the_session_size(recording):
    sizes = []
    for n in (1_000, 20_000):
        w = SessionWidget(long_agent(n))
        state = {k: v for k, v in w.get_state().items() if not k.startswith("_")}
        sizes.append(len(json.dumps(state)))
    assert sizes[1] < 1.1 * sizes[0] and sizes[1] < 60_000, sizes


def reference_order(agent) -> list[str]:
    """The tree's drawing order worked out independently: session.tree() (children in log order),
    ephemeral children first, depth first; several roots under the START row ("")."""
    from durable_nb.session import is_ephemeral, tree

    out: list[str] = []
    roots = tree(agent.entries())
    if sum(not is_ephemeral(r.entry) for r in roots) > 1:
        out.append("")
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        out.append(node.entry.id)
        kids = [k for k in node.children if is_ephemeral(k.entry)] + [
            k for k in node.children if not is_ephemeral(k.entry)
        ]
        stack.extend(reversed(kids))
    return out


def test_lines_on_request_are_the_tree_in_drawing_order(recording, agent):
    from durable_nb.session import is_ephemeral

    big = long_agent(3_000)
    for a in (agent, big):
        w = SessionWidget(a)
        lines = all_lines(w)
        assert [x["row"]["id"] for x in lines] == reference_order(a)
        assert {x["row"]["id"] for x in lines if x["on"]} == {e.id for e in a.path()}
        assert lines[w.tree["leaf_line"]]["row"]["id"] == a.leaf_id
        durable_kids: dict[str, int] = {}
        for e in a.entries():
            if e.parent_id and not is_ephemeral(e):
                durable_kids[e.parent_id] = durable_kids.get(e.parent_id, 0) + 1
        assert {x["row"]["id"]: x["kids"] for x in lines if x["kids"] > 1} == {
            i: k for i, k in durable_kids.items() if k > 1
        }
    # a window, and where any entry is (how the page reveals an entry it has not drawn)
    w = SessionWidget(big)
    target = big.entries()[1234]
    front_end_send(w, {"action": "locate", "id": target.id})
    reply = w.comm.sent[-1][1]["content"]
    assert reply["reply"] == "locate" and reply["drawn"] == target.id
    front_end_send(w, {"action": "lines", "start": reply["index"] - 5, "stop": reply["index"] + 5})
    window = w.comm.sent[-1][1]["content"]["lines"]
    assert len(window) == 10 and window[5]["row"]["id"] == target.id
    front_end_send(w, {"action": "locate", "id": "nope"})
    assert w.comm.sent[-1][1]["content"]["index"] == -1
    front_end_send(w, {"action": "lines", "start": 0, "stop": 10**9})
    assert len(w.comm.sent[-1][1]["content"]["lines"]) == MAX_LINES  # bounded


def test_the_kept_layout_and_views_equal_fresh_ones_after_every_change(recording):
    """Turns, branches, ephemeral input, a tool call left dangling, a compaction, a second root:
    after each sync the widget's incremental layout and views are what a fresh widget computes."""
    from durable_nb import durable
    from durable_nb.session import MemoryStore

    a = durable.Agent(model=lambda messages: "ok", store=MemoryStore())
    w = SessionWidget(a)

    def check():
        w.sync()
        fresh = agent_layout(a)
        lay = w._layout
        assert lay.lines == fresh.lines
        assert [(*lay.info(i), lay.kids_of(i)) for i in lay.lines] == [
            (*fresh.info(i), fresh.kids_of(i)) for i in fresh.lines
        ]
        assert [lay.position(i) for i in lay.lines] == list(range(len(lay.lines)))
        expected, _ = views_at(a.path(), a.leaf_id, True, w.view_limit)
        assert w.views == expected
        assert w.elided == elided_count(a.path())
        assert w.tree["leaf_line"] == (lay.lines.index(a.leaf_id) if a.leaf_id else -1)

    check()
    a.append(durable.system("Answer briefly."))  # the system prompt: first in the model view
    check()
    a.run("first").wait()
    check()
    a.run("second", durable.ephemeral("clock", origin="cell:t")).wait()
    check()
    first_reply = a.path()[1].id
    a.branch(first_reply)
    a.run("a branch").wait()
    check()
    a.run("more on the branch").wait()
    check()
    call = ai.Message("assistant", [ai.ToolCall(id="c1", name="lookup", arguments={})])
    a.append(MessageEntry(message=call))  # dangling: the view repairs it
    check()
    a.append(durable.text("after the dangling call"))
    check()
    a.compact(keep_turns=1)
    check()
    a.run("after compaction").wait()
    check()
    a.branch(a.path()[2].id)  # back onto the first branch, in the middle of the tree
    for i in range(3):
        a.run(f"middle {i}").wait()
        check()
    a.branch("")
    a.run("a second root").wait()
    check()
    a.append(durable.meta("note", origin="skill:x"))
    check()


def test_another_widget_of_the_agent_starts_from_the_kept_tallies_and_view(recording):
    """A second %durable show tallies only what came since the first (the kept tallies), copies the
    agent's model view and the first widget's layout: its costs, views and lines are still what the
    whole session and path give, and every widget keeps its own layout up to date."""
    from durable_nb.cost import tally
    from durable_nb.session import MemoryStore
    from durable_nb.widget import cost_text

    turns = iter(range(1, 100))

    def model(messages):
        n = next(turns)
        return ai.assistant_message("ok", model="gpt-4o-mini", usage={"input_tokens": 10 * n, "output_tokens": n})

    a = durable.Agent(model=model, store=MemoryStore())
    a.append(durable.system("Answer briefly."))
    shown: list[SessionWidget] = []

    def fresh_widget_agrees():
        w = SessionWidget(a)
        shown.append(w)
        msgs = [e.message for e in a.entries() if isinstance(e, MessageEntry)]
        path_msgs = [e.message for e in a.path() if isinstance(e, MessageEntry)]
        assert w.session_cost == cost_text(tally(msgs)) and "$" in w.session_cost
        assert w.views == views_at(a.path(), a.leaf_id, True, w.view_limit)[0]
        assert w.views["cost"] == cost_text(tally(path_msgs))
        assert w._followed.builder.messages() == model_view(a.path())
        for v in shown:  # the layout copied from (or into) another widget lays out as a fresh one
            v.sync()
            lay, fresh = v._layout, agent_layout(a)
            assert lay.lines == fresh.lines
            assert [(*lay.info(i), lay.kids_of(i)) for i in lay.lines] == [
                (*fresh.info(i), fresh.kids_of(i)) for i in fresh.lines
            ]
        return w

    a.run("first").wait()
    first = fresh_widget_agrees()
    a.run("second").wait()
    fresh_widget_agrees()
    a.branch(a.path()[2].id)  # the path no longer extends the kept one
    a.run("a branch").wait()
    fresh_widget_agrees()
    first.sync()
    a.run("after a sync").wait()
    fresh_widget_agrees()
    a.branch("")
    a.run("a second root").wait()
    fresh_widget_agrees()


def test_relayout_hides_a_kind_and_hangs_its_children_off_the_nearest_drawn_entry(recording, agent):
    from durable_nb.session import CustomEntry

    w = SessionWidget(agent)
    all_lines(w)
    w.comm.sent.clear()
    w.relayout(lambda e: isinstance(e, CustomEntry))
    assert w.tree["changed_from"] == 0
    ids = [x["row"]["id"] for x in all_lines(w)]
    custom = agent.ids["custom"]
    assert custom not in ids and len(ids) == len(agent.entries()) - 1
    kids = [e.id for e in agent.entries() if e.parent_id == custom]
    front_end_send(w, {"action": "locate", "id": custom})
    reply = w.comm.sent[-1][1]["content"]
    assert reply["drawn"] == agent.entry(custom).parent_id  # revealed as its nearest drawn ancestor
    assert all(k in ids for k in kids)
    w.relayout(None)
    assert custom in [x["row"]["id"] for x in all_lines(w)]


def test_branch_request_round_trip(recording, agent):
    w = SessionWidget(agent)
    target = agent.ids["hostile"]
    front_end_update(w, selected_id=target)
    w.comm.sent.clear()
    front_end_send(w, {"action": "branch", "id": target})
    assert agent.leaf_id == target
    (update,) = w.comm.updates()
    assert update["leaf_id"] == target and update["selected_id"] == ""
    assert w.tree["entries"] == len(agent.entries())  # branching writes nothing
    assert w.views["at"] == target and w.views["following_leaf"]
    agent.run("After the branch").wait()  # the next turn continues from there
    w.sync()
    assert rows(w)[w.leaf_id]["parent_id"] != target and agent.path()[-3].id == target


def test_branch_to_an_ephemeral_entry_is_refused_with_a_message(agent):
    w = SessionWidget(agent)
    leaf = agent.leaf_id
    front_end_send(w, {"action": "branch", "id": agent.ids["eph"]})
    assert agent.leaf_id == leaf and w.leaf_id == leaf
    assert "ephemeral" in w.error
    front_end_send(w, {"action": "branch", "id": "nope"})
    assert "nope" in w.error and agent.leaf_id == leaf
    front_end_send(w, {"action": "branch", "id": agent.ids["r1"]})
    assert w.error == "" and w.leaf_id == agent.ids["r1"]


def test_a_replaced_log_is_laid_out_again(recording, agent):
    w = SessionWidget(agent)
    other = durable.Agent(model=agent.model, session_id="other")
    other.run("hi").wait()
    w.agent = other
    w.sync()
    assert sorted(rows(w)) == sorted(e.id for e in other.entries()) and w.tree["changed_from"] == 0
    assert w.views["at"] == other.leaf_id and w.session_id == "other"


def test_sync_widgets_updates_every_open_widget_of_the_agent(agent):
    w1, w2 = SessionWidget(agent), SessionWidget(agent)
    agent.run("live?").wait()
    sync_widgets(agent)
    assert w1.leaf_id == w2.leaf_id == agent.leaf_id
    assert w1.views["at"] == agent.leaf_id


def test_displaying_an_agent_shows_the_widget(agent):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display
    from IPython.utils.capture import capture_output

    from durable_nb.notebook import load_ipython_extension

    load_ipython_extension(InteractiveShell.instance())  # the notebook layer registers how an Agent is shown
    with capture_output() as cap:
        display(agent)
    (out,) = cap.outputs
    view = out.data["application/vnd.jupyter.widget-view+json"]
    (w,) = [x for x in kept.every_widget() if x.model_id == view["model_id"]]
    assert isinstance(w, SessionWidget) and w.agent is agent
    assert "export default" in w._esm and ".dnb-widget" in w._css


def test_durable_does_not_import_jupyter():
    code = (
        "import sys, durable_nb.durable as d; d.Agent().run('x').wait(); "
        "print(sorted(m for m in ('IPython', 'ipywidgets', 'anywidget', 'traitlets') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=child_env(),
        cwd=ROOT,
    )
    assert out.stdout.strip() == "[]"


def test_views_send_the_last_messages_and_more_on_request():
    agent = long_agent(600)
    w = SessionWidget(agent)
    total = w.views["model_total"]
    assert total == len(agent.messages()) > 100
    assert len(w.views["model"]) == 100
    assert w.views["model"][-1]["entry_id"] == agent.leaf_id  # the newest are the ones sent
    front_end_update(w, view_limit=400)  # "Show earlier"
    assert len(w.views["model"]) == min(400, total)
    assert [m["entry_id"] for m in w.views["model"]][-100:] == [
        e.id for e in agent.path() if isinstance(e, MessageEntry)
    ][-100:]


def test_the_widget_module_imports_first_in_a_fresh_interpreter():
    """`from durable_nb.widget import SessionWidget` (the README's line) works before anything
    else is imported: the widget and the share package import each other only lazily."""
    env = child_env()
    code = "from durable_nb.widget import SessionWidget; from durable_nb.share import export; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr[-500:]


def test_a_prepared_widget_is_the_widget_computed_at_once(recording, monkeypatch):
    """prepare() computes the first widget's layout, tallies and views in a background thread; the
    widget made afterwards takes them and adds what came since. Whatever happened in between (nothing,
    turns, a branch elsewhere, a new root), its state, lines and views are those of a widget that
    computed everything itself, and it really used the preparation."""
    from durable_nb.cost import tally
    from durable_nb.widget import cost_text, prepare

    monkeypatch.setattr(preparation, "PREPARE_MIN", 50)
    turns = iter(range(1, 10_000))

    def model(messages):
        n = next(turns)
        return ai.assistant_message("ok", model="gpt-4o-mini", usage={"input_tokens": 10 * n, "output_tokens": n})

    def state(w):
        keys = ("tree", "leaf_id", "elided", "views", "session_cost", "labels")
        return {k: (getattr(w, k) if k != "tree" else {**w.tree, "rev": 0}) for k in keys}, all_lines(w)

    taken: list = []
    real_take = preparation.take
    monkeypatch.setattr(preparation, "take", lambda *x: taken.append(real_take(*x)) or taken[-1])
    for change in ("nothing", "turns", "branch", "root"):
        taken.clear()
        a = long_agent(300)
        a.model = model
        a.run("priced").wait()
        assert prepare(a) is not None and prepare(a) is None  # once until taken
        if change == "turns":
            a.run("after preparing").wait()
            a.run("and again").wait()
        elif change == "branch":
            a.branch(a.path()[10].id)
            a.run("elsewhere").wait()
        elif change == "root":
            a.branch("")
            a.run("a new root").wait()
        w = SessionWidget(a)
        assert taken and taken[0] is not None, change
        kept.forget(a)  # nothing prepared, no tally kept, no widget to copy from
        fresh = SessionWidget(a)
        assert state(w) == state(fresh), change
        msgs = [e.message for e in a.entries() if isinstance(e, MessageEntry)]
        assert w.session_cost == cost_text(tally(msgs)) and "$" in w.session_cost
        a.run("after the show").wait()  # and it goes on as any widget
        w.sync()
        fresh.sync()
        assert state(w) == state(fresh), change


def test_nothing_is_prepared_for_a_short_log_or_while_a_widget_is_open(recording, monkeypatch):
    from durable_nb.widget import prepare

    monkeypatch.setattr(preparation, "PREPARE_MIN", 100)
    a = long_agent(60)
    assert prepare(a) is None  # laid out at once by the widget
    a = long_agent(150)
    w = SessionWidget(a)
    assert prepare(a) is None  # the next widget copies this one's layout
    w.close()
    p = prepare(a)
    assert p is not None
    p.thread.join()
    assert p.layout is not None and p.at_leaf is not None and p.at_leaf.leaf == a.leaf_id


def test_the_protocol_module_declares_every_trait_and_action_of_the_widget():
    from typing import get_args, get_type_hints

    import anywidget

    from durable_nb.widget import protocol

    synced = set(SessionWidget.class_traits(sync=True)) - set(anywidget.AnyWidget.class_traits(sync=True))
    assert set(get_type_hints(protocol.Traits)) == synced
    assert set(SessionWidget.ACTIONS) == set(get_args(protocol.Action))
    requests = {get_args(get_type_hints(r)["action"])[0] for r in get_args(protocol.Request)}
    assert requests == set(get_args(protocol.Action))
    replies = {get_args(get_type_hints(r)["reply"])[0] for r in get_args(protocol.Reply)}
    assert replies == set(get_args(protocol.ReplyName))


def test_what_the_widget_sends_has_the_fields_the_protocol_declares(recording):
    from typing import get_type_hints

    from durable_nb.widget import protocol
    from tests.widget.widget_sessions import hostile_agent, realistic_agent, tool_agent

    for a in (realistic_agent(), hostile_agent(), tool_agent()):
        w = SessionWidget(a)
        assert set(w.tree) == set(get_type_hints(protocol.Tree))
        assert set(w.views) == set(get_type_hints(protocol.Views))
        for line in all_lines(w):
            assert set(line) == set(get_type_hints(protocol.Line))
            assert set(line["row"]) <= set(get_type_hints(protocol.Row)), line["row"]
        for m in w.views["model"]:
            assert set(m) <= set(get_type_hints(protocol.ViewMessage)), m
        for t in w.views["transcript"]:
            assert set(t) <= set(get_type_hints(protocol.ViewEntry)), t
