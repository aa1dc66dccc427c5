"""The public API named in the core issue, and the bad inputs it must refuse clearly."""

from __future__ import annotations

import subprocess
import sys

import pytest
from core_helpers import ids, msg, texts

from durable_nb import ai, durable, session
from durable_nb.errors import AgentClosed, DurableError, UnknownEntry


def test_session_and_ai_import_nothing_from_jupyter():
    code = (
        "import sys; import durable_nb.session, durable_nb.ai, durable_nb.durable, durable_nb.models, durable_nb.cost;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('IPython','ipywidgets','anywidget','ipykernel','traitlets','jupyter_client'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_import_and_the_jsonl_store_work_without_fcntl(tmp_path):
    # Windows has no fcntl: the package must import there, and the store must still append and load.
    # (Not the notebook layer here: on Linux IPython itself imports fcntl, through pexpect; on Windows it does not.)
    code = (
        "import sys; sys.modules['fcntl'] = None\n"
        "import durable_nb, durable_nb.importers, durable_nb.models\n"
        "from durable_nb import durable, session\n"
        "from durable_nb.session import lock\n"
        "assert lock.fcntl is None\n"
        "a = durable.Agent(store=session.JsonlStore(sys.argv[1]), session_id='w'); a.run('hi').wait()\n"
        "print(len(session.JsonlStore(sys.argv[1]).load_entries('w')))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2"]


def test_message_basics():
    m = ai.Message(role="user", content=[ai.Text("a"), ai.Reminder("hidden"), ai.Text("b")])
    assert m.text() == "ab"
    assert ai.user_message("x").content == [ai.Text("x")]
    assert ai.Injection.META == "meta" and ai.Injection("ephemeral") is ai.Injection.EPHEMERAL
    assert ai.Message(role="user", injected="meta").injected is ai.Injection.META
    with pytest.raises(ValueError, match="role"):
        ai.Message(role="robot")


def test_input_constructors():
    assert durable.text("hi").message == ai.user_message("hi")
    img = durable.image("look", ai.Image(b"x", "image/png"))
    assert [b.type for b in img.message.content] == ["text", "image"]
    f = durable.file("", ai.File(b"x", "text/plain", "a.txt"))
    assert [b.type for b in f.message.content] == ["file"]
    m = durable.meta(durable.text("s"), origin="skill:x")
    assert (m.message.injected, m.message.origin) == (ai.Injection.META, "skill:x")
    e = durable.ephemeral("now")
    assert e.message.injected is ai.Injection.EPHEMERAL and e.message.text() == "now"
    with pytest.raises(DurableError):
        durable.meta(session.CustomEntry(kind="k"))


def test_path_edge_cases():
    entries = [msg("a"), msg("b", "a"), msg("c", "b"), msg("x", "missing"), msg("y", "z"), msg("z", "y")]
    assert ids(session.path(entries, "c")) == ["a", "b", "c"]
    assert session.path(entries, "") == [] and session.path(entries, "nope") == []
    assert ids(session.path(entries, "x")) == ["x"]  # missing parent stops the walk
    assert ids(session.path(entries, "y")) == ["z", "y"]  # a cycle stops the walk
    assert ids(session.path(session.index(entries), "c")) == ["a", "b", "c"]


def test_tree_orders_children_and_makes_orphans_and_cycles_roots():
    entries = [msg("a"), msg("b", "a"), msg("c", "a"), msg("o", "gone"), msg("y", "z"), msg("z", "y")]
    roots = session.tree(entries)
    assert [n.entry.id for n in roots] == ["a", "o", "y"]
    assert [n.entry.id for n in roots[0].children] == ["b", "c"]
    assert [n.entry.id for n in roots[2].children] == ["z"]
    assert sum(1 for _ in _walk(roots)) == len(entries)


def _walk(nodes):
    for n in nodes:
        yield n
        yield from _walk(n.children)


def test_agent_creates_or_resumes(tmp_path):
    st = session.JsonlStore(tmp_path)
    a = durable.Agent(store=st)
    assert a.session_id.startswith("session-") and a.leaf_id == ""
    a.run("hello").wait()
    b = durable.Agent(store=st, session_id=a.session_id)
    assert b.leaf_id == a.leaf_id and ids(b.entries()) == ids(a.entries())
    assert isinstance(durable.Agent().store, session.MemoryStore)


def test_run_stream_events_and_wait():
    agent = durable.Agent()
    stream = agent.run(durable.meta("m", origin="cell:1"), durable.ephemeral("e"), "q")
    deltas = []
    for ev in stream:
        if ev.type == "text_delta":
            deltas.append(ev.delta)
            break
    produced = stream.wait()  # drives the rest
    assert len(produced) == 1 and produced[0].role == "assistant"
    reply = produced[0].text()
    assert reply.startswith(deltas[0])
    # the offline model lists what it received, in order, with injection badges
    assert "1. user [meta · cell:1]: m" in reply and "2. user [ephemeral]: e" in reply and "3. user: q" in reply


def test_plain_callable_model_returning_a_message():
    agent = durable.Agent(
        model=lambda msgs: ai.Message(role="assistant", content=[ai.Text("hi")], usage={"output_tokens": 1})
    )
    out = agent.run("q").wait()
    assert out[0].text() == "hi" and agent.messages()[-1].usage == {"output_tokens": 1}


def test_streaming_model_object():
    class Streamer:
        def stream(self, messages):
            yield "a"
            yield "b"

    agent = durable.Agent(model=Streamer())
    events = list(agent.run("q"))
    assert [e.delta for e in events if e.type == "text_delta"] == ["a", "b"]
    assert agent.messages()[-1].text() == "ab"


def test_append_entries_without_a_model_never_builds_it():
    agent = durable.Agent(model="nosuch:model")
    out = agent.append(durable.text("note"), session.CustomEntry(kind="k"))
    assert agent.leaf_id == out[-1].id and len(agent.entries()) == 2
    with pytest.raises(DurableError, match="ephemeral"):
        agent.append(durable.ephemeral("x"))


# -- bad input: a clear error and nothing lost ------------------------------------


def test_depth_is_the_active_path_length_as_the_leaf_moves():
    agent = durable.Agent()
    assert agent.depth == 0
    agent.run("one").wait()
    first_reply = agent.leaf_id
    agent.run(durable.ephemeral("e"), "two").wait()
    assert agent.depth == len(agent.path()) == 4
    agent.branch(first_reply)
    assert agent.depth == len(agent.path()) == 2
    agent.append("note to self")
    assert agent.depth == len(agent.path()) == 3


def test_unknown_branch_target():
    agent = durable.Agent()
    with pytest.raises(UnknownEntry, match="nope"):
        agent.branch("nope")


def test_fork_onto_existing_id():
    agent = durable.Agent(session_id="a")
    durable.Agent(store=agent.store, session_id="b")
    with pytest.raises(session.SessionExists):
        agent.fork("b")


def test_fork_into_another_store_copies_the_path_there_and_names_the_source(tmp_path):
    src = durable.Agent(session_id="src")  # a memory store
    src.run("one").wait()
    disk = session.JsonlStore(tmp_path)
    forked = src.fork("copy", store=disk)
    assert forked.store is disk and texts(e.message for e in forked.path()) == texts(e.message for e in src.path())
    assert disk.load_session("copy").parent_id == "src" and len(disk.load_entries("copy")) == 2
    with pytest.raises(session.SessionNotFound):
        src.store.load_session("copy")  # nothing was created in the source's store


def test_closed_agent_refuses_to_run():
    agent = durable.Agent()
    agent.close()
    with pytest.raises(AgentClosed, match="closed"):
        agent.run("q")
    assert isinstance(AgentClosed("x"), DurableError)


def test_model_failing_mid_run_keeps_input_and_the_next_run_works(tmp_path):
    calls = []

    class Flaky:
        def stream(self, messages):
            calls.append(len(messages))
            yield "partial "
            if len(calls) == 1:
                raise RuntimeError("provider fell over")
            yield "fine"

    st = session.JsonlStore(tmp_path)
    agent = durable.Agent(model=Flaky(), store=st, session_id="s")
    stream = agent.run(durable.meta("m"), "q1")
    events = []
    with pytest.raises(RuntimeError, match="fell over"):
        for ev in stream:
            events.append(ev)
    end = events[-1]
    assert end.type == "agent_end" and isinstance(end.error, RuntimeError) and end.partial == "partial "
    with pytest.raises(RuntimeError):
        stream.wait()
    stored = st.load_entries("s")
    assert [session.display_text(e) for e in stored] == ["m", "q1"]  # input kept, no partial reply
    assert agent.run("q2").wait()[0].text() == "partial fine"
    assert texts(durable.Agent(store=st, session_id="s").messages()) == ["m", "q1", "q2", "partial fine"]


def test_model_that_cannot_be_built_writes_nothing():
    agent = durable.Agent(model=42)
    with pytest.raises(DurableError, match="not a model"):
        agent.run("q")
    assert agent.store.load_entries(agent.session_id) == []


def test_bad_run_input_is_refused_before_anything_is_written():
    agent = durable.Agent()
    with pytest.raises(DurableError, match="entries"):
        agent.run("ok", 42)
    assert agent.entries() == []


def test_preview_is_exactly_what_run_sends_and_writes_nothing():
    received = []
    agent = durable.Agent(model=lambda m: received.append(m) or "ok")
    agent.run("q1").wait()
    inputs = (durable.meta("m"), durable.ephemeral("e"), durable.text("q2"))
    preview = agent.preview(*inputs)
    n = len(agent.store.load_entries(agent.session_id))
    assert len(agent.store.load_entries(agent.session_id)) == n
    agent.run(*inputs).wait()
    assert preview == received[1]
