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
from .blocks import (
    block_text,
    data_url,
    file_text,
    flatten,
    is_text_file,
    omitted,
    repeated_call,
    split_settings,
    tool_schema,
    unmatched_result,
)
from .failures import cut_short, provider_error, read_timeout
from .surrogates import SurrogateJoiner, repair_message

PROVIDER = "openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "no-key-needed"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})


def to_openai(messages: Sequence[ai.Message], system: str | None = None) -> list[dict[str, Any]]:
    """Return the Chat Completions ``messages`` for our messages, in order.

    - ``system`` (the request's system prompt) goes first, as a ``system``
      message (what every server speaking this API reads; OpenAI's reasoning
      models take it as their ``developer`` message);
    - user messages, injected ones included, go as ``user`` (injected context
      is user-role context); content is a string, or a list of parts when
      the message holds images or files;
    - a :class:`~durable_nb.ai.Reminder` block is sent as text in
      ``<system-reminder>`` tags;
    - assistant tool calls become ``tool_calls`` (arguments as JSON text);
      a ``tool_result`` becomes a ``tool`` message with its ``tool_call_id``.
      The API refuses two calls of one id in a message (a model or an
      imported log can give them) and two ``tool`` messages for one id: the
      first call of an id is the call, answered by the first result of that
      id (as the model view pairs them), and a repeated call goes as text in
      the assistant message, headed by its id.
      The API takes only text in a tool message, so a result's images and
      files follow the run of tool messages as one ``user`` message; the API
      has no error flag, so ``is_error`` rests on the result's own text;
    - the API wants a call's ``tool`` message right after the assistant
      message (before any other role), so messages that came between a call
      and its late result (the user's next message) follow the results; a
      result that answers no call of the latest assistant message (its call
      elided by a compaction, or a second result for one id) goes as a
      ``user`` message headed by the call id;
    - images (PNG, JPEG, WebP, GIF) go as data URLs, PDFs as ``file`` parts,
      text files inline; anything else is replaced by a note saying so;
    - :class:`~durable_nb.ai.Thinking` is not sent back (the API has no
      field for it, and servers that stream ``reasoning_content`` ask
      clients not to return it).

    Pure; O(total content + each result's search among its message's calls).
    """
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    owed: list[str] = []  # the latest assistant message's calls not answered yet
    held: list[dict[str, Any]] = []  # messages that came while calls were owed: they follow the results
    attached: list[dict[str, Any]] = []  # the results' images and files

    def settle() -> None:  # the run of tool messages is over: its attachments, then what waited for it
        if attached:
            out.append({"role": "user", "content": attached[:]})
            attached.clear()
        out.extend(held)
        held.clear()

    for m in messages:
        if m.role == "tool_result" and (m.tool_call_id or "") in owed:
            owed.remove(m.tool_call_id or "")
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": flatten(m.content)})
            parts = [_part(b) for b in m.content if isinstance(b, (ai.Image, ai.File))]
            if parts:
                attached += [
                    {"type": "text", "text": f"Attachments of the result of tool call {m.tool_call_id}:"},
                    *parts,
                ]
            if not owed:
                settle()
        elif m.role == "tool_result":  # an answer to no call the API can see
            head = ai.Text(unmatched_result(str(m.tool_call_id), m.is_error) + "\n\n")
            (held if owed else out).append({"role": "user", "content": _content([head, *m.content])})
        elif m.role == "assistant":
            owed = []  # a call still unanswered here (a view never leaves one) is refused by the API anyway
            settle()
            text, calls = _calls_once(m)
            msg: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                msg["content"] = msg["content"] or None
                msg["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for c in calls.values()
                ]
                owed = list(calls)
            out.append(msg)
        else:
            (held if owed else out).append({"role": "user", "content": _content(m.content)})
    settle()
    return out


def _calls_once(m: ai.Message) -> tuple[str, dict[str, ai.ToolCall]]:
    """Return an assistant message's text and its first call of each id, in order; a call whose id an
    earlier call of the message has goes into the text, headed by its id. O(blocks)."""
    calls: dict[str, ai.ToolCall] = {}

    def other(b: ai.Block) -> str | None:
        if not isinstance(b, ai.ToolCall):
            return None
        if b.id not in calls:
            calls[b.id] = b
            return None
        return repeated_call(b.id, b.name, b.arguments)

    return flatten(m.content, other), calls


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


def tools_of(tools: Sequence[ai.ToolSpec]) -> list[dict[str, Any]]:
    """Return the Chat Completions ``tools`` for our tool specs: ``function`` tools, in order
    (an empty description is left out)."""
    out = []
    for t in tools:
        fn: dict[str, Any] = {"name": t.name}
        if t.description:
            fn["description"] = t.description
        fn["parameters"] = tool_schema(t)
        out.append({"type": "function", "function": fn})
    return out


SETTINGS = {k: k for k in ("temperature", "max_tokens", "top_p", "seed", "stop")}
RESERVED = frozenset({"model", "messages", "stream", "stream_options", "tools"})


def request_args(request: ai.Request | None, official: bool = False) -> dict[str, Any]:
    """Return the keyword arguments of ``chat.completions.create`` for a request (no messages).

    ``tools``, then the settings by the API's names, each only when set:
    ``max_tokens`` is sent as ``max_tokens`` (what local servers read), or
    as ``max_completion_tokens`` to OpenAI itself (``official``), whose
    reasoning models refuse ``max_tokens``. Any other setting (a provider
    extra) goes into the body as it is (``extra_body``). Raises
    :class:`~durable_nb.errors.ModelError` for an extra that would replace
    what durable_nb sends (``model``, ``messages``, ``stream``, ``tools``).
    """
    if request is None:
        return {}
    named = {**SETTINGS, "max_tokens": "max_completion_tokens"} if official else SETTINGS
    args, extra = split_settings(request.settings, PROVIDER, named, RESERVED)
    if request.tools:
        args["tools"] = tools_of(request.tools)
    if extra:
        args["extra_body"] = extra
    return args


class _Reply:
    """Accumulates ``chat.completion.chunk`` objects into the assistant message.

    Text deltas, reasoning deltas (``reasoning_content``, or ``reasoning``
    as some servers name it) and tool-call fragments (by ``index``: the id
    and name come once, the arguments in pieces) are gathered separately.
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
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
        for name in ("reasoning_content", "reasoning"):
            piece = getattr(delta, name, None)
            if isinstance(piece, str) and piece:
                self.reasoning.append(piece)
                break
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
        """Return the assistant message: thinking, text, then the tool calls in index order.

        Arguments that are not a JSON object are kept raw (see :func:`ai.tool_arguments`);
        a call the server sent without an id gets ``call_<index>``.
        """
        content: list[ai.Block] = [ai.Thinking("".join(self.reasoning))] if self.reasoning else []
        if self.text:
            content.append(ai.Text("".join(self.text)))
        for i in sorted(self.calls):
            c = self.calls[i]
            # a server that sends no id (some local ones) gets call_<index>, so the result can answer it
            content.append(ai.ToolCall(c["id"] or f"call_{i}", c["name"], ai.tool_arguments(c["arguments"])))
        return ai.Message(
            role="assistant",
            content=content,
            usage=self.usage,
            stop_reason=self.stop_reason,
            model=self.model or fallback_model,
        )


class OpenAIChat:
    """A Chat Completions model: streams text deltas, then the assistant message.

    ``base_url`` overrides ``OPENAI_BASE_URL``; ``client`` (an
    ``openai.OpenAI``, e.g. with other retries, headers or Azure) replaces
    the one built here. The client built here gives up on a server silent
    for :func:`~durable_nb.models.failures.read_timeout` seconds (60 s, or
    ``$DURABLE_NB_READ_TIMEOUT``). Failures are raised from :meth:`stream` as one-line
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
                client = openai.OpenAI(base_url=base_url, api_key=key, timeout=read_timeout())
            except openai.OpenAIError:
                raise ModelError(
                    f"{self.name} needs an API key: set OPENAI_API_KEY in the environment "
                    f"(for a local server set OPENAI_BASE_URL or write {PROVIDER}:{model}@<base URL>)"
                ) from None
        self.client = client

    def stream(self, messages: Sequence[ai.Message], request: ai.Request | None = None) -> Iterator[str | ai.Message]:
        """Yield the reply's text deltas as they arrive, then the assistant message
        (with ``usage``, ``stop_reason`` = the API's ``finish_reason``, and ``model``).

        ``request`` adds the system prompt, the tools and the settings (see
        :func:`request_args`). Streamed tool calls come back as
        :class:`~durable_nb.ai.ToolCall` blocks, reasoning as one
        :class:`~durable_nb.ai.Thinking` block. A stream that ends without a
        ``finish_reason`` (a cut connection) is an error, not a short reply.
        A surrogate pair split across two chunks is joined (see
        :mod:`~durable_nb.models.surrogates`).
        """
        reply = _Reply()
        extra = request_args(request, official=str(self.client.base_url).rstrip("/") == DEFAULT_BASE_URL)
        joiner = SurrogateJoiner()
        received = 0
        try:
            with self.client.chat.completions.create(
                model=self.model,
                messages=to_openai(messages, request.system if request else None),
                stream=True,
                stream_options={"include_usage": True},
                **extra,
            ) as chunks:
                for chunk in chunks:
                    delta = joiner.feed(reply.add(chunk))
                    if delta:
                        received += len(delta)
                        yield delta
            if rest := joiner.flush():
                yield rest
        except Exception as e:
            err = provider_error(
                PROVIDER,
                e,
                model=self.model,
                base_url=str(self.client.base_url),
                key_hint="OPENAI_API_KEY",
                secrets=[self.client.api_key],
                url_hint=f"set OPENAI_BASE_URL or write {PROVIDER}:{self.model}@<base URL>",
                received=received,
                timeout=self.client.timeout if isinstance(self.client.timeout, (int, float)) else None,
            )
            if err is None:
                raise
            raise err from None  # the cause may quote the key back
        if reply.stop_reason is None:
            raise cut_short(PROVIDER, str(self.client.base_url), "finish_reason", received)
        yield repair_message(reply.message(self.model))


def build(name: str) -> OpenAIChat:
    """Return the model for ``openai:<name>`` (``<model>`` or ``<model>@<base URL>``); sends nothing."""
    model, base_url = split_base_url(name)
    return OpenAIChat(model, base_url=base_url)
