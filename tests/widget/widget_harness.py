"""Render durable_nb/static/widget.js in headless Chromium against the real Python SessionWidget.

The page (``harness.html``) implements anywidget's model interface; this
module serves it through Playwright's router (no server, no port, no network:
every other request is recorded and refused) and bridges the page's
``save_changes()``/``send()`` to the Python widget, answering with the update
and custom messages the widget published on its comm, in order, as a kernel would.
``Page(..., bridge=False)`` is a kernel that answers only the page's reads (the
``lines`` and ``locate`` requests the tree is drawn from), nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path

from comm.base_comm import BaseComm

from durable_nb.widget import module
from durable_nb.widget.assets import built
from tests.support import launch_chromium as launch  # noqa: F401  (the harness's browser)

HERE = Path(__file__).resolve().parent
URL = "http://harness.test/index.html"


class RecordingComm(BaseComm):
    """The widget's comm with no kernel behind it: keeps every message ipywidgets publishes."""

    def __init__(self, *args, **kwargs):
        self.sent: list[tuple[str, dict]] = []
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        self.sent.append((msg_type, data or {}))

    def updates(self, since: int = 0) -> list[dict]:
        """The state of every ``update`` message sent (from message number ``since`` on)."""
        return [d["state"] for t, d in self.sent[since:] if t == "comm_msg" and d.get("method") == "update"]

    def messages(self, since: int = 0) -> list[dict]:
        """Every ``update`` (``{"update": state}``) and custom message (``{"custom": content}``)
        sent from message number ``since`` on, in order."""
        out: list[dict] = []
        for t, d in self.sent[since:]:
            if t == "comm_msg" and d.get("method") == "update":
                out.append({"update": d["state"]})
            elif t == "comm_msg" and d.get("method") == "custom":
                out.append({"custom": d["content"]})
        return out

    def custom_bytes(self) -> int:
        """The JSON size of every custom message sent so far (the lines the page asked for or was pushed)."""
        return sum(len(json.dumps(d)) for t, d in self.sent if t == "comm_msg" and d.get("method") == "custom")

    def update_bytes(self) -> int:
        """The JSON size of every ``update`` message sent so far."""
        return sum(len(json.dumps(d)) for t, d in self.sent if t == "comm_msg" and d.get("method") == "update")


def front_end_update(w, **state):
    """Deliver ``state`` to ``w`` exactly as a front end's comm ``update`` message does."""
    w._handle_msg({"content": {"data": {"method": "update", "state": state}}, "buffers": []})


def front_end_send(w, content):
    """Deliver a custom message (``model.send(content)`` in JS) to ``w``."""
    w._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


class Page:
    """One harness page showing widget ``w``; ``requests`` lists every refused request."""

    # what a kernel that answers nothing else still answers with bridge=False: the reads the page makes unasked
    READS = ("lines", "locate", "timeline")

    def __init__(self, browser, w, bridge: bool = True, width: int = 900, height: int = 820):
        self.w = w
        self.bridge = bridge
        self.requests: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.page.route("**/*", self._route)
        self._mark = len(w.comm.sent)
        if bridge:
            self.page.expose_function("py_update", self._py_update)
        self.page.expose_function("py_send", self._py_send)
        self.page.goto(URL)
        self.page.wait_for_function("window.__ready === true")
        # a session widget's bundle itself, as the installed extension serves it to a Jupyter page (its
        # _esm is the loader, durable_nb/widget/module.py); other widgets carry their code
        state = w.get_state()
        if state.get("_esm") == module.esm():
            state["_esm"] = built("widget.js")
        timing = self.page.evaluate("s => window.boot(s)", json.dumps(state))
        self.parse_ms, self.first_paint_ms = timing["parse_ms"], timing["paint_ms"]

    def _route(self, route):
        if route.request.url == URL:
            route.fulfill(body=(HERE / "harness.html").read_text(), content_type="text/html")
        else:
            self.requests.append(route.request.url)
            route.abort()

    def _answer(self) -> str:
        messages = self.w.comm.messages(self._mark)
        self._mark = len(self.w.comm.sent)
        return json.dumps(messages)

    def _py_update(self, changes: str) -> str:
        self._mark = len(self.w.comm.sent)
        front_end_update(self.w, **json.loads(changes))
        return self._answer()

    def _py_send(self, content: str) -> str:
        request = json.loads(content)
        if not self.bridge and not (isinstance(request, dict) and request.get("action") in self.READS):
            return "[]"
        mark = len(self.w.comm.sent)
        front_end_send(self.w, request)
        messages = self.w.comm.messages(mark)
        if self.bridge:
            self._mark = len(self.w.comm.sent)
        return json.dumps(messages)

    def push(self) -> None:
        """Deliver what the widget published since the last exchange (e.g. after ``w.sync()``)."""
        self.page.evaluate("u => window.__apply(u)", json.loads(self._answer()))

    def close(self) -> None:
        self.page.close()


SHOTS = Path(__file__).resolve().parent / "screenshots" / "last"  # screenshots the tests write (not in git)


def shot(page, name):
    """Save a screenshot of the widget on ``page`` as ``screenshots/last/<name>.png``."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".dnb-widget").screenshot(path=str(SHOTS / f"{name}.png"))


def row(page, entry_id):
    """Return the locator of the tree row drawing entry ``entry_id``."""
    return page.locator(f'.dnb-row[data-id="{entry_id}"]')
