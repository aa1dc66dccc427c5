"""A replayed turn sends the model the input its original run was sent, also what followed the user's message."""

from __future__ import annotations

from durable_nb import ai, durable
from durable_nb.durable.replay import plan
from durable_nb.session import JsonlStore


def test_input_after_the_user_message_is_replayed_with_its_turn(tmp_path):
    seen: list[list[tuple[str, str]]] = []

    def echo(messages: list[ai.Message]) -> str:
        seen.append([(m.role, m.text()) for m in messages])
        return "ok"

    agent = durable.Agent(model=echo, store=JsonlStore(tmp_path), session_id="s")
    agent.run("q1", durable.meta("after q1", origin="skill:x")).wait()
    agent.run("q2").wait()
    original, seen[:] = list(seen), []
    r = agent.replay()
    assert r.turns == 2 and r.warnings == []
    assert seen == original  # each model call saw what the original's did, the meta in turn 1


def test_a_turn_without_a_reply_still_ends_at_its_user_message():
    # a failed turn (no reply) followed by the next run's meta and message: the meta goes with the next turn
    entries = [durable.text("q1"), durable.meta("for q2"), durable.text("q2")]
    for i, e in enumerate(entries):
        e.id, e.parent_id = f"e{i}", f"e{i - 1}" if i else ""
    p = plan(entries, "")
    assert [[e.id for e in t] for t in p.turns] == [["e0"], ["e1", "e2"]] and p.tail == []
