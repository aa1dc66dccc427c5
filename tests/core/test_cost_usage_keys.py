"""Usage as each provider names it: OpenAI's prompt/completion tokens, Anthropic's cache counts without
the creation key; usage with no count at all is unknown, never $0."""

from __future__ import annotations

from genai_prices import Usage, calc_price

from durable_nb import ai
from durable_nb.cost import format_tally, message_cost, priced_tokens, tally, tokens


def reply(model: str, **usage: object) -> ai.Message:
    return ai.assistant_message("ok", model=model, usage=usage)


def test_openai_s_own_usage_names_are_read_and_priced():
    m = reply("gpt-4o-mini", prompt_tokens=1000, completion_tokens=100, prompt_tokens_details={"cached_tokens": 800})
    expected = calc_price(Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=800), "gpt-4o-mini").total_price
    assert tokens(m) == (1000, 100)
    assert message_cost(m) == expected > 0
    assert priced_tokens(m) == (1000, 100, expected)
    assert tally([m]).input_tokens == 1000


def test_anthropic_cache_reads_without_the_creation_key_count_as_input():
    # a Messages API server (or proxy) that leaves out cache_creation_input_tokens: the cache read
    # exceeds input_tokens, so it cannot be counted inside it
    m = reply("claude-3-5-haiku-20241022", input_tokens=200, output_tokens=100, cache_read_input_tokens=800)
    usage = Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=800)
    assert tokens(m) == (1000, 100)
    assert message_cost(m) == calc_price(usage, "claude-3-5-haiku-20241022").total_price


def test_usage_without_any_token_count_is_unknown_not_zero():
    m = reply("gpt-4o-mini", total_tokens=1100)
    assert message_cost(m) is None
    assert format_tally(tally([m])) == "cost unknown"
