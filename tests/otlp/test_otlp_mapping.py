"""A session as OpenTelemetry spans, and the OTLP/JSON file: names, tree, messages, usage, ids, bad input."""

from __future__ import annotations

import json
import subprocess
import sys

from durable_nb import ai, durable
from durable_nb.__main__ import main
from durable_nb.otlp import branch_ends, session_spans, turn_spans
from durable_nb.otlp.attributes import dumps
from durable_nb.session import JsonlStore
from durable_nb.share import export


def spans_of(agent) -> list:
    return [s for batch in session_spans(agent.entries(), agent.session_id) for s in batch]


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def otlp_spans(path) -> list[dict]:
    return [s for d in lines(path) for rs in d["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def attrs(span: dict) -> dict:
    out = {}
    for a in span["attributes"]:
        v = a["value"]
        out[a["key"]] = v.get("stringValue", v.get("intValue", v.get("doubleValue", v.get("arrayValue"))))
    return out


def test_one_trace_per_branch_with_turns_chats_and_tools(session):
    spans = spans_of(session)
    assert len(branch_ends(session.entries())) == 2  # the label at the first end makes no branch
    traces = {}
    for s in spans:
        traces.setdefault(s.trace_id, []).append(s)
    assert len(traces) == 2
    first, second = traces.values()
    assert [s.name for s in first] == [
        "session otlp-s",
        "invoke_agent durable_nb",
        "chat fake-1",
        "execute_tool add",
        "chat fake-1",
        "invoke_agent durable_nb",
        "chat fake-1",
    ]
    assert [s.name for s in second] == [
        "session otlp-s",
        "invoke_agent durable_nb",
        "chat fake-1",
        "execute_tool add",
        "chat fake-1",
        "invoke_agent durable_nb",
        "chat fake-1",
    ]
    root, turn = first[0], first[1]
    assert root.parent == 0 and turn.parent == root.span_id
    assert all(s.parent == turn.span_id for s in first[2:5])
    assert all(s.attributes["gen_ai.conversation.id"] == "otlp-s" == s.attributes["session.id"] for s in spans)
    assert all(s.start_ns <= s.end_ns for s in spans)
    assert root.start_ns <= min(s.start_ns for s in first) and root.end_ns >= max(s.end_ns for s in first)


def test_a_chat_span_carries_the_request_as_the_model_received_it(session):
    chat = next(s for s in spans_of(session) if s.name.startswith("chat"))
    a = chat.attributes
    assert json.loads(a["gen_ai.system_instructions"]) == [{"type": "text", "content": "be terse"}]
    sent = json.loads(a["gen_ai.input.messages"])
    assert sent == [  # meta and the ephemeral input included, where they were sent
        {"role": "user", "parts": [{"type": "text", "content": "skill body"}]},
        {"role": "user", "parts": [{"type": "text", "content": "now: 12:00"}]},
        {"role": "user", "parts": [{"type": "text", "content": "please add"}]},
    ]
    out = json.loads(a["gen_ai.output.messages"])
    assert out[0]["finish_reason"] == "tool_call"
    assert out[0]["parts"][1] == {"type": "tool_call", "id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}
    assert a["llm.input_messages.0.message.role"] == "system"
    assert a["llm.input_messages.2.message.content"] == "now: 12:00"
    assert a["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] == "add"
    assert a["gen_ai.usage.input_tokens"] == a["llm.token_count.prompt"] == 11
    assert a["llm.token_count.total"] == 14
    assert a["openinference.span.kind"] == "LLM" and a["gen_ai.operation.name"] == "chat"
    assert session.entry(a["durable_nb.entry.id"]).message.tool_calls()[0].name == "add"  # leads back to its entry
    later = [s for s in spans_of(session) if s.name.startswith("chat")][2]  # the "thanks" turn
    assert "now: 12:00" not in later.attributes["gen_ai.input.messages"]  # ephemeral: that turn only


def test_a_tool_span_has_the_call_and_its_result(session):
    tool = next(s for s in spans_of(session) if s.name == "execute_tool add")
    a = tool.attributes
    assert json.loads(a["gen_ai.tool.call.arguments"]) == {"a": 2, "b": 3}
    assert a["gen_ai.tool.call.result"] == "5" and a["gen_ai.tool.call.id"] == "c1"
    assert a["openinference.span.kind"] == "TOOL" and not tool.error
    result = session.entry(a["durable_nb.entry.id"])
    assert result.message.role == "tool_result"


def test_the_file_is_otlp_json_and_the_same_every_time(session, tmp_path):
    export(session, tmp_path / "a.otlp.json")
    export(session, tmp_path / "b.otlp.json")
    assert (tmp_path / "a.otlp.json").read_bytes() == (tmp_path / "b.otlp.json").read_bytes()
    spans = otlp_spans(tmp_path / "a.otlp.json")
    assert len(spans) == 14
    s = spans[2]
    assert len(s["traceId"]) == 32 and len(s["spanId"]) == 16 and len(s["parentSpanId"]) == 16
    int(s["traceId"], 16)
    assert s["kind"] == 1 and s["name"] == "chat fake-1"
    assert attrs(s)["llm.token_count.prompt"] == "11"  # 64-bit integers are strings in OTLP/JSON


def test_hostile_text_in_every_field_stays_valid_json(tmp_path):
    nasty = '</script><b onload=x>"\'\\\n\r\t\x00\x1b[31m\u202e\U0001f600 {"a": [1'

    def model(messages):
        return ai.Message(
            role="assistant",
            content=[ai.Text(nasty), ai.ToolCall(nasty, nasty, {nasty: nasty})],
            model=nasty,
            stop_reason=nasty,
            usage={"input_tokens": nasty},
        )

    a = durable.Agent(model, system=nasty, session_id="hostile", max_steps=1)
    a.run(durable.meta(nasty), nasty).wait()
    export(a, tmp_path / "h.otlp.json")
    spans = otlp_spans(tmp_path / "h.otlp.json")
    clean = nasty
    chat = next(s for s in spans if s["name"].startswith("chat "))
    assert chat["name"] == f"chat {clean}"
    at = attrs(chat)
    assert json.loads(at["gen_ai.input.messages"])[-1]["parts"][0]["content"] == clean
    assert json.loads(at["gen_ai.output.messages"])[0]["parts"][1]["arguments"] == {clean: clean}
    assert "gen_ai.usage.input_tokens" in at  # a count that is not a number counts as 0
    assert json.loads(dumps(["\ud800"])) == ["\ufffd"]  # a lone surrogate (no store keeps one) would still encode


def test_a_session_with_no_replies_and_an_empty_one(tmp_path):
    a = durable.Agent(session_id="quiet", system="s")
    a.append("a question nobody answered")
    export(a, tmp_path / "q.otlp.json")
    names = [s["name"] for s in otlp_spans(tmp_path / "q.otlp.json")]
    assert names == ["session quiet", "invoke_agent durable_nb"]
    empty = durable.Agent(session_id="empty")
    export(empty, tmp_path / "e.otlp.json")
    assert lines(tmp_path / "e.otlp.json") == [{"resourceSpans": []}]


def test_a_stored_session_says_how_much_ephemeral_input_is_unknown(tmp_path):
    store = JsonlStore(tmp_path / ".durable")
    a = durable.Agent(store=store, session_id="e")
    a.run(durable.ephemeral("secret-ish context"), "hi").wait()
    reopened = durable.Agent(store=store, session_id="e")
    turn = next(s for s in spans_of(reopened) if s.name.startswith("invoke_agent"))
    assert turn.attributes["durable_nb.ephemeral.unknown"] == 1
    chat = next(s for s in spans_of(reopened) if s.name.startswith("chat"))
    assert [m["role"] for m in json.loads(chat.attributes["gen_ai.input.messages"])] == ["user"]  # "hi" only


def test_turn_spans_is_the_last_turn_as_its_own_trace(session):
    spans = turn_spans(session.entries(), session.session_id, session.leaf_id)
    assert [s.name for s in spans] == ["invoke_agent durable_nb", "chat fake-1"]
    assert spans[0].parent == 0 and spans[1].parent == spans[0].span_id
    assert json.loads(spans[1].attributes["gen_ai.input.messages"])[-1]["parts"][0]["content"] == "other"


def test_cli_writes_the_file_by_suffix_or_format(session, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    store = JsonlStore(tmp_path / ".durable")
    a = durable.Agent(store=store, session_id="cli")
    a.run("hello").wait()
    assert main(["export", "cli", "-o", "x.otlp.json"]) == 0
    assert main(["export", "cli", "-o", "x.json", "--format", "otlp"]) == 0
    assert "exported session cli" in capsys.readouterr().out
    assert [s["name"] for s in otlp_spans(tmp_path / "x.json")][:2] == ["session cli", "invoke_agent durable_nb"]


def test_importing_the_package_and_loading_the_extension_import_no_opentelemetry():
    code = (
        "import sys, durable_nb, durable_nb.otlp\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().run_line_magic('load_ext', 'durable_nb')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry' or m.startswith('google.protobuf'))\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
