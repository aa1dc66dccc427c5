"""Text off the wire made storable: surrogate pairs split across stream chunks are joined.

JSON escapes text outside the Basic Multilingual Plane (an emoji) as a
surrogate pair, ``"\\ud83d\\ude00"``. A proxy or server that cuts a stream
between the two halves sends ``"\\ud83d"`` in one event and ``"\\ude00"`` in
the next; each decodes to a lone surrogate, and Python does not join two
strings' surrogates into one character, so the reply cannot be encoded as
UTF-8 (nor saved). :class:`SurrogateJoiner` holds a trailing high surrogate
back until its partner arrives; :func:`join_surrogates` repairs a whole text.
A surrogate with no partner becomes U+FFFD (the replacement character).
"""

from __future__ import annotations

import re

import msgspec

from .. import ai

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def join_surrogates(text: str) -> str:
    """Return ``text`` with each high+low surrogate pair joined into one character
    and every other surrogate replaced by U+FFFD.

    Text without surrogates (nearly all) is returned as it is, after one
    regex scan: O(len(text)).
    """
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class SurrogateJoiner:
    """Repairs a stream of text deltas: ``feed`` each delta, ``flush`` at the end.

    The concatenation of what ``feed`` and ``flush`` return equals
    :func:`join_surrogates` of the concatenated deltas. O(1) extra work per
    delta beyond the regex scan.
    """

    def __init__(self) -> None:
        self._held = ""

    def feed(self, delta: str) -> str:
        """Return the repaired text of ``held + delta``, holding back a trailing high surrogate."""
        text = self._held + delta
        self._held = ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self._held = text[:-1], text[-1]
        return join_surrogates(text)

    def flush(self) -> str:
        """Return what is still held (a lone high surrogate, as U+FFFD), or ``""``."""
        held, self._held = self._held, ""
        return join_surrogates(held)


def repair_message(message: ai.Message) -> ai.Message:
    """Return ``message`` with :func:`join_surrogates` applied to every text it holds
    (text and thinking blocks, tool-call arguments); the same object when none needs it.

    O(size of the message).
    """
    content = [_repair_block(b) for b in message.content]
    if all(a is b for a, b in zip(content, message.content)):
        return message
    return msgspec.structs.replace(message, content=content)


def _repair_block(block: ai.Block) -> ai.Block:
    changes = {}
    for field in getattr(block, "__struct_fields__", ()):
        value = getattr(block, field)
        fixed = _repair_value(value) if field in ("text", "arguments") else value
        if fixed is not value:
            changes[field] = fixed
    return msgspec.structs.replace(block, **changes) if changes else block


def _repair_value(value: object) -> object:
    if isinstance(value, str):
        fixed = join_surrogates(value)
        return value if fixed == value else fixed
    if isinstance(value, dict):
        items = {_repair_value(k): _repair_value(v) for k, v in value.items()}
        same = all(a is b and items[a] is value[b] for a, b in zip(items, value))
        return value if same and len(items) == len(value) else items
    if isinstance(value, list):
        fixed_items = [_repair_value(v) for v in value]
        return value if all(a is b for a, b in zip(fixed_items, value)) else fixed_items
    return value
