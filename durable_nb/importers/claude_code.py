"""Claude Code transcripts (``~/.claude/projects/<dir>/<session>.jsonl``).

Each line is a record; ``uuid``/``parentUuid`` make a tree. Mapping:

- ``user`` lines → user messages; ``isMeta: true`` → injected ``meta``
  (origin ``claude_code:isMeta``); each ``tool_result`` block → a
  ``tool_result`` message (one entry per block, chained);
- ``assistant`` lines → assistant messages. Claude Code writes one API
  response as several lines (one per content block, same ``message.id``):
  they are merged into one message, whose id is the first line's uuid;
  children of any of those lines hang off the merged message.
  ``thinking`` and ``redacted_thinking`` blocks → :class:`~durable_nb.ai.Thinking`
  blocks of the message (signature or encrypted data kept); other non-message
  blocks → an aside ``claude_code.block.<block type>`` hanging off the message;
- parallel tool calls: Claude Code hangs each result off the line of its own
  call, so a plain leaf-to-root walk loses all but one result. Results of
  one merged message are chained one after another (in file order), and the
  next message continues from the last of them;
- ``system`` ``compact_boundary`` → custom ``claude_code.system.compact_boundary``
  (parent: its ``logicalParentUuid`` when that is in the file, else a new
  root); the ``isCompactSummary`` user line after it → a compaction entry
  (summary = its text, nothing before kept verbatim, ``tokens_before`` =
  ``compactMetadata.preTokens``), so the summary reaches the model view once;
- everything else (``progress`` and hook lines, other ``system`` subtypes,
  ``file-history-snapshot``, ``queue-operation``, ``summary``, unknown types)
  → an *aside* (:func:`~durable_nb.session.is_aside`): a custom
  ``claude_code.<type>[.<subtype>]`` with the raw record in ``data``, hanging
  off the conversation entry it follows without continuing it, so it never
  makes a branch and the transcript (the path) leaves it out. What Claude
  Code chained after such a record continues from that conversation entry.
  Records without a uuid get the id ``<type>@<line>``.

A sidechain (a subagent run: ``isSidechain`` lines) hangs off a custom
``claude_code.sidechain`` entry (id ``sidechain:<agentId>``, ``data.name``
``agent-<agentId>``), itself hanging off the main-conversation line the run
started from, or a root when that line is not in the file (a subagent file,
whose first lines point into the main session file: those parent uuids are
kept in ``data.entered_from``). The leaf is the last main-chain user or
assistant line (in a subagent file: the last line).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from sys import intern
from typing import Any

from .. import ai
from ..session import CompactionEntry, CustomEntry, Entry, MessageEntry, is_aside, safe_session_id
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
    share_strings,
    text,
    text_of,
    tool_call,
)

META_ORIGIN = "claude_code:isMeta"


def _blocks(content: Any) -> tuple[list[ai.Block], list[dict[str, Any]]]:
    """Return (message blocks, other raw blocks) of Claude message content."""
    if isinstance(content, str):
        return [ai.Text(content)], []
    out: list[ai.Block] = []
    other: list[dict[str, Any]] = []
    for b in content or []:
        t = b.get("type")
        if t == "text":
            out.append(text(b["text"]))
        elif t in ("image", "document"):
            src = b.get("source") or {}
            if t == "image" or str(src.get("media_type", "")).startswith("image/"):
                out.append(image_block(src.get("data"), src.get("media_type")))
            elif src.get("type") == "text":
                out.append(ai.Text(str(src.get("data", ""))))
            else:
                out.append(ai.Text(f"[document {src.get('media_type', '')}: not shown]"))
        elif t in ("tool_use", "server_tool_use"):
            out.append(tool_call(b.get("id"), b.get("name"), b.get("input"), "input"))
        elif t == "thinking":
            out.append(ai.Thinking(str(b.get("thinking") or ""), str(b.get("signature") or "")))
        elif t == "redacted_thinking":
            out.append(ai.Thinking(redacted=str(b.get("data") or "")))
        else:
            other.append(b)
    return out, other


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[Entry] = []
        self.alias: dict[str, str] = {}  # line uuid -> entry id children should hang off
        self.groups: dict[tuple[str, bool], MessageEntry] = {}  # (message.id, sidechain) -> merged entry
        self.assistant_ids: set[str] = set()
        self.tail: dict[str, str] = {}  # assistant entry id -> last result chained after it
        self.owner: dict[str, str] = {}  # result entry id -> assistant entry id
        self.tool_names: dict[str, str] = {}
        self.boundaries: dict[str, dict[str, Any]] = {}
        self.last_uuid_entry = ""
        self.leaf = ""
        self.fallback_leaf = ""
        self.unresolved_logical = 0
        self.repeats = 0
        self.ids: set[str] = set()
        self.outside = 0  # sidechain lines whose parent is not in this file
        self.heads: dict[str, CustomEntry] = {}  # sidechain head id -> its claude_code.sidechain entry
        self.sidechain_ids: set[str] = set()
        self.entry_parent: dict[int, str] = {}  # id(record) -> parent chosen for it (a sidechain head)
        self.strings: dict[str, str] = {}  # one object for each string value asides repeat (see share_strings)

    def line_parent(self, obj: dict[str, Any]) -> str:
        """Return the entry a user/assistant line continues from."""
        return self.entry_parent.pop(id(obj), None) or self.parent(obj.get("parentUuid"))

    def parent(self, uuid: Any) -> str:
        if not isinstance(uuid, str) or not uuid:
            return ""
        return self.alias.get(uuid, uuid)

    def add(self, e: Entry) -> Entry:
        self.entries.append(e)
        self.ids.add(e.id)
        return e

    def record(self, lineno: int, obj: dict[str, Any]) -> None:
        t = obj.get("type")
        t = t if isinstance(t, str) and t else "record"
        uuid = obj.get("uuid")
        at = obj.get("timestamp")
        if not isinstance(uuid, str) or not uuid:
            self.aside(f"claude_code.{t}", obj, f"{t}@{lineno}", self.last_uuid_entry, at)
            return
        if uuid in self.alias:  # the same line written twice
            self.repeats += 1
            return
        side = bool(obj.get("isSidechain"))
        if t in ("assistant", "user") and isinstance(obj.get("message"), dict):
            if side:
                self.enter_sidechain(obj, at)
            (self.assistant if t == "assistant" else self.user)(uuid, obj, at)
            self.last_uuid_entry = self.alias[uuid]
            if side:
                self.sidechain_ids.add(self.last_uuid_entry)
            else:
                self.leaf = self.last_uuid_entry
            self.fallback_leaf = self.last_uuid_entry
        elif t == "system" and obj.get("subtype") == "compact_boundary":
            logical = obj.get("logicalParentUuid")
            if isinstance(logical, str) and logical in self.alias:
                p = self.alias[logical]
            else:
                p = self.parent(obj.get("parentUuid"))
                if logical:
                    self.unresolved_logical += 1
            self.add(custom("claude_code.system.compact_boundary", obj, uuid, p, at))
            self.alias[uuid] = uuid
            self.boundaries[uuid] = obj
            self.last_uuid_entry = self.leaf = uuid
        else:  # progress, hooks, other system lines, summaries, unknown types: asides
            sub = obj.get("subtype") if t == "system" and isinstance(obj.get("subtype"), str) else ""
            kind = f"claude_code.{t}" + (f".{sub}" if sub else "")
            p = self.parent(obj.get("parentUuid"))
            self.aside(kind, obj, uuid, p, at)
            self.alias[uuid] = p  # what continues from it continues from the conversation entry

    def aside(self, kind: str, raw: dict[str, Any], id: str, parent: str, at: Any) -> None:
        """Add a bookkeeping record as an aside hanging off ``parent`` (see :func:`~durable_nb.session.is_aside`)."""
        share_strings(raw, self.strings)
        e = custom(self.strings.setdefault(kind, kind), raw, id, parent, at)
        assert is_aside(e), kind
        self.add(e)

    def enter_sidechain(self, obj: dict[str, Any], at: Any) -> None:
        """Hang a sidechain line that starts a subagent run (its parent is missing, empty or on the
        main conversation) off a ``claude_code.sidechain`` entry naming the run."""
        raw_parent = obj.get("parentUuid")
        p = self.parent(raw_parent)
        if p and p in self.sidechain_ids:
            return
        agent = obj.get("agentId") if isinstance(obj.get("agentId"), str) else ""
        head_id = f"sidechain:{agent or 'subagent'}"
        head = self.heads.get(head_id)
        if head is None:
            parent = p if p in self.ids else ""
            data: dict[str, Any] = {
                "name": f"agent-{agent}" if agent else "subagent",
                "agentId": agent,
                "entered_from": [],
            }
            head = custom("claude_code.sidechain", data, head_id, parent, at)
            self.add(head)
            self.heads[head_id] = head
            self.sidechain_ids.add(head_id)
        if raw_parent:
            head.data["entered_from"].append(raw_parent)
            self.outside += p not in self.ids
        self.entry_parent[id(obj)] = head_id

    def assistant(self, uuid: str, obj: dict[str, Any], at: Any) -> None:
        m = obj["message"]
        blocks, other = _blocks(m.get("content"))
        for b in blocks:
            if isinstance(b, ai.ToolCall):
                self.tool_names[b.id] = b.name
        key = (m.get("id") if isinstance(m.get("id"), str) and m.get("id") else uuid, bool(obj.get("isSidechain")))
        g = self.groups.get(key)
        if g is None:
            g = MessageEntry(
                id=uuid,
                parent_id=self.line_parent(obj),
                created_at=at if isinstance(at, str) else "",
                message=ai.Message(role="assistant", content=[]),
            )
            self.groups[key] = g
            self.assistant_ids.add(g.id)
            self.add(g)
        g.message.content.extend(blocks)
        if isinstance(m.get("model"), str):
            g.message.model = intern(m["model"])
        if m.get("stop_reason") and isinstance(m.get("stop_reason"), str):
            g.message.stop_reason = intern(m["stop_reason"])
        g.message.usage = int_usage(m.get("usage")) or g.message.usage
        if other:  # blocks a message cannot hold: an aside hanging off the message
            kind = "claude_code.block." + "+".join(sorted({str(b.get("type")) for b in other}))
            self.aside(kind, {"blocks": other, "uuid": uuid}, f"{uuid}.{other[0].get('type')}", g.id, at)
        self.alias[uuid] = g.id

    def user(self, uuid: str, obj: dict[str, Any], at: Any) -> None:
        m = obj["message"]
        p = self.line_parent(obj)
        if obj.get("isCompactSummary"):
            meta = (self.boundaries.get(obj.get("parentUuid") or "") or {}).get("compactMetadata") or {}
            pre = meta.get("preTokens")
            self.add(
                CompactionEntry(
                    id=uuid,
                    parent_id=p,
                    created_at=at if isinstance(at, str) else "",
                    summary=text_of(m.get("content")),
                    first_kept_id="",
                    tokens_before=pre if isinstance(pre, int) else 0,
                )
            )
            self.alias[uuid] = uuid
            return
        content = m.get("content")
        results = [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []
        rest = [b for b in content if b.get("type") != "tool_result"] if isinstance(content, list) else content
        last = p
        owner = ""
        for i, b in enumerate(results):
            rid = uuid if i == 0 else f"{uuid}.{i}"
            if i == 0:
                owner = p if p in self.assistant_ids else self.owner.get(p, "")
                parent = self.tail.get(owner, owner) if owner else p
            else:
                parent = last
            inner, odd = _blocks(b.get("content") if b.get("content") is not None else "")
            inner += [ai.Text(f"[{o.get('type')} block]") for o in odd]  # named, not dropped
            msg = ai.Message(
                role="tool_result",
                content=inner,
                is_error=bool(b.get("is_error")),
                tool_call_id=need_str(b.get("tool_use_id"), "tool_use_id"),
                tool_name=self.tool_names.get(b["tool_use_id"]),
            )
            self.add(message(rid, parent, at, msg))
            if owner:
                self.tail[owner] = rid
                self.owner[rid] = owner
            last = rid
        if rest or not results:
            blocks, other = _blocks(rest)
            mid = uuid if not results else f"{uuid}.text"
            meta = bool(obj.get("isMeta"))
            msg = ai.Message(
                role="user",
                content=blocks,
                injected=ai.Injection.META if meta else None,
                origin=META_ORIGIN if meta else None,
            )
            self.add(message(mid, last, at, msg))
            if other:  # blocks a message cannot hold: an aside hanging off the message
                self.aside("claude_code.block", {"blocks": other, "uuid": uuid}, f"{uuid}.blocks", mid, at)
            last = mid
        self.alias[uuid] = last

    def finish(self, notes: list[str]) -> tuple[list[Entry], str]:
        ids = {e.id for e in self.entries}
        # A message that continues from an earlier result of a parallel batch continues from the last one.
        for e in self.entries:
            if isinstance(e, MessageEntry) and e.id not in self.owner and e.parent_id in self.owner:
                e.parent_id = self.tail[self.owner[e.parent_id]]
        missing = 0
        for e in self.entries:
            if e.parent_id and e.parent_id not in ids:
                e.parent_id = ""
                missing += 1
        if missing:
            notes.append(
                f"{self.path.name}: {missing} record(s) name a parent that is not in this file (e.g. a subagent "
                "transcript whose first lines point into the main session); each starts a new root"
            )
        if self.outside:
            notes.append(
                f"{self.path.name}: {self.outside} line(s) of a subagent run continue from lines that are not in "
                "this file (the main session's); they hang off the run's claude_code.sidechain entry"
            )
        if self.repeats:
            notes.append(f"{self.path.name}: {self.repeats} line(s) repeat a uuid already read; they are shown once")
        if self.unresolved_logical:
            notes.append(
                f"{self.path.name}: {self.unresolved_logical} compact boundary(ies) name a logical parent that is "
                "not in this file; the conversation after the compaction starts a new root"
            )
        return self.entries, self.leaf or self.fallback_leaf or (self.entries[-1].id if self.entries else "")


def load(path: Path, records: Iterable[Record]) -> Loaded:
    """Return the transcript's entries and leaf; a record of an unexpected shape raises
    :class:`~durable_nb.errors.CorruptLog` naming file and line. One pass: ``records`` may be a
    stream (:class:`~durable_nb.importers.common.Records`); a record is kept only as what it
    becomes (an aside keeps its raw record). O(records)."""
    r = _Reader(path)
    sid = ""
    for lineno, obj in records:
        guarded(path, lineno, lambda: r.record(lineno, obj))
        if not sid and isinstance(obj.get("sessionId"), str):
            sid = obj["sessionId"]
    notes: list[str] = []
    entries, leaf = r.finish(notes)
    entries = dedupe(entries, notes, path.name)
    return Loaded(safe_session_id(sid, path.stem), entries, leaf, notes)
