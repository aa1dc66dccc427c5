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
from .blocks import (
    b64,
    block_text,
    is_text_file,
    omitted,
    own_signature,
    repeated_call,
    split_settings,
    tool_schema,
    unmatched_result,
)
from .failures import cut_short, provider_error, read_timeout, redact
from .surrogates import SurrogateJoiner, repair_message

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
    - a :class:`~durable_nb.ai.Thinking` block goes back as the API gave it
      (``thinking`` with its ``signature``, or ``redacted_thinking``), which
      the API requires of the assistant turn that made a tool call while
      thinking; reasoning without a signature of an API (another provider's,
      or llm's metadata) is left out, since the API would refuse it;
    - images (PNG, JPEG, WebP, GIF) and PDFs go as base64, text files as
      plain-text documents; anything else is replaced by a note saying so;
      empty text blocks and messages left empty are dropped (the API refuses them);
    - the API refuses two ``tool_use`` blocks of one id (a model or an
      imported log can give them): the first call of an id is the
      ``tool_use``, answered by the first result of that id (as the model
      view pairs them), and a repeated call goes as text, headed by its id,
      before the message's ``tool_use`` blocks;
    - a result that answers no call of the assistant message before its
      user turn (its call elided by a compaction that kept the late result,
      or a second result for one id) goes as text, headed by the call id:
      the API refuses a ``tool_result`` whose ``tool_use`` is not there.

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
    calls: set[str] = set()  # the previous assistant message's calls not answered yet
    for msg in out:
        if msg["role"] == "assistant":
            calls = _calls_once(msg)
            continue
        blocks = []
        for b in msg["content"]:
            if b["type"] != "tool_result":
                blocks.append(b)
            elif b["tool_use_id"] in calls:
                calls.discard(b["tool_use_id"])
                blocks.append(b)
            else:
                blocks += _unmatched(b)
        blocks.sort(key=lambda b: b["type"] != "tool_result")  # stable: order kept otherwise
        msg["content"] = blocks
        calls = set()
    return out


def _calls_once(msg: dict[str, Any]) -> set[str]:
    """Keep the first ``tool_use`` of each id in an assistant message and put any other (a repeat of an
    id) as text before the ``tool_use`` blocks, where :func:`~durable_nb.models.openai_chat.to_openai`'s
    message has it too (the calls last, as the API writes them). Return the ids kept. O(blocks)."""
    calls: set[str] = set()
    kept: list[dict[str, Any]] = []
    repeats: list[dict[str, Any]] = []
    for b in msg["content"]:
        if b["type"] != "tool_use":
            kept.append(b)
        elif b["id"] in calls:
            repeats.append({"type": "text", "text": repeated_call(b["id"], b["name"], b["input"])})
        else:
            calls.add(b["id"])
            kept.append(b)
    if repeats:
        at = next(i for i, b in enumerate(kept) if b["type"] == "tool_use")
        msg["content"] = kept[:at] + repeats + kept[at:]
    return calls


def _unmatched(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Return a ``tool_result`` block that answers no call in the request as text blocks."""
    head = {"type": "text", "text": unmatched_result(result["tool_use_id"], bool(result.get("is_error")))}
    return [head, *result.get("content", [])]


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
    if isinstance(b, ai.Thinking):  # sent back as the API returned it; unsigned reasoning is not Anthropic's
        if b.redacted:
            return {"type": "redacted_thinking", "data": b.redacted}
        return {"type": "thinking", "thinking": b.text, "signature": b.signature} if own_signature(b) else None
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


def tools_of(tools: Sequence[ai.ToolSpec]) -> list[dict[str, Any]]:
    """Return the Messages API ``tools`` for our tool specs, in order (an empty description is left out)."""
    out = []
    for t in tools:
        tool: dict[str, Any] = {"name": t.name}
        if t.description:
            tool["description"] = t.description
        tool["input_schema"] = tool_schema(t)
        out.append(tool)
    return out


SETTINGS = {"max_tokens": "max_tokens", "stop": "stop_sequences", "seed": None}
RESERVED = frozenset({"model", "messages", "stream", "system", "tools"})


def request_args(request: ai.Request | None, max_tokens: int) -> dict[str, Any]:
    """Return the keyword arguments of ``messages.create`` for a request (no messages, no model).

    ``max_tokens`` is always sent (the API requires it; the request's
    setting wins over the model's default); ``system``, ``tools`` and
    ``stop`` (as ``stop_sequences``, a list) only when set. The API has no
    ``seed``: it is not sent. ``temperature``, ``top_p`` (which the SDK no
    longer names, though the API reads them) and any other setting (a
    provider extra, e.g. ``thinking``) go into the body as they are
    (``extra_body``). Raises :class:`~durable_nb.errors.ModelError` for an
    extra that would replace what durable_nb sends.
    """
    if request is None:
        return {"max_tokens": max_tokens}
    args, extra = split_settings(request.settings, PROVIDER, SETTINGS, RESERVED)
    args.setdefault("max_tokens", max_tokens)
    if isinstance(args.get("stop_sequences"), str):
        args["stop_sequences"] = [args["stop_sequences"]]
    if request.system:
        args["system"] = request.system
    if request.tools:
        args["tools"] = tools_of(request.tools)
    if extra:
        args["extra_body"] = extra
    return args


class _Reply:
    """Accumulates the raw stream events of one Messages API reply into the assistant message.

    Blocks are gathered by ``index``: text, ``thinking`` (its text and
    ``signature``), ``redacted_thinking`` (its ``data``) and ``tool_use``
    (id, name, and the ``input_json_delta`` pieces as raw text, parsed only
    at the end so that malformed input is kept, not lost). Usage counts are
    cumulative: a ``message_delta`` overwrites ``message_start``'s.
    """

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, int] = {}
        self.stop_reason: str | None = None
        self.model: str | None = None

    def add(self, event: Any) -> str:
        """Take one event; return its text delta (``""`` when it carries none)."""
        t = event.type
        if t == "message_start":
            self.model = event.message.model
            self.usage.update(usage_of(event.message.usage))
        elif t == "content_block_start":
            b = event.content_block
            block = {"type": b.type, "text": "", "signature": "", "json": ""}
            if b.type == "text":
                block["text"] = b.text or ""
            elif b.type == "thinking":
                block["text"], block["signature"] = b.thinking or "", b.signature or ""
            elif b.type == "redacted_thinking":
                block["data"] = b.data
            elif b.type == "tool_use":
                block["id"], block["name"] = b.id, b.name
                if b.input:  # a server may send the whole input at the start
                    block["input"] = b.input
            self.blocks[event.index] = block
            return block["text"] if b.type == "text" else ""
        elif t == "content_block_delta":
            block = self.blocks.get(event.index)  # type: ignore[assignment]  # None is checked below
            d = event.delta
            if block is None:
                return ""
            if d.type == "text_delta":
                block["text"] += d.text
                return d.text
            if d.type == "thinking_delta":
                block["text"] += d.thinking
            elif d.type == "signature_delta":
                block["signature"] = d.signature
            elif d.type == "input_json_delta":
                block["json"] += d.partial_json
        elif t == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            if event.usage is not None:
                self.usage.update(usage_of(event.usage))
        return ""

    def message(self, fallback_model: str) -> ai.Message:
        """Return the assistant message: the blocks in the API's order.

        Text → :class:`~durable_nb.ai.Text`; ``thinking`` and
        ``redacted_thinking`` → :class:`~durable_nb.ai.Thinking`; ``tool_use``
        → :class:`~durable_nb.ai.ToolCall` (input that is not a JSON object
        kept raw, see :func:`ai.tool_arguments`); server-tool blocks are not kept.
        """
        content: list[ai.Block] = []
        for i in sorted(self.blocks):
            b = self.blocks[i]
            if b["type"] == "text" and b["text"]:
                content.append(ai.Text(b["text"]))
            elif b["type"] == "thinking":
                content.append(ai.Thinking(b["text"], b["signature"]))
            elif b["type"] == "redacted_thinking":
                content.append(ai.Thinking(redacted=b["data"]))
            elif b["type"] == "tool_use":
                args = ai.tool_arguments(b["json"]) if b["json"].strip() else dict(b.get("input") or {})
                content.append(ai.ToolCall(b["id"], b["name"], args))
        return ai.Message(
            role="assistant",
            content=content,
            usage=self.usage or None,
            stop_reason=self.stop_reason,
            model=self.model or fallback_model,
        )


class AnthropicMessages:
    """A Messages API model: streams text deltas, then the assistant message.

    ``max_tokens`` (required by the API) caps the reply. Failures are raised
    from :meth:`stream` as one-line :class:`~durable_nb.errors.ModelError`.
    The client built here gives up on a server silent for
    :func:`~durable_nb.models.failures.read_timeout` seconds (60 s, or
    ``$DURABLE_NB_READ_TIMEOUT``).
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
                client = anthropic.Anthropic(base_url=base_url, timeout=read_timeout())
            except anthropic.AnthropicError as e:
                secrets = [os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_AUTH_TOKEN")]
                raise ModelError(f"{self.name} cannot start: {redact(str(e), secrets)}") from None
            if not (client.api_key or client.auth_token or getattr(client, "_token_cache", None)):
                if not custom:
                    raise ModelError(NO_KEY.format(name=self.name))
                client = client.with_options(api_key=PLACEHOLDER_KEY)
        self.client = client

    def stream(self, messages: Sequence[ai.Message], request: ai.Request | None = None) -> Iterator[str | ai.Message]:
        """Yield the reply's text deltas as they arrive, then the assistant message
        (with ``usage``, ``stop_reason`` and ``model`` as the API reports them).

        ``request`` adds the system prompt, the tools and the settings (see
        :func:`request_args`). The reply keeps thinking blocks (with their
        signatures) and tool calls, in the API's order. A stream that ends
        without a stop reason (a cut connection) is an error, not a short reply.
        A surrogate pair split across two events is joined (see
        :mod:`~durable_nb.models.surrogates`).
        """
        reply = _Reply()
        args = request_args(request, self.max_tokens)
        joiner = SurrogateJoiner()
        received = 0
        try:
            with self.client.messages.create(
                model=self.model,
                messages=to_anthropic(messages),
                stream=True,
                **args,
            ) as events:
                for event in events:
                    text = joiner.feed(reply.add(event))
                    if text:
                        received += len(text)
                        yield text
            if rest := joiner.flush():
                yield rest
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
                received=received,
                timeout=self.client.timeout if isinstance(self.client.timeout, (int, float)) else None,
            )
            if err is None:
                raise
            raise err from None  # the cause may quote the key back
        if reply.stop_reason is None:
            raise cut_short(PROVIDER, str(self.client.base_url), "stop_reason", received)
        yield repair_message(reply.message(self.model))


def build(name: str) -> AnthropicMessages:
    """Return the model for ``anthropic:<name>`` (``<model>`` or ``<model>@<base URL>``); sends nothing."""
    model, base_url = split_base_url(name)
    return AnthropicMessages(model, base_url=base_url)
