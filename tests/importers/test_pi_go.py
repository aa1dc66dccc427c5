"""durable_nb / pi-go logs: the legacy top-level "meta" flag (rule R13), its opt-in upgrade, safe ids."""

from __future__ import annotations

import json
import shutil

import pytest
from importer_helpers import FIXTURES

from durable_nb import ai
from durable_nb.durable import Agent
from durable_nb.errors import SessionExists
from durable_nb.importers import open_session, upgrade_legacy_meta
from durable_nb.session import JsonlStore, MessageEntry

LEGACY = FIXTURES / "pi-go-legacy-meta.generated.jsonl"
FLAGGED = ["e1", "e6"]


def test_legacy_flag_loads_ordinary_and_warns_once_with_session_and_count():
    imp = open_session(LEGACY)
    assert imp.format == "durable_nb" and imp.agent.session_id == "legacy-demo"
    legacy = [w for w in imp.warnings if "legacy" in w]
    assert len(legacy) == 1 and len(imp.warnings) == 1
    assert "'legacy-demo'" in legacy[0] and "2 entries" in legacy[0] and "upgrade_legacy_meta" in legacy[0]
    ids = [e.id for e in imp.agent.transcript()]
    assert all(i in ids for i in FLAGGED)  # rule R13: nothing reads the flag, so they are shown
    assert all(imp.agent.entry(i).message.injected is None for i in FLAGGED)


def test_upgrade_writes_a_new_copy_with_the_flag_on_the_message(tmp_path):
    before = LEGACY.read_bytes()
    store = JsonlStore(tmp_path)
    agent = upgrade_legacy_meta(LEGACY, store, "legacy-demo-upgraded")
    assert LEGACY.read_bytes() == before  # the original is never rewritten
    assert store.load_session("legacy-demo-upgraded").parent_id == "legacy-demo"
    for i in FLAGGED:
        m = agent.entry(i).message
        assert m.injected is ai.Injection.META and m.origin == "legacy-meta"
    shown = [e.id for e in agent.transcript()]
    assert not any(i in shown for i in FLAGGED)
    assert len(agent.messages()) == 8  # the model still reads them
    # The other entries are untouched, and the tree (ids, parents) is the same.
    orig = open_session(LEGACY).agent
    assert [(e.id, e.parent_id) for e in agent.entries()] == [(e.id, e.parent_id) for e in orig.entries()]
    # Reopening the copy gives no legacy warning: the flag is where the rules read it.
    reopened = open_session(store.file("legacy-demo-upgraded"))
    assert reopened.warnings == [] and not any(i in [e.id for e in reopened.agent.transcript()] for i in FLAGGED)
    # An existing id (even the source's own) is refused, so nothing is overwritten.
    with pytest.raises(SessionExists):
        upgrade_legacy_meta(LEGACY, store, "legacy-demo-upgraded")
    shutil.copy(LEGACY, tmp_path / "legacy-demo.jsonl")
    with pytest.raises(SessionExists):
        upgrade_legacy_meta(tmp_path / "legacy-demo.jsonl", store, "legacy-demo")


def test_a_file_name_that_is_not_a_session_id_opens(tmp_path):
    src = tmp_path / "my saved session (copy 2).jsonl"
    shutil.copy(LEGACY, src)
    assert open_session(src).agent.session_id == "legacy-demo"
    # A log whose own id is unsafe gets a derived, safe one.
    data = LEGACY.read_text().replace('"id":"legacy-demo"', '"id":"../../etc/pass wd"', 1)
    weird = tmp_path / "weird name!.jsonl"
    weird.write_text(data)
    assert open_session(weird).agent.session_id == "etc-pass-wd"


def test_own_logs_written_by_the_agent_open_with_their_leaf(tmp_path):
    folder = tmp_path / "a folder with spaces"
    store = JsonlStore(folder)
    a = Agent(store=store, session_id="s1")
    a.append("first", "second")
    a.branch(a.entries()[0].id)
    a.append("other branch")
    imp = open_session(folder / "s1.jsonl")
    assert [e.message.text() for e in imp.agent.path() if isinstance(e, MessageEntry)] == ["first", "other branch"]
    assert len(imp.agent.entries()) == 3 and imp.warnings == []


THINKING = FIXTURES / "pi-go-thinking.generated.jsonl"


def test_thinking_blocks_open_and_are_written_back_in_pi_go_layout(tmp_path):
    """pi-go writes {"type":"thinking","thinking":…,"signature":…}: such a log opens (through the
    importer and straight from a store), the model view keeps the block, the transcript text leaves
    it out, and an appended copy writes it back with pi-go's key names."""
    imp = open_session(THINKING)
    thinking = [b for m in imp.agent.messages() for b in m.content if isinstance(b, ai.Thinking)]
    assert thinking == [
        ai.Thinking("I should list the files before answering.", "EqQBCkYIBxgCKkDsig-demo=="),
        ai.Thinking(signature="EqQBCkYIBxgCKkDsig-only=="),
    ]
    assert [e.message.text() for e in imp.agent.transcript()][1:] == ["Let me look.", "42", "There are 42 files."]

    shutil.copy(THINKING, tmp_path / "pi-go-thinking.jsonl")
    agent = Agent(store=JsonlStore(tmp_path), session_id="pi-go-thinking")
    assert [b for m in agent.messages() for b in m.content if isinstance(b, ai.Thinking)] == thinking
    agent.append(MessageEntry(message=ai.Message("assistant", [ai.Thinking("again", "sig2"), ai.Text("ok")])))
    last = (tmp_path / "pi-go-thinking.jsonl").read_text().splitlines()[-1]
    assert json.loads(last)["message"]["content"][0] == {"type": "thinking", "thinking": "again", "signature": "sig2"}
    reopened = Agent(store=JsonlStore(tmp_path), session_id="pi-go-thinking")
    assert reopened.path()[-1].message.content == [ai.Thinking("again", "sig2"), ai.Text("ok")]
