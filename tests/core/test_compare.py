"""Compare: each side's request and reply, and the exact structural diff of two requests, on hand-built trees."""

from __future__ import annotations

import msgspec
import pytest
from core_helpers import msg

from durable_nb import ai, durable, session
from durable_nb.durable.comparison import MessageChange, comparison, diff, request_key, side
from durable_nb.errors import DurableError


def reply(id: str, parent: str, text: str, model: str = "m1", settings=None, total_ms=None, usage=None):
    m = ai.Message(
        role="assistant",
        content=[ai.Text(text)],
        model=model,
        settings=settings,
        usage=usage,
        timing={"total_ms": total_ms} if total_ms is not None else None,
    )
    return session.MessageEntry(id=id, parent_id=parent, created_at="2026-01-01T00:00:00Z", message=m)


def system(id: str, parent: str, text: str):
    return session.MessageEntry(id=id, parent_id=parent, message=ai.system_message(text))


def tree(*entries):
    by_id = {e.id: e for e in entries}

    def path_to(leaf: str):
        return session.path(by_id, leaf)

    return path_to


# s -> u1 -> a1 -> u2 -> a2        (branch A: model m1, temperature 0.2)
#               \-> u2b -> a2b     (branch B: model m2, temperature 0.7, another request text)
#               \-> meta -> u2c -> a2c   (branch C: a meta reminder added before the same request as A)
BASE = [
    system("s", "", "Be brief."),
    msg("u1", "s", "Hello"),
    reply("a1", "u1", "Hi."),
    msg("u2", "a1", "Write notes"),
    reply("a2", "u2", "- one", settings={"temperature": 0.2}, total_ms=12.5, usage={"input_tokens": 30}),
    msg("u2b", "a1", "Write notes, grouped"),
    reply("a2b", "u2b", "* one", model="m2", settings={"temperature": 0.7}),
    msg("meta", "a1", "Use bullets.", injected=ai.Injection.META),
    msg("u2c", "meta", "Write notes"),
    reply("a2c", "u2c", "- one", settings={"temperature": 0.2}),
]
path = tree(*BASE)


def test_side_of_a_reply_is_its_request_and_reply():
    s = side(path("a2"), "A")
    assert (s.ref, s.entry_id, s.reply_id) == ("A", "a2", "a2")
    assert s.system == "Be brief."
    assert [m.text() for m in s.messages] == ["Hello", "Hi.", "Write notes"]
    assert s.reply is not None and s.reply.text() == "- one"
    assert (s.model, s.settings, s.total_ms, s.usage) == ("m1", {"temperature": 0.2}, 12.5, {"input_tokens": 30})


def test_side_under_a_custom_entry_names_the_reply_above_it():
    note = session.CustomEntry(id="n", parent_id="a2", kind="note", data={"body": "good"})
    s = side([*path("a2"), note])
    assert (s.entry_id, s.reply_id, s.ref) == ("n", "a2", "n")
    assert [m.text() for m in s.messages] == ["Hello", "Hi.", "Write notes"]


def test_side_of_an_unanswered_user_message_is_the_pending_request():
    s = side(path("u2b"))
    assert s.reply is None and s.model is None and s.settings == {}
    assert [m.text() for m in s.messages] == ["Hello", "Hi.", "Write notes, grouped"]


def test_changed_request_text_settings_and_model():
    d = diff(side(path("a2")), side(path("a2b")))
    assert d.messages == [MessageChange("changed", 2, 2)]
    assert d.same == 2
    assert d.system is None
    assert d.settings == {"temperature": (0.2, 0.7)}
    assert d.model == ("m1", "m2")
    assert not d.identical


def test_added_message_is_aligned_not_a_cascade_of_changes():
    d = diff(side(path("a2")), side(path("a2c")))
    assert d.messages == [MessageChange("added", None, 2)]
    assert d.same == 3
    assert (d.system, d.settings, d.model) == (None, {}, None)
    back = diff(side(path("a2c")), side(path("a2")))
    assert back.messages == [MessageChange("removed", 2, None)]


def test_removed_prefix_and_system_prompt():
    other = tree(msg("x", "", "Write notes"), reply("y", "x", "- one", settings={"temperature": 0.2}))
    d = diff(side(path("a2")), side(other("y")))
    assert d.messages == [MessageChange("removed", 0, None), MessageChange("removed", 1, None)]
    assert d.same == 1
    assert d.system == ("Be brief.", None)


def test_replaced_runs_pair_in_order_then_add():
    a = tree(msg("p", "", "one"), msg("q", "p", "two"), reply("r", "q", "ok"))
    b = tree(msg("p", "", "uno"), msg("q", "p", "dos"), msg("t", "q", "tres"), reply("r", "t", "ok"))
    d = diff(side(a("r")), side(b("r")))
    assert d.messages == [
        MessageChange("changed", 0, 0),
        MessageChange("changed", 1, 1),
        MessageChange("added", None, 2),
    ]
    assert d.same == 0


def test_settings_set_on_one_side_only_and_in_order():
    a = tree(msg("u", "", "q"), reply("r", "u", "x", settings={"temperature": 0.2, "seed": 1}))
    b = tree(msg("u", "", "q"), reply("r", "u", "x", settings={"max_tokens": 50, "temperature": 0.2}))
    d = diff(side(a("r")), side(b("r")))
    assert d.messages == [] and d.same == 1
    assert list(d.settings.items()) == [("seed", (1, None)), ("max_tokens", (None, 50))]


def test_bookkeeping_is_not_a_difference_but_injection_is():
    plain = ai.Message(role="user", content=[ai.Text("hi")])
    bookkept = msgspec.structs.replace(plain, origin="cell:1", usage={"input_tokens": 1}, timing={"total_ms": 1.0})
    assert request_key(plain) == request_key(bookkept)
    assert request_key(plain) != request_key(msgspec.structs.replace(plain, injected=ai.Injection.META))
    # pi's own fields (an imported session's replies carry them; a replay's new ones do not) are not sent either
    stamped = msgspec.structs.replace(plain, timestamp="2025-01-01T00:00:00Z", api="anthropic-messages", provider="x")
    assert request_key(plain) == request_key(stamped)
    image = ai.Message(role="user", content=[ai.Image(b"\x89PNG1")])
    assert request_key(image) != request_key(ai.Message(role="user", content=[ai.Image(b"\x89PNG2")]))


def test_identical_requests():
    d = diff(side(path("a2")), side(path("a2")))
    assert d.identical and d.same == 3 and d.messages == []


def test_comparison_of_three_diffs_each_against_the_first():
    c = comparison([side(path(x)) for x in ("a2", "a2b", "a2c")])
    assert [(d.a, d.b) for d in c.diffs] == [(0, 1), (0, 2)]
    assert c.diffs[1].messages == [MessageChange("added", None, 2)]
    with pytest.raises(DurableError, match="two or more"):
        comparison([side(path("a2"))])


def test_compare_through_an_agent_resolves_ids_and_prefixes():
    agent = durable.Agent()
    agent.run("Hello").wait()
    first = agent.leaf_id
    agent.branch(agent.path()[0].id)  # after the first user message: a second turn under it
    agent.run("And again", settings={"temperature": 0.5}).wait()
    second = agent.leaf_id
    c = durable.compare(agent, first, second[:8])
    assert [s.entry_id for s in c.sides] == [first, second]
    assert [s.ref for s in c.sides] == [first, second[:8]]
    d = c.diffs[0]
    assert d.messages == [MessageChange("added", None, 1)] and d.same == 1
    assert d.settings == {"temperature": (None, 0.5)} and d.model is None
    with pytest.raises(DurableError, match="two or more"):
        durable.compare(agent, first)
    with pytest.raises(DurableError, match="no-such-entry"):
        durable.compare(agent, first, "no-such-entry")


def test_inside_a_changed_run_messages_pair_by_role_and_injection():
    # A: [user 'notes']; B: [meta 'bullets', user 'notes, grouped']: the user messages pair, the meta is added
    a = tree(msg("u", "", "notes"), reply("r", "u", "ok"))
    b = tree(
        msg("m", "", "bullets", injected=ai.Injection.META), msg("u", "m", "notes, grouped"), reply("r", "u", "ok")
    )
    d = diff(side(a("r")), side(b("r")))
    assert d.messages == [MessageChange("added", None, 0), MessageChange("changed", 0, 1)]
    # and the other way round: the meta is removed, the user messages pair
    back = diff(side(b("r")), side(a("r")))
    assert back.messages == [MessageChange("removed", 0, None), MessageChange("changed", 1, 0)]
