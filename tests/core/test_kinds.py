"""The registry of custom-entry kinds: a kind declared once is listed, shown, replayed and forked by it."""

from __future__ import annotations

import pytest

from durable_nb import durable, kinds
from durable_nb.kinds.note import Note
from durable_nb.session import CustomEntry, JsonlStore, entry_kind, is_aside, kind_group
from durable_nb.session import kinds as registry


@pytest.fixture
def verdict(monkeypatch):
    """A kind as a new file would declare it: names the entry it is about, not replayed, listed as "verdict"."""
    monkeypatch.setattr(registry, "_EXACT", dict(registry._EXACT))

    def fork(copy, ids):
        copy.data = {**copy.data, "about": ids.get(copy.data.get("about", ""), "")}
        return copy

    kind = kinds.register(
        kinds.Kind("verdict", shown="chip", text=lambda e: f"verdict {e.data['score']}", fork=fork, replayed=False)
    )
    return kind


def test_the_kinds_of_today_are_registered_and_listed_by_their_declarations():
    aside = CustomEntry(kind="claude_code.progress.hook_progress")
    head = CustomEntry(kind="claude_code.sidechain")
    assert (entry_kind(aside), is_aside(aside), kind_group(aside)) == ("aside", True, "aside")
    assert (entry_kind(head), is_aside(head), kind_group(head)) == ("claude_code.sidechain", False, "custom")
    assert entry_kind(CustomEntry(kind="")) == "custom" and entry_kind(CustomEntry(kind="mine")) == "mine"
    assert kinds.text(Note(body="remember this")) == "remember this"
    assert kinds.text(CustomEntry(kind="mine")) is None  # no text of its own: display_text shows it


def test_a_new_kind_is_followed_by_listing_fork_and_replay(tmp_path, verdict):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    agent.run("first").wait()
    reply = agent.path()[-1]
    (v,) = agent.append(CustomEntry(kind="verdict", data={"about": reply.id, "score": 3}))
    agent.run("second").wait()
    assert entry_kind(v) == "verdict" and kinds.text(v) == "verdict 3" and kind_group(v) == "custom"
    copy = agent.fork("copy")
    (cv,) = [e for e in copy.entries() if isinstance(e, CustomEntry) and e.kind == "verdict"]
    assert copy.entry(cv.data["about"]).message.text() == reply.message.text() and cv.data["about"] != reply.id
    out = agent.replay(model=lambda messages: "again")
    assert not [e for e in out.entries if isinstance(e, CustomEntry) and e.kind == "verdict"]
