"""Rows of the SQL stores decoded into entries and search hits (one rule for SQLite and PostgreSQL).

A row is ``(entry id, JSON text)`` as the store keeps it; a row that is not
the JSON text of an entry raises :class:`~durable_nb.errors.CorruptLog`
naming the store's session and the entry.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .codec import decode, decode_lines
from .entry import Entry
from .search import Hit, matches, search_text, snippet, words


def hits_of(rows: Sequence[tuple[str, str, str]], query: str, where: str) -> list[Hit]:
    """Return the :class:`Hit` of each ``(session id, entry id, JSON text)`` row a SQL search found
    whose text matches ``query`` by the rule of :mod:`.search` (an index may find more), its snippet
    cut around ``query``'s words; ``where`` names the store in a decode error. O(size of the rows)."""
    qw = words(query)
    out = []
    for sid, eid, body in rows:
        (e,) = decode_rows([(eid, body)], f"{where} session {sid!r}")
        text = search_text(e)
        if matches(qw, text):
            out.append(Hit(sid, eid, e.created_at, snippet(text, qw)))
    return out


def decode_rows(rows: Sequence[tuple[str, str]], where: str) -> list[Entry]:
    """Return the entries of ``(entry id, JSON text)`` rows, in order.

    One msgspec pass over all of them when they are in the strict layout;
    else each is decoded on its own (:func:`~durable_nb.session.codec.decode`),
    and one that does not decode raises :class:`~durable_nb.errors.CorruptLog`
    naming ``where`` and the entry id. O(size).
    """
    from ..errors import CorruptLog
    from .codec import DecodeError

    if not rows:
        return []
    if all(type(body) is str for _, body in rows):
        entries = decode_lines("\n".join(body for _, body in rows).encode("utf-8", "surrogatepass"))
        if entries is not None and len(entries) == len(rows):
            return entries
    out = []
    for eid, body in rows:
        if type(body) is not str:
            raise CorruptLog(f"{where}: entry {eid!r} is not JSON text (a {type(body).__name__} in its row)")
        try:
            out.append(decode(json.loads(body)))
        except RecursionError:
            raise CorruptLog(f"{where}: entry {eid!r} does not decode (JSON nested too deeply)") from None
        except (ValueError, DecodeError) as e:
            raise CorruptLog(f"{where}: entry {eid!r} does not decode ({e})") from None
    return out
