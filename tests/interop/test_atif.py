"""ATIF: one linear trajectory per leaf branch, valid against ATIF v1.8's JSON schema (kept beside this
file, with its source) and the rules the schema cannot say; meta input is copied context."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from interop_sessions import every_kind_agent
from widget_sessions import EVIL, hostile_agent

from durable_nb import ai, durable
from durable_nb.errors import DurableError
from durable_nb.session import MemoryStore, MessageEntry
from durable_nb.share import export
from durable_nb.share.branches import leaves

SCHEMA = json.loads((Path(__file__).parent / "atif-v1.8.schema.json").read_text())
AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


def check(doc: dict) -> None:
    """``doc`` is a valid ATIF v1.8 trajectory: the schema, then the models' cross-field rules."""
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert [s["step_id"] for s in doc["steps"]] == list(range(1, len(doc["steps"]) + 1))
    for s in doc["steps"]:
        if s["source"] != "agent":
            assert not any(k in s for k in AGENT_ONLY), s
        ids = {c["tool_call_id"] for c in s.get("tool_calls") or []}
        for r in (s.get("observation") or {}).get("results", []):
            assert r.get("source_call_id") is None or r["source_call_id"] in ids
    try:
        from atif import Trajectory  # the published models, where installed
    except ImportError:
        return
    Trajectory.model_validate(doc)


def trajectories(out: Path) -> list[dict]:
    main = json.loads(out.read_text())
    return [main, *main["extra"].get("branches", [])]


def test_every_leaf_branch_is_one_valid_trajectory(tmp_path):
    a = every_kind_agent()
    docs = trajectories(export(a, tmp_path / "s.atif.json"))
    for d in docs:
        check({k: v for k, v in d.items()} | {"extra": {k: v for k, v in d["extra"].items() if k != "branches"}})
    assert [d["trajectory_id"] for d in docs] == leaves(a.entries(), a.leaf_id)
    assert docs[0]["trajectory_id"] == a.leaf_id and {d["session_id"] for d in docs} == {"tools"}
    main, other = docs
    assert main["agent"] == {"name": "durable_nb", "version": main["agent"]["version"], "model_name": "claude-test"}
    user, calls = main["steps"][0], main["steps"][1]
    assert (user["source"], user["message"]) == ("user", "Define durable and session.")
    assert calls["source"] == "agent" and calls["metrics"] == {"prompt_tokens": 120, "completion_tokens": 45}
    assert "The user wants two words." in calls["reasoning_content"]
    assert [c["function_name"] for c in calls["tool_calls"]] == ["lookup", "lookup"]
    results = calls["observation"]["results"]
    assert [r["source_call_id"] for r in results] == ["call_0", "call_1"] and results[1]["extra"] == {"is_error": True}
    assert len(calls["extra"]["entry_ids"]) == 3  # the call and its two results: one step
    # the other branch carries the system prompt, the meta input (copied context) and the compaction
    sources = [(s["source"], s.get("is_copied_context", False)) for s in other["steps"]]
    assert ("system", False) in sources and sources.count(("user", True)) == 2
    meta = [s for s in other["steps"] if s.get("is_copied_context")]
    assert meta[0]["extra"] == {"entry_ids": meta[0]["extra"]["entry_ids"], "injected": "meta", "origin": "skill:ctx"}
    (image,) = [s for s in other["steps"] if isinstance(s["message"], list)]
    assert image["message"][1]["source"]["path"].startswith("data:image/png;base64,")
    (summary,) = [s for s in other["steps"] if s["extra"].get("compaction")]
    assert summary["source"] == "system" and summary["message"] == "Earlier: a lookup."
    assert "Today is Monday." not in out_text(tmp_path)  # ephemeral input is never stored, never exported


def out_text(tmp_path: Path) -> str:
    return (tmp_path / "s.atif.json").read_text()


def test_hostile_text_stays_inside_valid_json(tmp_path):
    docs = trajectories(export(hostile_agent(), tmp_path / "h.atif.json"))
    for d in docs:
        check({**d, "extra": {"leaf_id": d["extra"]["leaf_id"]}})
    assert sum(isinstance(s["message"], str) and EVIL in s["message"] for d in docs for s in d["steps"]) > 3


def test_a_session_with_no_entries_is_one_line(tmp_path):
    a = durable.Agent(store=MemoryStore(), session_id="empty")
    with pytest.raises(DurableError, match="has no entries, so no trajectory"):
        export(a, tmp_path / "e.atif.json")
    assert list(tmp_path.iterdir()) == []


def late_result_agent() -> durable.Agent:
    """A reply calls two tools; one answers at once, the other only after the user's next message (a late
    result, which rule R6 allows); then the last reply. Attribute ``ids``: every entry, in path order."""
    a = durable.Agent(store=MemoryStore(), session_id="late")
    calls = ai.Message("assistant", [ai.Text("Both."), ai.ToolCall("c1", "look", {"q": 1}),
                                     ai.ToolCall("c2", "look", {"q": 2})], model="m1")  # fmt: skip
    done = ai.Message("tool_result", [ai.Text("one")], tool_call_id="c1", tool_name="look")
    late = ai.Message("tool_result", [ai.Text("two")], tool_call_id="c2", tool_name="look", is_error=True)
    entries = a.append(
        MessageEntry(message=ai.Message("user", [ai.Text("Look both up.")])),
        MessageEntry(message=calls),
        MessageEntry(message=done),
        MessageEntry(message=ai.Message("user", [ai.Text("Still there?")])),
        MessageEntry(message=late),
        MessageEntry(message=ai.assistant_message("Done.", model="m1")),
    )
    a.ids = [e.id for e in entries]
    return a


def test_a_late_tool_result_is_a_step_where_it_arrived(tmp_path):
    """A result that comes after later messages is not filed under its call's step (which would move it back
    in time): it is a system step of its own at its place in the path, naming its call in ``extra``."""
    a = late_result_agent()
    q, calls, done, again, late, last = a.ids
    (doc,) = trajectories(export(a, tmp_path / "late.atif.json"))
    check(doc)
    steps = doc["steps"]
    assert [s["extra"]["entry_ids"] for s in steps] == [[q], [calls, done], [again], [late], [last]]
    assert [e for s in steps for e in s["extra"]["entry_ids"]] == a.ids  # the path's order, each entry once
    assert [s["source"] for s in steps] == ["user", "agent", "user", "system", "agent"]
    assert steps[1]["observation"] == {"results": [{"source_call_id": "c1", "content": "one"}]}
    arrived = steps[3]
    assert arrived["message"] == "" and arrived["timestamp"] == a.entry(late).created_at
    assert arrived["observation"] == {"results": [{"content": "two", "extra": {"is_error": True}}]}
    assert {k: arrived["extra"][k] for k in ("tool_call_id", "tool_name", "call_step_id")} == {
        "tool_call_id": "c2", "tool_name": "look", "call_step_id": 2}  # fmt: skip
