"""Reading a conversation's messages from llm's database: the chains ending at some tips, their parts.

:func:`tree` is what :mod:`.llm_sqlite` maps: one recursive query (joined
with the parts) per chunk of tips, each part decoded once (msgspec; lenient
JSON such as ``NaN`` with ``json``), fragment references and attachments
resolved. A row of the wrong shape is one :class:`CorruptLog` line naming
the part and its message. Pure stdlib ``sqlite3`` and msgspec.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from .. import ai
from ..errors import CorruptLog

Part = dict[str, Any] | ai.Text | ai.Thinking
CHUNK = 500  # ids per "in (...)" query (SQLite's variable limit is 999 on old builds)


@dataclass
class Tree:
    """The messages on the chains read, ``{hash: (parent_hash, role, provider_metadata)}`` in ``rowid`` order,
    their parts (``parts``, by hash, in position order): llm's wire dicts, but a plain text or reasoning
    part (text, no payload: the common one) as the block it becomes, so no dict waits for it; and the
    hashes of the messages with a part carrying provider metadata (``part_metadata``)."""

    messages: dict[str, tuple[Any, Any, Any]]
    parts: dict[str, list[Part]]
    part_metadata: set[str]


def tree(db: sqlite3.Connection, path: Path, tips: list[str], scan: bool = False) -> Tree:
    """Return every message on the chains ending at ``tips`` with its parts (:class:`Tree`), parts decoded
    by :func:`_part`, fragment references and attachments resolved.

    ``scan`` (for a conversation holding much of the database) reads the ``messages`` and ``parts`` tables
    whole, in table order, and walks the chains in Python: O(database) rows, but each read in one pass
    with no index lookups. Otherwise one recursive query, joined with the parts, for each chunk of tips
    (a tip already read lies on a chain read, ancestors and all, and is skipped): O(messages in the tree
    + their parts), a few index lookups for each."""
    out = Tree({}, {}, set())
    refs: tuple[set[Any], set[str]] = (set(), set())
    cur = db.cursor()
    cur.row_factory = None  # plain tuples
    if scan:
        _scan(cur, path, tips, out, refs)
    else:
        _walk(cur, path, tips, out, refs)
    _resolve(db, out.parts, *refs)
    return out


_TREE = """with recursive chain(rowid, hash, parent_hash, role, provider_metadata) as (
        select rowid, hash, parent_hash, role, provider_metadata from messages where hash in ({marks})
        union select m.rowid, m.hash, m.parent_hash, m.role, m.provider_metadata
              from messages m join chain on m.hash = chain.parent_hash)
    select c.rowid, c.hash, c.parent_hash, c.role, c.provider_metadata, p.id, p.position, p.type, p.text, p.payload
    from chain c left join parts p on p.message_hash = c.hash order by c.rowid, p.position"""


def _walk(cur: sqlite3.Cursor, path: Path, tips: list[str], out: Tree, refs: tuple[set[Any], set[str]]) -> None:
    rowids: dict[str, int] = {}
    todo = list(dict.fromkeys(tips))
    while todo:
        chunk, todo = todo[:CHUNK], todo[CHUNK:]
        known = set(out.messages)
        rows = cur.execute(_TREE.format(marks=",".join("?" * len(chunk))), chunk)
        for rowid, h, parent_hash, role, provider_metadata, pid, _, ptype, ptext, payload in rows:
            if h in known:
                continue
            if h not in out.messages:
                out.messages[h] = (parent_hash, role, provider_metadata)
                rowids[h] = rowid
            if pid is not None:
                _add(out, path, pid, h, ptype, ptext, payload, refs)
        todo = [t for t in todo if t not in out.messages]
    if list(rowids.values()) != sorted(rowids.values()):  # several chunks read: back in log order
        out.messages = {h: out.messages[h] for h in sorted(rowids, key=rowids.__getitem__)}


def _scan(cur: sqlite3.Cursor, path: Path, tips: list[str], out: Tree, refs: tuple[set[Any], set[str]]) -> None:
    every: dict[str, tuple[Any, Any, Any]] = {}
    roles: dict[Any, Any] = {}  # one object for each role string (a row's text is a new string each time)
    for h, p, role, meta in cur.execute(
        "select hash, parent_hash, role, provider_metadata from messages order by rowid"
    ):
        every[h] = (p, roles.setdefault(role, role), meta)
    mine: set[str] = set()
    for h in tips:
        while h in every and h not in mine:  # a parent_hash cycle ends where it began
            mine.add(h)
            h = every[h][0]
    out.messages = every if len(mine) == len(every) else {h: v for h, v in every.items() if h in mine}
    del every, mine  # out.messages says which messages are read
    rows = cur.execute("select id, message_hash, type, text, payload from parts order by message_hash, position")
    kept = out.messages
    for pid, h, ptype, ptext, payload in rows:
        if h in kept:
            _add(out, path, pid, h, ptype, ptext, payload, refs)


def _add(
    out: Tree, path: Path, pid: Any, h: str, ptype: Any, ptext: Any, payload: Any, refs: tuple[set[Any], set[str]]
) -> None:
    d: Part
    if payload is None and type(ptext) is str and (ptype == "text" or ptype == "reasoning"):  # the common part
        d = ai.Text(ptext) if ptype == "text" else ai.Thinking(ptext)
    elif payload is None and type(ptype) is str and type(ptext) is str:
        d = {"type": ptype, "text": ptext}
    else:
        d = _part(path, pid, h, ptype, ptext, payload, *refs)
        if d.get("provider_metadata"):
            out.part_metadata.add(h)
    out.parts.setdefault(h, []).append(d)


_decode = msgspec.json.decode


def _part(
    path: Path,
    pid: Any,
    mh: str,
    ptype: Any,
    ptext: Any,
    payload: Any,
    fragment_ids: set[int],
    attachment_ids: set[str],
) -> dict[str, Any]:
    """Return one ``parts`` row as llm's wire dict (``type`` and ``text`` put back), noting the fragments and
    attachments it refers to; a row of the wrong shape raises :class:`CorruptLog` naming it."""
    if payload:
        try:
            d = _decode(payload)
        except (msgspec.DecodeError, TypeError):  # lenient JSON (NaN) as json reads it, else one line
            try:
                d = json.loads(payload)
            except (ValueError, TypeError, RecursionError):
                raise _bad(path, pid, mh, "payload is not JSON") from None
        if not isinstance(d, dict):
            raise _bad(path, pid, mh, f"payload is a JSON {type(d).__name__}, not an object")
    else:
        d = {}
    if not isinstance(ptype, str) or not isinstance(ptext, (str, type(None))):
        raise _bad(path, pid, mh, "its type and text must be text")
    d["type"] = ptype
    if ptext is not None:
        d["text"] = ptext
    if _plain(d):
        return d
    refs = d.get("text_ref")
    if refs is not None:
        if not (isinstance(refs, list) and all(isinstance(x, dict) for x in refs)):
            raise _bad(path, pid, mh, "text_ref is not a list of objects")
        fragment_ids.update(p["fragment"] for p in refs if isinstance(p.get("fragment"), (int, str)))
    if "attachment" in d or "attachments" in d:
        if d.get("attachments") is not None and not isinstance(d["attachments"], list):
            raise _bad(path, pid, mh, "attachments is not a list")
        refs = [d["attachment"]] if isinstance(d.get("attachment"), dict) else d.get("attachments") or []
        attachment_ids.update(a["id"] for a in refs if isinstance(a, dict) and isinstance(a.get("id"), str))
    return d


def _plain(d: dict[str, Any]) -> bool:
    """Whether a part dict holds nothing but its ``type`` and ``text`` (no references to resolve)."""
    return len(d) == 1 or (len(d) == 2 and "text" in d)


def _resolve(
    db: sqlite3.Connection, parts: dict[str, list[Part]], fragment_ids: set[int], attachment_ids: set[str]
) -> None:
    """Put the text of fragment references and the rows of attachments into ``parts``, in place."""
    if not fragment_ids and not attachment_ids:
        return
    fragments = _rows(db, "fragments", "id, content", fragment_ids)
    attachments = _rows(db, "attachments", "*", attachment_ids)
    for message_parts in parts.values():
        for d in message_parts:
            if type(d) is not dict or _plain(d):
                continue
            if "text_ref" in d:
                d["text"] = "".join(
                    str(p["literal"] if "literal" in p else (fragments.get(p.get("fragment")) or {}).get("content", ""))
                    for p in d.pop("text_ref")
                )
            if isinstance(d.get("attachment"), dict):
                d["attachment"] = attachments.get(d["attachment"].get("id"), d["attachment"])
            if d.get("attachments"):
                d["attachments"] = [attachments.get(a.get("id"), a) for a in d["attachments"] if isinstance(a, dict)]


def _bad(path: Path, part: Any, message: Any, what: str) -> CorruptLog:
    """Return the one-line error for part ``part`` of message ``message`` (named only when there is one)."""
    return CorruptLog(f"{path}: part {part} of message {message}: {what}")


def _rows(db: sqlite3.Connection, table: str, cols: str, ids: set[Any]) -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for chunk in _chunks(sorted(ids, key=str)):
        marks = ",".join("?" * len(chunk))
        for r in db.execute(f"select {cols} from {table} where id in ({marks})", chunk):
            out[r["id"]] = dict(r)
    return out


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    for i in range(0, len(items), CHUNK):
        yield items[i : i + CHUNK]
