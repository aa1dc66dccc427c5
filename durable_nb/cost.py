"""Tokens and cost of model calls, from the usage recorded on assistant messages.

Prices come from genai-prices' bundled price table (its snapshot; nothing is
fetched). A message's cost is known only when it has usage, a model name and
that model is in the table; anything else is *unknown* (``None``), never 0:

    from durable_nb.cost import message_cost, tally, format_cost
    format_cost(message_cost(reply))          # "$0.00045" or "cost unknown"
    t = tally(agent.messages())               # tokens and cost of a path

Usage follows the providers' names (see :mod:`durable_nb.models`):
``input_tokens`` / ``output_tokens``, plus ``cache_read_input_tokens`` and,
from Anthropic's Messages API, ``cache_creation_input_tokens``. Anthropic
counts cached tokens outside ``input_tokens``; OpenAI's Chat Completions
inside (its usage never has ``cache_creation_input_tokens``, and its cache
read never exceeds the input), so the cache tokens are added to the input
here only for the former. OpenAI's own names (``prompt_tokens``,
``completion_tokens``, ``prompt_tokens_details.cached_tokens``) are read too;
a usage with no token count at all is no usage (cost unknown). The model name is
the one recorded on the message (``gpt-4o-mini-2024-07-18``, or
``openai:gpt-4o-mini`` when the provider reported none); a leading
``openai:`` / ``anthropic:`` picks that provider's prices. Prices are
today's table, not the day of the call. Pure; imports nothing from Jupyter.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, NamedTuple, TypeGuard

from . import ai
from .models import split_base_url

PROVIDERS = {"openai": "openai", "anthropic": "anthropic"}  # our model-name prefix -> genai-prices provider id
LOCAL_PREFIXES = ("llm:",)  # prefixes naming how it ran, not whose prices apply


class Tally(NamedTuple):
    """Tokens and cost summed over assistant messages.

    ``cost`` is ``None`` (unknown) when any of them is unpriced; ``known_cost``
    is the sum over the priced ones (``Decimal(0)`` when none is).
    ``priced`` / ``unpriced`` count the assistant messages; ``reported``
    counts those that had usage (tokens are summed over those only).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal | None = Decimal(0)
    priced: int = 0
    unpriced: int = 0
    reported: int = 0
    known_cost: Decimal = Decimal(0)


def tokens(message: ai.Message) -> tuple[int, int] | None:
    """Return ``(input tokens, output tokens)`` of a message's usage, or ``None`` when it has none.

    Input includes cached tokens (read and written), so it is what the model
    read. A count that is not a whole number reads as 0. O(1).
    """
    u = message.usage
    if not _counted(u):
        return None
    inp, out, _, _ = _usage(u)
    return inp, out


def message_cost(message: ai.Message) -> Decimal | None:
    """Return the price in US dollars of the model call that produced ``message``, or ``None`` when unknown.

    Unknown: not an assistant message, no usage, no model, or a model not in
    genai-prices' table (the offline model, a local server's model, a
    callable). Never 0 for unknown. The first call per distinct model and
    usage costs ~0.2 ms (genai-prices); repeats are cached.
    """
    if message.role != "assistant" or not message.model or not _counted(message.usage):
        return None
    return _price(message.model, *_usage(message.usage))


def priced_tokens(message: ai.Message) -> tuple[int, int, Decimal | None] | None:
    """Return ``(input tokens, output tokens, cost)`` of an assistant message in one read of its usage
    (:func:`tokens` and :func:`message_cost` together), ``None`` without usage. For tables of many
    messages (:func:`durable_nb.frame`). O(1), the price cached as :func:`message_cost`'s."""
    u = message.usage
    if not _counted(u):
        return None
    counts = _usage(u)
    cost = _price(message.model, *counts) if message.role == "assistant" and message.model else None
    return counts[0], counts[1], cost


@functools.lru_cache(maxsize=65536)
def _price(model: str, input_tokens: int, output_tokens: int, cache_read: int, cache_write: int) -> Decimal | None:
    from genai_prices import Usage, calc_price

    ref, provider = model_ref(model)
    if not ref:
        return None
    usage = Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read or None,
        cache_write_tokens=cache_write or None,
    )
    try:
        return calc_price(usage, ref, provider_id=provider).total_price
    except (LookupError, ValueError):  # not in the table, or usage the table cannot price
        return None


def model_ref(model: str) -> tuple[str, str | None]:
    """Return ``(model id, genai-prices provider id or None)`` for a model name recorded on a message.

    ``"openai:gpt-4o-mini"`` gives ``("gpt-4o-mini", "openai")``;
    ``"llm:claude-3.5-haiku"`` gives ``("claude-3.5-haiku", None)``;
    ``"gpt-4o-mini-2024-07-18"`` is kept whole; a ``@http…`` base URL is cut.
    """
    name, _ = split_base_url(model.strip())
    for prefix in LOCAL_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :], None
    head, sep, rest = name.partition(":")
    if sep and head in PROVIDERS:
        return rest, PROVIDERS[head]
    return name, None


def tally(messages: Iterable[ai.Message], start: Tally | None = None) -> Tally:
    """Return the :class:`Tally` of the assistant messages among ``messages`` (others are skipped).

    ``start`` is a tally to add to (a running total kept as a log grows).
    No assistant message gives ``Tally()`` (cost ``Decimal(0)``: nothing was
    spent). O(messages), plus :func:`message_cost` for each assistant message.
    """
    s = start or Tally()
    tin, tout, priced, unpriced, reported, known = (
        s.input_tokens,
        s.output_tokens,
        s.priced,
        s.unpriced,
        s.reported,
        s.known_cost,
    )
    for m in messages:
        if m.role != "assistant":
            continue
        u = m.usage
        if not _counted(u):  # the common case of a model that reports nothing (offline): unknown, no tokens
            unpriced += 1
            continue
        inp, out, read, write = _usage(u)
        reported += 1
        tin += inp
        tout += out
        c = _price(m.model, inp, out, read, write) if m.model else None
        if c is None:
            unpriced += 1
        else:
            priced += 1
            known += c
    return Tally(tin, tout, None if unpriced else known, priced, unpriced, reported, known)


def format_cost(cost: Decimal | None) -> str:
    """Return ``"$0.0123"`` (4 decimals below $1, 2 from $1, 2 significant digits below a cent), or
    ``"cost unknown"`` for ``None``."""
    if cost is None:
        return "cost unknown"
    if cost >= 1:
        return f"${cost:,.2f}"
    if cost >= Decimal("0.01") or cost == 0:
        return f"${cost:.4f}"
    return f"${cost.quantize(Decimal(1).scaleb(cost.adjusted() - 1)):f}"


def format_tally(t: Tally) -> str:
    """Return a tally as one phrase: ``"1,200 in / 350 out tokens · $0.0012"``.

    Tokens are left out when no message reported usage; an unknown cost
    reads ``cost unknown``, followed by the known part when some replies
    were priced: ``cost unknown (2 of 5 replies unpriced; $0.0012 for the rest)``;
    a tally of no reply reads ``no replies``.
    """
    if not t.priced and not t.unpriced:
        return "no replies"
    parts = []
    if t.reported:
        parts.append(f"{t.input_tokens:,} in / {t.output_tokens:,} out tokens")
    if t.cost is not None or not t.priced:
        parts.append(format_cost(t.cost))
    else:
        total = t.priced + t.unpriced
        parts.append(
            f"cost unknown ({t.unpriced} of {total} replies unpriced; {format_cost(t.known_cost)} for the rest)"
        )
    return " · ".join(parts)


def _usage(u: dict[str, Any]) -> tuple[int, int, int, int]:
    """Return ``(input, output, cache read, cache write)`` tokens of a usage dict, the input being
    what the model read: the one home of the cache-token rule. Anthropic's Messages API (its usage
    has ``cache_creation_input_tokens``, or a cache read larger than ``input_tokens``) counts cached
    tokens outside ``input_tokens``, so they are added; OpenAI's Chat Completions counts them inside.
    OpenAI's own names (``prompt_tokens``, ``completion_tokens``, ``prompt_tokens_details.cached_tokens``)
    are read when ours are absent. A count that is missing, negative or not an int counts 0. O(1)."""
    inp, out, read = u.get("input_tokens", 0), u.get("output_tokens", 0), u.get("cache_read_input_tokens", 0)
    if not (type(inp) is int and type(out) is int and type(read) is int and inp >= 0 and out >= 0 and read >= 0):
        inp, out = _count(u, "input_tokens"), _count(u, "output_tokens")  # the uncommon case, counted one by one
        read = _count(u, "cache_read_input_tokens")
    if "input_tokens" not in u and "output_tokens" not in u and ("prompt_tokens" in u or "completion_tokens" in u):
        inp, out = _count(u, "prompt_tokens"), _count(u, "completion_tokens")  # OpenAI's usage as it sent it
        details = u.get("prompt_tokens_details")
        read = _count(details, "cached_tokens") if isinstance(details, dict) else read
        return inp, out, min(read, inp), 0
    if "cache_creation_input_tokens" not in u and read <= inp:
        return inp, out, read, 0
    write = _count(u, "cache_creation_input_tokens")
    return inp + read + write, out, read, write


def _counted(u: dict[str, Any] | None) -> TypeGuard[dict[str, Any]]:
    """Return whether usage ``u`` has a token count at all (a usage without one reads as no usage)."""
    return u is not None and any(k in u for k in _COUNT_KEYS)


_COUNT_KEYS = ("input_tokens", "output_tokens", "prompt_tokens", "completion_tokens")


def _count(usage: dict[str, Any], key: str) -> int:
    v = usage.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0
