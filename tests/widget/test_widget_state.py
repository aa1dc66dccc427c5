"""What SessionWidget sends: rows, views, increments, and the branch round trip."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from widget_harness import front_end_send, front_end_update
from widget_sessions import HOSTILE, REMINDER, long_agent

from durable_nb import ai, durable
from durable_nb import widget as widget_module
from durable_nb.session import MessageEntry, codec, model_view, transcript_view
from durable_nb.widget import CHARS_PER_ITEM, SessionWidget, sync_widgets, tail_limit
from tests.support import child_env

ROOT = Path(__file__).resolve().parents[2]


def rows(w):
    return {r["id"]: r for r in w.base + w.tail}


def test_rows_describe_every_entry_kind(agent):
    w = SessionWidget(agent)
    ids, r = agent.ids, rows(w)
    assert [x["id"] for x in w.base + w.tail] == [e.id for e in agent.entries()]
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
    assert [r["id"] for r in state["base"]] == [e.id for e in agent.entries()]
    assert state["leaf_id"] == agent.leaf_id and state["views"]["at"] == agent.leaf_id
    picked = SessionWidget(agent, selected_id=agent.ids["r1"])
    assert picked.comm.sent[0][1]["state"]["views"]["at"] == agent.ids["r1"] and len(picked.comm.sent) == 1


def test_one_new_entry_sends_only_the_increment(recording):
    agent = long_agent(2000)
    w = SessionWidget(agent)
    full_log = len(json.dumps(w.base + w.tail))
    w.comm.sent.clear()
    w.sync()
    assert w.comm.sent == [], "a sync with nothing new sends nothing"
    (e,) = agent.append("one more")
    w.sync()
    (update,) = w.comm.updates()
    assert set(update) <= {"tail", "leaf_id", "views"} and "base" not in update
    assert update["tail"][-1]["id"] == e.id and update["leaf_id"] == e.id
    assert len(json.dumps(update["tail"])) < full_log / 20
    # the views at the new leaf are re-sent, but within their budget however long the path is
    assert len(json.dumps(update["views"])) < 3 * w.view_limit * CHARS_PER_ITEM
    assert w.views["model_total"] > len(w.views["model"])


def test_appending_many_entries_costs_far_less_than_resending_the_log(recording):
    agent = long_agent(2000)
    w = SessionWidget(agent)
    full_log = len(json.dumps(w.base + w.tail))
    w.comm.sent.clear()
    k = 300
    for i in range(k):
        agent.append(MessageEntry(message=ai.assistant_message(f"streamed reply {i}")))
        w.sync()
    updates = w.comm.updates()
    assert len(updates) == k
    folds = [u for u in updates if "base" in u]
    assert 1 <= len(folds) <= k // tail_limit(2000) + 1
    log_bytes = sum(len(json.dumps(u.get("base", []) + u.get("tail", []))) for u in updates)
    assert log_bytes < k * full_log / 10  # naive: k * full_log
    assert [r["id"] for r in w.base + w.tail] == [e.id for e in agent.entries()]


def test_branch_request_round_trip(recording, agent):
    w = SessionWidget(agent)
    target = agent.ids["hostile"]
    front_end_update(w, selected_id=target)
    w.comm.sent.clear()
    front_end_send(w, {"action": "branch", "id": target})
    assert agent.leaf_id == target
    (update,) = w.comm.updates()
    assert update["leaf_id"] == target and update["selected_id"] == ""
    assert "base" not in update and "tail" not in update  # branching writes nothing
    assert w.views["at"] == target and w.views["following_leaf"]
    assert len(agent.entries()) == len(w.base + w.tail)
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


def test_a_replaced_log_is_resent_whole(agent):
    w = SessionWidget(agent)
    other = durable.Agent(model=agent.model, session_id="other")
    other.run("hi").wait()
    w.agent = other
    w.sync()
    assert [r["id"] for r in w.base + w.tail] == [e.id for e in other.entries()]
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
    (w,) = [x for x in widget_module._open if x.model_id == view["model_id"]]
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
