"""Search across a store's sessions: what text an entry is found by, and what a hit is.

The SQL stores index the :func:`words` of :func:`search_text` (SQLite FTS5,
PostgreSQL full-text search) and check each hit with :func:`matches`; the
memory and JSONL stores scan with :func:`scan`. All of them match the same
way, by this one rule: every word of the query must be a word of the
entry's text, where words are runs of letters, digits and ``_`` (``\\w``),
case-folded (``ß`` is ``ss``); accents count (``cafe`` does not find
``café``), ``_`` joins (``foo bar`` does not find ``foo_bar``); no prefixes,
no stemming. Why this rule: it is the one three stores and the widget's
find box already followed exactly, and PostgreSQL's index holds its words,
so nothing stored needs re-indexing (folding accents everywhere would).
A combining accent (NFD text) is not a letter, so NFD ``café`` holds the
word ``cafe``. :class:`Finder` applies the same rule to one session's
growing log (the widget's find box).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from .entry import CustomEntry, Entry
from .store import Hit
from .view import display_text

_WORD = re.compile(r"\w+")
SNIPPET_CHARS = 120


def search_text(entry: Entry) -> str:
    """Return the text an entry is found by: :func:`display_text`, and for a
    custom entry its kind followed by its data as JSON (so a note's body is found).

    O(size of the entry)."""
    if isinstance(entry, CustomEntry):
        from .codec import custom_fields

        data = custom_fields(entry)
        return entry.kind + (" " + json.dumps(data, ensure_ascii=False, default=str) if data else "")
    return display_text(entry)


def words(text: str) -> list[str]:
    """Return the lower-cased words of ``text`` (runs of letters, digits, ``_``)."""
    return _WORD.findall(text.casefold())


def matches(query_words: list[str], text: str) -> bool:
    """True when every word of ``query_words`` (as :func:`words` returns them) is a word of ``text``
    (an empty query matches nothing). O(len(text)) per query word."""
    if not query_words:
        return False
    low = text.casefold()
    return all(has_word(low, w) for w in query_words)


def has_word(folded: str, word: str) -> bool:
    """True when ``word`` (one of :func:`words`) is among ``words(folded)``; ``folded`` is case-folded text.

    Found as a substring with no word character (``\\w``) just before or after it:
    the same answer as building the set of words, without building it."""
    i = folded.find(word)
    n = len(word)
    while i >= 0:
        j = i + n
        if (i == 0 or not _WORD.match(folded, i - 1)) and (j == len(folded) or not _WORD.match(folded, j)):
            return True
        i = folded.find(word, i + 1)
    return False


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

    The plain search of stores without an index; ``limit`` 0 or less finds nothing. O(total text)."""
    q = words(query)
    out: list[Hit] = []
    if limit <= 0:
        return out
    for sid, entries in sessions:
        for e in entries:
            text = search_text(e)
            if matches(q, text):
                out.append(Hit(sid, e.id, e.created_at, snippet(text, q)))
                if len(out) >= limit:
                    return out
    return out


class Finder:
    """Find the entries of one growing log whose text holds every word of a query (:func:`matches`).

    ``Finder().find(entries, query)`` returns the matching ids in log order.
    It keeps each entry's case-folded :func:`search_text`, read on the first
    find and extended by the entries appended since (a log that is not an
    extension of the one seen is read again), so a find is one substring
    pass over those texts (a word of the query must at least occur in the
    text) plus the word rule on the few texts that pass. Memory: about the
    size of the log's text.
    """

    __slots__ = ("_ids", "_texts")

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._texts: list[str] = []

    def _catch_up(self, entries: Sequence[Entry]) -> None:
        n = len(self._ids)
        if n > len(entries) or (n and entries[n - 1].id != self._ids[-1]):
            self._ids, self._texts, n = [], [], 0
        for e in entries[n:]:
            self._ids.append(e.id)
            self._texts.append(search_text(e).casefold())

    def find(self, entries: Sequence[Entry], query: str) -> list[str]:
        """Return the ids of ``entries`` (the whole log, in append order) matching ``query``, in that order.

        An empty query (no words) finds nothing. O(new entries' text) to
        catch up, then O(total text) for the substring pass."""
        self._catch_up(entries)
        q = words(query)
        if not q:
            return []
        longest = max(q, key=len)  # the rarest word, likely: most texts fail on it at once
        ids = self._ids
        return [ids[i] for i, t in enumerate(self._texts) if longest in t and all(has_word(t, w) for w in q)]
