"""durable_nb.frame and durable_nb.annotations over every store, a log file and a folder of other tools' logs."""

from __future__ import annotations

import hashlib
import math
import shutil
from pathlib import Path

import pytest

import durable_nb
from durable_nb import ai, session
from durable_nb.durable import Agent, ephemeral, meta
from durable_nb.errors import DurableError
from durable_nb.frames import COLUMNS, EXTRAS
from durable_nb.importers import open_session
from tests.support import store_opener

pd = pytest.importorskip("pandas")
FIXTURES = Path(__file__).parent.parent / "importers" / "fixtures"


def reply(text: str, *, calls=(), model="gpt-4o-mini", usage=None) -> session.MessageEntry:
    content = [ai.Text(text), *calls]
    return session.MessageEntry(message=ai.Message(role="assistant", content=content, model=model, usage=usage))


def tool_result(call_id: str, name: str, text: str, error: bool = False) -> session.MessageEntry:
    m = ai.Message(role="tool_result", content=[ai.Text(text)], tool_call_id=call_id, tool_name=name, is_error=error)
    return session.MessageEntry(message=m)


def fill(agent: Agent) -> dict[str, str]:
    """A session with every column's interesting values; returns the ids by role in it."""
    (u,) = agent.append("what is 2+2?")
    (m,) = agent.append(meta("today is Tuesday", origin="cell:3f2a"))
    (c,) = agent.append(reply("let me add", calls=[ai.ToolCall(id="t1", name="add", arguments={"a": 2})],
                              usage={"input_tokens": 1000, "output_tokens": 100}))  # fmt: skip
    (t,) = agent.append(tool_result("t1", "add", "boom", error=True))
    (r,) = agent.append(reply("4", model="offline", usage={"input_tokens": 7, "output_tokens": 1}))
    agent.label("answer", r.id)
    agent.annotate(c.id, note="wrong tool", score=0.25, tags=["tools"], by="ana")
    agent.annotate(c.id, note="fine after all", score=1, by="bo")  # a correction: the latest wins
    agent.branch(u.id)
    (b,) = agent.append("a sibling")
    return {"user": u.id, "meta": m.id, "call": c.id, "result": t.id, "reply": r.id, "branch": b.id}


def check(f, got: dict[str, str], session_id: str) -> None:
    assert list(f.columns) == [*COLUMNS, *EXTRAS]
    assert len(f) == 9  # 6 messages, 1 label, 2 annotations
    assert set(f.session_id) == {session_id}
    row = f.set_index("id")
    kinds = list(f.kind)
    assert kinds == [
        "user",
        "meta",
        "assistant",
        "tool_result",
        "assistant",
        "label",
        "annotation",
        "annotation",
        "user",
    ]
    assert list(f.type) == ["message"] * 5 + ["custom"] * 3 + ["message"]
    assert row.loc[got["meta"], "injected"] == "meta" and row.loc[got["meta"], "origin"] == "cell:3f2a"
    assert pd.isna(row.loc[got["user"], "injected"]) and row.loc[got["user"], "role"] == "user"
    assert row.loc[got["call"], "tool_name"] == "add" and row.loc[got["result"], "tool_name"] == "add"
    assert bool(row.loc[got["result"], "is_error"]) and not bool(row.loc[got["call"], "is_error"])
    assert row.loc[got["call"], "input_tokens"] == 1000 and row.loc[got["call"], "output_tokens"] == 100
    assert row.loc[got["call"], "cost_usd"] == pytest.approx(1000 * 0.15e-6 + 100 * 0.6e-6)
    assert math.isnan(row.loc[got["reply"], "cost_usd"])  # the offline model has no price: NaN, never 0
    assert row.loc[got["reply"], "input_tokens"] == 7
    assert pd.isna(row.loc[got["user"], "input_tokens"]) and math.isnan(row.loc[got["user"], "cost_usd"])
    assert row.loc[got["reply"], "labels"] == ["answer"] and row.loc[got["user"], "labels"] == []
    assert row.loc[got["reply"], "model"] == "offline" and row.loc[got["reply"], "text"] == "4"
    assert row.loc[got["meta"], "parent_id"] == got["user"]
    active = set(f.id[f.on_active_path])
    assert active == {got["user"], got["branch"]}  # reopened or live: the leaf is the sibling
    assert str(f.created_at.dtype) == "datetime64[us, UTC]" and not f.created_at.isna().any()
    notes = f[f.kind == "annotation"]
    assert list(notes.parent_id) == [got["call"]] * 2 and list(notes.text) == [
        "0.25 #tools wrong tool",
        "1 fine after all",
    ]


@pytest.fixture(params=["memory", "jsonl", "sqlite", "postgres"])
def reopen(request, tmp_path):
    """``(open a store object, its store string or None)`` on one store of each kind."""
    with store_opener(request.param, tmp_path, request) as pair:
        yield pair


def test_frame_over_each_store_reloaded(reopen):
    open_store, spec = reopen
    agent = Agent(store=open_store(), session_id="s1")
    got = fill(agent)
    Agent(store=agent.store, session_id="other").append("x")
    check(durable_nb.frame(agent), got, "s1")  # live: the agent's own log
    check(durable_nb.frame(open_store(), sessions="s1"), got, "s1")  # reloaded from another store object
    if spec is not None:
        check(durable_nb.frame(spec, sessions=["s1"]), got, "s1")  # from the store string
    everything = durable_nb.frame(open_store())
    assert list(everything.session_id.unique()) == ["s1", "other"] and len(everything) == 10
    with pytest.raises(DurableError, match="no session 'nope' in .*it holds: s1, other"):
        durable_nb.frame(open_store(), sessions="nope")


def test_annotations_reload_from_each_store_and_never_reach_a_model(reopen):
    open_store, _ = reopen
    agent = Agent(store=open_store(), session_id="s1")
    got = fill(agent)
    reopened = Agent(store=open_store(), session_id="s1")
    a = durable_nb.annotations(reopened)
    assert list(a.target_id) == [got["call"]] * 2
    assert list(a.note) == ["wrong tool", "fine after all"] and list(a.score) == [0.25, 1.0]
    assert list(a.by) == ["ana", "bo"] and list(a.latest) == [False, True] and list(a.tags) == [["tools"], []]
    assert a.created_at.is_monotonic_increasing
    reopened.branch(got["reply"])
    assert reopened.leaf_id == got["reply"]
    texts = [m.text() for m in reopened.messages()]
    assert texts == ["what is 2+2?", "today is Tuesday", "let me add", "boom", "4"]  # no annotation
    assert all(e.kind != "annotation" for e in reopened.transcript() if isinstance(e, session.CustomEntry))
    assert Agent(store=open_store(), session_id="s1").leaf_id == got["branch"]  # never the leaf


def test_annotate_bad_input_is_one_line(tmp_path):
    agent = Agent()
    (u,) = agent.append("hi")
    with pytest.raises(DurableError, match="no entry or label 'zzzz'"):
        agent.annotate("zzzz", note="x")
    with pytest.raises(DurableError, match="score is a number .*not 'high'"):
        agent.annotate(u.id, score="high")
    with pytest.raises(DurableError, match="score is a number"):
        agent.annotate(u.id, score=float("nan"))
    with pytest.raises(DurableError, match="needs a note, a score or a tag"):
        agent.annotate(u.id)
    eph = agent._log.prepare([ephemeral("psst")])[0]
    agent._log.commit([eph])
    with pytest.raises(DurableError, match="ephemeral and never stored"):
        agent.annotate(eph.id, note="x")
    note = agent.annotate(u.id[:5], tags="look")  # a prefix; one tag as a string
    assert note.target_id == u.id and note.tags == ["look"] and note.by  # the OS user
    with pytest.raises(DurableError, match="annotate the entry it names"):
        agent.annotate(note.id, note="x")
    assert len(agent.store.load_entries(agent.session_id)) == 2  # nothing else was written


def test_frame_over_a_folder_of_other_tools_logs(tmp_path):
    f = durable_nb.frame(FIXTURES)
    per_file = {Path(s).name: n for s, n in f.groupby("source").size().items()}
    expected = {p.name: len(open_session(p).agent.entries()) for p in sorted(FIXTURES.glob("*.jsonl"))}
    assert per_file == expected and len(f) == sum(expected.values()) == 781
    cc = f[f.source.str.endswith("spotter-tool_heavy.jsonl")]
    assert len(cc) == 34 and set(cc.kind) >= {"user", "assistant", "tool_result"}
    assert cc.tool_name.dropna().str.len().gt(0).all() and cc.on_active_path.any()
    assert list(f.columns) == [*COLUMNS, *EXTRAS]
    one = durable_nb.frame(FIXTURES / "spotter-tool_heavy.jsonl")
    assert one.drop(columns="source").equals(cc.drop(columns="source").reset_index(drop=True))


def test_a_read_only_import_is_annotated_in_a_sidecar_and_never_written(tmp_path):
    log = tmp_path / "claude" / "tool_heavy.jsonl"
    log.parent.mkdir()
    shutil.copy(FIXTURES / "spotter-tool_heavy.jsonl", log)
    before = hashlib.sha256(log.read_bytes()).hexdigest()
    imported = open_session(log)
    target = next(e for e in imported.agent.entries() if isinstance(e, session.MessageEntry))
    store = tmp_path / ".durable"
    first = durable_nb.annotate(log, target.id[:6] if len(target.id) > 6 else target.id, store=str(store),
                                note="wrong tool choice", tags=["tools"], by="ana")  # fmt: skip
    durable_nb.annotate(imported, target.id, store=str(store), score=2)
    assert hashlib.sha256(log.read_bytes()).hexdigest() == before  # byte-identical
    a = durable_nb.annotations(log, store=str(store))
    assert list(a.target_id) == [target.id] * 2 and list(a.note.fillna("")) == ["wrong tool choice", ""]
    assert list(a.latest) == [False, True] and list(a.source) == [str(log.resolve())] * 2
    assert first.source_session == imported.agent.session_id
    assert len(durable_nb.annotations(log)) == 0  # without the store: the log's own (none)
    with pytest.raises(DurableError, match="no entry or label"):
        durable_nb.annotate(log, "nothing-like-it", store=str(store), note="x")
    sidecars = session.open_store(str(store)).list_sessions()
    assert [s.id for s in sidecars] == [durable_nb.sidecar.sidecar_id(log, imported.agent.session_id)]
    assert hashlib.sha256(log.read_bytes()).hexdigest() == before


def test_a_source_that_is_not_a_store_or_log_is_one_line(tmp_path):
    with pytest.raises(DurableError, match="no store or log at"):
        durable_nb.frame(tmp_path / "missing")
    with pytest.raises(DurableError, match="cannot read sessions from a int"):
        durable_nb.frame(42)
    (tmp_path / "junk.txt").write_text("not a log\n")
    with pytest.raises(DurableError, match="not valid JSON"):
        durable_nb.frame(tmp_path / "junk.txt")
    empty = durable_nb.frame(session.MemoryStore())
    assert len(empty) == 0 and list(empty.columns) == [*COLUMNS, *EXTRAS]


def test_missing_pandas_names_the_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pyarrow(name, *a, **k):
        if name == "pyarrow":
            raise ImportError("no pyarrow", name="pyarrow")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(DurableError, match=r"pyarrow is missing\): pip install 'durable_nb\[frames\]'"):
        durable_nb.frame(Agent())
