"""What every provider conversion shares: reminder tags, flattening, file fallbacks, tool schemas, settings.

A :class:`~durable_nb.ai.Reminder` block is injected context for the model,
so every provider receives it, as text wrapped in ``<system-reminder>`` tags
(the convention agent harnesses use, which models are trained to read as
context rather than as something the user typed). Pure functions; no SDK is
imported here.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .. import ai
from ..errors import ModelError

TEXT_MIME_PREFIXES = ("text/",)
TEXT_MIME_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/javascript",
        "application/x-python",
        "application/sql",
        "application/csv",
    }
)


def reminder_text(text: str) -> str:
    """Return a reminder's text as the model reads it: wrapped in ``<system-reminder>`` tags."""
    return f"<system-reminder>\n{text}\n</system-reminder>"


def unmatched_result(call_id: str, is_error: bool) -> str:
    """Return the heading of a tool result sent as text because its call is not in the request (a
    compaction elided it, or it is a second result for one id): the APIs refuse such a result."""
    return f"Result of tool call {call_id}{' (an error)' if is_error else ''}:"


def repeated_call(call_id: str, name: str, arguments: Mapping[str, Any]) -> str:
    """Return a tool call sent as text because an earlier call of its message has its id (a model or an
    imported log can give two): the APIs refuse two calls of one id, and the first result of that id
    answers the first call, so a second result goes as text too (:func:`unmatched_result`)."""
    return f"Tool call {call_id} (an earlier call has this id): {name} {json.dumps(arguments)}"


def block_text(block: ai.Block) -> str | None:
    """Return the model-facing text of a text or reminder block; ``None`` for any other block."""
    if isinstance(block, ai.Text):
        return block.text
    if isinstance(block, ai.Reminder):
        return reminder_text(block.text)
    return None


def flatten(blocks: Iterable[ai.Block], other: Callable[[ai.Block], str | None] | None = None) -> str:
    """Return the text and reminder blocks as one string for APIs that take a string.

    Consecutive text blocks are concatenated as they are (like
    :meth:`ai.Message.text`); a reminder is set off from its neighbours by a
    blank line. ``other(block)`` may give text for any other block (set off
    the same way); without it, or when it returns ``None``, such blocks are
    skipped. ``""`` when there is no text. O(blocks).
    """
    pieces: list[str] = []
    prev_text = False
    for b in blocks:
        if isinstance(b, ai.Text):
            if prev_text:
                pieces[-1] += b.text
            else:
                pieces.append(b.text)
            prev_text = True
            continue
        prev_text = False
        if isinstance(b, ai.Reminder):
            pieces.append(reminder_text(b.text))
        elif other is not None and (text := other(b)) is not None:
            pieces.append(text)
    return "\n\n".join(p for p in pieces if p)


def is_text_file(mime_type: str) -> bool:
    """Return whether a file of this MIME type is text a model can read inline."""
    mime = mime_type.split(";")[0].strip().lower()
    return mime.startswith(TEXT_MIME_PREFIXES) or mime in TEXT_MIME_TYPES


def file_text(f: ai.File) -> str:
    """Return a text file inline: its content inside ``<file name=... type=...>`` tags.

    Bytes that are not UTF-8 are replaced (never raises).
    """
    name = f' name="{f.name}"' if f.name else ""
    return f'<file{name} type="{f.mime_type}">\n{f.data.decode("utf-8", "replace")}\n</file>'


def omitted(block: ai.Image | ai.File, provider: str) -> str:
    """Return the note sent in place of an image or file the provider cannot take.

    The model learns that something was there and why it cannot see it,
    instead of the block vanishing silently.
    """
    what = f"file {block.name}" if isinstance(block, ai.File) and block.name else block.type
    return f"[{what} ({block.mime_type}, {len(block.data)} bytes) not sent: {provider} does not accept this type here]"


def data_url(block: ai.Image | ai.File) -> str:
    """Return ``data:<mime>;base64,<data>`` for an image or file."""
    return f"data:{block.mime_type};base64,{b64(block.data)}"


def b64(data: bytes) -> str:
    """Return ``data`` as base64 text."""
    return base64.b64encode(data).decode("ascii")


EMPTY_SCHEMA = {"type": "object", "properties": {}}

LLM_REASONING = "llm:"
"""Prefix of a :class:`~durable_nb.ai.Thinking` signature that holds an llm plugin's reasoning
metadata (``llm:`` + JSON): only llm can send it back; no provider API would take it as a signature."""


def own_signature(block: ai.Thinking) -> bool:
    """Return whether ``block`` has a signature a provider API made (not llm's metadata, not empty)."""
    return bool(block.signature) and not block.signature.startswith(LLM_REASONING)


def tool_schema(tool: ai.ToolSpec) -> dict[str, Any]:
    """Return a tool's JSON Schema for its arguments; a tool with none takes an empty object (APIs want one)."""
    return tool.parameters or EMPTY_SCHEMA


def split_settings(
    settings: Mapping[str, Any], provider: str, named: Mapping[str, str | None], reserved: Iterable[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a request's settings into the SDK's keyword arguments and the extras for the body.

    ``named`` maps a setting to the SDK's keyword for it (``None``: the API
    has no such setting, so it is not sent); every other setting is an
    extra, sent in the body as it is. Settings set to ``None`` are left out.
    Raises :class:`~durable_nb.errors.ModelError` (one line) for a setting in
    ``reserved``: something durable_nb sends itself. O(settings).
    """
    reserved = frozenset(reserved)
    args: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for k, v in settings.items():
        if v is None:
            continue
        if k in reserved:
            raise ModelError(f"{provider}: the setting {k!r} is sent by durable_nb itself; leave it out")
        if k not in named:
            extra[k] = v
        elif (name := named[k]) is not None:
            args[name] = v
    return args, extra
