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
