"""Provider faults, with the real ``openai`` and ``anthropic`` SDKs against local servers.

What each test injects (listed in tests/reliability/README.md too):

- a surrogate pair split across two SSE events (``\\ud83d`` / ``\\ude00``),
  as a proxy cutting an emoji in half sends it;
- a connection dropped mid-body after text arrived (chunked SSE, no final chunk);
- an SSE event that is not JSON;
- a server that accepts and never answers, and one that stalls mid-stream;
- a key echoed back past the one-line cut, a key with a trailing ``\\r``.
"""

from __future__ import annotations

import json

import pytest
from provider_session import FAKE_KEY, run_events, stored_reply
from provider_wire import Reply, anthropic_error, anthropic_stream, openai_error, openai_stream
from raw_wire import SSE_HEAD, RawServer, Script, sse_chunk

from durable_nb import ai, durable, models
from durable_nb.errors import ModelError
from durable_nb.session import JsonlStore

PROVIDERS = {
    "openai": ("openai:gpt-test@{url}/v1", openai_stream, "OPENAI_API_KEY"),
    "anthropic": ("anthropic:claude-test@{url}", anthropic_stream, "ANTHROPIC_API_KEY"),
}


def failure(spec: str) -> str:
    """Stream one message from ``spec``; return the one-line ModelError it must raise."""
    with pytest.raises(ModelError) as failed:
        list(models.build(spec).stream([ai.user_message("hi")]))
    message = str(failed.value)
    assert "\n" not in message and failed.value.__cause__ is None, message
    return message


def leaked(key: str, text: str) -> list[str]:
    """Return every 6-character piece of ``key`` that appears in ``text``."""
    core = key.strip()
    return [core[i : i + 6] for i in range(len(core) - 5) if core[i : i + 6] in text]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_surrogate_pair_split_across_two_events_is_one_character_streamed_and_stored(wire, tmp_path, provider):
    spec, stream, _ = PROVIDERS[provider]
    wire.add(stream(["Smile ", "\ud83d", "\ude00", " now"]))  # json.dumps writes the \ud83d / \ude00 escapes
    root = tmp_path / "store"
    agent = durable.Agent(model=spec.format(url=wire.url), store=JsonlStore(root), session_id="s1")

    events = run_events(agent, "Send an emoji")

    assert [e.delta for e in events if e.type == "text_delta"] == ["Smile ", "\U0001f600", " now"]
    assert events[-1].type == "agent_end" and events[-1].error is None
    assert stored_reply(root)[0] == "Smile \U0001f600 now"  # read back from disk


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_lone_surrogate_at_the_end_of_a_stream_is_stored_as_a_replacement_character(wire, tmp_path, provider):
    spec, stream, _ = PROVIDERS[provider]
    wire.add(stream(["Cut ", "\ud83d"]))
    root = tmp_path / "store"
    agent = durable.Agent(model=spec.format(url=wire.url), store=JsonlStore(root), session_id="s1")
    events = run_events(agent, "Go")
    assert "".join(e.delta for e in events if e.type == "text_delta") == "Cut \ufffd"
    assert stored_reply(root)[0] == "Cut \ufffd"


def cut_after_text(provider: str) -> Script:
    reply = PROVIDERS[provider][1](["Hello ", "wor", "ld"])
    text_events = 4 if provider == "openai" else 6  # role chunk + 3 / start, block start, ping + 3
    return Script([SSE_HEAD, *(sse_chunk(ev, data) for ev, data in reply.events[:text_events])], then="close")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_dropped_after_text_arrived_says_it_was_cut_not_that_the_server_is_down(tmp_path, provider):
    spec = PROVIDERS[provider][0]
    with RawServer(cut_after_text(provider)) as server:
        message = failure(spec.format(url=server.url))
        assert "was cut off after 11 characters" in message and "RemoteProtocolError" in message
        assert "cannot reach" not in message and "is the server running" not in message

        root = tmp_path / "store"
        agent = durable.Agent(model=spec.format(url=server.url), store=JsonlStore(root), session_id="s1")
        events = []
        with pytest.raises(ModelError, match="cut off after 11 characters"):
            for ev in agent.run("Hi"):
                events.append(ev)
    assert events[-1].type == "agent_end" and events[-1].partial == "Hello world"  # shown to the caller ...
    reopened = durable.Agent(store=JsonlStore(root), session_id="s1")
    assert [(m.role, m.text()) for m in reopened.messages()] == [("user", "Hi")]  # ... not stored as a reply


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_event_that_is_not_json_is_one_clear_line(wire, provider):
    spec, stream, _ = PROVIDERS[provider]
    reply = stream(["Fine so far"])
    keep = 2 if provider == "openai" else 4
    wire.add(
        Reply(events=[*reply.events[:keep], ("content_block_delta" if provider == "anthropic" else None, "{oops")])
    )
    message = failure(spec.format(url=wire.url))
    assert f"{provider}: http://127.0.0.1:" in message and "sent a stream event that is not JSON" in message
    assert "after 11 characters of reply" in message


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_server_that_never_answers_times_out_after_the_read_timeout(monkeypatch, provider):
    monkeypatch.setenv("DURABLE_NB_READ_TIMEOUT", "0.3")
    spec = PROVIDERS[provider][0]
    with RawServer(Script(then="hang")) as server:
        message = failure(spec.format(url=server.url))
        tries = server.connections
    assert "did not answer (no data for 0.3 s; set DURABLE_NB_READ_TIMEOUT to wait longer)" in message
    assert tries == 3  # the SDK's own two retries, each bounded by the timeout


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_that_stalls_mid_reply_times_out_and_says_how_much_arrived(monkeypatch, provider):
    monkeypatch.setenv("DURABLE_NB_READ_TIMEOUT", "0.3")
    script = cut_after_text(provider)
    script.then = "hang"
    with RawServer(script) as server:
        message = failure(PROVIDERS[provider][0].format(url=server.url))
    assert "was cut off after 11 characters (no data for 0.3 s; set DURABLE_NB_READ_TIMEOUT" in message


def test_a_read_timeout_that_is_not_a_number_is_refused_at_build(monkeypatch):
    monkeypatch.setenv("DURABLE_NB_READ_TIMEOUT", "soon")
    with pytest.raises(ModelError, match="DURABLE_NB_READ_TIMEOUT='soon' is not a number of seconds"):
        models.build("openai:gpt-test@http://127.0.0.1:9/v1")


ERRORS = {
    "openai": lambda msg: openai_error(401, msg, "invalid_request_error", "invalid_api_key"),
    "anthropic": lambda msg: anthropic_error(401, "authentication_error", msg),
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("at", [200, 230])
def test_a_key_echoed_past_the_one_line_cut_is_masked_before_the_cut(wire, monkeypatch, provider, at):
    spec, _, env = PROVIDERS[provider]
    monkeypatch.setenv(env, FAKE_KEY)
    wire.add(ERRORS[provider]("x" * at + f" {FAKE_KEY} was refused"))
    message = failure(spec.format(url=wire.url))
    assert "401 authentication failed" in message
    assert leaked(FAKE_KEY, message) == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_key_with_a_trailing_line_break_is_named_as_the_problem_and_never_shown(wire, monkeypatch, provider):
    spec, _, env = PROVIDERS[provider]
    monkeypatch.setenv(env, FAKE_KEY + "\r")
    message = failure(spec.format(url=wire.url))
    assert f"the key in {env} begins or ends with a space or control character" in message
    assert leaked(FAKE_KEY, message) == [] and wire.requests == []


def test_redaction_masks_every_form_and_prefix_of_a_key_before_the_cut():
    from durable_nb.models.failures import redact

    key = FAKE_KEY
    texts = [
        f"Illegal header value b'Bearer {key}\\r'",  # what h11 says for a key ending in \r
        json.dumps({"auth": f"Bearer {key}\r\n"}),  # the key JSON-escaped, with its line break
        repr(f"{key}\r"),
        f"key {key[:20]}… refused",  # a key someone else cut short
        f"{key[:6]}",
        f"{key}{key}",
    ]
    for text in texts:
        masked = redact(text, [key + "\r"])
        assert leaked(key, masked) == [] and "***" in masked, masked
    assert redact("the key sk-123456 was given", ["sk-123456", None, ""]) == "the key *** was given"
    assert redact("sk-1", ["sk-1234"]) == "sk-1"  # fewer than 6 of its characters: not masked


def test_split_surrogates_are_joined_whichever_way_the_stream_is_cut():
    from durable_nb.models.surrogates import SurrogateJoiner, join_surrogates

    text = "a\ud83d\ude00b\ud83d"  # a pair, then a lone high surrogate
    assert join_surrogates(text) == "a\U0001f600b\ufffd"
    for cut in range(len(text) + 1):
        joiner = SurrogateJoiner()
        out = joiner.feed(text[:cut]) + joiner.feed(text[cut:]) + joiner.flush()
        assert out == "a\U0001f600b\ufffd", cut
        out.encode()
