"""Anthropic's **Messages** API through the official ``anthropic`` SDK, streaming.

Names::

    anthropic:claude-sonnet-4-5                            # key and base URL as the SDK reads them
    anthropic:claude-sonnet-4-5@https://proxy.example/     # an explicit base URL

or ``AnthropicMessages("claude-sonnet-4-5", base_url=..., max_tokens=..., client=...)``.
The SDK finds the key itself (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``
or its profile config) and the base URL (``ANTHROPIC_BASE_URL``); with a
base URL of your own and no key, a placeholder key is sent (local servers
that speak this API ignore it). The key
stays inside the SDK client: it is never put on a message, an event or the
store.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import anthropic

from .. import ai
from ..errors import ModelError
from . import split_base_url
from .blocks import b64, block_text, is_text_file, omitted
from .failures import cut_short, provider_error, redact

PROVIDER = "anthropic"
DEFAULT_MAX_TOKENS = 8192
PLACEHOLDER_KEY = "no-key-needed"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
NO_KEY = (
    "{name} needs an API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, or an ANTHROPIC_PROFILE) "
    "in the environment"
)


def to_anthropic(messages: Sequence[ai.Message]) -> list[dict[str, Any]]:
    """Return the Messages API ``messages`` for our messages, in order.

    - user messages, injected ones included, go as ``user``; a
      ``tool_result`` becomes a ``tool_result`` block (with ``tool_use_id``
      and ``is_error``) in a ``user`` message; assistant tool calls become
      ``tool_use`` blocks;
    - consecutive messages of one role are merged into one (the API wants
      the roles to alternate), order kept, except that a merged user turn's
      ``tool_result`` blocks move to its front, as the API requires;
    - a :class:`~durable_nb.ai.Reminder` block is a text block in
      ``<system-reminder>`` tags;
    - images (PNG, JPEG, WebP, GIF) and PDFs go as base64, text files as
      plain-text documents; anything else is replaced by a note saying so;
      empty text blocks and messages left empty are dropped (the API refuses them).

    Pure; O(total content).
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        role = "assistant" if m.role == "assistant" else "user"
        content = _content(m)
        if not content:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(content)
        else:
            out.append({"role": role, "content": content})
    for msg in out:
        if msg["role"] == "user":
            msg["content"].sort(key=lambda b: b["type"] != "tool_result")  # stable: order kept otherwise
    return out


def _content(m: ai.Message) -> list[dict[str, Any]]:
    blocks = [b for b in (_block(x) for x in m.content) if b is not None]
    if m.role == "tool_result":
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id or ""}
        if blocks:
            result["content"] = blocks
        if m.is_error:
            result["is_error"] = True
        return [result]
    return blocks


def _block(b: ai.Block) -> dict[str, Any] | None:
    text = block_text(b)
    if text is not None:
        return {"type": "text", "text": text} if text else None
    if isinstance(b, ai.ToolCall):
        return {"type": "tool_use", "id": b.id, "name": b.name, "input": b.arguments}
    if isinstance(b, ai.Image) and b.mime_type in IMAGE_TYPES:
        return {"type": "image", "source": {"type": "base64", "media_type": b.mime_type, "data": b64(b.data)}}
    if isinstance(b, ai.File) and b.mime_type == "application/pdf":
        doc = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(b.data)}}
    elif isinstance(b, ai.File) and is_text_file(b.mime_type):
        doc = {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": b.data.decode("utf-8", "replace")},
        }
    elif isinstance(b, (ai.Image, ai.File)):
        return {"type": "text", "text": omitted(b, "the Anthropic Messages API")}
    else:
        return None
    if b.name:
        doc["title"] = b.name
    return doc


def usage_of(u: Any) -> dict[str, int]:
    """Return our usage dict for a Messages API ``usage`` object (its integer fields, as named there)."""
    names = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return {n: v for n in names if isinstance(v := getattr(u, n, None), int)}


def from_anthropic(msg: Any) -> ai.Message:
    """Return the assistant message for a final Messages API ``Message``.

    Text blocks become :class:`~durable_nb.ai.Text`, ``tool_use`` blocks
    :class:`~durable_nb.ai.ToolCall`; other blocks (thinking) are not kept.
    ``usage``, ``stop_reason`` and ``model`` are copied.
    """
    content: list[ai.Block] = []
    for b in msg.content:
        if b.type == "text":
            content.append(ai.Text(b.text))
        elif b.type == "tool_use":
            content.append(ai.ToolCall(b.id, b.name, dict(b.input or {})))
    return ai.Message(
        role="assistant",
        content=content,
        usage=usage_of(msg.usage) if msg.usage else None,
        stop_reason=msg.stop_reason,
        model=msg.model,
    )


class AnthropicMessages:
    """A Messages API model: streams text deltas, then the assistant message.

    ``max_tokens`` (required by the API) caps the reply. Failures are raised
    from :meth:`stream` as one-line :class:`~durable_nb.errors.ModelError`.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        client: anthropic.Anthropic | None = None,
    ) -> None:
        self.model = model
        self.name = f"{PROVIDER}:{model}"
        self.max_tokens = max_tokens
        if client is None:
            custom = base_url or os.environ.get("ANTHROPIC_BASE_URL")
            try:
                client = anthropic.Anthropic(base_url=base_url)
            except anthropic.AnthropicError as e:
                secrets = [os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_AUTH_TOKEN")]
                raise ModelError(f"{self.name} cannot start: {redact(str(e), secrets)}") from None
            if not (client.api_key or client.auth_token or getattr(client, "_token_cache", None)):
                if not custom:
                    raise ModelError(NO_KEY.format(name=self.name))
                client = client.with_options(api_key=PLACEHOLDER_KEY)
        self.client = client

    def stream(self, messages: Sequence[ai.Message]) -> Iterator[str | ai.Message]:
        """Yield the reply's text deltas as they arrive, then the assistant message
        (with ``usage``, ``stop_reason`` and ``model`` as the API reports them).

        A stream that ends without a stop reason (a cut connection) is an
        error, not a short reply.
        """
        try:
            with self.client.messages.stream(
                model=self.model,
                max_tokens=self.max_tokens,
                messages=to_anthropic(messages),
            ) as events:
                for text in events.text_stream:
                    if text:
                        yield text
                final = events.get_final_message()
        except TypeError as e:
            if "authentication" not in str(e):
                raise
            raise ModelError(NO_KEY.format(name=self.name)) from None
        except Exception as e:
            err = provider_error(
                PROVIDER,
                e,
                model=self.model,
                base_url=str(self.client.base_url),
                key_hint="ANTHROPIC_API_KEY",
                secrets=[self.client.api_key, self.client.auth_token],
                url_hint=f"set ANTHROPIC_BASE_URL or write {PROVIDER}:{self.model}@<base URL>",
            )
            if err is None:
                raise
            raise err from None  # the cause may quote the key back
        if final.stop_reason is None:
            raise cut_short(PROVIDER, str(self.client.base_url), "stop_reason")
        yield from_anthropic(final)


def build(name: str) -> AnthropicMessages:
    """Return the model for ``anthropic:<name>`` (``<model>`` or ``<model>@<base URL>``); sends nothing."""
    model, base_url = split_base_url(name)
    return AnthropicMessages(model, base_url=base_url)
