"""The widget's per-entry containers stay out of the cyclic GC's walks, as the agent's do (#32)."""

from __future__ import annotations

import gc

from durable_nb import ai, durable, session
from durable_nb.widget.layout import Layout
from durable_nb.widget.views import Followed

N = 10_000  # well above the interpreter's own big containers (object's subclass table: ~3,000 with the SDKs imported)


def _big() -> set[int]:
    """The ids of the lists and dicts of the log's size the collector walks (earlier tests' too)."""
    gc.collect()  # the interpreter's own tables (object's subclasses, modules) are of other sizes
    return {id(o) for o in gc.get_objects() if isinstance(o, (list, dict)) and N <= len(o) <= N + 2}


def _agent(tmp_path) -> durable.Agent:
    st = session.JsonlStore(tmp_path)
    st.create_session("s")
    es, parent = [], ""
    for k in range(N):
        e = session.MessageEntry(
            id=f"e{k}", parent_id=parent, message=ai.Message(role="user", content=[ai.Text(f"m{k}")])
        )
        es.append(e)
        parent = e.id
    st.append_entries("s", es)
    return durable.Agent(store=st, session_id="s")


def test_a_followed_path_leaves_nothing_of_its_size_to_the_collector(tmp_path):
    agent = _agent(tmp_path)
    before = _big()
    followed = Followed(agent)
    assert followed.depth == N and len(followed.transcript) == N
    assert not _big() - before


def test_a_layout_leaves_nothing_of_its_size_to_the_collector():
    ids = [f"e{k}" for k in range(N)]
    parents = ["", *ids[:-1]]
    forked = [*parents[:-1], "e0"]  # the last entry branches off the root: the general walk
    for ps, distinct in ((parents, True), (parents, False), (forked, True)):
        before = _big()
        lay = Layout.build(list(ids), list(ps), [False] * N, [False] * N, ["2026-01-01T00:00:00Z"] * N, distinct)
        copied = lay.copy()
        assert len(lay) == len(copied) >= N
        assert lay._k["e5"] == 5  # the id index, made when first needed
        assert not _big() - before, (ps is forked, distinct)
