"""Text off the wire made storable: surrogate pairs split across stream chunks are joined.

JSON escapes text outside the Basic Multilingual Plane (an emoji) as a
surrogate pair, ``"\\ud83d\\ude00"``. A proxy or server that cuts a stream
between the two halves sends ``"\\ud83d"`` in one event and ``"\\ude00"`` in
the next; each decodes to a lone surrogate, and Python does not join two
strings' surrogates into one character, so the reply cannot be encoded as
UTF-8 (nor saved). :class:`SurrogateJoiner` holds a trailing high surrogate
back until its partner arrives; :func:`join_surrogates` repairs a whole text.
A surrogate with no partner becomes U+FFFD (the replacement character) in a
reply's text; in tool-call arguments and tool results (where it usually is a
byte of a non-UTF-8 file name, as ``os.listdir`` decodes one) it becomes its
escape, ``\\udce9`` (:func:`escape_surrogates`), so the bytes stay recoverable,
and the entry says so.
"""

from __future__ import annotations

import re

import msgspec

from .. import ai

_SURROGATE = re.compile("[\ud800-\udfff]")
ESCAPED = "escaped_surrogates"  # a tool call's extra field: how many lone surrogates its arguments had escaped


def join_surrogates(text: str) -> str:
    """Return ``text`` with each high+low surrogate pair joined into one character
    and every other surrogate replaced by U+FFFD.

    Text without surrogates (nearly all) is returned as it is, after one
    regex scan: O(len(text)).
    """
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def escape_surrogates(text: str) -> tuple[str, int]:
    """Return ``text`` with surrogate pairs joined and every lone surrogate written as its escape
    (``"\\udce9"``, six characters), and how many were escaped.

    ``text.encode("utf-8", "surrogateescape")`` of a name ``os.listdir``
    decoded gives its bytes back; from the escaped form,
    ``codecs.decode(part, "unicode_escape")`` gives the surrogate. Text
    without surrogates is returned as it is after one regex scan: O(len(text)).
    """
    if not _SURROGATE.search(text):
        return text, 0
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    n = len(_SURROGATE.findall(joined))
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", joined), n


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
    """Return ``message`` with :func:`join_surrogates` applied to every text it holds (text and
    thinking blocks) and :func:`escape_surrogates` to tool-call arguments (keys and values; the
    call's ``extra`` field :data:`ESCAPED` then counts them); the same object when none needs it.

    O(size of the message).
    """
    content = [_repair_block(b) for b in message.content]
    if all(a is b for a, b in zip(content, message.content)):
        return message
    return msgspec.structs.replace(message, content=content)


def _repair_block(block: ai.Block) -> ai.Block:
    changes: dict[str, object] = {}
    text = getattr(block, "text", None)
    if isinstance(text, str):
        fixed = join_surrogates(text)
        if fixed != text:
            changes["text"] = fixed
    if isinstance(block, ai.ToolCall):
        count = [0]
        try:
            args = _escape_value(block.arguments, count)
        except RecursionError:  # nested too deeply to walk: the agent answers the call with an error
            count[0] = 0
        if count[0]:
            extra = dict(block.extra) if isinstance(block.extra, dict) else {}
            changes.update(arguments=args, extra={**extra, ESCAPED: count[0]})
    return msgspec.structs.replace(block, **changes) if changes else block


def _escape_value(value: object, count: list[int]) -> object:
    """Return ``value`` (JSON) with :func:`escape_surrogates` applied to every string; ``count[0]``
    grows by the number escaped. O(size of the value)."""
    if isinstance(value, str):
        fixed, n = escape_surrogates(value)
        count[0] += n
        return fixed
    if isinstance(value, dict):
        return {_escape_value(k, count): _escape_value(v, count) for k, v in value.items()}
    if isinstance(value, list):
        return [_escape_value(v, count) for v in value]
    return value
