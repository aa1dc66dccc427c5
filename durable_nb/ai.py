"""Messages and content blocks: what a model reads and writes.

A :class:`Message` has a role, a list of content blocks, and the two fields
that answer "is this injected context, and who injected it": ``injected``
(``None``, :attr:`Injection.META` or :attr:`Injection.EPHEMERAL`) and
``origin``. The flag lives on the message, not on the entry that stores it,
so the same field answers the question in stream events, the store, the
model view and the transcript view.

The types are ``msgspec`` structs: stores decode a log's bytes straight into
them (see :mod:`durable_nb.session.codec`), and their fields are the JSON
layout, pi-go's (``sonnes/pi-go`` ``pkg/ai/message.go``) plus this project's
``injected``, ``origin``, ``settings``, ``timing``, reminder blocks and
``redacted`` thinking. Blocks are tagged by ``"type"``. Fields a log holds
that no type declares are kept in each struct's ``extra`` (see
:data:`EXTRA`) and written back at the same level, so nothing read is
dropped when a message is copied or stored again. They are not tracked by the cyclic
garbage collector (``gc=False``): they hold JSON values, which cannot refer
back to them, so a session of 100k messages adds nothing for each full
collection to walk but its content lists. This module imports nothing from
Jupyter.
"""

from __future__ import annotations

import enum
import json
import re
from typing import Any, ClassVar, Literal, Union

import msgspec

Role = Literal["user", "assistant", "tool_result", "system"]
ROLES = ("user", "assistant", "tool_result", "system")


class Injection(str, enum.Enum):
    """How a message was injected: ``meta`` (kept) or ``ephemeral`` (one run)."""

    META = "meta"
    EPHEMERAL = "ephemeral"

    def __str__(self) -> str:
        return self.value


EXTRA = "extra\x7f"
"""The JSON name of the ``extra`` field every message, block and entry struct has.

``extra`` holds the fields a log gave that the type does not declare
(``msgspec.UNSET`` when there are none: the usual case, which costs
nothing). The codec writes them back beside the declared ones, never under
this name; it ends in a DEL character, which a log almost never holds, so
the codec's check that no line spells it is one byte search, and a log that
does spell it is read on the general path, which keeps it as an unknown
field like any other (a ``\\u007f`` escape of it is not looked for).
"""


Extra = dict[str, Any] | msgspec.UnsetType


def _extra() -> Any:
    return msgspec.field(default=msgspec.UNSET, name=EXTRA)


class _Struct(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """The common options: an unknown field is refused by the fast path (the codec's general path keeps
    it in ``extra``), unset fields are left out, and no cyclic GC tracking (JSON values only)."""


class Text(_Struct, tag="text", tag_field="type"):
    """A text block: what a person reads, and what the model reads.

    ``signature`` is a provider's signature of the text (pi-go keeps
    OpenAI's and Google's), sent back to the provider that made it.
    """

    text: str = ""
    signature: str = ""
    extra: Extra = _extra()
    type: ClassVar[str] = "text"


class Reminder(_Struct, tag="reminder", tag_field="type"):
    """Injected context carried *inside* a message (e.g. a tool result).

    The model reads it; a transcript never shows it (only :class:`Text`
    blocks are shown to a person).
    """

    text: str
    extra: Extra = _extra()
    type: ClassVar[str] = "reminder"


class Image(_Struct, tag="image", tag_field="type", omit_defaults=False):
    """An image: raw bytes and a MIME type such as ``image/png`` (both always written, as pi-go reads them)."""

    data: bytes
    mime_type: str = "image/png"
    extra: Extra = _extra()
    type: ClassVar[str] = "image"


class File(_Struct, tag="file", tag_field="type"):
    """A file attachment: its bytes (``data``), or where a provider fetches it (``url``, or ``file_id``
    for a file uploaded to the provider before); a MIME type and an optional file ``name``.

    The JSON layout is pi-go's: ``data`` (base64), ``url``, ``file_id``,
    ``mime_type`` and ``filename`` (``name`` here), each left out when empty, and so is
    the default MIME type (pi-go reads a missing one as unknown).
    """

    data: bytes = b""
    mime_type: str = "application/octet-stream"
    name: str = msgspec.field(default="", name="filename")
    url: str = ""
    file_id: str = ""
    extra: Extra = _extra()
    type: ClassVar[str] = "file"


class ToolCall(_Struct, tag="tool_call", tag_field="type"):
    """A model's request to call a tool; ``arguments`` is a JSON object.

    ``signature`` is a provider's signature of the call (Google's thought
    signature); ``server``, ``server_type`` and ``output`` describe a tool
    the provider ran itself (pi-go's server tools: ``output`` holds its
    ``content``, ``raw`` and ``is_error``). Empty fields are left out.

    Arguments a provider could not read as a JSON object (malformed or cut
    JSON, or JSON that is not an object) are kept, not dropped, as
    ``{"_raw": <the text as received>, "_error": <why it is not an object>}``
    (see :func:`tool_arguments`). :meth:`malformed` returns that reason, so
    the agent answers such a call with an ``is_error`` tool result instead
    of calling the tool. No tool can take these keys: a parameter name
    starting with ``_`` is not a field a schema built by pydantic has.
    """

    id: str = ""
    name: str = ""
    arguments: dict[str, Any] = {}
    signature: str = ""
    server: bool = False
    server_type: str = ""
    output: dict[str, Any] | None = None
    extra: Extra = _extra()
    type: ClassVar[str] = "tool_call"

    def malformed(self) -> str | None:
        """Return why the model's arguments were not a JSON object, or ``None`` when they were."""
        if RAW_ARGUMENTS in self.arguments and ARGUMENTS_ERROR in self.arguments:
            return str(self.arguments[ARGUMENTS_ERROR])
        return None


RAW_ARGUMENTS = "_raw"
ARGUMENTS_ERROR = "_error"


def tool_arguments(raw: str) -> dict[str, Any]:
    """Return the arguments of a tool call from the JSON text a model streamed.

    ``""`` (a call with no arguments) gives ``{}``. Text that is not a JSON
    object gives ``{"_raw": raw, "_error": reason}`` (see
    :meth:`ToolCall.malformed`); never raises. O(len(raw)).
    """
    if not raw.strip():
        return {}
    try:
        args = json.loads(raw)
    except ValueError as e:
        return {RAW_ARGUMENTS: raw, ARGUMENTS_ERROR: f"the arguments are not valid JSON ({e})"}
    except RecursionError:
        return {RAW_ARGUMENTS: raw, ARGUMENTS_ERROR: "the arguments are JSON nested too deeply to read"}
    if not isinstance(args, dict):
        return {RAW_ARGUMENTS: raw, ARGUMENTS_ERROR: f"the arguments are a JSON {type(args).__name__}, not an object"}
    return args


class Thinking(_Struct, tag="thinking", tag_field="type"):
    """A model's reasoning, as its provider returned it.

    ``text`` is the reasoning a person may read (Anthropic's ``thinking``,
    the ``reasoning_content`` some OpenAI-compatible servers stream);
    ``signature`` is the provider's proof that the text is its own
    (Anthropic sends it back with the block); ``redacted`` is opaque
    reasoning the provider encrypted (Anthropic's ``redacted_thinking``
    data), kept only to be sent back. The JSON layout is pi-go's
    (``{"type": "thinking", "thinking": ..., "signature": ...}``, empty
    fields left out) plus ``"redacted"``. Models see it where their
    provider takes it back; a transcript shows it collapsed; the offline
    model leaves it out.
    """

    text: str = msgspec.field(default="", name="thinking")
    signature: str = ""
    redacted: str = ""
    extra: Extra = _extra()
    type: ClassVar[str] = "thinking"


Block = Union[Text, Reminder, Image, File, ToolCall, Thinking]


class Message(_Struct):
    """One message of a conversation.

    ``role`` is ``"user"``, ``"assistant"``, ``"tool_result"`` (it answers
    the tool call named by ``tool_call_id``) or ``"system"`` (the session's
    system prompt: views put the latest one first and the agent sends it as
    :attr:`Request.system`, never as a message). ``usage`` (token counts,
    ``input_tokens`` / ``output_tokens``), ``stop_reason`` and ``model`` are
    recorded on assistant messages by the providers that report them. The
    agent stamps how a message was produced: ``settings`` (the sampling
    settings sent) and ``timing`` (``{"ttft_ms", "total_ms"}`` on an
    assistant message, ``{"duration_ms"}`` on a tool result).
    ``ephemeral_context`` marks a stored message that was sent together with
    ephemeral input (which is never stored): one item per ephemeral entry,
    its origin (``""`` when it had none). The agent sets it on the run's
    user message, so a later replay can say which turns it cannot repeat
    exactly. Providers are not sent it (their converters send role and
    content); a callable model sees it on the message.
    pi-go's own fields: ``api`` and ``provider`` (which wire API and provider made
    an assistant message), ``error`` (why a reply failed) and ``timestamp``
    (when the message was made, RFC 3339), kept as written.
    """

    role: Role
    content: list[Block] = []
    injected: Injection | None = None
    origin: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    usage: dict[str, Any] | None = None
    stop_reason: str | None = None
    model: str | None = None
    settings: dict[str, Any] | None = None
    timing: dict[str, float] | None = None
    ephemeral_context: list[str] | None = None
    api: str | None = None
    provider: str | None = None
    error: str | None = None
    timestamp: str | None = None
    extra: Extra = _extra()

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"message role must be one of {', '.join(ROLES)}, not {self.role!r}")
        if self.injected is not None and not isinstance(self.injected, Injection):
            self.injected = Injection(self.injected)

    def text(self) -> str:
        """Return the concatenated :class:`Text` blocks (``""`` when there are none).

        This is what a person is shown for the message: :class:`Reminder`
        blocks, tool calls, images and files are left out. O(blocks).
        """
        return "".join(b.text for b in self.content if isinstance(b, Text))

    def tool_calls(self) -> list[ToolCall]:
        """Return the message's :class:`ToolCall` blocks, in order."""
        return [b for b in self.content if isinstance(b, ToolCall)]


class ToolSpec(msgspec.Struct, gc=False):
    """A tool as a model is told about it: a name, a description and the JSON Schema of its arguments.

    ``parameters`` is a JSON Schema object (``{"type": "object", "properties": …}``).
    """

    name: str
    description: str = ""
    parameters: dict[str, Any] = {}


class Request(msgspec.Struct, gc=False):
    """What a model call carries besides the messages.

    ``system`` is the system prompt (providers send it natively, never as a
    message); ``tools`` the tools the model may call; ``settings`` the
    sampling settings (``temperature``, ``max_tokens``, ``top_p``, ``seed``,
    ``stop``) plus provider extras, passed to the provider's request body
    verbatim. A field left empty is not sent.
    """

    system: str | None = None
    tools: list[ToolSpec] = []
    settings: dict[str, Any] = {}


def describe_block(block: Block) -> str:
    """Return a block as plain text for listings: text as is, ``reminder: …``,
    ``call name({args})``, ``thinking: …`` (``thinking: <redacted>`` when only
    encrypted reasoning is there), ``<image image/png, 12 bytes>``, ``<file
    application/pdf at https://…>`` for a file given by URL or file id."""
    if isinstance(block, Text):
        return block.text
    if isinstance(block, Reminder):
        return f"reminder: {block.text}"
    if isinstance(block, ToolCall):
        return f"call {block.name}({block.arguments})"
    if isinstance(block, Thinking):
        return f"thinking: {block.text}" if block.text or not block.redacted else "thinking: <redacted>"
    if isinstance(block, File) and not block.data and (block.url or block.file_id):
        return f"<file {block.mime_type} at {block.url or 'file id ' + block.file_id}>"
    return f"<{block.type} {block.mime_type}, {len(block.data)} bytes>"


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def shown_origin(origin: str | None) -> str:
    """Return an origin as a person reads it beside the message's own text: ``cell:skill`` as recorded,
    but a cell named by a generated UUID (JupyterLab's ``cell:3f2a…-…``, which no reader can find in
    the notebook and which execution counts, renumbered after a restart, would not name either) is
    just ``cell``: the message's text, the cell's own, says which. ``""`` for none. O(len(origin))."""
    if not origin:
        return ""
    kind, sep, name = origin.partition(":")
    return kind if sep and _UUID.fullmatch(name) else origin


def badge(m: Message) -> str:
    """Return the injection badge of a message, ``" [meta · cell:3f2a]"`` (the origin as
    :func:`shown_origin` gives it), or ``""``."""
    if m.injected is None:
        return ""
    shown = shown_origin(m.origin)
    return f" [{m.injected.value}{' · ' + shown if shown else ''}]"


def user_message(text: str) -> Message:
    """Return a user message holding one :class:`Text` block."""
    return Message(role="user", content=[Text(text)])


def system_message(text: str) -> Message:
    """Return a system-prompt message holding one :class:`Text` block."""
    return Message(role="system", content=[Text(text)])


def assistant_message(text: str, **fields: Any) -> Message:
    """Return an assistant message holding one :class:`Text` block."""
    return Message(role="assistant", content=[Text(text)], **fields)
