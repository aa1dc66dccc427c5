"""A real Phoenix server receives an exported session and a live turn; its own client returns the spans
with their names, kinds, conversation id (``session.id``), messages and token counts."""

from __future__ import annotations

import phoenix_server
import pytest

from durable_nb import durable
from durable_nb.otlp.export import send_session
from durable_nb.otlp.live import OtlpPublisher

pytestmark = pytest.mark.timeout(2400)  # the first run installs Phoenix (about 100 s, more on a busy machine)


def test_phoenix_shows_an_exported_session(phoenix, session):
    root, base = phoenix
    traces, sent = send_session(session, base)  # a base URL gets /v1/traces
    assert (traces, sent) == (2, 14)
    got = phoenix_server.spans(root, base, "otlp-s", want=sent)
    assert len(got) == 14
    names = sorted(s["name"] for s in got)
    assert names == sorted(
        ["session otlp-s"] * 2 + ["invoke_agent durable_nb"] * 4 + ["chat fake-1"] * 6 + ["execute_tool add"] * 2
    )
    kinds = {s["name"].split()[0]: s["span_kind"] for s in got}
    assert kinds == {"session": "CHAIN", "invoke_agent": "AGENT", "chat": "LLM", "execute_tool": "TOOL"}
    assert all(s["attributes"]["gen_ai.conversation.id"] == "otlp-s" for s in got)
    first = next(s for s in got if s["name"] == "chat fake-1" and s["attributes"].get("llm.token_count.prompt") == 11)
    a = first["attributes"]
    assert a["llm.token_count.completion"] == 3 and a["llm.token_count.total"] == 14
    assert a["llm.input_messages.0.message.role"] == "system"
    assert a["llm.input_messages.0.message.content"] == "be terse"
    assert [a[f"llm.input_messages.{i}.message.content"] for i in (1, 2, 3)] == [
        "skill body",
        "now: 12:00",
        "please add",
    ]
    assert a["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] == "add"
    tool = next(s for s in got if s["name"] == "execute_tool add")
    assert tool["attributes"]["output.value"] == "5"
    by_id = {s["context"]["span_id"]: s for s in got}
    assert by_id[first["parent_id"]]["name"] == "invoke_agent durable_nb"
    assert len({s["context"]["trace_id"] for s in got}) == 2


def test_phoenix_gets_each_live_turn_as_it_ends(phoenix):
    root, base = phoenix
    a = durable.Agent(session_id="otlp-live")
    pub = OtlpPublisher(a, base)
    for text in ("one", "two"):
        for ev in a.run(text):
            pub(ev)
    assert pub.flush(30) and pub.sent == 2, pub.last_error
    pub.close()
    got = phoenix_server.spans(root, base, "otlp-live", want=4)
    assert sorted(s["name"] for s in got) == ["chat offline"] * 2 + ["invoke_agent durable_nb"] * 2
    assert len({s["context"]["trace_id"] for s in got}) == 2  # a trace per turn
    chats = [s for s in got if s["name"] == "chat offline"]
    assert {c["attributes"]["llm.input_messages.0.message.content"] for c in chats} == {"one"}
