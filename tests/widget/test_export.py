"""Exports: .jsonl re-opens to equal entries (property test), the .md handout, the .html page's data."""

from __future__ import annotations

import json
import os
import re
import stat

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from widget_sessions import EVIL, hostile_agent, long_agent

from durable_nb import ai, durable
from durable_nb.__main__ import main
from durable_nb.errors import DurableError
from durable_nb.importers import open_session
from durable_nb.session import CompactionEntry, CustomEntry, JsonlStore, MemoryStore, MessageEntry, is_ephemeral
from durable_nb.session.rules import leaf_last
from durable_nb.share import export
from durable_nb.share.handout import handout
from durable_nb.share.page import page_data, page_html, view_order

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
op = st.one_of(
    st.tuples(st.just("user"), text),
    st.tuples(st.just("assistant"), text),
    st.tuples(st.just("meta"), text, text),
    st.tuples(st.just("tool"), text, st.dictionaries(text, json_value, max_size=3)),
    st.tuples(st.just("custom"), text, st.dictionaries(text, json_value, max_size=3)),
    st.tuples(st.just("compaction"), text, st.integers(0, 10**6)),
    st.tuples(st.just("ephemeral"), text),
    st.tuples(st.just("branch"), st.integers(0, 10**6)),
)


def build(ops) -> durable.Agent:
    """An agent whose log is the result of ``ops``: appends of every entry kind, runs with an
    ephemeral entry, and branches back to earlier entries."""
    a = durable.Agent(model=lambda messages: "ok", store=MemoryStore(), session_id="prop")
    for o in ops:
        kind = o[0]
        durable_ids = [e.id for e in a.entries() if not is_ephemeral(e)]
        if kind == "user":
            a.append(o[1])
        elif kind == "assistant":
            a.append(MessageEntry(message=ai.assistant_message(o[1], model="m", usage={"input_tokens": 3})))
        elif kind == "meta":
            a.append(durable.meta(o[1], origin=o[2] or None))
        elif kind == "tool":
            call = ai.ToolCall(f"c{len(durable_ids)}", o[1] or "t", o[2])
            a.append(
                MessageEntry(message=ai.Message(role="assistant", content=[call])),
                MessageEntry(
                    message=ai.Message(
                        role="tool_result",
                        content=[ai.Text(o[1]), ai.Reminder("r")],
                        tool_call_id=call.id,
                        tool_name=call.name,
                    )
                ),
            )
        elif kind == "custom":
            a.append(CustomEntry(kind=o[1] or "k", data=o[2]))
        elif kind == "compaction" and durable_ids:
            a.append(
                CompactionEntry(summary=o[1], first_kept_id=durable_ids[o[2] % len(durable_ids)], tokens_before=o[2])
            )
        elif kind == "ephemeral":
            a.run(durable.ephemeral(o[1]), "q").wait()
        elif kind == "branch" and durable_ids:
            a.branch(durable_ids[o[1] % len(durable_ids)])
    return a


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(op, max_size=25))
@example([("user", ""), ("user", ""), ("branch", 0), ("user", ""), ("branch", 1)])  # the leaf branched back to
def test_jsonl_export_reopens_to_equal_entries(tmp_path, ops):
    a = build(ops)
    out = export(a, tmp_path / "s.jsonl")
    kept = [e for e in a.entries() if not is_ephemeral(e)]
    # the same entries, in append order but for a leaf branched back to: that one comes last, so the
    # file reopens where the agent is (rule R9; jsonl_bytes says so)
    for back in (open_session(out).agent.entries(), JsonlStore(tmp_path).load_entries("s")):
        assert back == leaf_last(kept, a.leaf_id)
        assert sorted(e.id for e in back) == sorted(e.id for e in kept)
    assert json.loads(out.read_bytes().split(b"\n", 1)[0])["type"] == "session_init"


def test_jsonl_export_keeps_the_session_record_and_refuses_to_overwrite_its_own_log(tmp_path):
    store = JsonlStore(tmp_path / "store")
    a = durable.Agent(store=store, session_id="mine")
    a.append("hello")
    rec = store.load_session("mine")
    out = export(a, tmp_path / "copy.jsonl", str(store.file("mine")))
    assert json.loads(out.read_text().splitlines()[0]) == {
        "type": "session_init",
        "id": "mine",
        "parent_id": "",
        "created_at": rec.created_at,
    }
    with pytest.raises(DurableError, match="own log"):
        export(a, store.file("mine"), str(store.file("mine")))
    assert store.load_entries("mine") == a.entries()
    with pytest.raises(DurableError, match=r"must end in \.html, \.md or \.jsonl"):
        export(a, tmp_path / "x.txt")
    assert not list(tmp_path.glob(".copy*"))  # no temporary file left behind


def test_handout_is_the_active_path_with_injected_context_marked_and_branches_listed(agent):
    md = handout(agent)
    ids = agent.ids
    path = md.split("## The active path")[1].split("## Branches")[0]
    assert "> *Injected context (meta from `skill:brief`)" in path and "> Answer briefly." in path
    assert "Today is Monday." not in md  # ephemeral: on no path
    assert path.index("What day is it?") < path.index("Thanks, bye.")
    assert "Show it as HTML" not in path  # the other branch is listed, not transcribed
    branches = md.split("## Branches")[1]
    assert f"after `{ids['result'][:8]}`" in branches and "2 branches" in branches
    assert f"ending at `{ids['hostile'][:8]}`" in branches and "(the active path)" in branches
    assert "Tool call `search`" in path and '"q": "weather Paris"' in path
    assert "Reminder block (sent to the model, hidden from transcripts)" in path
    assert "**Compaction**" in path and "Summary of 5 messages" in path


def test_handout_keeps_untrusted_text_as_text():
    md = handout(hostile_agent())
    # rendered by a Markdown renderer that lets raw HTML through (as many do before sanitising):
    # only the handout's own structure becomes tags; the session's strings stay text
    rendered = MarkdownIt("commonmark", {"html": True}).render(md)
    tags = set(re.findall(r"<([a-z0-9]+)[\s>/]", rendered))
    assert tags <= {
        "h1",
        "h2",
        "p",
        "strong",
        "em",
        "code",
        "pre",
        "blockquote",
        "hr",
        "ul",
        "li",
        "details",
        "summary",
    }
    assert 'src="http://evil.test' not in rendered.replace("&quot;", '"').split("<code")[0]
    assert "window.__pwned=1" in rendered  # shown, as text


def test_page_embeds_the_widget_and_its_data_safely():
    a = hostile_agent()
    html = page_html(a)
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert [attrs.strip() for attrs, _ in scripts] == ['type="application/json" id="dnb-data"', 'type="module"']
    assert "<" not in scripts[0][1]  # the data cannot close its block
    data = json.loads(scripts[0][1])
    assert data["state"]["leaf_id"] == a.leaf_id and data["state"]["tree"]["entries"] == len(a.entries())
    assert sorted(x["row"]["id"] for x in data["lines"]) == sorted(e.id for e in a.entries())
    assert set(data["views"]) == {e.id for e in a.entries()}  # a small session: views at every entry
    assert "function render" in scripts[1][1] and "const model = {" in scripts[1][1]
    assert EVIL not in html.replace(scripts[0][1], "")  # nowhere but inside the JSON (escaped there)


def test_a_big_page_embeds_views_within_its_budget_leaf_and_tips_first():
    a = long_agent(3000)
    data = page_data(a, budget=20_000)
    assert a.leaf_id in data["views"] and 1 < len(data["views"]) < len(a.entries())
    assert sum(v[4] for v in data["views"].values()) <= 20_000
    assert len(data["entries"]) == len(a.entries())  # every entry's details, always
    tips = {e.id for e in a.entries() if not is_ephemeral(e)} - {e.parent_id for e in a.entries()}
    order = view_order(a)
    assert order[0] == a.leaf_id and set(order[1 : len(tips)]) == tips - {a.leaf_id}
    embedded = list(data["views"])
    assert embedded[:3] == order[:3]  # the leaf and the newest tips first; then what still fits


def test_command_line_exports_a_log_or_a_stored_session(tmp_path, capsys, monkeypatch):
    store = JsonlStore(tmp_path / ".durable")
    a = durable.Agent(store=store, session_id="kept")
    a.append("a question")
    monkeypatch.chdir(tmp_path)
    assert main(["export", "kept", "-o", "kept.md"]) == 0
    assert "a question" in (tmp_path / "kept.md").read_text()
    assert main(["export", str(store.file("kept")), "-o", "again.jsonl"]) == 0
    assert (tmp_path / "again.jsonl").read_bytes() == store.file("kept").read_bytes()
    assert "exported session kept (1 entry) to again.jsonl" in capsys.readouterr().out
    assert main(["export", "nosuch", "-o", "x.html"]) == 1
    assert (
        capsys.readouterr().err.strip()
        == "error: no log file 'nosuch' and no session 'nosuch' in .durable (sessions there: kept)"
    )
    with pytest.raises(SystemExit) as e:
        main(["export", "kept"])
    assert e.value.code == 2


def test_command_line_exports_a_session_of_a_sqlite_store(tmp_path, monkeypatch):
    from durable_nb.session import SqliteStore

    store = SqliteStore(tmp_path / "team.db")
    a = durable.Agent(store=store, session_id="s1")
    a.append("from sqlite", MessageEntry(message=ai.assistant_message("reply")))
    rec = store.load_session("s1")
    monkeypatch.chdir(tmp_path)
    assert main(["export", "s1", "--store", "team.db", "-o", "s1.jsonl"]) == 0
    back = JsonlStore(tmp_path)
    assert back.load_entries("s1") == a.entries() and back.load_session("s1") == rec


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_command_line_exports_get_the_mode_the_umask_gives(tmp_path, monkeypatch, mask, mode):
    store = JsonlStore(tmp_path / ".durable")
    durable.Agent(store=store, session_id="kept").append("a question")
    monkeypatch.chdir(tmp_path)
    old = os.umask(mask)
    try:
        for name in ("kept.md", "kept.html", "kept.jsonl"):
            assert main(["export", "kept", "-o", name]) == 0
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name
        assert main(["export", "kept", "-o", "kept.md", "--force"]) == 0  # the replacing path too
        assert stat.S_IMODE((tmp_path / "kept.md").stat().st_mode) == mode
    finally:
        os.umask(old)
