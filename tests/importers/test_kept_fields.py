"""What an importer must not drop from a record it reads: a failed reply's reason, who made it."""

from __future__ import annotations

from importer_helpers import opened, raw_lines

from durable_nb.session import MessageEntry

V1 = "pi-mono-v1-before-compaction-prefix.jsonl"


def test_pi_aborted_reply_keeps_its_error_api_and_provider():
    a = opened(V1).agent
    line = raw_lines(V1)[90]["message"]  # line 91: an aborted reply with no content, only errorMessage
    assert line["stopReason"] == "aborted" and line["content"] == []
    m = a.entry("L91").message
    assert isinstance(a.entry("L91"), MessageEntry) and m.role == "assistant"
    assert m.error == "Request was aborted."  # the only thing the record says about the turn
    assert (m.api, m.provider, m.model) == ("anthropic-messages", "anthropic", "claude-opus-4-5")
    ok = a.entry("L311").message  # a reply that did not fail has no error
    assert ok.error is None and ok.provider == "anthropic"


CODEX = "localpush-rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"


def test_codex_replies_keep_the_turns_model_and_their_token_counts():
    a = opened(CODEX).agent
    lines = raw_lines(CODEX)
    replies = [e for e in a.entries() if isinstance(e, MessageEntry) and e.message.role == "assistant"]
    assert [e.id for e in replies] == ["L16", "L25", "L34", "L43", "L52", "L61"]
    assert {e.message.model for e in replies} == {lines[10]["payload"]["model"]} == {"gpt-5.3-codex"}
    # The token_count event written after a response holds that response's usage (last_token_usage).
    after = {"L16": 18, "L25": 27, "L34": 36, "L43": 45, "L52": 54, "L61": 62}
    for e in replies:
        last = lines[after[e.id] - 1]["payload"]["info"]["last_token_usage"]
        assert e.message.usage == last | {"cache_read_input_tokens": last["cached_input_tokens"]}, e.id
    assert sum(e.message.usage["output_tokens"] for e in replies) == 1123  # the log's own total
