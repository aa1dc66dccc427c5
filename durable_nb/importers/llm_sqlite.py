"""simonw/llm's SQLite logs (``llm logs path``; llm ≥ 0.32): conversations as a tree of messages.

llm keeps a content-addressed message store: each ``messages`` row is
``(hash, parent_hash, role)``, its content is in ``parts`` (``text``,
``reasoning``, ``tool_call``, ``tool_result``, ``attachment``, by
``position``); a row's hash covers its parent, so two conversations that
share a beginning share those rows and a fork is just a second child. A
``threads`` row (a conversation, the id ``llm -c --cid`` takes) points at
its tip message; ``forked_from`` names the thread a fork came from; a
``turns`` row is one model call (model, tokens, time) and covers the
messages from ``parent_message_hash`` (exclusive) to ``tip_message_hash``.

Opening conversation ``T`` reads the tree its messages belong to: the
chains ending at T's tip, at its turns' tips, and at the tips (and turns) of
the threads forked from T (recursively). Mapping:

- a message → one message entry, id = its hash: roles ``system``,
  ``user``, ``assistant``; a ``tool`` message → one ``tool_result`` entry per
  ``tool_result`` part (ids ``<hash>``, ``<hash>.1``, …, chained);
- parts: ``text`` → :class:`~durable_nb.ai.Text`; ``reasoning`` →
  :class:`~durable_nb.ai.Thinking` (llm's redacted marker, reasoning withheld by the
  provider: a Thinking block saying so);
  ``tool_call`` → :class:`~durable_nb.ai.ToolCall`; ``tool_result`` → the
  result's text (``exception`` → ``is_error``), attachments as images;
  ``attachment`` → an image (data stored in the database) or a text
  placeholder naming its URL or path; text held as fragments is resolved;
- a turn's model and token counts go on the assistant message it produced
  (``model``, ``usage`` ``{"input_tokens", "output_tokens"}``, the keys
  :mod:`durable_nb.cost` reads), its time on the messages it
  added (a message shared by several turns: the earliest);
- provider metadata (signatures, encrypted reasoning) → an aside
  ``llm.provider_metadata`` hanging off its message (raw JSON kept);
- a tool the provider ran itself (a ``server_executed`` call and result in
  a reply) → an aside ``llm.server_tool`` hanging off the reply (its parts);
- each thread → a label (contract A: ``CustomEntry(kind="label")``) named
  by its id, hanging off its tip, so ``%durable branch <thread id>`` works.

The leaf is T's tip. Older llm logs (before 0.32: the ``responses`` /
``conversations`` tables only) are not read: run any ``llm`` ≥ 0.32 command
once; it migrates the schema but keeps old history in the old tables.
Pure stdlib (``sqlite3``, read-only); nothing imports llm.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from sys import intern
from typing import Any, TypeGuard

from .. import ai
from ..errors import CorruptLog, DurableError
from ..session import CustomEntry, Entry, MessageEntry, safe_session_id
from ..session.labels import LABEL_KIND
from . import llm_tree
from .common import Loaded, custom, message
from .llm_tree import Part

SQLITE_MAGIC = b"SQLite format 3\x00"
WITHHELD = "(reasoning withheld by the provider)"  # llm's marker: reasoning happened, no text


@dataclass(frozen=True)
class Conversation:
    """One llm conversation (a ``threads`` row): ``id``, ``name``, ``tip`` (its last message's hash),
    ``forked_from`` (a thread id or ``""``), ``created_at`` (ISO 8601), ``turns`` (model calls
    logged in it) and ``model`` (of its latest turn, or ``""``)."""

    id: str
    name: str
    tip: str
    forked_from: str
    created_at: str
    turns: int
    model: str


def is_sqlite(path: Path) -> bool:
    """Return whether the file at ``path`` starts with SQLite's header (reads 16 bytes)."""
    try:
        with path.open("rb") as f:
            return f.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def connect(path: Path) -> sqlite3.Connection:
    """Return a read-only connection to llm's database at ``path``.

    Raises :class:`DurableError` in one line when it cannot be opened or is
    not an llm ≥ 0.32 log (no ``threads`` / ``messages`` / ``parts`` tables).
    """
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        tables = {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}
    except sqlite3.Error as e:
        raise DurableError(f"{path}: cannot read this SQLite database ({e})") from None
    if not {"threads", "messages", "parts", "turns"} <= tables:
        db.close()
        if "responses" in tables:
            raise DurableError(
                f"{path}: an llm log from before llm 0.32 (no message tree); any llm >= 0.32 command migrates it"
            )
        if "entries" in tables or "sessions" in tables:
            raise DurableError(f"{path}: a durable_nb SQLite store, not a log to import: %durable store sqlite:{path}")
        raise DurableError(f"{path}: a SQLite database, but not llm's log (no threads/messages/parts tables)")
    db.row_factory = sqlite3.Row
    return db


def conversations(path: str | Path) -> list[Conversation]:
    """Return the conversations in llm's database at ``path``, newest first.

    Raises :class:`DurableError` (one line) for a file that is not an llm
    ≥ 0.32 log. One query; O(threads + turns).
    """
    p = Path(path).expanduser()
    db = connect(p)
    try:
        rows = db.execute(
            """select t.id, t.name, t.tip_message_hash, t.forked_from, t.datetime_utc,
                      (select count(*) from turns u where u.thread_id = t.id) as turns,
                      (select u.model from turns u where u.thread_id = t.id order by u.datetime_utc desc limit 1) as model
               from threads t order by t.datetime_utc desc, t.id desc"""
        ).fetchall()
    except sqlite3.Error as e:
        raise CorruptLog(f"{p}: cannot list llm conversations ({e})") from None
    finally:
        db.close()
    return [
        Conversation(
            id=r["id"],
            name=r["name"] or "",
            tip=r["tip_message_hash"] or "",
            forked_from=r["forked_from"] or "",
            created_at=iso(r["datetime_utc"]),
            turns=r["turns"],
            model=r["model"] or "",
        )
        for r in rows
    ]


def iso(t: Any) -> str:
    """Return llm's time text (``2026-12-01 04:22:21.79+00:00`` or ISO with ``T``) as ISO 8601 with ``Z``, else ``""``."""
    if not isinstance(t, str) or len(t) < 19:
        return ""
    t = t[:10] + "T" + t[11:]
    return t[:-6] + "Z" if t.endswith("+00:00") else t


def load(path: Path, conversation_id: str) -> Loaded:
    """Return the entries of conversation ``conversation_id`` (its tree, forks included), leaf at its tip.

    Raises :class:`DurableError` naming the nearest ids for an unknown
    conversation, :class:`CorruptLog` for rows of an unexpected shape (a
    part whose JSON does not parse, a dangling parent is only a new root).
    Cost: O(messages in the tree + their parts), a few queries.
    """
    db = connect(path)
    try:
        return _load(db, path, conversation_id)
    except sqlite3.Error as e:
        raise CorruptLog(f"{path}: cannot read llm conversation {conversation_id!r} ({e})") from None
    finally:
        db.close()


def _load(db: sqlite3.Connection, path: Path, cid: str) -> Loaded:
    threads = {r["id"]: r for r in db.execute("select * from threads")}
    if cid not in threads:
        near = sorted(threads, key=lambda t: threads[t]["datetime_utc"] or "", reverse=True)[:3]
        hint = f" (newest: {', '.join(near)})" if near else " (it holds none)"
        raise DurableError(f"{path}: no llm conversation {cid!r}{hint}")
    family = _family(threads, cid)
    cur = db.cursor()
    cur.row_factory = None  # plain tuples
    turns = [_Turn(*r) for t in family for r in cur.execute(_TURNS, [t])]
    tips = [threads[t]["tip_message_hash"] for t in family] + [r.tip for r in turns]
    everything = db.execute("select count(*) from turns").fetchone()[0]
    turns.sort(key=lambda r: r.time or "")
    for turn in turns:
        turn.time = None  # only for the order
    tree = llm_tree.tree(db, path, [t for t in tips if t], scan=len(turns) * 2 >= everything)
    del tips
    times, produced = _turn_times(tree.messages, turns)
    for turn in turns:
        turn.tip = turn.parent = None  # what the messages still read is the model and usage
    del turns
    entries: list[Entry] = []
    last_of: dict[str, str] = {}  # message hash -> the entry its children continue from
    no_parts: list[Part] = []
    h = ""
    try:
        for h in list(tree.messages):
            parent_hash, role, provider_metadata = tree.messages.pop(h)  # its row goes as its entries come
            at = times.get(h) or ""
            parts = tree.parts.pop(h, no_parts)  # the dicts go as their entries come
            made = _entries(h, last_of.get(parent_hash or "", ""), at, role, parts, produced.get(h))
            entries.extend(made)
            last_of[h] = made[-1].id
            if provider_metadata or h in tree.part_metadata:
                meta = {"message": _json(provider_metadata)} if provider_metadata else {}
                meta.update({f"part {i}": m for i, m in _part_metadata(parts)})
                if meta:
                    entries.append(custom("llm.provider_metadata", meta, f"{h}.meta", made[0].id, at))
            if made[0].message.role != "tool_result" and any(_server(d) for d in parts):
                server = [_raw(d) for d in parts if _server(d)]
                entries.append(custom("llm.server_tool", {"parts": server}, f"{h}.server", made[0].id, at))
    except DurableError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as e:
        raise _unexpected(path, h, e) from None
    tip = threads[cid]["tip_message_hash"] or ""
    for t in family:
        target = last_of.get(threads[t]["tip_message_hash"] or "")
        if target:
            at = iso(threads[t]["datetime_utc"])
            entries.append(
                CustomEntry(
                    id=f"thread:{t}",
                    parent_id=target,
                    created_at=at,
                    kind=LABEL_KIND,
                    data={"name": t, "target_id": target},
                )
            )
    notes = []
    if len(family) > 1:
        notes.append(f"{path.name}: conversation {cid} with {len(family) - 1} fork(s): {', '.join(family[1:])}")
    return Loaded(safe_session_id(cid), entries, last_of.get(tip) or None, notes)


def _unexpected(path: Path, h: str, e: Exception) -> CorruptLog:
    """Return the one line for a row of an unexpected shape (a wrong type, bad base64) in message ``h``."""
    why = "nested too deeply" if isinstance(e, RecursionError) else f"{type(e).__name__}: {e}"
    return CorruptLog(f"{path}: message {h}: unexpected row shape ({why})")


def _family(threads: dict[str, sqlite3.Row], cid: str) -> list[str]:
    """Return ``cid`` and the threads forked from it, recursively (breadth first)."""
    out, todo = [cid], [cid]
    while todo:
        cur = todo.pop(0)
        for t, r in threads.items():
            if r["forked_from"] == cur and t not in out:
                out.append(t)
                todo.append(t)
    return out


_TURNS = """select datetime_utc, tip_message_hash, parent_message_hash, resolved_model, model, input_tokens,
    output_tokens from turns where thread_id = ? order by datetime_utc"""


class _Turn:
    """What a ``turns`` row (:data:`_TURNS`) gives its messages: ``time`` (as stored) and ``at`` (ISO),
    ``tip``, ``parent`` (hashes), ``model`` (resolved, else asked) and ``usage`` (its integer token counts)."""

    __slots__ = ("time", "at", "tip", "parent", "model", "usage")

    def __init__(self, time: Any, tip: Any, parent: Any, resolved: Any, model: Any, inp: Any, out: Any) -> None:
        self.time, self.tip, self.parent = time, tip, parent
        self.at = iso(time)
        model = resolved or model
        self.model = intern(model) if type(model) is str else model
        self.usage = _usage(inp, out)


def _usage(inp: Any, out: Any) -> tuple[tuple[str, int], ...]:
    """Return a turn's integer token counts as ``(name, count)`` pairs, under the names
    :mod:`durable_nb.cost` reads."""
    if isinstance(inp, int) and isinstance(out, int):
        return (("input_tokens", inp), ("output_tokens", out))
    return tuple((c, v) for c, v in (("input_tokens", inp), ("output_tokens", out)) if isinstance(v, int))


def _turn_times(rows: dict[str, tuple[Any, Any, Any]], turns: list[_Turn]) -> tuple[dict[str, str], dict[str, _Turn]]:
    """Return each message's time (the earliest turn whose chain holds it) and, for the messages a
    turn produced (after its ``parent_message_hash``), that turn. O(messages + turns)."""
    times: dict[str, str] = {}
    produced: dict[str, _Turn] = {}
    for t in turns:
        at, h, parent = t.at, t.tip, t.parent
        own = True
        walked: set[str] = set()  # a parent_hash cycle (a hostile or damaged database) ends the walk
        while h and h in rows and h not in walked:
            walked.add(h)
            if h == parent:
                own = False
            if own:
                produced.setdefault(h, t)
            if h in times:
                if not own:
                    break
            else:
                times[h] = at
            h = rows[h][0]
    return times, produced


def _json(s: Any) -> Any:
    try:
        return json.loads(s) if isinstance(s, str) else s
    except ValueError:
        return s


def _part_metadata(parts: list[Part]) -> Iterator[tuple[int, Any]]:
    for i, d in enumerate(parts):
        if type(d) is dict and d.get("provider_metadata"):
            yield i, d["provider_metadata"]


def _attachment(a: Any) -> ai.Block:
    """Return an attachment row (``type``, ``content`` bytes, ``url``, ``path``) as an image or a placeholder."""
    if not isinstance(a, dict):
        return ai.Text("[attachment: not stored in the log]")
    mime: str = a["type"] if isinstance(a.get("type"), str) else ""
    content = a.get("content")
    if isinstance(content, str):  # the wire form: base64
        content = base64.b64decode(content, validate=False)
    if isinstance(content, bytes) and content and mime.startswith("image/"):
        return ai.Image(content, mime)
    if isinstance(content, bytes) and content and mime.startswith("text/"):
        return ai.Text(content.decode("utf-8", "replace"))
    where = a.get("url") or a.get("path") or "content stored in llm's database"
    return ai.Text(f"[attachment {mime or 'file'}: {where}]")


def _server(d: Part) -> TypeGuard[dict[str, Any]]:
    """Whether a part is a tool call or result the provider ran itself (``server_executed``: a web search)."""
    return type(d) is dict and bool(d.get("server_executed"))


def _raw(d: dict[str, Any]) -> dict[str, Any]:
    """Return a part as llm's wire dict, attachments' bytes as base64 (JSON an entry can hold)."""
    if not d.get("attachments"):
        return d
    atts = [{k: base64.b64encode(v).decode() if isinstance(v, bytes) else v for k, v in a.items()}
            if isinstance(a, dict) else a for a in d["attachments"]]  # fmt: skip
    return {**d, "attachments": atts}


def _block(d: Part) -> ai.Block:
    if type(d) is not dict:  # a plain text or reasoning part, read as its block
        return d  # type: ignore[return-value]
    t = d["type"]
    if t == "text":
        return ai.Text(str(d.get("text") or ""))
    if t == "reasoning":
        text = str(d.get("text") or "")
        return ai.Thinking(WITHHELD if d.get("redacted") and not text else text)
    if t == "tool_call":
        args = d.get("arguments")
        return ai.ToolCall(
            str(d.get("tool_call_id") or f"call_{d.get('name')}"),
            str(d.get("name") or "tool"),
            args if isinstance(args, dict) else {"arguments": args},
        )
    if t == "attachment":
        return _attachment(d.get("attachment"))
    return ai.Text(f"[{t} part]")


def _entries(h: str, parent: str, at: str, role: str, parts: list[Part], turn: _Turn | None) -> list[MessageEntry]:
    """Return the entries of one llm message: one, or one per tool result (chained)."""
    results = [d for d in parts if type(d) is dict and d["type"] == "tool_result"]
    if role == "tool" or (results and not all(map(_server, results))):
        out: list[MessageEntry] = []
        for i, d in enumerate(results or [{"type": "tool_result", "output": ""}]):
            content: list[ai.Block] = [ai.Text(str(d.get("output") or ""))]
            content += [_attachment(a) for a in d.get("attachments") or []]
            if d.get("exception"):
                content.append(ai.Text(f"Exception: {d['exception']}"))
            if i == len(results) - 1:
                content += [_block(o) for o in parts if type(o) is not dict or o["type"] != "tool_result"]
            msg = ai.Message(
                role="tool_result",
                content=content,
                tool_call_id=str(d.get("tool_call_id") or f"call_{d.get('name')}"),
                tool_name=d.get("name") if isinstance(d.get("name"), str) else None,
                is_error=bool(d.get("exception")),
            )
            out.append(message(h if i == 0 else f"{h}.{i}", out[-1].id if out else parent, at, msg))
        return out
    r = role if role in ("system", "user", "assistant") else "user"
    usage = None
    model = None
    if turn is not None and r == "assistant":
        model = turn.model
        usage = dict(turn.usage)
    msg = ai.Message(
        role=r,  # type: ignore[arg-type]
        content=[_block(d) for d in parts if not _server(d)],  # a server-run tool: an aside (see _load)
        model=model or None,
        usage=usage or None,
        origin=None if r == role else f"llm:{role}",
    )
    return [message(h, parent, at, msg)]


class ChooseConversation(DurableError):
    """Raised by :func:`~durable_nb.importers.open_session` for llm's database given without a
    conversation id while it holds several: ``conversations`` lists them (newest first); the
    message (one line) names the newest."""

    def __init__(self, path: Path, found: list[Conversation]) -> None:
        self.path = path
        self.conversations = found
        shown = "; ".join(f"{c.id} {c.name[:30]!r}" for c in found[:3])
        super().__init__(
            f"{path} holds {len(found)} llm conversations: name one (open_session(path, id) or "
            f"%durable open {path.name} ID): {shown}{'; ...' if len(found) > 3 else ''}"
        )
