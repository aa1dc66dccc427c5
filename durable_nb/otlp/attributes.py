"""Span attributes of one model call, tool call or turn: OpenTelemetry's GenAI conventions and OpenInference's.

Both sets are written on every span, so a viewer reading either shows the
messages: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
``gen_ai.system_instructions`` / ``gen_ai.tool.definitions`` (JSON strings in
the conventions' "parts" shape, output messages with ``finish_reason``) and
``gen_ai.usage.*``; OpenInference's flattened ``llm.input_messages.N.message.*``,
``llm.output_messages.*``, ``llm.token_count.*`` and ``openinference.span.kind``.
Every string is valid UTF-8 (a lone surrogate becomes U+FFFD) and every JSON
value is built by :func:`json.dumps`, never by hand, so hostile text stays
data. Pure; imports nothing from Jupyter or OpenTelemetry.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from typing import Any

from .. import ai
from ..cost import _usage as usage_counts

Attributes = dict[str, Any]

ROLES = {"user": "user", "assistant": "assistant", "tool_result": "tool", "system": "system"}
FINISH = {  # a provider's stop reason -> the conventions' finish reason (others are kept as given)
    "end_turn": "stop",
    "stop": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "length": "length",
    "tool_use": "tool_call",
    "tool_calls": "tool_call",
    "content_filter": "content_filter",
    "refusal": "content_filter",
    "error": "error",
}
SETTINGS = {  # a sampling setting -> its gen_ai.request attribute
    "temperature": "gen_ai.request.temperature",
    "max_tokens": "gen_ai.request.max_tokens",
    "top_p": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "seed": "gen_ai.request.seed",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
}


def clean(s: str) -> str:
    """Return ``s`` as valid UTF-8 text: lone surrogates (which protobuf refuses) become U+FFFD. O(len)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in s)
    return s


def dumps(value: Any) -> str:
    """Return ``value`` as compact JSON text, valid UTF-8 (see :func:`clean`); bytes as base64."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_default)
    return clean(text)


def _default(v: Any) -> Any:
    if isinstance(v, bytes | bytearray):
        return base64.b64encode(v).decode("ascii")
    return str(v)


def finish_reason(m: ai.Message) -> str:
    """Return the conventions' finish reason of reply ``m``: its stop reason mapped (:data:`FINISH`),
    else ``tool_call`` when it calls tools, ``error`` when it failed, else ``stop``."""
    if m.stop_reason:
        return FINISH.get(m.stop_reason, m.stop_reason)
    if m.error:
        return "error"
    return "tool_call" if m.tool_calls() else "stop"


def _part(b: ai.Block) -> dict[str, Any]:
    """Return one block as a message part of the GenAI conventions."""
    if isinstance(b, ai.Text | ai.Reminder):
        return {"type": "text", "content": b.text}
    if isinstance(b, ai.ToolCall):
        return {"type": "tool_call", "id": b.id, "name": b.name, "arguments": b.arguments}
    if isinstance(b, ai.Thinking):
        return {"type": "reasoning", "content": b.text}
    if isinstance(b, ai.Image):
        return {"type": "blob", "modality": "image", "mime_type": b.mime_type, "content": b.data}
    if isinstance(b, ai.File):
        if b.data:
            return {"type": "blob", "modality": "file", "mime_type": b.mime_type, "content": b.data}
        if b.url:
            return {"type": "uri", "modality": "file", "mime_type": b.mime_type, "uri": b.url}
        return {"type": "file", "modality": "file", "mime_type": b.mime_type, "file_id": b.file_id}
    return {"type": getattr(b, "type", "unknown")}


def semconv_message(m: ai.Message) -> dict[str, Any]:
    """Return message ``m`` in the GenAI conventions' shape: ``{"role", "parts": [...]}`` (a tool
    result's text as one ``tool_call_response`` part); an assistant message gets ``finish_reason``."""
    role = ROLES[m.role]
    if m.role == "tool_result":
        texts = [b.text for b in m.content if isinstance(b, ai.Text)]
        parts: list[dict[str, Any]] = [
            {"type": "tool_call_response", "id": m.tool_call_id or "", "response": "".join(texts)}
        ]
        parts += [_part(b) for b in m.content if not isinstance(b, ai.Text)]
    else:
        parts = [_part(b) for b in m.content]
    out: dict[str, Any] = {"role": role, "parts": parts}
    if m.role == "assistant":
        out["finish_reason"] = finish_reason(m)
    return out


def _visible(m: ai.Message) -> str:
    """Return the text the model reads in ``m``: its text and reminder blocks, one per line."""
    return "\n".join(b.text for b in m.content if isinstance(b, ai.Text | ai.Reminder))


def openinference_message(prefix: str, m: ai.Message) -> Attributes:
    """Return ``m`` as OpenInference's flattened attributes under ``prefix`` (``llm.input_messages.3.``)."""
    out: Attributes = {f"{prefix}message.role": ROLES[m.role]}
    text = _visible(m)
    if text:
        out[f"{prefix}message.content"] = clean(text)
    if m.role == "tool_result":
        out[f"{prefix}message.tool_call_id"] = clean(m.tool_call_id or "")
        if m.tool_name:
            out[f"{prefix}message.name"] = clean(m.tool_name)
    for j, c in enumerate(m.tool_calls()):
        at = f"{prefix}message.tool_calls.{j}.tool_call."
        out[f"{at}id"] = clean(c.id)
        out[f"{at}function.name"] = clean(c.name)
        out[f"{at}function.arguments"] = dumps(c.arguments)
    images = [b for b in m.content if isinstance(b, ai.Image)]
    for k, img in enumerate(images):
        url = f"data:{img.mime_type};base64," + base64.b64encode(img.data).decode("ascii")
        at = f"{prefix}message.contents.{k}.message_content."
        out[f"{at}type"] = "image"
        out[f"{at}image.image.url"] = clean(url)
    return out


class MessageCache:
    """Each message's two encodings, made once per message object (a branch's later calls resend it)."""

    def __init__(self) -> None:
        self._semconv: dict[int, tuple[ai.Message, str]] = {}

    def semconv(self, m: ai.Message) -> str:
        """Return :func:`semconv_message` of ``m`` as JSON text (cached by identity)."""
        hit = self._semconv.get(id(m))
        if hit is None or hit[0] is not m:
            hit = (m, dumps(semconv_message(m)))
            self._semconv[id(m)] = hit
        return hit[1]


def chat_attributes(
    request: Sequence[ai.Message],
    reply: ai.Message,
    tools: Sequence[ai.ToolSpec] | None,
    cache: MessageCache,
) -> Attributes:
    """Return the attributes of the ``chat`` span of one model call: ``request`` is the model view it
    was sent (system prompt first when there is one), ``reply`` what came back with its provenance
    (model, settings, usage, stop reason, timing), ``tools`` the tool definitions when known.
    O(size of the request)."""
    model = reply.model or "unknown"
    system = request[0] if request and request[0].role == "system" else None
    body = request[1:] if system is not None else request
    out: Attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": clean(model),
        "gen_ai.response.model": clean(model),
        "gen_ai.output.type": "text",
        "openinference.span.kind": "LLM",
        "llm.model_name": clean(model),
    }
    provider = reply.provider or (model.split(":", 1)[0] if ":" in model else "")
    if provider:
        out["gen_ai.provider.name"] = out["llm.provider"] = clean(provider)
    if reply.stop_reason or reply.error:
        out["gen_ai.response.finish_reasons"] = [clean(reply.stop_reason or "error")]
    if system is not None:
        out["gen_ai.system_instructions"] = dumps([_part(b) for b in system.content])
    out["gen_ai.input.messages"] = "[" + ",".join(cache.semconv(m) for m in body) + "]"
    out["gen_ai.output.messages"] = "[" + cache.semconv(reply) + "]"
    for i, m in enumerate(request):
        out.update(openinference_message(f"llm.input_messages.{i}.", m))
    out.update(openinference_message("llm.output_messages.0.", reply))
    last_input = next((m for m in reversed(body) if m.role in ("user", "tool_result")), None)
    if last_input is not None:
        out["input.value"] = clean(_visible(last_input))
    out["output.value"] = clean(reply.text())
    out.update(_settings(reply.settings or {}))
    out.update(_usage(reply.usage))
    if tools:
        defs = [
            {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}
            for t in tools
        ]
        out["gen_ai.tool.definitions"] = dumps(defs)
        for i, t in enumerate(tools):
            fn = {"name": t.name, "description": t.description, "parameters": t.parameters}
            out[f"llm.tools.{i}.tool.json_schema"] = dumps({"type": "function", "function": fn})
    timing = reply.timing or {}
    for key in ("ttft_ms", "total_ms"):
        if isinstance(timing.get(key), int | float):
            out[f"durable_nb.timing.{key}"] = float(timing[key])
    return out


def _settings(settings: dict[str, Any]) -> Attributes:
    out: Attributes = {}
    for key, name in SETTINGS.items():
        v = settings.get(key)
        if isinstance(v, int | float) and not isinstance(v, bool):
            out[name] = v
    stop = settings.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        out["gen_ai.request.stop_sequences"] = [clean(s) for s in stop]
    if settings:
        out["llm.invocation_parameters"] = dumps(settings)
    return out


def _usage(usage: dict[str, Any] | None) -> Attributes:
    """Token counts of a reply's usage (the input as the model read it: see :func:`durable_nb.cost`)."""
    if not usage:
        return {}
    inp, out_, read, write = usage_counts(usage)
    attrs: Attributes = {
        "gen_ai.usage.input_tokens": inp,
        "gen_ai.usage.output_tokens": out_,
        "llm.token_count.prompt": inp,
        "llm.token_count.completion": out_,
        "llm.token_count.total": inp + out_,
    }
    if read:
        attrs["gen_ai.usage.cache_read.input_tokens"] = attrs["llm.token_count.prompt_details.cache_read"] = read
    if write:
        attrs["gen_ai.usage.cache_creation.input_tokens"] = write
        attrs["llm.token_count.prompt_details.cache_write"] = write
    reasoning = usage.get("reasoning_tokens")
    if isinstance(reasoning, int) and not isinstance(reasoning, bool) and reasoning > 0:
        attrs["llm.token_count.completion_details.reasoning"] = reasoning
    return attrs


def tool_attributes(call: ai.ToolCall, result: ai.Message | None) -> Attributes:
    """Return the attributes of the ``execute_tool`` span of ``call`` and its ``result`` (``None``: it
    never returned; the model was told it was interrupted)."""
    args = dumps(call.arguments)
    out: Attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": clean(call.name),
        "gen_ai.tool.call.id": clean(call.id),
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.arguments": args,
        "openinference.span.kind": "TOOL",
        "tool.name": clean(call.name),
        "tool.parameters": args,
        "input.value": args,
        "input.mime_type": "application/json",
    }
    if result is not None:
        text = clean(_visible(result))
        out["gen_ai.tool.call.result"] = out["output.value"] = text
        if result.is_error:
            out["error.type"] = "tool_error"
    mcp = call.extra.get("mcp") if isinstance(call.extra, dict) else None
    if mcp is not None:
        out["durable_nb.tool.mcp"] = dumps(mcp)
    return out


def agent_attributes(agent: str, inputs: Iterable[ai.Message], replies: Sequence[ai.Message]) -> Attributes:
    """Return the attributes of the ``invoke_agent`` span of a turn: its input messages, its replies."""
    user = [m for m in inputs if m.role == "user" and m.injected is None]
    out: Attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": clean(agent),
        "openinference.span.kind": "AGENT",
        "agent.name": clean(agent),
    }
    if user:
        out["input.value"] = clean("\n".join(m.text() for m in user))
    if replies:
        out["output.value"] = clean(replies[-1].text())
    return out
