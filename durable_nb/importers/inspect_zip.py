"""Reading a finished Inspect ``.eval`` (format version 2) straight from its zip, without inspect_ai.

:func:`read` returns what :mod:`.inspect_eval` maps, with the attribute names
of inspect_ai's ``EvalLog`` / ``EvalSample`` / ``ChatMessage*`` / ``Content*``
(its defaults filled in as inspect_ai 0.3's models fill them), decoded with
msgspec into structs that declare only the fields the import reads: a
sample's ``events`` (every model call's input: what a long sample's size
grows with) and ``output`` are skipped unparsed, and so are ``attachments``
unless a message names one (read at its first reference): inspect_ai's writer moves every ``data:`` URL
in the messages (an image, even a text that is one) into the sample's
``attachments`` and leaves ``attachment://<hash>`` in its place, which
:func:`_resolve` swaps back as ``read_eval_log(resolve_attachments=True)``
does. Samples
come in inspect_ai's order (epoch, then id) and each member is read once,
the last one of a name winning, as inspect_ai reads them.

Anything else returns ``None`` so the caller uses inspect_ai's own reader,
which migrates and validates: no ``header.json`` (a log still being
written), another format version, a legacy field (``score``,
``transcript``, ``tool_error``), a content part other than text, reasoning
and image, a value of an unexpected type, JSON msgspec refuses (``NaN``).
Cost: one pass over each member's JSON; memory: the samples' messages as
structs (their strings are the ones the entries keep).
"""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import msgspec

VERSION = 2  # the format read here; any other goes to inspect_ai
_PLACEHOLDER = "88F74D2C"  # inspect_ai's scorer name for a migrated legacy `score`


class _Text(msgspec.Struct, tag_field="type", tag="text"):
    type: ClassVar[str] = "text"
    text: str


class _Reasoning(msgspec.Struct, tag_field="type", tag="reasoning"):
    type: ClassVar[str] = "reasoning"
    reasoning: str
    signature: str | None = None
    redacted: bool = False


class _Image(msgspec.Struct, tag_field="type", tag="image"):
    type: ClassVar[str] = "image"
    image: str


class _Call(msgspec.Struct):
    id: str
    function: str
    arguments: dict[str, Any]


class _Message(msgspec.Struct):
    role: str
    content: str | list[_Text | _Reasoning | _Image]
    metadata: dict[str, Any] | None = None
    tool_calls: list[_Call] | None = None  # assistant
    model: str | None = None  # assistant
    tool_call_id: str | list[str] | None = None  # tool (a user message may hold a list)
    function: str | None = None  # tool
    error: dict[str, Any] | None = None  # tool: a ToolCallError
    tool_error: Any = None  # legacy: inspect_ai migrates it


class _Usage(msgspec.Struct):
    """``ModelUsage``'s fields in its order with its defaults."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    input_tokens_cache_write: int | None = None
    input_tokens_cache_read: int | None = None
    reasoning_tokens: int | None = None
    total_cost: float | None = None

    def model_dump(self, exclude_none: bool = True) -> dict[str, Any]:
        out = msgspec.structs.asdict(self)
        return {k: v for k, v in out.items() if v is not None} if exclude_none else out


class _Error(msgspec.Struct):
    message: str


class _Score(msgspec.Struct):
    value: Any
    explanation: str | None = None


class _Sample(msgspec.Struct):
    id: int | str
    epoch: int
    target: str | list[str]
    messages: list[_Message] = []
    metadata: dict[str, Any] = {}
    model_usage: dict[str, _Usage] = {}
    error: _Error | None = None
    scores: dict[str, _Score] | None = None
    score: Any = msgspec.UNSET  # legacy fields inspect_ai migrates
    transcript: Any = msgspec.UNSET


class _Spec(msgspec.Struct):
    eval_id: str
    run_id: str
    created: str
    task: str
    model: str


class _Metric(msgspec.Struct):
    value: int | float


class _EvalScore(msgspec.Struct):
    name: str
    metrics: dict[str, _Metric] = {}


class _Results(msgspec.Struct):
    scores: list[_EvalScore] = []


class _Header(msgspec.Struct):
    version: int
    eval: _Spec
    status: str = "started"
    results: _Results | None = None


class Log(msgspec.Struct):
    """The part of an ``EvalLog`` the import reads: ``eval``, ``status``, ``results``, ``samples``."""

    eval: _Spec
    status: str
    results: _Results | None
    samples: list[_Sample]


class _Attachments(msgspec.Struct):
    attachments: dict[str, str] = {}


_HEADER = msgspec.json.Decoder(_Header)
_SAMPLE = msgspec.json.Decoder(_Sample)
_ATTACHMENTS = msgspec.json.Decoder(_Attachments)
_REFS = ("attachment://", "tc://")  # inspect_ai's reference, and the older flavour it migrates
_MARKS = (b"attachment:", b"tc:")  # one of them is in a member's bytes that holds a reference (slashes maybe escaped)
_ROLES = {"system", "user", "assistant", "tool"}


def read(p: Path) -> Log | None:
    """Return the log at ``p`` as :class:`Log`, or ``None`` for one inspect_ai must read (see the module doc)."""
    try:
        with zipfile.ZipFile(p) as z:
            names = list(dict.fromkeys(z.namelist()))
            if "header.json" not in names or not _can_read(z):
                return None
            head = _HEADER.decode(z.read("header.json"))
            if head.version != VERSION or not head.eval.eval_id:
                return None
            samples = [_sample(z.read(n)) for n in names if n.startswith("samples/") and n.endswith(".json")]
    except (zipfile.BadZipFile, OSError, msgspec.DecodeError, _Unusual, ValueError, EOFError):
        return None
    samples.sort(key=lambda s: (s.epoch, s.id if isinstance(s.id, str) else str(s.id).zfill(20)))
    spec = head.eval
    spec.created = _utc(spec.created)
    return Log(spec, head.status, head.results, samples)


class _Listed(msgspec.Struct):
    id: int | str
    epoch: int


_LISTED = msgspec.json.Decoder(list[_Listed])


def listed(p: Path) -> list[tuple[str, int]]:
    """Return the ``(id, epoch)`` of each sample an ``.eval``'s summaries list (``summaries.json``, else a log
    being written's ``_journal/summaries/*.json``), in their order; ``[]`` when there are none to read.
    inspect_ai writes a sample's summary with its member, so one listed here that no member holds is lost."""
    try:
        with zipfile.ZipFile(p) as z:
            if not _can_read(z):
                return []
            names = z.namelist()
            if "summaries.json" in names:
                parts = ["summaries.json"]
            else:
                parts = [n for n in names if n.startswith("_journal/summaries/") and n.endswith(".json")]
            return [(str(s.id), s.epoch) for n in parts for s in _LISTED.decode(z.read(n))]
    except (zipfile.BadZipFile, OSError, msgspec.DecodeError, ValueError, EOFError):
        return []


class _Unusual(Exception):
    """A sample inspect_ai would migrate or refuse: its reader decides."""


def _can_read(z: zipfile.ZipFile) -> bool:
    """Whether zipfile can decompress every member (zstandard: ``zipfile_zstd`` before Python 3.14, as inspect_ai)."""
    kinds = {i.compress_type for i in z.infolist()}
    if kinds <= {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}:
        return True
    if sys.version_info < (3, 14):
        try:
            import zipfile_zstd  # noqa: F401  # type: ignore[import-not-found,import-untyped]  # patches zipfile
        except ImportError:
            return False
    return kinds <= {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, getattr(zipfile, "ZIP_ZSTANDARD", -1)}


def _sample(raw: bytes) -> _Sample:
    """Return one sample member's sample, its messages' attachment references resolved (see :func:`_resolve`)."""
    s = _usual(_SAMPLE.decode(raw))
    if any(map(raw.__contains__, _MARKS)):  # the bytes first: at C speed
        _resolve(s.messages, lambda: _ATTACHMENTS.decode(raw).attachments)
    return s


def _resolve(messages: list[_Message], attachments: Callable[[], dict[str, str]]) -> None:
    """Swap each ``attachment://<hash>`` (or ``tc://<hash>``) string in ``messages`` (their content, reasoning,
    images, tool call arguments) for its text in ``attachments()`` (read at the first reference only), in
    place; a hash not there stays as it is, as inspect_ai leaves it. O(the messages' content)."""
    found: dict[str, str] | None = None

    def swap(text: str) -> str:
        nonlocal found
        for ref in _REFS:
            if text.startswith(ref):
                if found is None:
                    found = attachments()
                return found.get(text[len(ref) :], text)
        return text

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return swap(v)
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return [walk(x) for x in v] if isinstance(v, list) else v

    for m in messages:
        if isinstance(m.content, str):
            m.content = swap(m.content)
        else:
            for c in m.content:
                if isinstance(c, _Text):
                    c.text = swap(c.text)
                elif isinstance(c, _Reasoning):
                    c.reasoning = swap(c.reasoning)
                else:
                    c.image = swap(c.image)
        for call in m.tool_calls or []:
            call.arguments = walk(call.arguments)


def _usual(s: _Sample) -> _Sample:
    if s.score is not msgspec.UNSET or s.transcript is not msgspec.UNSET or (s.scores and _PLACEHOLDER in s.scores):
        raise _Unusual
    for m in s.messages:
        if m.role not in _ROLES or m.tool_error is not None or (m.role == "tool" and isinstance(m.tool_call_id, list)):
            raise _Unusual
    return s


def _utc(t: str) -> str:
    """inspect_ai's ``UtcDatetimeStr``: the time in UTC, ISO 8601 (a naive time taken as UTC)."""
    d = datetime.fromisoformat(t[:-1] + "+00:00" if t.endswith("Z") else t)
    return (d if d.tzinfo else d.replace(tzinfo=UTC)).astimezone(UTC).isoformat()
