"""What ``%durable show`` sends before the page can paint the widget: at most 150 KB (#32), and the
whole static fallback whenever no page that saves it said it is there.

The display message (the widget view and its static fallback), the comm's open message (the
widget's state, with a loader for its code rather than the code) and the page's first ``lines``
reply, counted as JSON. The code (~170 KB) comes from the installed extension over HTTP, or from
the kernel when the page asks for it (the ``module`` request). The display's fallback is short
only after a page answered the kernel's ``durable_nb.page`` question (durable_nb/notebook/page.py):
that page writes the whole fallback into the output as it saves.
"""

from __future__ import annotations

import json
import uuid

from kernel import new_cell_id
from test_comm_bytes_kernel import FILL

LIMIT = 150 * 1024  # bytes to first paint (#32)
MARGIN = 0.85  # the first paint stays under 85% of the limit (~128 KB), so a regression fails early
OUTPUT_MIME = "application/vnd.durable-nb.widget+json"


def _await_idle(nb, msg: dict) -> list[dict]:
    """Send ``msg`` on the shell channel; return the comm messages it caused until the kernel is idle."""
    nb.k.kc.shell_channel.send(msg)
    out = []
    while True:
        m = nb.k.kc.get_iopub_msg(timeout=30)
        if m["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            continue
        if m["msg_type"].startswith("comm_"):
            out.append(m["content"])
        if m["content"].get("execution_state") == "idle":
            return out


def _comm_replies(nb, comm_id: str, content: dict) -> list[dict]:
    """Send ``content`` as the page's ``model.send``; return the comm messages the kernel answered with."""
    msg = nb.k.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}})
    return _await_idle(nb, msg)


def _page_answers(nb) -> None:
    """Do what durable_nb's extension does when the kernel asks (js/labextension/src/page.ts)."""
    content = {"comm_id": uuid.uuid4().hex, "target_name": "durable_nb.page", "data": {"fallback": "at-save"}}
    _await_idle(nb, nb.k.kc.session.msg("comm_open", content))


def _show(nb, sid: str) -> tuple[dict, dict]:
    """Run ``%durable show``; return its display message and the widget comm's open message."""
    seen: list[tuple[str, dict]] = []
    r = nb.k.collect(nb.k.send("%durable show", (), new_cell_id()), 60, on_output=lambda t, c: seen.append((t, c)))
    assert r.status == "ok" and r.error is None, (r.error, r.stderr)
    (display,) = [c for t, c in seen if t in ("display_data", "execute_result") and OUTPUT_MIME in c["data"]]
    (opened,) = [c for t, c in seen if t == "comm_open" and c["data"].get("state", {}).get("session_id") == sid]
    return display, opened


def _whole_fallback(nb, comm_id: str) -> dict:
    (reply,) = [c["data"]["content"] for c in _comm_replies(nb, comm_id, {"action": "fallback"})]
    assert reply["reply"] == "fallback", sorted(reply)
    return reply


def test_the_kernel_asks_the_pages_at_load_ext(nb):
    seen: list[tuple[str, dict]] = []
    code = "from durable_nb.notebook import page\npage.listen(get_ipython())"
    nb.k.collect(nb.k.send(code, (), new_cell_id()), 30, on_output=lambda t, c: seen.append((t, c)))
    assert [c["data"] for t, c in seen if t == "comm_open" and c["target_name"] == "durable_nb.page"] == [{"ask": 1}]
    assert nb.k.value("page.saves_fallback()") is False  # asking is not an answer


def test_show_sends_at_most_150_kb_before_the_first_paint_to_a_page_that_saves_the_fallback(nb):
    sid = nb.fresh()
    nb.k.ok(FILL.replace("N_ENTRIES", "600"))  # full views (their last items), long messages, a long tree
    _page_answers(nb)
    try:
        display, opened = _show(nb, sid)
        state = opened["data"]["state"]
        leaf = state["tree"]["leaf_line"]
        lines = _comm_replies(nb, opened["comm_id"], {"action": "lines", "start": max(0, leaf - 40), "stop": leaf + 40})
        sizes = {"display": len(json.dumps(display)), "comm_open": len(json.dumps(opened))}
        sizes["lines"] = sum(len(json.dumps(c)) for c in lines)
        assert sum(sizes.values()) <= LIMIT * MARGIN, sizes
        assert len(state["_esm"]) < 5000, sizes  # a loader: the code comes from the extension
        assert "model" not in state["views"] and "entry" in state["views"], list(state["views"])  # the tree tab's part
        # the display's fallback is the short one, and says so; the page gets the whole one when it saves
        assert display["data"][OUTPUT_MIME] == {"session": sid, "fallback": "short"}
        assert "earlier not shown" in display["data"]["text/html"]
        whole = _whole_fallback(nb, opened["comm_id"])
        assert len(whole["html"]) > 2 * len(display["data"]["text/html"]), (len(whole["html"]), sizes)
        # the code, for a page without the extension's copy; the views' other parts, when the page shows them
        (module,) = [c["data"]["content"] for c in _comm_replies(nb, opened["comm_id"], {"action": "module"})]
        assert module["reply"] == "module" and "render" in module["esm"], sorted(module)
        (views,) = [c["data"]["content"] for c in _comm_replies(nb, opened["comm_id"], {"action": "views"})]
        assert views["views"]["model"] and views["views"]["transcript"], sorted(views["views"])
    finally:
        nb.k.ok("from durable_nb.notebook import page\npage.forget()\n%durable close")


def test_without_such_a_page_the_display_carries_the_whole_fallback(nb):
    sid = nb.fresh()
    nb.k.ok(FILL.replace("N_ENTRIES", "600"))
    display, opened = _show(nb, sid)  # no page answered: nbconvert, papermill, a front end without the extension
    try:
        assert display["data"][OUTPUT_MIME] == {"session": sid}
        whole = _whole_fallback(nb, opened["comm_id"])
        assert display["data"]["text/html"] == whole["html"] and display["data"]["text/plain"] == whole["text"]
        assert len(display["data"]["text/html"]) > 100_000  # both views' last 100 items
    finally:
        nb.k.ok("%durable close")
