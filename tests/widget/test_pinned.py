"""Issue 27 #16: a widget pinned to an entry shows the session as it was then, and never follows later turns."""

from __future__ import annotations

import pytest

from durable_nb import durable, session
from durable_nb.errors import DurableError
from durable_nb.widget import SessionWidget, sync_widgets

pytestmark = pytest.mark.usefixtures("recording")


def two_turns():
    a = durable.Agent(store=session.MemoryStore(), session_id="pin")
    a.run("first question").wait()
    a.run("second question").wait()
    return a


def test_a_pinned_widget_keeps_the_session_as_it_was_at_its_entry():
    a = two_turns()
    first_reply = a.path()[1].id
    live, at_leaf, at_first = SessionWidget(a), SessionWidget.pinned(a), SessionWidget.pinned(a, first_reply)
    assert (at_leaf.leaf_id, at_leaf.tree["entries"]) == (a.leaf_id, 4)
    assert (at_first.leaf_id, at_first.tree["entries"]) == (first_reply, 2)  # the log up to that entry
    assert at_first.views["at"] == first_reply and "second question" not in at_first.fallback_bundle()["text/html"]
    assert at_first.read_only == f"this session at {first_reply[:8]}, pinned"  # the header: read-only copy of …

    a.run("third question").wait()
    sync_widgets(a)  # what the magics do after every turn: the live widget follows, the pinned ones do not
    assert live.tree["entries"] == 6 and live.leaf_id == a.leaf_id
    assert (at_leaf.tree["entries"], at_first.tree["entries"]) == (4, 2)
    assert "third question" not in at_leaf.fallback_bundle()["text/html"]
    assert len(a.entries()) == 6  # pinning wrote nothing


def test_continue_from_here_in_a_pinned_widget_moves_its_copy_only():
    from widget_harness import front_end_send

    a = two_turns()
    w = SessionWidget.pinned(a)
    first_reply = a.path()[1].id
    front_end_send(w, {"action": "branch", "id": first_reply})
    assert w.leaf_id == first_reply and a.leaf_id == a.entries()[-1].id and len(a.entries()) == 4


def test_pinning_an_unknown_entry_is_one_line():
    with pytest.raises(DurableError, match="no entry 'nope' in session 'pin'"):
        SessionWidget.pinned(two_turns(), "nope")


def test_durable_show_entry_pinned_in_a_shell(shell, tmp_path, monkeypatch):
    """``%durable show ENTRY --pinned`` returns the pinned widget; a later turn leaves it as it was."""
    from IPython.core.error import UsageError

    monkeypatch.chdir(tmp_path)
    shell.run_line_magic("config", f"DurableMagics.store = {str(tmp_path / '.durable')!r}")
    shell.run_line_magic("config", "DurableMagics.session = 'pinned'")
    shell.run_cell_magic("durable", "", "first question")
    shell.run_line_magic("durable", "label first")
    w = shell.run_line_magic("durable", "show first --pinned")
    shell.run_cell_magic("durable", "", "second question")
    assert w.read_only.endswith(", pinned") and w.tree["entries"] == 2 and "second" not in str(w.views)
    live = shell.run_line_magic("durable", "show")
    assert not live.read_only and live.tree["entries"] > 2
    with pytest.raises(UsageError, match="no entry"):
        shell.run_line_magic("durable", "show nope --pinned")


def test_a_pinned_widget_draws_the_ephemeral_entries_of_its_time():
    a = durable.Agent(store=session.MemoryStore(), session_id="pin")
    a.run(durable.ephemeral("It is Monday.", origin="cell:clock"), durable.text("What day is it?")).wait()
    w = SessionWidget.pinned(a)
    assert w.tree["entries"] == 3 and any(x["row"].get("injected") == "ephemeral" for x in w.lines(0, 10))
