"""pi coding-agent sessions (badlogic/pi-mono): a ``session`` header line, then entries.

v1 files have no ids (each entry follows the previous one; a compaction
names its first kept entry by line index, ``firstKeptEntryIndex``); v2/v3
files are trees (``id``/``parentId``; v2 spells the custom role
``hookMessage``). Mapping:

- header → custom ``pi.session`` (the root; entries with no parent hang off it);
- ``message`` user / assistant / toolResult → message entries (thinking
  blocks → :class:`~durable_nb.ai.Thinking` blocks of the message, the
  signature kept; a redacted one keeps its encrypted data);
- ``bashExecution`` messages (``!cmd``) → a user message (custom
  ``pi.bash_execution`` when ``excludeFromContext``);
- ``custom_message`` (and custom/hookMessage roles) → a user message,
  injected ``meta`` when ``display`` is false; origin ``pi:<customType>``;
- ``branch_summary`` → a user message with origin ``pi:branch_summary``;
- ``compaction`` → a compaction entry (``firstKeptEntryId``, ``tokensBefore``);
  the ``retainedTail`` newer pi versions write on it (the messages kept after
  the compaction, materialised) follows as ``meta`` messages (origin
  ``pi:retained_tail``: the model reads them, a person already saw the
  originals), and what continues from the compaction continues after them;
- ``label`` → a label entry (``CustomEntry(kind="label")``, see
  :mod:`durable_nb.session.labels`: ``name`` = pi's ``label``, ``target_id``
  = its ``targetId``; a cleared label removes the name the target had), the
  raw record kept in ``data["pi"]``, so ``agent.labels()`` and
  ``%durable branch <label>`` work;
- everything else (``model_change``, ``thinking_level_change``, ``custom``,
  ``session_info``, unknown types) → custom ``pi.<type>`` keeping the raw
  record in ``data``.

A file this project wrote (header ``harness: "durable_nb"``, see
:mod:`durable_nb.share.pi_format`) reads back as the entries it was written
from: its ``custom`` records as custom entries of their ``customType`` (the
registered class, e.g. a verdict), ``durable_nb.message`` records as the
messages they hold, and a meta message's origin from ``details``.

The leaf is the last entry, as pi resumes.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from sys import intern
from typing import Any

import msgspec

from .. import ai
from ..session import CompactionEntry, CustomEntry, DecodeError, Entry, MessageEntry, decode, safe_session_id
from ..session.labels import LABEL_KIND
from .common import (
    Loaded,
    Record,
    custom,
    dedupe,
    guarded,
    image_block,
    int_usage,
    message,
    need_str,
    text,
    tool_call,
)

RETAINED = "pi:retained_tail"
BRANCH_PREFIX = "Summary of a branch this conversation came back from:\n\n"


def blocks(content: Any) -> list[ai.Block]:
    """Return the text, image, tool-call and thinking blocks of pi message content (a string or a block list)."""
    if isinstance(content, str):
        return [ai.Text(content)]
    if not isinstance(content, list):
        raise ValueError(f"message content is {type(content).__name__}, not a string or a list")
    out: list[ai.Block] = []
    for b in content or []:
        t = b.get("type")
        if t == "text":
            out.append(text(b["text"]))
        elif t == "image":
            out.append(image_block(b.get("data"), b.get("mimeType")))
        elif t == "toolCall":
            out.append(tool_call(b.get("id"), b.get("name"), b.get("arguments")))
        elif t in ("thinking", "redactedThinking"):
            out.append(_thinking(b))
    return out[:] if len(out) == 1 else out  # a list of one: exact size (appending leaves room for four)


def _thinking(b: dict[str, Any]) -> ai.Thinking:
    """Return pi's thinking block as a Thinking: pi keeps a redacted block's encrypted data in
    ``thinkingSignature`` (with ``redacted: true``); the older ``redactedThinking`` type in ``data``."""
    sig = b.get("thinkingSignature") if isinstance(b.get("thinkingSignature"), str) else ""
    if b.get("type") == "redactedThinking" or b.get("redacted") is True:
        data = b.get("data") if isinstance(b.get("data"), str) else sig
        return ai.Thinking(redacted=data)
    return ai.Thinking(b.get("thinking") if isinstance(b.get("thinking"), str) else "", sig)


def load(path: Path, records: Iterable[Record]) -> Loaded:
    """Return the session's entries; raises :class:`CorruptLog` naming file and line
    for a record of an unexpected shape. One pass: ``records`` may be a stream
    (:class:`~durable_nb.importers.common.Records`); a record is kept only as what it
    becomes (a custom entry keeps its raw record). O(records) time; memory: the entries."""
    read = _Read(path, records)
    entries = [e for out in read for e in out]
    if read.v1 is not None:
        read.v1.finish()
    notes: list[str] = []
    entries = dedupe(entries, notes, path.name)
    return Loaded(read.sid, entries, read.last, notes)


def stream(path: Path, records: Iterable[Record], take: Callable[[list[Entry]], None]) -> Loaded | None:
    """Hand the session's entries to ``take`` in log order as they are read, a list per record,
    none of them changed afterwards (not yet deduplicated: see
    :class:`~durable_nb.importers.stream.Spool`); return the session id and leaf (``entries``
    empty), or ``None`` when an entry already handed over would change later (a v1 compaction
    keeping from a record further on: read the log with :func:`load`). Raises as :func:`load`."""
    read = _Read(path, records)
    for out in read:
        take(out)
    if read.v1 is not None and read.v1.later:
        return None
    return Loaded(read.sid, [], read.last, [])


class _Read:
    """One pass over a pi session's records: iterating yields each record's entries (the header's
    first); ``sid``, ``last`` (the leaf) and ``v1`` (the v1 ids, ``None`` from v2 on) are set as it goes."""

    def __init__(self, path: Path, records: Iterable[Record]) -> None:
        self.path = path
        self.it = iter(records)
        _, self.header = next(self.it)  # Records raises for a file with no record
        header = self.header
        self.version = header.get("version") if isinstance(header.get("version"), int) else 1
        self.sid = safe_session_id(header.get("id"), path.stem)
        self.root_id = header.get("id") if isinstance(header.get("id"), str) and header.get("id") else "session"
        self.v1 = _V1Ids(self.root_id) if self.version < 2 else None
        self.last = self.root_id

    def __iter__(self) -> Iterator[list[Entry]]:
        path, root_id, v1, header = self.path, self.root_id, self.v1, self.header
        yield [custom("pi.session", header, root_id, "", header.get("timestamp"))]
        ours = header.get("harness") == "durable_nb"
        alias: dict[str, str] = {}  # entry id -> the entry its children continue from (after a retained tail)
        named: dict[str, str] = {}  # target id -> its current pi label
        for lineno, obj in self.it:
            later = None
            if v1 is not None:
                obj, later = v1.place(lineno, obj)
            if isinstance(obj.get("parentId"), str) and obj["parentId"] in alias:
                obj = dict(obj, parentId=alias[obj["parentId"]])
            mine = ours and obj.get("durable_nb") != "pi"  # "pi": a record pi wrote, written back as it was
            if ours and not mine:
                obj = {k: v for k, v in obj.items() if k != "durable_nb"}
            out = guarded(path, lineno, lambda: (mine and _own(obj, root_id)) or _entry(obj, root_id, named))
            if later is not None and isinstance(out[0], CompactionEntry):
                v1.later.append((later, out[0]))
            self.last = out[-1].id
            if self.last != out[0].id:
                alias[out[0].id] = self.last
            yield out


class _V1Ids:
    """The ids of a v1 session, which has none: record ``i`` (0: the header, the root) gets
    ``L<its line>``, its parent the record before it; a compaction's ``firstKeptEntryIndex``
    (a record index) becomes ``firstKeptEntryId``, that record's id (``""`` when there is no
    such record). Keeps one line number per record (8 bytes)."""

    def __init__(self, root_id: str) -> None:
        self.root_id = root_id
        self.lines = array("q", [0])  # line of record i (the header's is not used: its id is root_id)
        self.later: list[tuple[int, CompactionEntry]] = []  # compactions naming a record not read yet

    def id_at(self, i: int) -> str:
        """Return the id of record ``i``, ``""`` when no record has that index (yet)."""
        return self.root_id if i == 0 else f"L{self.lines[i]}" if 0 < i < len(self.lines) else ""

    def place(self, lineno: int, obj: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
        """Return a copy of the next record with its ids, and the record index its compaction
        keeps from when that record is still to come (:meth:`finish` fills it in), else ``None``."""
        obj = dict(obj, id=f"L{lineno}", parentId=self.id_at(len(self.lines) - 1))
        self.lines.append(lineno)
        kept = obj.get("firstKeptEntryIndex")
        if obj.get("type") != "compaction" or not isinstance(kept, int):
            return obj, None
        obj["firstKeptEntryId"] = self.id_at(kept)
        return obj, kept if kept >= len(self.lines) else None

    def finish(self) -> None:
        """Name the record each compaction that looked ahead keeps from, now that all are read."""
        for i, entry in self.later:
            entry.first_kept_id = self.id_at(i)


def _own(obj: dict[str, Any], root_id: str) -> list[Entry] | None:
    """Return the entry a record of this project's own pi export stands for, ``None`` when the
    record is pi's own kind (read by :func:`_entry`)."""
    t = obj.get("type")
    if t not in ("custom", "custom_message"):
        return None
    head = {"id": need_str(obj.get("id"), "id"), "parent_id": need_str(obj.get("parentId") or root_id, "parentId"),
            "created_at": obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else ""}  # fmt: skip
    ctype, data = obj.get("customType"), obj.get("data")
    if t == "custom_message":
        details = obj.get("details") if isinstance(obj.get("details"), dict) else {}
        origin = details.get("origin") if isinstance(details.get("origin"), str) else None
        e = _custom_message(
            head["id"], head["parent_id"], head["created_at"], ctype, obj.get("content"), obj.get("display")
        )
        if isinstance(e, MessageEntry):  # the origin it had (none: none), not pi's customType
            e.message = msgspec.structs.replace(e.message, origin=origin)
        return [e]
    if not isinstance(ctype, str) or not isinstance(data, dict):
        return None
    try:
        if ctype == "durable_nb.message":
            return [decode({"type": "message", **head, "message": data})]
        return [decode({"type": "custom", **head, "kind": ctype, **data})]
    except DecodeError as e:  # guarded names the file and line
        raise ValueError(str(e)) from None


def _entry(obj: dict[str, Any], root_id: str, named: dict[str, str]) -> list[Entry]:
    t = need_str(obj.get("type"), "type")
    id = need_str(obj.get("id"), "id")
    parent = need_str(obj.get("parentId") or root_id, "parentId")
    at = obj.get("timestamp")
    if t == "message":
        return _message(obj, id, parent, at)
    if t == "custom_message":
        return [_custom_message(id, parent, at, obj.get("customType"), obj.get("content"), obj.get("display"))]
    if t == "compaction":
        out: list[Entry] = [
            CompactionEntry(
                id=id,
                parent_id=parent,
                created_at=at if isinstance(at, str) else "",
                summary=str(obj.get("summary") or ""),
                first_kept_id=str(obj.get("firstKeptEntryId") or ""),
                tokens_before=int(obj.get("tokensBefore") or 0),
            )
        ]
        tail = obj.get("retainedTail")
        for k, m in enumerate(tail if isinstance(tail, list) else []):
            kept = _message({"message": m}, f"{id}.t{k}", out[-1].id, at)
            for e in kept:
                if isinstance(e, MessageEntry):
                    e.message = msgspec.structs.replace(e.message, injected=ai.Injection.META, origin=RETAINED)
            out.extend(kept)
        return out
    if t == "label":
        target: str = obj["targetId"] if isinstance(obj.get("targetId"), str) else ""
        name = obj.get("label") if isinstance(obj.get("label"), str) and obj.get("label") else ""
        if name:
            named[target] = name
            data = {"name": name, "target_id": target, "pi": obj}
        else:  # pi clears a target's label: the name it had is removed
            data = {"name": named.pop(target, ""), "target_id": "", "pi": obj}
        return [
            CustomEntry(
                id=id, parent_id=parent, created_at=at if isinstance(at, str) else "", kind=LABEL_KIND, data=data
            )
        ]
    if t == "branch_summary" and obj.get("summary"):
        summary = ai.Text(BRANCH_PREFIX + str(obj["summary"]))
        msg = ai.Message(role="user", content=[summary], origin="pi:branch_summary")
        return [message(id, parent, at, msg)]
    return [custom(f"pi.{t}", obj, id, parent, at)]


def _usage(u: Any) -> dict[str, int] | None:
    """Return pi's integer usage counts, plus ``input_tokens`` / ``output_tokens`` (the names
    :mod:`durable_nb.cost` reads) for its ``input`` / ``output``."""
    out = int_usage(u)
    if out:
        for ours, theirs in (("input_tokens", "input"), ("output_tokens", "output")):
            if theirs in out and ours not in out:
                out[ours] = out[theirs]
    return out


def _name(v: Any) -> str | None:
    """Return a non-empty string field (interned: a log repeats it on every reply), else ``None``."""
    return intern(v) if isinstance(v, str) and v else None


def _custom_message(id: str, parent: str, at: Any, ctype: Any, content: Any, display: Any) -> Entry:
    msg = ai.Message(
        role="user",
        content=blocks(content),
        origin=intern(f"pi:{ctype or 'custom'}"),
        injected=None if display else ai.Injection.META,
    )
    return message(id, parent, at, msg)


def _message(obj: dict[str, Any], id: str, parent: str, at: Any) -> list[Entry]:
    m = obj["message"]
    role = m["role"]
    if role == "user":
        return [message(id, parent, at, ai.Message(role="user", content=blocks(m.get("content"))))]
    if role == "assistant":
        out: list[Entry] = []
        content = m.get("content") or []
        msg = ai.Message(
            role="assistant",
            content=blocks(content),
            usage=_usage(m.get("usage")),
            stop_reason=intern(m["stopReason"]) if isinstance(m.get("stopReason"), str) else None,
            model=intern(m["model"]) or None if isinstance(m.get("model"), str) else None,
            api=_name(m.get("api")),
            provider=_name(m.get("provider")),
            error=m["errorMessage"] or None if isinstance(m.get("errorMessage"), str) else None,
        )
        out.append(message(id, parent, at, msg))
        return out
    if role == "toolResult":
        msg = ai.Message(
            role="tool_result",
            content=blocks(m.get("content")),
            is_error=bool(m.get("isError")),
            tool_call_id=need_str(m.get("toolCallId"), "toolCallId"),
            tool_name=intern(m["toolName"]) if isinstance(m.get("toolName"), str) else None,
        )
        return [message(id, parent, at, msg)]
    if role == "branchSummary" and m.get("summary"):
        summary = ai.Text(BRANCH_PREFIX + str(m["summary"]))
        return [message(id, parent, at, ai.Message(role="user", content=[summary], origin="pi:branch_summary"))]
    if role == "compactionSummary" and m.get("summary"):
        summary = ai.Text(str(m["summary"]))
        return [message(id, parent, at, ai.Message(role="user", content=[summary], origin="pi:compaction_summary"))]
    if role in ("custom", "hookMessage"):
        return [_custom_message(id, parent, at, m.get("customType"), m.get("content"), m.get("display"))]
    if role == "bashExecution" and not m.get("excludeFromContext"):
        text = f"Ran `{m.get('command', '')}`\n" + (f"```\n{m['output']}\n```" if m.get("output") else "(no output)")
        if isinstance(m.get("exitCode"), int) and m["exitCode"] != 0:
            text += f"\n\nExit code {m['exitCode']}"
        return [message(id, parent, at, ai.Message(role="user", content=[ai.Text(text)], origin="pi:bash"))]
    return [custom(f"pi.{'bash_execution' if role == 'bashExecution' else 'message'}", obj, id, parent, at)]
