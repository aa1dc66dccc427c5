"""What a turn sends to a shown widget: bounded by what the turn logged, whatever the session size."""

from __future__ import annotations

import json

from kernel import new_cell_id

MARGIN = 2.0  # comm bytes a turn may send per byte of JSON its new entries take in the log (#32)

FILL = """
N = N_ENTRIES
from durable_nb import ai, durable
from durable_nb.notebook import current
from durable_nb.session import MessageEntry
_a = current().agent
_a.append(*[
    durable.text(f"Question {i}: " + "what about this item? " * 8) if i % 2 == 0
    else MessageEntry(message=ai.assistant_message(f"Answer {i}: " + "it is **fine**, as said. " * 30))
    for i in range(N)
])
"""


def comm_of(displays_and_comms: list[tuple[str, dict]]) -> list[dict]:
    return [c for t, c in displays_and_comms if t.startswith("comm_")]


def run_seen(nb, code: str) -> tuple[object, list[dict]]:
    """Run ``code``; return its result and the comm messages it published."""
    seen: list[tuple[str, dict]] = []
    r = nb.k.collect(nb.k.send(code, (), new_cell_id()), 60, on_output=lambda t, c: seen.append((t, c)))
    assert r.status == "ok" and r.error is None, (r.error, r.stderr)
    return r, comm_of(seen)


def page_sends(nb, comm_id: str, data: dict) -> None:
    """Send a comm message as the page does (``model.send`` or ``save_changes``) and wait until it is handled."""
    msg = nb.k.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    nb.k.kc.shell_channel.send(msg)
    while True:  # a comm message has no shell reply: wait for its idle
        m = nb.k.kc.get_iopub_msg(timeout=30)
        if (
            m["parent_header"].get("msg_id") == msg["header"]["msg_id"]
            and m["content"].get("execution_state") == "idle"
        ):
            return


def test_a_turn_sends_about_what_it_logged_to_a_shown_widget(nb):
    sid = nb.fresh()
    nb.k.ok(FILL.replace("N_ENTRIES", "600"))  # a session whose views are full (100 items each) and long
    _, opened = run_seen(nb, "%durable show")
    (state_msg,) = [c for c in opened if c.get("data", {}).get("state", {}).get("session_id") == sid]
    state = state_msg["data"]["state"]
    comm_id, leaf = state_msg["comm_id"], state["tree"]["leaf_line"]
    # the first request a drawn page sends (the lines around the leaf): from then on syncs push what changed
    page_sends(
        nb, comm_id, {"method": "custom", "content": {"action": "lines", "start": max(0, leaf - 40), "stop": leaf + 40}}
    )
    log = nb.path_of(sid)
    for i, tab in enumerate(["tree", "tree", "model", "transcript"]):
        page_sends(nb, comm_id, {"method": "update", "state": {"view": tab}, "buffer_paths": []})
        before = len(log.read_bytes())
        _, sent = run_seen(nb, f"%%durable\nturn {i}: " + "tell me more. " * 20)
        added = len(log.read_bytes()) - before  # the new entries' JSON lines
        sent_bytes = sum(len(json.dumps(c)) for c in sent)
        assert added > 2000, added  # a user message and the offline model's listing of the last 40
        assert sent_bytes <= MARGIN * added, (tab, sent_bytes, added, [len(json.dumps(c)) for c in sent])
    nb.k.ok("%durable close")
