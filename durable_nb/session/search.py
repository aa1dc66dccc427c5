"""Search across a store's sessions: what text an entry is found by, and what a hit is.

The SQL stores index :func:`search_text` (SQLite FTS5, PostgreSQL full-text
search); the memory and JSONL stores scan with :func:`scan`. All of them
match the same way: every word of the query must be a word of the entry's
text, case-insensitively (words are runs of letters, digits and ``_``; no
prefixes, no stemming).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .entry import CustomEntry, Entry
from .view import display_text

_WORD = re.compile(r"\w+")
SNIPPET_CHARS = 120


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the entry ``entry_id`` of session ``session_id``,
    its ``created_at`` and a one-line ``snippet`` of its text around the first match."""

    session_id: str
    entry_id: str
    created_at: str
    snippet: str


def search_text(entry: Entry) -> str:
    """Return the text an entry is found by: :func:`display_text`, and for a
    custom entry its kind followed by its data as JSON (so a note's body is found).

    O(size of the entry)."""
    if isinstance(entry, CustomEntry):
        from .codec import encode

        data = encode(entry).get("data")
        return entry.kind + (" " + json.dumps(data, ensure_ascii=False, default=str) if data else "")
    return display_text(entry)


def words(text: str) -> list[str]:
    """Return the lower-cased words of ``text`` (runs of letters, digits, ``_``)."""
    return _WORD.findall(text.casefold())


def matches(query_words: list[str], text: str) -> bool:
    """True when every word of ``query_words`` is a word of ``text`` (an empty query matches nothing)."""
    if not query_words:
        return False
    have = set(words(text))
    return all(w in have for w in query_words)


def snippet(text: str, query_words: list[str], width: int = SNIPPET_CHARS) -> str:
    """Return one line of ``text`` of at most ``width`` characters around the first query word found."""
    flat = " ".join(text.split())
    low = flat.casefold()
    at = min((i for i in (low.find(w) for w in query_words) if i >= 0), default=0)
    start = max(0, at - width // 3)
    out = flat[start : start + width]
    return ("…" if start else "") + out + ("…" if start + width < len(flat) else "")


def scan(sessions: Iterable[tuple[str, list[Entry]]], query: str, limit: int) -> list[Hit]:
    """Return the hits of ``query`` in ``(session id, entries)`` pairs, in the order given, at most ``limit``.

    The plain search of stores without an index. O(total text)."""
    q = words(query)
    out: list[Hit] = []
    for sid, entries in sessions:
        for e in entries:
            text = search_text(e)
            if matches(q, text):
                out.append(Hit(sid, e.id, e.created_at, snippet(text, q)))
                if len(out) >= limit:
                    return out
    return out
