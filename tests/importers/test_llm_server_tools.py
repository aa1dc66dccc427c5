"""llm replies with provider-side parts: server-run tools and signed reasoning (written by llm's own API)."""

from __future__ import annotations

from pathlib import Path

import llm
import sqlite_utils
from llm.parts import StreamEvent

from durable_nb import ai
from durable_nb.importers import open_session
from durable_nb.session import MessageEntry, entry_kind, is_aside


class Search(llm.Model):
    """Runs a web search on the provider's side (as Anthropic's web search does), then answers."""

    model_id = "search-local"
    can_stream = True

    def execute(self, prompt, stream, response, conversation):
        response.set_usage(input=11, output=3)
        yield StreamEvent(type="text", chunk="Searching. ")
        yield StreamEvent(type="tool_call_name", chunk="web_search", tool_call_id="srv_1", server_executed=True)
        yield StreamEvent(type="tool_call_args", chunk='{"q": "paris"}', tool_call_id="srv_1", server_executed=True)
        yield StreamEvent(
            type="tool_result",
            chunk="Paris is sunny",
            tool_call_id="srv_1",
            tool_name="web_search",
            server_executed=True,
        )
        yield StreamEvent(type="text", chunk="It is sunny.")


class Signed(llm.Model):
    """Reasons with a provider signature (Anthropic's), then answers."""

    model_id = "signed-local"
    can_stream = True

    def execute(self, prompt, stream, response, conversation):
        yield StreamEvent(type="reasoning", chunk="hmm", provider_metadata={"anthropic": {"signature": "SIG"}})
        yield StreamEvent(type="text", chunk="answer")


def _log(path: Path, model: llm.Model, *prompts: str) -> None:
    db = sqlite_utils.Database(path)
    c = model.conversation()
    for p in prompts:
        r = c.prompt(p)
        r.text()
        r.log_to_db(db)


def test_a_reply_with_a_server_run_tool_stays_the_models_reply(tmp_path):
    path = tmp_path / "logs.db"
    _log(path, Search(), "weather in paris?")
    a = open_session(path).agent
    msgs = a.messages()
    # The reply is the assistant's, with its model and tokens, its text in order; not a tool result.
    assert [m.role for m in msgs] == ["user", "assistant"]
    reply = msgs[1]
    assert reply.model == "search-local" and reply.usage == {"input_tokens": 11, "output_tokens": 3}
    assert [b.text for b in reply.content if isinstance(b, ai.Text)] == ["Searching. ", "It is sunny."]
    assert reply.tool_calls() == []  # the provider ran it: no result is owed, none is made up
    # The server-run call and its result are kept, off the path, hanging off the reply.
    (server,) = [e for e in a.entries() if getattr(e, "kind", "") == "llm.server_tool"]
    assert is_aside(server) and server.parent_id == a.leaf_id
    assert [(p["type"], p.get("name")) for p in server.data["parts"]] == [
        ("tool_call", "web_search"),
        ("tool_result", "web_search"),
    ]
    assert server.data["parts"][1]["output"] == "Paris is sunny"


def test_provider_metadata_is_an_aside_and_makes_no_branch(tmp_path):
    path = tmp_path / "logs.db"
    _log(path, Signed(), "q1", "q2")
    a = open_session(path).agent
    metas = [e for e in a.entries() if getattr(e, "kind", "") == "llm.provider_metadata"]
    assert len(metas) == 2
    assert all(is_aside(e) and entry_kind(e) == "aside" for e in metas)
    assert metas[0].data == {"part 0": {"anthropic": {"signature": "SIG"}}}
    # Each message's only on-chain child is the next message: no branch at the signed reply.
    chain = [e for e in a.entries() if not is_aside(e) and isinstance(e, MessageEntry)]
    for e in chain:
        assert len([c for c in a.entries() if c.parent_id == e.id and not is_aside(c)]) <= 1
