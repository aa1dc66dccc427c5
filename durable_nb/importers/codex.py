"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

A rollout is a flat log of ``{timestamp, type, payload}`` lines; each entry
here follows the previous one (ids ``L<line>``). Mapping:

- ``response_item`` messages: ``user`` → user message; ``developer`` and
  ``system`` → user message injected ``meta`` (origin ``codex:developer``);
  a user message Codex injected itself is ``meta`` too: its text starts with
  a context tag (``# AGENTS.md instructions``, ``<environment_context>``,
  ``<user_instructions>``, ``<turn_aborted>``, …) or, in logs that record
  what the user typed (``event_msg`` ``user_message``), no such event
  follows it;
- ``assistant`` messages, ``function_call``, ``custom_tool_call`` and
  ``local_shell_call`` items of one response → one assistant message
  (text + tool calls), its model the latest ``turn_context``'s, its usage the ``last_token_usage``
  of the ``token_count`` event after it (a repeat finds it set); ``*_output`` items → ``tool_result`` messages;
- ``compacted`` → a compaction entry (summary: its ``message``), followed by
  its ``replacement_history`` items as ``meta`` messages (origin
  ``codex:replacement_history``: the model reads them, a person already saw
  the originals) — nothing before the compaction reaches the model view;
- ``event_msg`` ``thread_rolled_back`` (``num_turns`` N) → what follows
  continues from before the N-th last user turn, so the rolled-back turns
  stay in the log as a side branch;
- ``event_msg`` ``user_message`` / ``agent_message`` / ``agent_reasoning``
  that repeat an item (Codex writes what a person sees twice: for the model
  and for its UI) are folded into that item: no entry of their own (an event
  carrying anything more, such as images, is kept as an aside);
- everything else (``session_meta``, ``turn_context``, other ``event_msg``
  such as ``token_count``, ``reasoning``, ``web_search_call``) → an *aside*
  (:func:`~durable_nb.session.is_aside`): custom
  ``codex.<type>[.<payload type>]`` with the raw record in ``data``, hanging
  off the current entry without advancing (off the path, no branch).

The session's base instructions (the system prompt, in ``session_meta``) stay
in that custom entry: a message has no system role.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from sys import intern
from typing import Any

from .. import ai
from ..session import CompactionEntry, CustomEntry, Entry, MessageEntry, is_aside, is_turn_start, safe_session_id
from .common import (
    Loaded,
    Record,
    custom,
    data_url_image,
    dedupe,
    guarded,
    int_usage,
    message,
    need_str,
    share_strings,
    text,
    text_of,
    tool_call,
)

# Text prefixes of the user-role messages Codex writes itself, and the origin each gets.
CONTEXT_PREFIXES = (
    ("# agents.md instructions", "codex:AGENTS.md"),
    ("<user_instructions>", "codex:user_instructions"),
    ("<environment_context>", "codex:environment_context"),
    ("<turn_aborted>", "codex:turn_aborted"),
    ("<user_shell_command>", "codex:user_shell_command"),
    ("<skill>", "codex:skill"),
    ("<context_update>", "codex:context_update"),
    ("<subagent_notification>", "codex:subagent_notification"),
)
REPLACED = "(Codex replaced the conversation history here; the replacement history follows as injected messages.)"
_ASSISTANT_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output", "mcp_tool_call_output")


def context_origin(text: str) -> str | None:
    """Return the origin for a user-role text Codex injects (by its prefix), else ``None``."""
    head = text.lstrip()[:40].lower()
    for prefix, origin in CONTEXT_PREFIXES:
        if head.startswith(prefix):
            return origin
    return None


def _blocks(content: Any) -> list[ai.Block]:
    if isinstance(content, str):
        return [ai.Text(content)]
    out: list[ai.Block] = []
    for b in content or []:
        t = b.get("type")
        if t in ("input_text", "output_text", "text"):
            out.append(text(b["text"]))
        elif t == "input_image":
            out.append(data_url_image(b.get("image_url")))
        elif t == "refusal":
            out.append(text(b.get("refusal", "")))
    return out


def _output_blocks(output: Any) -> list[ai.Block]:
    if isinstance(output, str):
        return [ai.Text(output)]
    if isinstance(output, dict):
        inner = output.get("content", output.get("output", ""))
        return _output_blocks(inner) if inner is not output else [ai.Text(json.dumps(output))]
    if isinstance(output, list):
        return _blocks(output)
    return [ai.Text(json.dumps(output))]


def _call(p: dict[str, Any]) -> ai.ToolCall:
    t = p["type"]
    cid = p.get("call_id") or p.get("id")
    if t == "function_call":
        raw = p.get("arguments")
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            args = None
        return tool_call(cid, p.get("name"), args if isinstance(args, dict) else raw)
    if t == "custom_tool_call":
        return tool_call(cid, p.get("name"), {"input": p.get("input")})
    return tool_call(cid, "local_shell", p.get("action") if isinstance(p.get("action"), dict) else {})


class _Pairs:
    """One kind of UI event (``user_message``, ``agent_message`` or ``agent_reasoning``) and the
    response items it repeats, paired in one pass over the log.

    Codex writes what a person sees twice: the item the model reads and an event
    for the UI, the event just before or just after its item. An event pairs
    with the latest unpaired item before it, else with the next item (unless
    another such event comes first: then it stays unpaired). At most one item
    or one event waits at a time; what waits is the caller's token. O(1) a call.
    """

    def __init__(self) -> None:
        self.item: Any = None  # the latest unpaired item, waiting for its event
        self.event: Any = None  # an unpaired event, waiting for the next item

    def on_event(self, token: Any) -> bool:
        """Return whether the event pairs with the item waiting before it; if not, it waits
        (as ``token``, not ``None``) for the next item, and an event that waited before stays unpaired."""
        if self.item is not None:
            self.item = None
            return True
        self.event = token
        return False

    def on_item(self, token: Any) -> tuple[Any, Any]:
        """Return the token of the waiting event this item pairs with (else ``None``) and the token of
        the item that waited before it and now stays unpaired (else ``None``); an unpaired item waits as ``token``."""
        if self.event is not None:
            event, self.event = self.event, None
            return event, None
        left, self.item = self.item, token
        return None, left


def _typed_user(p: dict[str, Any]) -> bool:
    return p.get("type") == "message" and p.get("role") == "user" and not context_origin(text_of(p.get("content")))


def _assistant_text(p: dict[str, Any]) -> bool:
    return p.get("type") == "message" and p.get("role") == "assistant"


def _reasoning(p: dict[str, Any]) -> bool:
    return p.get("type") == "reasoning"


# The fields of a UI event that only repeat its item (or are empty): such an event is folded into the item.
_REPEATING = {"type", "message", "text", "images", "local_images", "text_elements", "kind", "phase"}


def _only_repeats(p: dict[str, Any]) -> bool:
    return all(k in _REPEATING and (k in ("type", "message", "text") or not v) for k, v in p.items())


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[Entry | None] = []  # None: an event its item folded (dropped at once, its record freed)
        self.cur = ""
        self.open: MessageEntry | None = None
        self.tool_names: dict[str, str] = {}
        self.notes: list[str] = []
        self.ui = {"user_message": _Pairs(), "agent_message": _Pairs(), "agent_reasoning": _Pairs()}
        self.typed_input = False  # a user_message event was read: the log records what the user typed
        self.untyped: list[MessageEntry] = []  # user messages no event repeats, read before any such event
        self.waiting: dict[str, int] = {}  # event kind -> index of its event kept as an aside until its item comes
        self.rollbacks: list[tuple[CustomEntry, int]] = []  # rollback entries and the turns each undoes
        self.strings: dict[str, str] | None = {}  # one object for each string value asides repeat (share_strings)
        self.taken = 0  # entries before this index were handed over by take() (their slots are None)
        self.open_at = 0  # the index of self.open
        self.user_at = 0  # the index of the user message waiting in self.ui["user_message"]
        self.untyped_at = 0  # the index of self.untyped[0]
        self.model: str | None = None  # the model the latest turn_context names

    def add(self, e: Entry, advance: bool = True) -> Entry:
        self.entries.append(e)
        if advance:
            self.cur = e.id
        return e

    def aside(self, e: CustomEntry) -> None:
        """Add a record that is not a message as an aside hanging off the current entry (it does not advance);
        its kind and the strings of its raw record are shared with the asides before it."""
        assert is_aside(e), e
        if self.strings is not None:  # held until the end: shared (handed over as they settle: no need)
            e.kind = self.strings.setdefault(e.kind, e.kind)
            share_strings(e.data, self.strings)
        self.add(e, advance=False)

    def record(self, lineno: int, obj: dict[str, Any]) -> None:
        t = obj.get("type")
        p = obj.get("payload")
        at = obj.get("timestamp")
        id = f"L{lineno}"
        pt = p.get("type") if isinstance(p, dict) and isinstance(p.get("type"), str) else None
        if t == "response_item" and isinstance(p, dict):
            self.item(id, p, at)
            self.pair_item(p)
        elif t == "event_msg" and pt in self.ui:
            self.ui_event(pt, id, obj, p, at)
        elif t == "compacted" and isinstance(p, dict):
            self.compacted(id, p, at)
        elif t == "event_msg" and pt == "thread_rolled_back":
            self.rollback(id, obj, p, at)
        else:
            if isinstance(p, dict):
                self.note_turn(t, pt, p)
            kind = f"codex.{t if isinstance(t, str) and t else 'record'}"
            kind += f".{pt}" if t == "event_msg" and pt else ""
            self.aside(custom(kind, obj, id, self.cur, at))

    def note_turn(self, t: Any, pt: str | None, p: dict[str, Any]) -> None:
        """Note a ``turn_context``'s model and a ``token_count``'s usage for the replies (see the module)."""
        if t == "turn_context" and isinstance(p.get("model"), str) and p["model"]:
            self.model = intern(p["model"])
        elif pt == "token_count" and self.open is not None and self.open.message.usage is None:
            info = p.get("info")
            usage = int_usage(info.get("last_token_usage")) if isinstance(info, dict) else None
            if usage and "cached_input_tokens" in usage:  # the name durable_nb.cost reads
                usage.setdefault("cache_read_input_tokens", usage["cached_input_tokens"])
            self.open.message.usage = usage

    def ui_event(self, pt: str, id: str, obj: dict[str, Any], p: dict[str, Any], at: Any) -> None:
        """Add a UI event (an aside) unless it only repeats the item it pairs with (see :class:`_Pairs`).
        An event that waits for its item is added now and dropped at :meth:`finish` if the item folds it."""
        if pt == "user_message" and not self.typed_input:
            self.typed_input = True  # from now on a typed user message no event repeats is injected
            for u in self.untyped:
                _inject(u)
            self.untyped.clear()
        e = custom(f"codex.event_msg.{pt}", obj, id, self.cur, at)
        folds = _only_repeats(p)
        if self.ui[pt].on_event(e if folds else True):
            if folds:
                return
        elif folds:  # it waits for its item (an event of its kind that waited before stays)
            self.waiting[pt] = len(self.entries)
        else:
            self.waiting.pop(pt, None)
        self.aside(e)

    def pair_item(self, p: dict[str, Any]) -> None:
        """Pair the response item just added with the UI event that repeats it (see :class:`_Pairs`)."""
        token: Any = True
        at = self.user_at
        if _typed_user(p):
            kind, token = "user_message", self.entries[-1]  # the user message item() just added
            self.user_at = len(self.entries) - 1
        elif _assistant_text(p):
            kind = "agent_message"
        elif _reasoning(p):
            kind = "agent_reasoning"
        else:
            return
        event, left = self.ui[kind].on_item(token)
        if isinstance(event, Entry):  # an event that waited for this item and only repeats it: dropped now
            self.entries[self.waiting.pop(kind)] = None
        if isinstance(left, MessageEntry):
            self.unpaired(left, at)

    def unpaired(self, e: MessageEntry, at: int = 0) -> None:
        """A typed-looking user message no event repeats (at index ``at``): injected, if the log records
        typed input at all."""
        if self.typed_input:
            _inject(e)
        else:
            if not self.untyped:
                self.untyped_at = at
            self.untyped.append(e)

    def settled(self) -> int:
        """Return how many entries from the start nothing read later can change: those before the open
        assistant message, an event waiting for its item, a user message waiting for its event or for
        the first event of any (:meth:`unpaired`). O(1)."""
        k = len(self.entries)
        if self.open is not None:
            k = min(k, self.open_at)
        if self.waiting:
            k = min(k, *self.waiting.values())
        if self.untyped:
            k = min(k, self.untyped_at)
        if isinstance(self.ui["user_message"].item, MessageEntry):
            k = min(k, self.user_at)
        return k

    def take(self, take: Callable[[list[Entry]], None]) -> None:
        """Hand the settled entries not handed over yet to ``take`` and let go of them."""
        k = self.settled()
        if k > self.taken:
            done = [e for e in self.entries[self.taken : k] if e is not None]
            self.entries[self.taken : k] = [None] * (k - self.taken)
            self.taken = k
            take(done)

    def finish(self) -> list[Entry]:
        """Return the entries, each rollback hung where it belongs and the events folded into an
        item that came after them left out."""
        left = self.ui["user_message"].item
        if isinstance(left, MessageEntry):
            self.unpaired(left)
        entries = [e for e in self.entries if e is not None]
        if self.rollbacks:
            self.hang_rollbacks(entries)
        return entries

    def item(self, id: str, p: dict[str, Any], at: Any, injected: str | None = None) -> None:
        t = p["type"]
        if t == "message" and p.get("role") == "assistant" or t in _ASSISTANT_ITEMS:
            blocks = _blocks(p.get("content")) if t == "message" else [_call(p)]
            for b in blocks:
                if isinstance(b, ai.ToolCall):
                    self.tool_names[b.id] = b.name
            if self.open is None or injected:
                meta = ai.Injection.META if injected else None
                model = None if injected else self.model  # a replacement-history copy: made by no reply here
                msg = ai.Message(role="assistant", content=[], injected=meta, origin=injected, model=model)
                self.open = self.add(message(id, self.cur, at, msg))
                self.open_at = len(self.entries) - 1
            self.open.message.content.extend(blocks)
            if injected:
                self.open = None
            return
        self.open = None
        if t == "message":
            role = p.get("role")
            origin = injected
            if role in ("developer", "system"):
                origin = origin or ("codex:developer" if role == "developer" else "codex:system")
            elif role == "user" and not origin:
                origin = context_origin(text_of(p.get("content")))  # "codex:injected" is decided by pair_item
            elif role != "user":
                self.aside(custom("codex.response_item.message", p, id, self.cur, at))
                return
            msg = ai.Message(
                role="user",
                content=_blocks(p.get("content")),
                injected=ai.Injection.META if origin else None,
                origin=origin,
            )
            self.add(message(id, self.cur, at, msg))
        elif t in _OUTPUT_ITEMS:
            cid = need_str(p.get("call_id"), "call_id")
            msg = ai.Message(
                role="tool_result",
                content=_output_blocks(p.get("output")),
                tool_call_id=cid,
                tool_name=self.tool_names.get(cid),
                injected=ai.Injection.META if injected else None,
                origin=injected,
            )
            self.add(message(id, self.cur, at, msg))
        else:
            self.aside(custom(f"codex.response_item.{t}", p, id, self.cur, at))

    def compacted(self, id: str, p: dict[str, Any], at: Any) -> None:
        self.open = None
        history = p.get("replacement_history") if isinstance(p.get("replacement_history"), list) else []
        summary = p.get("message") if isinstance(p.get("message"), str) else ""
        if history:
            texts = [text_of(h.get("content")) for h in history if isinstance(h, dict)]
            if not summary.strip() or any(summary.strip() in t for t in texts):
                summary = REPLACED
        self.add(
            CompactionEntry(id=id, parent_id=self.cur, created_at=at if isinstance(at, str) else "", summary=summary)
        )
        for k, h in enumerate(history):
            if isinstance(h, dict) and h.get("type") in ("message", *_ASSISTANT_ITEMS, *_OUTPUT_ITEMS):
                self.item(f"{id}.r{k}", h, at, injected="codex:replacement_history")
            else:
                self.aside(
                    custom(
                        f"codex.replacement_history.{h.get('type') if isinstance(h, dict) else 'item'}",
                        h if isinstance(h, dict) else {"item": h},
                        f"{id}.r{k}",
                        self.cur,
                        at,
                    )
                )
        self.open = None

    def rollback(self, id: str, obj: dict[str, Any], p: dict[str, Any], at: Any) -> None:
        """Add the rollback entry; what follows continues from it. Where it hangs (before the N-th
        last user turn) is found at :meth:`finish`: whether a user message starts a turn may be
        decided by a later event (see :meth:`unpaired`)."""
        self.open = None
        n = p.get("num_turns") if isinstance(p.get("num_turns"), int) else 0
        e = custom("codex.event_msg.thread_rolled_back", obj, id, self.cur, at)  # parent: where the undo starts
        self.rollbacks.append((e, n))
        self.add(e)

    def hang_rollbacks(self, entries: list[Entry]) -> None:
        """Move each rollback entry (in log order) to before the turns it undoes. O(entries + undone)."""
        by_id = {e.id: e for e in entries}
        for rollback, n in self.rollbacks:
            e = by_id.get(rollback.parent_id)
            found = 0
            target = rollback.parent_id
            while e is not None and found < n:
                if is_turn_start(e):
                    found += 1
                    target = e.parent_id
                e = by_id.get(e.parent_id)
            if found < n:
                self.notes.append(
                    f"{self.path.name}: a rollback of {n} turn(s) found only {found} user turn(s) to undo"
                )
            rollback.parent_id = target


def load(path: Path, records: Iterable[Record]) -> Loaded:
    """Return the rollout's entries; the leaf is the last entry of the chain.

    A record of an unexpected shape raises :class:`~durable_nb.errors.CorruptLog`
    naming file and line. Rollouts written before ``{timestamp, type, payload}``
    lines (a bare header object, then bare items) are read too. One pass: ``records`` may be a
    stream (:class:`~durable_nb.importers.common.Records`); a record is kept only as what it
    becomes (an aside keeps its raw record). O(records) time; memory: the entries.
    """
    r = _Reader(path)
    sid = _read(path, records, r)
    entries = dedupe(r.finish(), r.notes, path.name)
    return Loaded(safe_session_id(sid, path.stem), entries, r.cur, r.notes)


def stream(path: Path, records: Iterable[Record], take: Callable[[list[Entry]], None]) -> Loaded | None:
    """Hand the rollout's entries to ``take`` in log order, each once nothing read later can change
    it (not yet deduplicated: see :class:`~durable_nb.importers.stream.Spool`); return the session
    id and leaf (``entries`` empty), or ``None`` at a rollback (where it hangs is only known at
    the end, from entries already handed over: read the log with :func:`load`). Held at a time:
    what waits to be settled (in a rollout that never records typed input, everything from its
    first typed-looking user message on). Raises as :func:`load`."""
    r = _Reader(path)
    r.strings = None  # each entry is let go of soon after it is read: sharing its strings saves nothing
    sid = _read(path, records, r, take)
    if sid is None:
        return None
    take(r.finish())
    return Loaded(safe_session_id(sid, path.stem), [], r.cur, r.notes)


def _read(
    path: Path, records: Iterable[Record], r: _Reader, take: Callable[[list[Entry]], None] | None = None
) -> str | None:
    """Feed the records to ``r``; with ``take``, hand settled entries over every 512 records and
    stop (returning ``None``) at a rollback. Return the session id the log names (``""``: none)."""
    sid = ""
    early: bool | None = None
    for lineno, obj in records:
        if early is None:  # the first record tells the layout
            early = "payload" not in obj and "type" not in obj
            if early:
                obj = {"type": "session_meta", "payload": obj}
        elif early:
            obj = {"type": "response_item", "payload": obj} if "type" in obj else {"type": "state", "payload": obj}
        guarded(path, lineno, lambda: r.record(lineno, obj))
        p = obj.get("payload")
        if not sid and obj.get("type") == "session_meta" and isinstance(p, dict) and isinstance(p.get("id"), str):
            sid = p["id"]
        if take is not None and not lineno % 512:
            if r.rollbacks:
                return None
            r.take(take)
    if take is not None and r.rollbacks:
        return None
    return sid


def _inject(e: MessageEntry) -> None:
    """Mark a user message Codex wrote itself (no ``user_message`` event repeats it) as injected."""
    e.message.injected = ai.Injection.META
    e.message.origin = "codex:injected"
