"""Fixtures for the widget tests: a realistic session and a comm that records what the widget sends."""

from __future__ import annotations

import json

import comm
import pytest
from comm.base_comm import BaseComm

from widget_sessions import realistic_agent


class RecordingComm(BaseComm):
    """The widget's comm with no kernel behind it: keeps every message ipywidgets publishes."""

    def __init__(self, *args, **kwargs):
        self.sent: list[tuple[str, dict]] = []
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        self.sent.append((msg_type, data or {}))

    def updates(self) -> list[dict]:
        """The state of every ``update`` message sent so far."""
        return [d["state"] for t, d in self.sent if t == "comm_msg" and d.get("method") == "update"]

    def update_bytes(self) -> int:
        """The JSON size of every ``update`` message sent so far."""
        return sum(len(json.dumps(d)) for t, d in self.sent if t == "comm_msg" and d.get("method") == "update")


@pytest.fixture
def recording(monkeypatch):
    """Make new widgets open a :class:`RecordingComm`; yields nothing (read ``w.comm``)."""
    monkeypatch.setattr(comm, "create_comm", RecordingComm)
    yield


@pytest.fixture
def agent():
    return realistic_agent()


def front_end_update(w, **state):
    """Deliver ``state`` to ``w`` exactly as a front end's comm ``update`` message does."""
    w._handle_msg({"content": {"data": {"method": "update", "state": state}}, "buffers": []})


def front_end_send(w, content):
    """Deliver a custom message (``model.send(content)`` in JS) to ``w``."""
    w._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})
