"""The usage the real SDKs report, priced: cached tokens counted the way each API counts them, and the
figure equal to genai-prices' own for the same usage (a local server speaking each provider's protocol)."""

from __future__ import annotations

from genai_prices import Usage, calc_price
from provider_wire import anthropic_stream, openai_stream

from durable_nb import durable
from durable_nb.cost import message_cost, tally, tokens


def test_anthropic_cache_reads_and_writes_are_input_priced_as_cache(wire):
    reply = anthropic_stream(["Bonjour."], model="claude-sonnet-4-5-20250929", usage=(12, 300))
    reply.events[0][1]["message"]["usage"].update(cache_creation_input_tokens=1000, cache_read_input_tokens=4000)
    wire.add(reply)
    agent = durable.Agent(model=f"anthropic:claude-test@{wire.url}")  # the reply names the model that priced it
    (m,) = agent.run("Hello").wait()
    assert m.usage == {
        "input_tokens": 12,
        "output_tokens": 300,
        "cache_creation_input_tokens": 1000,
        "cache_read_input_tokens": 4000,
    }
    assert tokens(m) == (5012, 300)  # Anthropic counts cached tokens apart from input_tokens
    usage = Usage(input_tokens=5012, output_tokens=300, cache_read_tokens=4000, cache_write_tokens=1000)
    assert message_cost(m) == calc_price(usage, "claude-sonnet-4-5-20250929").total_price


def test_openai_cached_prompt_tokens_are_inside_the_input_and_priced_as_cache(wire):
    reply = openai_stream(["Bonjour."], model="gpt-4o-mini-2024-07-18", usage=(5000, 20))
    reply.events[-2][1]["usage"]["prompt_tokens_details"] = {"cached_tokens": 4000}
    wire.add(reply, openai_stream(["Encore."], model="gpt-4o-mini-2024-07-18", usage=(5100, 7)))
    agent = durable.Agent(model=f"openai:gpt-4o-mini@{wire.url}/v1")
    (m,) = agent.run("Hello").wait()
    assert m.usage == {"input_tokens": 5000, "output_tokens": 20, "cache_read_input_tokens": 4000}
    assert tokens(m) == (5000, 20)  # OpenAI's prompt tokens already hold the cached ones
    first = calc_price(Usage(input_tokens=5000, output_tokens=20, cache_read_tokens=4000), "gpt-4o-mini-2024-07-18")
    assert message_cost(m) == first.total_price
    agent.run("Again").wait()
    second = calc_price(Usage(input_tokens=5100, output_tokens=7), "gpt-4o-mini-2024-07-18").total_price
    t = tally(agent.messages())
    assert (t.input_tokens, t.output_tokens, t.cost) == (10100, 27, first.total_price + second)
