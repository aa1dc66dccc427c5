"""Fixtures for the widget tests: a realistic session, a recording comm, one Chromium per module."""

from __future__ import annotations

import comm
import pytest
from widget_harness import RecordingComm, launch
from widget_sessions import realistic_agent


@pytest.fixture
def recording(monkeypatch):
    """Make new widgets open a :class:`RecordingComm` (read what they sent from ``w.comm``)."""
    monkeypatch.setattr(comm, "create_comm", RecordingComm)


@pytest.fixture
def agent():
    return realistic_agent()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()
