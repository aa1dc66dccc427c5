"""What is kept per agent so that the next look at its session is fast: the one registry.

    kept_tally(agent, "session", agent.entries())   # counts only what came since the last call
    kept(agent).prepared, kept(agent).widgets       # the widget's preparation, its open widgets

For each agent (any object that can be weakly referenced), held weakly, one :class:`Kept`: the
running tallies of its whole log and of its active path (``%durable status`` and every widget
share them, so each entry is priced once), the preparation of its next widget
(:mod:`durable_nb.widget.preparation` makes and takes it) and its open widgets. Nothing else keeps
these. Pure: imports nothing from Jupyter; the widget's objects are held, never imported.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Literal, NamedTuple

from .cost import Tally, tally
from .session import MessageEntry

_MESSAGE = attrgetter("message")
Counted = Literal["session", "path"]  # what a running tally counts: the whole log, or a root-first path


class Running(NamedTuple):
    """A running tally: of the first ``n`` entries, the last being ``last_id``."""

    n: int
    last_id: str
    tally: Tally


@dataclass
class Kept:
    """What is kept for one agent: ``tallies`` (:func:`kept_tally`), ``prepared`` (its next
    widget's preparation, or ``None``) and ``widgets`` (its open widgets, held weakly)."""

    tallies: dict[Counted, Running] = field(default_factory=dict)
    prepared: Any = None
    widgets: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)


_kept: weakref.WeakKeyDictionary[Any, Kept] = weakref.WeakKeyDictionary()


def kept(owner: Any) -> Kept:
    """Return what is kept for ``owner`` (made empty the first time; held weakly by ``owner``). O(1)."""
    k = _kept.get(owner)
    if k is None:
        k = _kept[owner] = Kept()
    return k


def forget(owner: Any) -> None:
    """Drop everything kept for ``owner``: its next widget computes it all again. O(1)."""
    _kept.pop(owner, None)


def every_widget() -> Iterator[Any]:
    """Yield every registered widget of every agent (closed ones too: check ``comm``). O(widgets)."""
    for k in list(_kept.values()):
        yield from list(k.widgets)


def kept_tally(owner: Any, counted: Counted, entries: Sequence[Any]) -> Tally:
    """Return the :func:`~durable_nb.cost.tally` of the messages of the message entries among
    ``entries`` (``counted`` ``"session"``: ``owner``'s whole log; ``"path"``: a root-first path),
    starting from the tally kept for ``owner`` and ``counted`` when ``entries`` extends what it
    counted (same length or longer, same entry at the counted end; recounted otherwise), and keep
    the result. O(entries not counted before); O(len(entries)) the first time.
    """
    n, last, t = kept(owner).tallies.get(counted, Running(0, "", Tally()))
    if not (0 < n <= len(entries) and entries[n - 1].id == last):
        n, t = 0, Tally()
    new = entries[n:] if n else entries
    messages = (
        map(_MESSAGE, new)  # at C speed: a log of message entries only (the common long log)
        if new and set(map(type, new)) == {MessageEntry}
        else (e.message for e in new if isinstance(e, MessageEntry))
    )
    t = tally(messages, t)
    keep_tally(owner, counted, len(entries), entries[-1].id if entries else "", t)
    return t


def keep_tally(owner: Any, counted: Counted, n: int, last: str, t: Tally) -> None:
    """Keep ``t`` as the tally of ``owner``'s first ``n`` entries of ``counted`` (see
    :func:`kept_tally`), ending with entry id ``last``. O(1)."""
    kept(owner).tallies[counted] = Running(n, last, t)


def session_tally(agent: Any, entries: Sequence[Any]) -> Tally:
    """Return :func:`kept_tally` of ``agent``'s whole log ``entries``; when its active path is the
    whole log (no branch: the depth is the log's length) the path's tally is the same, and is kept
    too. O(entries not counted before)."""
    t = kept_tally(agent, "session", entries)
    if entries and agent.depth == len(entries):
        keep_tally(agent, "path", len(entries), agent.leaf_id, t)
    return t
