"""Tokens and cost from recorded usage and genai-prices' table; unknown stays unknown, never 0."""

from __future__ import annotations

from decimal import Decimal

import pytest
from genai_prices import Usage, calc_price

from durable_nb import ai, durable
from durable_nb.cost import Tally, format_cost, format_tally, message_cost, model_ref, tally, tokens


def reply(model: str | None, **usage: int) -> ai.Message:
    return ai.assistant_message("ok", model=model, usage=usage or None)


@pytest.mark.parametrize(
    "model, ref, provider",
    [
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini-2024-07-18", None),
        ("openai:gpt-4o-mini", "gpt-4o-mini", "openai"),
        ("anthropic:claude-sonnet-4-5", "claude-sonnet-4-5", "anthropic"),
        ("llm:gpt-4o-mini", "gpt-4o-mini", None),
    ],
)
def test_a_known_model_costs_what_the_price_table_says(model, ref, provider):
    m = reply(model, input_tokens=1234, output_tokens=567)
    expected = calc_price(Usage(input_tokens=1234, output_tokens=567), ref, provider_id=provider).total_price
    assert expected > 0
    assert message_cost(m) == expected
    assert tally([ai.user_message("q"), m]) == Tally(1234, 567, expected, 1, 0, 1, expected)


def test_anthropic_cache_tokens_count_as_input_and_are_priced_as_cache():
    m = reply(
        "claude-sonnet-4-5-20250929",
        input_tokens=12,
        output_tokens=300,
        cache_creation_input_tokens=1000,
        cache_read_input_tokens=4000,
    )
    assert tokens(m) == (5012, 300)
    usage = Usage(input_tokens=5012, output_tokens=300, cache_read_tokens=4000, cache_write_tokens=1000)
    assert message_cost(m) == calc_price(usage, "claude-sonnet-4-5-20250929").total_price
    # OpenAI counts cached tokens inside the prompt tokens (no cache_creation key): input stays as reported
    o = reply("gpt-4o-mini", input_tokens=5000, output_tokens=10, cache_read_input_tokens=4000)
    assert tokens(o) == (5000, 10)
    usage = Usage(input_tokens=5000, output_tokens=10, cache_read_tokens=4000)
    assert message_cost(o) == calc_price(usage, "gpt-4o-mini").total_price


@pytest.mark.parametrize(
    "m",
    [
        reply("offline"),  # no usage
        reply("offline", input_tokens=10, output_tokens=5),  # not in the table
        reply("llama3.2:3b", input_tokens=10, output_tokens=5),  # a local server's model
        reply(None, input_tokens=10, output_tokens=5),  # no model
        ai.user_message("hello"),
    ],
)
def test_unknown_is_none_never_zero(m):
    assert message_cost(m) is None
    assert format_cost(message_cost(m)) == "cost unknown"


def test_a_tally_with_one_unpriced_reply_has_unknown_cost_and_keeps_the_known_part():
    known = reply("gpt-4o-mini", input_tokens=100, output_tokens=20)
    t = tally([known, reply("offline"), reply("my_function", input_tokens=7, output_tokens=3)])
    price = calc_price(Usage(input_tokens=100, output_tokens=20), "gpt-4o-mini").total_price
    assert t == Tally(107, 23, None, 1, 2, 2, price)
    assert (
        format_tally(t)
        == f"107 in / 23 out tokens · cost unknown (2 of 3 replies unpriced; {format_cost(price)} for the rest)"
    )
    assert format_tally(tally([reply("offline")])) == "cost unknown"
    assert format_tally(tally([ai.user_message("q")])) == "no replies"  # nothing was asked of a model
    assert tally([]) == Tally() and tally([]).cost == 0


def test_a_tally_sums_what_tokens_and_message_cost_say_of_each_reply():
    msgs = [
        reply("claude-sonnet-4-5-20250929", input_tokens=12, output_tokens=300, cache_creation_input_tokens=1000),
        reply("claude-sonnet-4-5-20250929", input_tokens=3, output_tokens=9, cache_read_input_tokens=400),
        reply("gpt-4o-mini", input_tokens=5000, output_tokens=10, cache_read_input_tokens=4000),
        reply("gpt-4o-mini", input_tokens=7, output_tokens=2),
        reply(None, input_tokens=10, output_tokens=5),
        ai.user_message("q"),
    ]
    t = tally(msgs)
    counted = [tokens(m) for m in msgs[:5]]
    prices = [message_cost(m) for m in msgs[:5]]
    known = sum((p for p in prices if p is not None), Decimal(0))
    priced = sum(p is not None for p in prices)
    assert priced >= 3 and known > 0
    expected = Tally(sum(c[0] for c in counted), sum(c[1] for c in counted), None, priced, 5 - priced, 5, known)
    assert t == expected
    assert tally(msgs[2:], tally(msgs[:2])) == t


def test_an_agent_run_records_what_prices_it():
    def model(messages):
        return ai.assistant_message(
            "hi", model="gpt-4o-mini-2024-07-18", usage={"input_tokens": 42, "output_tokens": 7}
        )

    a = durable.Agent(model=model)
    a.run("hello").wait()
    a.run("again").wait()
    t = tally(a.messages())
    one = calc_price(Usage(input_tokens=42, output_tokens=7), "gpt-4o-mini-2024-07-18").total_price
    assert (t.input_tokens, t.output_tokens, t.cost, t.priced) == (84, 14, 2 * one, 2)
    offline = durable.Agent()
    offline.run("hello").wait()
    assert tally(offline.messages()).cost is None


@pytest.mark.parametrize(
    "cost, text",
    [("12.3456", "$12.35"), ("0.5", "$0.5000"), ("0.0123", "$0.0123"), ("0.00045", "$0.00045"), ("0", "$0.0000")],
)
def test_format_cost(cost, text):
    assert format_cost(Decimal(cost)) == text


def test_model_ref_cuts_known_prefixes_and_base_urls_only():
    assert model_ref("openai:llama3.2:3b@http://127.0.0.1:9/v1") == ("llama3.2:3b", "openai")
    assert model_ref("llama3.2:3b") == ("llama3.2:3b", None)


def test_a_kept_tally_counts_only_what_extends_it_and_recounts_a_replaced_log():
    from durable_nb.kept import keep_tally, kept_tally
    from durable_nb.session import MessageEntry

    class Owner:  # any object that can be weakly referenced
        pass

    def entry(i, m):
        return MessageEntry(
            id=f"e{i}", parent_id=f"e{i - 1}" if i else "", created_at="2026-01-01T00:00:00Z", message=m
        )

    msgs = [
        reply("gpt-4o-mini", input_tokens=i + 1, output_tokens=2) if i % 2 else ai.user_message("q") for i in range(9)
    ]
    log = [entry(i, m) for i, m in enumerate(msgs)]
    a, b = Owner(), Owner()
    assert kept_tally(a, "session", log[:4]) == tally(msgs[:4])
    # the counted entries are not read again: a changed message among them is not seen, a new one is
    log[1] = entry(1, reply("gpt-4o-mini", input_tokens=1000, output_tokens=2))
    assert kept_tally(a, "session", log) == tally(msgs[:4] + msgs[4:]) != tally(e.message for e in log)
    assert kept_tally(a, "path", log) == tally(e.message for e in log)  # another kind: its own count
    assert kept_tally(b, "session", log) == tally(e.message for e in log)  # another owner: its own count
    other = [entry(i, reply("offline")) for i in range(3)]  # a log that does not extend what was counted
    assert kept_tally(a, "session", other) == tally(e.message for e in other)
    assert kept_tally(a, "session", []) == Tally()
    keep_tally(a, "session", 2, "e1", Tally(5, 5, Decimal(0), 1, 0, 1, Decimal(0)))
    assert kept_tally(a, "session", other).input_tokens == 5  # starts from what was kept
