"""llm's SQLite logs (llm >= 0.32): a conversation opens as a tree, forks included.

The database is written by the real llm package (its own logging, a local
model: see llm_logs.py), and llm's own reader is the oracle for the content.
"""

from __future__ import annotations

import hashlib
import sqlite3

import pytest
import sqlite_utils
from llm.logs import LogStore
from llm.parts import ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from llm_logs import NOVEL, PNG, write_logs

from durable_nb import ai
from durable_nb.errors import DurableError
from durable_nb.importers import llm_conversations, open_session
from durable_nb.importers.llm_sqlite import ChooseConversation
from durable_nb.session import CustomEntry, MessageEntry, SqliteStore


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    path = tmp_path_factory.mktemp("llm") / "logs.db"
    return path, write_logs(path)


def _readable(part) -> bool:
    return isinstance(part, (TextPart, ToolResultPart))


def _texts(m) -> str:
    return "".join(b.text for b in m.content if isinstance(b, ai.Text))


def test_a_conversation_opens_as_a_tree_with_its_fork(logs):
    path, ids = logs
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    imp = open_session(path, ids.main)
    assert imp.format == "llm" and imp.agent.session_id == ids.main
    a = imp.agent
    # The fork shares the rows up to the first answer: two user messages continue from it.
    kids = [e for e in a.entries() if e.parent_id == ids.first_answer and isinstance(e, MessageEntry)]
    assert sorted(_texts(k.message) for k in kids) == ["a different second question", "what is the weather?"]
    # The leaf is the main conversation's tip; its model view is exactly llm's own chain.
    llm_chain = LogStore(sqlite_utils.Database(path)).thread_messages(ids.main)
    msgs = a.messages()
    assert [m.role for m in msgs] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "user",
        "assistant",
    ]
    assert len(msgs) == len(llm_chain)
    for ours, theirs in zip(msgs, llm_chain):
        text = "".join(p.text if isinstance(p, TextPart) else p.output for p in theirs.parts if _readable(p))
        assert _texts(ours) == text
        thinking = [p.text for p in theirs.parts if isinstance(p, ReasoningPart)]
        assert [b.text for b in ours.content if isinstance(b, ai.Thinking)] == thinking
        calls = [(p.tool_call_id, p.name, p.arguments) for p in theirs.parts if isinstance(p, ToolCallPart)]
        assert [(c.id, c.name, c.arguments) for c in ours.tool_calls()] == calls
    # Fragments are resolved (the stored row holds references), the image is the stored bytes.
    summary = msgs[7]
    assert _texts(summary) == f"{NOVEL}\nsummarise: {NOVEL}"
    assert [b.data for b in summary.content if isinstance(b, ai.Image)] == [PNG]
    result = msgs[5]
    assert result.tool_call_id == "call_w1" and result.tool_name == "weather" and _texts(result) == "sunny in Paris"
    # The turn's model and tokens are on the assistant message it produced; every entry has a time.
    assert msgs[2].model == "echo-local" and msgs[2].usage == {"input_tokens": 14, "output_tokens": 5}
    assert all(e.created_at.endswith("Z") and "T" in e.created_at for e in a.entries())
    # Each thread is a label on its tip: branch to the fork by its id.
    assert a.labels() == {ids.main: a.leaf_id, ids.fork: a.labels()[ids.fork]}
    a.branch(ids.fork)
    assert [_texts(m) for m in a.messages()][-2:] == [
        "a different second question",
        "echo: a different second question",
    ]
    assert any(ids.fork in w for w in imp.warnings)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # only read


def test_the_fork_opens_at_its_own_tip(logs):
    path, ids = logs
    a = open_session(path, ids.fork).agent
    assert [_texts(m) for m in a.messages()] == [
        "You are terse.",
        "hello there",
        "echo: hello there",
        "a different second question",
        "echo: a different second question",
    ]
    # Only the fork's own family: the main conversation's later turns are not in it.
    assert not any(isinstance(e, MessageEntry) and "weather" in _texts(e.message) for e in a.entries())


def test_the_database_alone_lists_its_conversations(logs):
    path, ids = logs
    found = llm_conversations(path)
    assert {c.id for c in found} == {ids.main, ids.fork, ids.other}
    fork = next(c for c in found if c.id == ids.fork)
    assert fork.forked_from == ids.main and fork.name == "what if" and fork.turns == 1
    main = next(c for c in found if c.id == ids.main)
    assert main.turns == 4 and main.model == "echo-local"
    with pytest.raises(ChooseConversation) as e:
        open_session(path)
    assert "\n" not in str(e.value) and "2 llm conversations" in str(e.value)
    assert {c.id for c in e.value.conversations} == {ids.main, ids.other}  # forks open with their conversation


def test_bad_ids_and_other_databases_are_one_clear_line(logs, tmp_path):
    path, ids = logs
    with pytest.raises(DurableError, match="no llm conversation 'nope'") as e:
        open_session(path, "nope")
    assert ids.other in str(e.value)  # the newest are named
    plain = tmp_path / "other.db"
    sqlite3.connect(plain).execute("create table t (x)").connection.commit()
    with pytest.raises(DurableError, match="not llm's log"):
        open_session(plain)
    ours = tmp_path / "sessions.db"
    SqliteStore(ours).create_session("s")
    with pytest.raises(DurableError, match="a durable_nb SQLite store"):
        open_session(ours)
    log = tmp_path / "x.jsonl"
    log.write_text('{"type":"session_init","id":"x"}\n')
    with pytest.raises(DurableError, match="only for llm's SQLite log"):
        open_session(log, "x")


def test_a_single_conversation_opens_without_an_id(tmp_path):
    import llm_logs

    db = sqlite_utils.Database(tmp_path / "one.db")
    r = llm_logs.Echo().conversation().prompt("just one")
    r.text()
    r.log_to_db(db)
    a = open_session(tmp_path / "one.db").agent
    assert [_texts(m) for m in a.messages()] == ["just one", "echo: just one"]
    assert [e for e in a.entries() if isinstance(e, CustomEntry)][0].kind == "label"
