"""Opening, branching or forking at a bookkeeping entry's id puts the leaf on the entry it is about.

DESIGN §10: labels, leaf moves, verdicts and annotations are custom entries that name the entry they
are about, are drawn as chips on it and never become the visible leaf. A search finds an annotation
by its note, and its hit's ``%durable open <session> <annotation id>`` put the leaf on the annotation
itself: its path ended in it, a fork copied it onto the chain, a turn hung under it. Now the leaf goes
to the entry it names; one that names no entry of the session (a read-only log's annotation, kept in
a sidecar session) is refused in one line that says where that entry is. Tested through
:class:`NotebookSession`, which ``%durable open``, ``branch`` and ``fork`` call, and the magic's line.
"""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

import durable_nb
from durable_nb import durable, session
from durable_nb.errors import DurableError
from durable_nb.notebook.state import NotebookSession, Turn
from durable_nb.sidecar import sidecar_id


@pytest.fixture
def nb(tmp_path):
    """A notebook session with two turns, an annotation on the first reply and a label on the first question."""
    st = NotebookSession(tmp_path / ".durable", "nb")
    st.run("first question", "cell:a", Turn())
    st.run("second question", "cell:b", Turn())
    first_q, first_reply = st.own.path()[:2]
    note = st.own.annotate(first_reply.id, note="a zebra of an answer", by="ana")
    label = st.own.label("start", first_q.id)  # a label entry is appended at the leaf, on the chain
    return st, first_q, first_reply, note, label


def test_open_at_an_annotation_or_a_label_entry_puts_the_leaf_on_the_entry_it_names(nb):
    st, first_q, first_reply, note, label = nb
    (hit,) = st.search("zebra")  # the annotation is found by its note
    assert hit.entry_id == note.id
    for at, want in [(hit.entry_id, first_reply), (note.id[:6], first_reply), (label.id, first_q)]:
        imp = st.open("nb", at)
        assert imp.agent.leaf_id == want.id, at
        assert imp.agent.path()[-1] == want
        assert st.agent is imp.agent
        st.close()
    imp = st.open("nb", first_reply.id)  # an ordinary entry: as before
    assert imp.agent.leaf_id == first_reply.id
    st.close()


def test_branch_and_fork_at_an_annotation_go_to_the_entry_it_names(nb):
    st, first_q, first_reply, note, label = nb
    assert st.branch(note.id) == first_reply and st.own.leaf_id == first_reply.id
    st.run("third question", "cell:c", Turn())
    third = [e for e in st.own.path() if isinstance(e, session.MessageEntry)][-2]
    assert third.message.text() == "third question" and third.parent_id == first_reply.id  # not under the note
    st.fork("what-if", at=note.id)
    assert [e.id for e in st.own.path()][-1] == st.own.leaf_id
    copied = st.store.load_entries("what-if")
    assert [type(e).__name__ for e in copied] == ["MessageEntry", "MessageEntry"]  # the path to the reply


def test_an_annotation_of_an_entry_elsewhere_is_refused_in_one_line(nb, tmp_path):
    st, *_ = nb
    src = session.JsonlStore(tmp_path / "logs")
    (entry,) = durable.Agent(store=src, session_id="saved").append("a saved answer")
    log = str(src.file("saved"))
    kept = durable_nb.annotate(log, entry.id, store=st.store, note="kept beside it")
    sid = sidecar_id(log, "saved")
    with pytest.raises(DurableError) as e:
        st.open(sid, kept.id)
    assert str(e.value) == (
        f"entry {kept.id} is an annotation of entry {entry.id}, which session {sid} does not hold: "
        f"%durable open {log} {entry.id} opens that entry"
    )
    assert st.inspected is None  # nothing was opened


def test_the_open_magic_says_the_leaf_is_on_the_entry_the_annotation_names(shell, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shell.run_line_magic("config", "DurableMagics.session = 'nb'")
    shell.run_cell_magic("durable", "", "first question")
    state = shell.find_magic("durable").__self__.ctx.state
    reply = state.own.path()[1]
    note = state.own.annotate(reply.id, note="zebra")
    capsys.readouterr()
    shell.run_line_magic("durable", f"open nb {note.id}")
    out = capsys.readouterr().out.splitlines()
    assert f"leaf {reply.id}" in out[0]
    assert out[1] == f"{note.id} is an annotation of {reply.id}: the leaf is on {reply.id}"
    shell.run_line_magic("durable", "close")
    state.own.label("gone", reply.id)
    removal = state.own.unlabel("gone")  # the label entry that removes a label names no entry
    with pytest.raises(UsageError) as e:
        shell.run_line_magic("durable", f"open nb {removal.id}")
    assert str(e.value) == (
        f"entry {removal.id} is a label entry that names no entry: name an entry of the conversation "
        "(%durable log lists them)"
    )
    shell.run_line_magic("config", "DurableMagics.session = ''")
