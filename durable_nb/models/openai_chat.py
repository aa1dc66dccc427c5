"""OpenAI **Chat Completions**, the API local servers speak, through the official ``openai`` SDK.

Names::

    openai:gpt-4.1-mini                         # OPENAI_API_KEY / OPENAI_BASE_URL, read by the SDK
    openai:llama3.2@http://127.0.0.1:11434/v1   # an explicit base URL (here Ollama)

or ``OpenAIChat("gpt-4.1-mini", base_url=..., client=...)`` in code. With a
base URL other than OpenAI's and no ``OPENAI_API_KEY``, a placeholder key is
sent (local servers ignore it; the SDK refuses to start without one). The key
stays inside the SDK client: it is never put on a message, an event or the
store.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

import openai

from .. import ai
from ..errors import ModelError
from . import split_base_url
from .blocks import block_text, data_url, file_text, flatten, is_text_file, omitted
from .failures import cut_short, provider_error

PROVIDER = "openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "no-key-needed"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})


def to_openai(messages: Sequence[ai.Message]) -> list[dict[str, Any]]:
    """Return the Chat Completions ``messages`` for our messages, in order.

    - user messages, injected ones included, go as ``user`` (injected context
      is user-role context); content is a string, or a list of parts when
      the message holds images or files;
    - a :class:`~durable_nb.ai.Reminder` block is sent as text in
      ``<system-reminder>`` tags;
    - assistant tool calls become ``tool_calls`` (arguments as JSON text);
      a ``tool_result`` becomes a ``tool`` message with its ``tool_call_id``.
      The API takes only text in a tool message, so a result's images and
      files follow the run of tool messages as one ``user`` message; the API
      has no error flag, so ``is_error`` rests on the result's own text;
    - images (PNG, JPEG, WebP, GIF) go as data URLs, PDFs as ``file`` parts,
      text files inline; anything else is replaced by a note saying so.

    Pure; O(total content).
    """
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for m in messages:
        if pending and m.role != "tool_result":
            out.append({"role": "user", "content": pending})
            pending = []
        if m.role == "tool_result":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": flatten(m.content)})
            parts = [_part(b) for b in m.content if isinstance(b, (ai.Image, ai.File))]
            if parts:
                pending += [
                    {"type": "text", "text": f"Attachments of the result of tool call {m.tool_call_id}:"},
                    *parts,
                ]
        elif m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": flatten(m.content)}
            calls = m.tool_calls()
            if calls:
                msg["content"] = msg["content"] or None
                msg["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for c in calls
                ]
            out.append(msg)
        else:
            out.append({"role": "user", "content": _content(m.content)})
    if pending:
        out.append({"role": "user", "content": pending})
    return out


def _content(blocks: Sequence[ai.Block]) -> str | list[dict[str, Any]]:
    if not any(isinstance(b, (ai.Image, ai.File)) for b in blocks):
        return flatten(blocks)
    parts = []
    for b in blocks:
        text = block_text(b)
        if text is not None:
            if text:
                parts.append({"type": "text", "text": text})
        elif isinstance(b, (ai.Image, ai.File)):
            parts.append(_part(b))
    return parts


def _part(b: ai.Image | ai.File) -> dict[str, Any]:
    if isinstance(b, ai.Image) and b.mime_type in IMAGE_TYPES:
        return {"type": "image_url", "image_url": {"url": data_url(b)}}
    if isinstance(b, ai.File) and b.mime_type == "application/pdf":
        return {"type": "file", "file": {"filename": b.name or "document.pdf", "file_data": data_url(b)}}
    if isinstance(b, ai.File) and is_text_file(b.mime_type):
        return {"type": "text", "text": file_text(b)}
    return {"type": "text", "text": omitted(b, "the Chat Completions API")}


def usage_of(u: Any) -> dict[str, int]:
    """Return our usage dict for a Chat Completions ``usage`` object.

    ``input_tokens``/``output_tokens`` (the API's prompt/completion tokens),
    plus ``cache_read_input_tokens`` and ``reasoning_tokens`` when non-zero.
    """
    out = {"input_tokens": u.prompt_tokens or 0, "output_tokens": u.completion_tokens or 0}
    cached = getattr(getattr(u, "prompt_tokens_details", None), "cached_tokens", None)
    if cached:
        out["cache_read_input_tokens"] = cached
    reasoning = getattr(getattr(u, "completion_tokens_details", None), "reasoning_tokens", None)
    if reasoning:
        out["reasoning_tokens"] = reasoning
    return out


class _Reply:
    """Accumulates ``chat.completion.chunk`` objects into the assistant message."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.stop_reason: str | None = None
        self.usage: dict[str, int] | None = None
        self.model: str | None = None

    def add(self, chunk: Any) -> str:
        """Take one chunk; return its text delta (``""`` when it carries none)."""
        self.model = self.model or getattr(chunk, "model", None) or None
        if getattr(chunk, "usage", None):
            self.usage = usage_of(chunk.usage)
        if not chunk.choices:
            return ""
        choice = chunk.choices[0]
        if choice.finish_reason:
            self.stop_reason = choice.finish_reason
        delta = choice.delta
        if delta is None:
            return ""
        for tc in delta.tool_calls or []:
            call = self.calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
            call["id"] = call["id"] or (tc.id or "")
            if tc.function is not None:
                call["name"] += tc.function.name or ""
                call["arguments"] += tc.function.arguments or ""
        if delta.content:
            self.text.append(delta.content)
            return delta.content
        return ""

    def message(self, fallback_model: str) -> ai.Message:
        content: list[ai.Block] = [ai.Text("".join(self.text))] if self.text else []
        for i in sorted(self.calls):
            c = self.calls[i]
            content.append(ai.ToolCall(c["id"], c["name"], _arguments(c["arguments"])))
        return ai.Message(
            role="assistant",
            content=content,
            usage=self.usage,
            stop_reason=self.stop_reason,
            model=self.model or fallback_model,
        )


def _arguments(raw: str) -> dict[str, Any]:
    try:
        args = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {"_raw": raw}
    return args if isinstance(args, dict) else {"_value": args}


class OpenAIChat:
    """A Chat Completions model: streams text deltas, then the assistant message.

    ``base_url`` overrides ``OPENAI_BASE_URL``; ``client`` (an
    ``openai.OpenAI``, e.g. with other retries, headers or Azure) replaces
    the one built here. Failures are raised from :meth:`stream` as one-line
    :class:`~durable_nb.errors.ModelError`.
    """

    def __init__(self, model: str, *, base_url: str | None = None, client: openai.OpenAI | None = None) -> None:
        self.model = model
        self.name = f"{PROVIDER}:{model}"
        if client is None:
            target = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
            key = (
                None if os.environ.get("OPENAI_API_KEY") or target.rstrip("/") == DEFAULT_BASE_URL else PLACEHOLDER_KEY
            )
            try:
                client = openai.OpenAI(base_url=base_url, api_key=key)
            except openai.OpenAIError:
                raise ModelError(
                    f"{self.name} needs an API key: set OPENAI_API_KEY in the environment "
                    f"(for a local server set OPENAI_BASE_URL or write {PROVIDER}:{model}@<base URL>)"
                ) from None
        self.client = client

    def stream(self, messages: Sequence[ai.Message]) -> Iterator[str | ai.Message]:
        """Yield the reply's text deltas as they arrive, then the assistant message
        (with ``usage``, ``stop_reason`` = the API's ``finish_reason``, and ``model``).

        A stream that ends without a ``finish_reason`` (a cut connection) is
        an error, not a short reply.
        """
        reply = _Reply()
        try:
            with self.client.chat.completions.create(
                model=self.model,
                messages=to_openai(messages),
                stream=True,
                stream_options={"include_usage": True},
            ) as chunks:
                for chunk in chunks:
                    delta = reply.add(chunk)
                    if delta:
                        yield delta
        except Exception as e:
            err = provider_error(
                PROVIDER,
                e,
                model=self.model,
                base_url=str(self.client.base_url),
                key_hint="OPENAI_API_KEY",
                secrets=[self.client.api_key],
                url_hint=f"set OPENAI_BASE_URL or write {PROVIDER}:{self.model}@<base URL>",
            )
            if err is None:
                raise
            raise err from None  # the cause may quote the key back
        if reply.stop_reason is None:
            raise cut_short(PROVIDER, str(self.client.base_url), "finish_reason")
        yield reply.message(self.model)


def build(name: str) -> OpenAIChat:
    """Return the model for ``openai:<name>`` (``<model>`` or ``<model>@<base URL>``); sends nothing."""
    model, base_url = split_base_url(name)
    return OpenAIChat(model, base_url=base_url)
