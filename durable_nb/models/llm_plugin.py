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

from collections.abc import Iterator, Sequence
from typing import Any

import llm
from llm.parts import AttachmentPart, TextPart, ToolCallPart, ToolResultPart

from .. import ai
from ..errors import ModelError
from .blocks import file_text, flatten, is_text_file, omitted
from .failures import provider_error

PROVIDER = "llm"


def to_llm(
    messages: Sequence[ai.Message], attachment_types: frozenset[str] | set[str] = frozenset()
) -> list[llm.Message]:
    """Return llm's ``Message`` list for our messages, in order (llm's plugin then speaks the wire format).

    - user messages, injected ones included, go as ``user``; each message's
      text, reminders (in ``<system-reminder>`` tags) and inline text files
      become one text part;
    - images and files whose MIME type is in ``attachment_types`` (what the
      model accepts) become attachments after the text; text files go
      inline; anything else is replaced by a note saying so;
    - assistant tool calls become tool-call parts; a ``tool_result`` becomes
      a ``tool`` message with its ``tool_call_id``.

    Pure; O(total content).
    """
    out: list[llm.Message] = []
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
                name=m.tool_name or "", output=text, tool_call_id=m.tool_call_id, attachments=attachments
            )
            out.append(llm.Message(role="tool", parts=[part]))
            continue
        parts: list[Any] = [TextPart(text=text)] if text else []
        if m.role == "assistant":
            parts += [ToolCallPart(name=c.name, arguments=c.arguments, tool_call_id=c.id) for c in m.tool_calls()]
        else:
            parts += [AttachmentPart(attachment=a) for a in attachments]
        out.append(llm.Message(role="user" if m.role == "user" else "assistant", parts=parts))
    return out


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

    def stream(self, messages: Sequence[ai.Message]) -> Iterator[str | ai.Message]:
        """Yield the reply's chunks as they arrive, then the assistant message
        (``usage`` as input/output tokens, ``stop_reason`` and ``model`` when the plugin reports them)."""
        types = frozenset(getattr(self.model, "attachment_types", ()) or ())
        try:
            response = self.model.prompt(messages=to_llm(messages, types), stream=True)
            for chunk in response:
                if chunk:
                    yield chunk
            usage, data, calls = response.usage(), response.json(), response.tool_calls()
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
        content: list[ai.Block] = [ai.Text(response.text())] if response.text() else []
        content += [ai.ToolCall(c.tool_call_id or "", c.name, dict(c.arguments or {})) for c in calls]
        tokens = {
            k: v for k, v in (("input_tokens", usage.input), ("output_tokens", usage.output)) if isinstance(v, int)
        }
        model = data.get("model") if isinstance(data, dict) and isinstance(data.get("model"), str) else None
        yield ai.Message(
            role="assistant",
            content=content,
            usage=tokens or None,
            stop_reason=stop_reason_of(data),
            model=model or self.model_id,
        )

    def _key(self) -> str | None:
        try:
            return self.model.get_key() if getattr(self.model, "needs_key", None) else None
        except Exception:
            return None


def build(name: str) -> LlmModel:
    """Return the model for ``llm:<model-id>``; raises :class:`ModelError` for an unknown id or a missing key."""
    return LlmModel(name)
