"""Fan-out through the providers' real SDKs against local servers speaking their protocols: the two model
calls are in flight at the same time, a provider that fails ends only its own branch, everything is stored."""

from __future__ import annotations

import threading

from provider_wire import Reply, WireServer, anthropic_stream, openai_stream

from durable_nb import durable
from durable_nb.session import JsonlStore


class Both:
    """A gate two streams wait on: it opens once both are waiting (True), or times out (False)."""

    def __init__(self) -> None:
        self.barrier = threading.Barrier(2)

    def wait(self, timeout: float) -> bool:
        try:
            self.barrier.wait(timeout)
        except threading.BrokenBarrierError:
            return False
        return True


def test_a_fan_out_over_openai_and_anthropic_overlaps_their_calls_and_survives_a_failing_server(tmp_path):
    gate = Both()
    to_openai = openai_stream(["Bonjour", " !"], pause_after=2, gate=gate)  # type: ignore[arg-type]
    to_anthropic = anthropic_stream(["Hallo", " !"], pause_after=2, gate=gate)  # type: ignore[arg-type]
    with WireServer() as oa, WireServer() as an, WireServer() as down:
        oa.add(to_openai)
        an.add(to_anthropic)
        down.add(
            Reply(404, {"error": {"message": "The model `gpt-gone` does not exist", "type": "invalid_request_error"}})
        )
        agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", system="Be terse.")
        out = agent.fan_out(
            "Say hello.",
            variants=[
                f"openai:gpt-test@{oa.url}/v1",
                f"anthropic:claude-test@{an.url}",
                {"model": f"openai:gpt-test@{down.url}/v1", "label": "down"},
            ],
            settings={"max_tokens": 50},
        )
        to_openai_sent, to_anthropic_sent = oa.requests[0].body, an.requests[0].body
    # each stream was held open until the other request had reached its server: the calls overlapped
    assert to_openai.released is True and to_anthropic.released is True
    first, second, failed = out.branches
    assert (first.text, second.text) == ("Bonjour !", "Hallo !")
    assert (first.name, second.name, failed.name) == ("openai:gpt-test@t1", "anthropic:claude-test@t1", "down")
    assert "gpt-gone` does not exist" in str(failed.error) and failed.leaf_id  # its message is kept
    assert to_openai_sent["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Say hello."},
    ]
    assert to_anthropic_sent["system"] == "Be terse." and to_anthropic_sent["max_tokens"] == 50
    reopened = durable.Agent(store=JsonlStore(tmp_path), session_id="s")
    assert reopened.labels() == agent.labels() and set(agent.labels()) == {
        "openai:gpt-test@t1",
        "anthropic:claude-test@t1",
    }
    models = sorted(
        e.message.model for e in reopened.entries() if getattr(e, "message", None) and e.message.role == "assistant"
    )
    assert models == ["claude-test-20260101", "gpt-test-0001"]
