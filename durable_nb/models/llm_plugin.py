"""Any model simonw's ``llm`` library can run, as ``llm:<model-id>``.

``llm:gpt-4o-mini``, ``llm:claude-3.5-haiku`` (with the llm-anthropic
plugin), ``llm:<an id from extra-openai-models.yaml>``... ``llm models``
lists the ids. llm finds keys its own way (``llm keys set <name>`` or the
plugin's environment variable) and reads its config from ``LLM_USER_PATH``;
durable_nb never sees the key. Nothing is logged to llm's database (only
its command line does that).

Needs llm 0.32 or later (prompting with a list of messages).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import llm
from llm.parts import AttachmentPart, ReasoningPart, TextPart, ToolCallPart, ToolResultPart

from .. import ai
from ..errors import ModelError
from .blocks import LLM_REASONING, file_text, flatten, is_text_file, omitted, tool_schema
from .failures import provider_error
from .surrogates import SurrogateJoiner, repair_message

PROVIDER = "llm"


def to_llm(
    messages: Sequence[ai.Message],
    attachment_types: frozenset[str] | set[str] = frozenset(),
    system: str | None = None,
) -> list[llm.Message]:
    """Return llm's ``Message`` list for our messages, in order (llm's plugin then speaks the wire format).

    - ``system`` (the request's system prompt) comes first, as llm's
      ``system`` message (llm reads no ``system=`` beside a message list);

    - user messages, injected ones included, go as ``user``; each message's
      text, reminders (in ``<system-reminder>`` tags) and inline text files
      become one text part;
    - images and files whose MIME type is in ``attachment_types`` (what the
      model accepts) become attachments after the text; text files go
      inline; anything else is replaced by a note saying so;
    - assistant tool calls become tool-call parts; a ``tool_result`` becomes
      a ``tool`` message with its ``tool_call_id`` (an error result also
      sets the part's ``exception``, for plugins whose API has an error flag);
    - a :class:`~durable_nb.ai.Thinking` block that came from an llm model
      goes back as a reasoning part with the plugin's own metadata (kept as
      JSON in ``signature`` after ``llm:``: Anthropic's signature, OpenAI's encrypted
      content...); other reasoning is not sent.

    Pure; O(total content).
    """
    out: list[llm.Message] = [llm.Message(role="system", parts=[TextPart(text=system)])] if system else []
    for m in messages:

        def other(b: ai.Block) -> str | None:
            if isinstance(b, (ai.Image, ai.File)) and b.mime_type not in attachment_types:
                return (
                    file_text(b)
                    if isinstance(b, ai.File) and is_text_file(b.mime_type)
                    else omitted(b, "this llm model")
                )
            return None

        text = flatten(m.content, other)
        attachments = [
            llm.Attachment(type=b.mime_type, content=b.data)
            for b in m.content
            if isinstance(b, (ai.Image, ai.File)) and b.mime_type in attachment_types
        ]
        if m.role == "tool_result":
            part = ToolResultPart(
                name=m.tool_name or "",
                output=text,
                tool_call_id=m.tool_call_id,
                attachments=attachments,
                exception=text if m.is_error else None,
            )
            out.append(llm.Message(role="tool", parts=[part]))
            continue
        parts: list[Any] = [TextPart(text=text)] if text else []
        if m.role == "assistant":
            parts[:0] = [
                _reasoning(b) for b in m.content if isinstance(b, ai.Thinking) and b.signature.startswith(LLM_REASONING)
            ]
            parts += [ToolCallPart(name=c.name, arguments=c.arguments, tool_call_id=c.id) for c in m.tool_calls()]
        else:
            parts += [AttachmentPart(attachment=a) for a in attachments]
        out.append(llm.Message(role="user" if m.role == "user" else "assistant", parts=parts))
    return out


def _reasoning(b: ai.Thinking) -> ReasoningPart:
    return ReasoningPart(text=b.text, provider_metadata=json.loads(b.signature.removeprefix(LLM_REASONING)))


def _thinking(p: ReasoningPart) -> ai.Thinking | None:
    """Return the Thinking of an llm reasoning part; ``None`` for a bare "reasoning happened" marker."""
    meta = LLM_REASONING + json.dumps(p.provider_metadata, sort_keys=True) if p.provider_metadata else ""
    return ai.Thinking(p.text, meta) if p.text or meta else None


def tools_of(tools: Sequence[ai.ToolSpec]) -> list[llm.Tool]:
    """Return llm ``Tool`` objects for our tool specs (no implementation: the agent runs the tools)."""
    return [llm.Tool(name=t.name, description=t.description or None, input_schema=tool_schema(t)) for t in tools]


def stop_reason_of(response_json: Any) -> str | None:
    """Return the stop reason a plugin left in its response JSON (``finish_reason`` or ``stop_reason``).

    Looks at the top level, then at ``choices[0]``; ``None`` when absent.
    """
    if not isinstance(response_json, dict):
        return None
    places = [response_json]
    choices = response_json.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        places.append(choices[0])
    for d in places:
        for key in ("stop_reason", "finish_reason"):
            if isinstance(d.get(key), str):
                return d[key]
    return None


class _Streamed:
    """What llm's stream events said: text, reasoning and tool calls (raw arguments), in order.

    Used only when the plugin fails to finish the reply itself.
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[str, list[str]] = {}  # tool_call_id -> [name, raw arguments]

    def add(self, event: Any) -> str:
        """Take one ``StreamEvent``; return its text (``""`` unless it is text)."""
        chunk = event.chunk or ""
        if event.type == "text":
            self.text.append(chunk)
            return chunk
        if event.type == "reasoning":
            self.reasoning.append(chunk)
        elif event.type == "tool_call_name":
            self.calls[event.tool_call_id or str(len(self.calls))] = [chunk, ""]
        elif event.type == "tool_call_args" and self.calls:
            self.calls.get(event.tool_call_id or "", list(self.calls.values())[-1])[1] += chunk
        return ""

    def malformed_call(self) -> bool:
        """Return whether a streamed tool call's arguments are not a JSON object."""
        return any(ai.ToolCall("", name, ai.tool_arguments(raw)).malformed() for name, raw in self.calls.values())

    def message(self, model: str) -> ai.Message:
        content: list[ai.Block] = [ai.Thinking("".join(self.reasoning))] if "".join(self.reasoning) else []
        if self.text:
            content.append(ai.Text("".join(self.text)))
        content += [ai.ToolCall(i, name, ai.tool_arguments(raw)) for i, (name, raw) in self.calls.items()]
        return ai.Message(role="assistant", content=content, model=model)


class LlmModel:
    """An ``llm`` model: streams its chunks as text deltas, then the assistant message."""

    def __init__(self, model_id: str) -> None:
        self.name = f"{PROVIDER}:{model_id}"
        try:
            self.model = llm.get_model(model_id)
        except llm.UnknownModelError as e:
            raise ModelError(
                f"{self.name}: {e.args[0] if e.args else 'unknown model'} — `llm models` lists the "
                f"installed models, `llm install <plugin>` adds more"
            ) from None
        self.model_id = model_id
        if getattr(self.model, "needs_key", None):
            try:
                self.model.get_key()
            except llm.errors.NeedsKeyException as e:
                raise ModelError(f"{self.name}: {e}") from None

    def stream(self, messages: Sequence[ai.Message], request: ai.Request | None = None) -> Iterator[str | ai.Message]:
        """Yield the reply's text as it arrives, then the assistant message
        (``usage`` as input/output tokens, ``stop_reason`` and ``model`` when the plugin reports them).

        ``request`` gives llm a ``system`` message, ``tools`` and options: the
        settings (and extras) by name, which the model's plugin validates; a
        name or value it refuses is one line naming the options it has. The
        reply keeps reasoning parts as :class:`~durable_nb.ai.Thinking`.
        When the plugin cannot parse a tool call's arguments (llm's OpenAI
        plugin raises), the call is kept with its raw arguments, as streamed
        (see :func:`ai.tool_arguments`), and the reply has no usage.
        """
        types = frozenset(getattr(self.model, "attachment_types", ()) or ())
        kwargs = self._request_args(request)
        streamed = _Streamed()
        try:
            system = request.system if request else None
            response = self.model.prompt(messages=to_llm(messages, types, system), stream=True, **kwargs)
            joiner = SurrogateJoiner()
            try:
                for event in response.stream_events():
                    text = joiner.feed(streamed.add(event))
                    if text:
                        yield text
            except json.JSONDecodeError:
                if not streamed.malformed_call():
                    raise  # not the plugin failing on a tool call's arguments (e.g. a non-JSON event)
                yield from filter(None, [joiner.flush()])
                yield repair_message(streamed.message(self.model_id))
                return
            if rest := joiner.flush():
                yield rest
            usage, data, parts = response.usage(), response.json(), [p for m in response.messages() for p in m.parts]
        except llm.errors.NeedsKeyException as e:
            raise ModelError(f"{self.name}: {e}") from None
        except Exception as e:
            needs = getattr(self.model, "needs_key", None)
            env = getattr(self.model, "key_env_var", None)
            err = provider_error(
                PROVIDER,
                e,
                model=self.model_id,
                base_url=getattr(self.model, "api_base", None) or f"the server of llm model {self.model_id}",
                key_hint=f"the key (`llm keys set {needs}`{' or ' + env if env else ''})"
                if needs
                else "the model's key",
                url_hint="change the model's api_base in llm's extra-openai-models.yaml (or its plugin's settings)",
                secrets=[self._key()],
            )
            if err is None:
                raise
            raise err from None  # the cause may quote the key back
        content: list[ai.Block] = []
        for p in parts:
            if isinstance(p, TextPart) and p.text:
                content.append(ai.Text(p.text))
            elif isinstance(p, ReasoningPart) and (t := _thinking(p)) is not None:
                content.append(t)
            elif isinstance(p, ToolCallPart) and not p.server_executed:
                content.append(ai.ToolCall(p.tool_call_id or "", p.name, dict(p.arguments or {})))
        tokens = {
            k: v for k, v in (("input_tokens", usage.input), ("output_tokens", usage.output)) if isinstance(v, int)
        }
        model = data.get("model") if isinstance(data, dict) and isinstance(data.get("model"), str) else None
        yield repair_message(
            ai.Message(
                role="assistant",
                content=content,
                usage=tokens or None,
                stop_reason=stop_reason_of(data),
                model=model or self.model_id,
            )
        )

    def _request_args(self, request: ai.Request | None) -> dict[str, Any]:
        """Return llm's ``prompt`` keyword arguments for a request: ``tools`` and ``options``.

        Raises :class:`~durable_nb.errors.ModelError` (one line) for a setting
        the model's options refuse, naming the options it has.
        """
        if request is None:
            return {}
        args: dict[str, Any] = {}
        if request.tools:
            args["tools"] = tools_of(request.tools)
        options = {k: v for k, v in request.settings.items() if v is not None}
        if options:
            try:
                self.model.Options(**options)
            except ValueError as e:  # pydantic's ValidationError
                errors: list[dict[str, Any]] = getattr(e, "errors", lambda: [])()
                what = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in errors) or str(e)
                known = ", ".join(self.model.Options.model_fields) or "none"
                raise ModelError(f"{self.name}: bad setting ({what}) — this model's options: {known}") from None
            args["options"] = options
        return args

    def _key(self) -> str | None:
        try:
            return self.model.get_key() if getattr(self.model, "needs_key", None) else None
        except Exception:
            return None


def build(name: str) -> LlmModel:
    """Return the model for ``llm:<model-id>``; raises :class:`ModelError` for an unknown id or a missing key."""
    return LlmModel(name)
