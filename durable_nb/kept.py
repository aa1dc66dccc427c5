"""What is kept per agent so that the next look at its session is fast: the one registry.

    kept_tally(agent, "session", agent.entries())   # counts only what came since the last call
    log_shape(agent).kinds, log_shape(agent).plain  # what the log holds: read once, then its new entries
    kept(agent).prepared, kept(agent).widgets       # the widget's preparation, its open widgets

For each agent (any object that can be weakly referenced), held weakly, one :class:`Kept`: the
running tallies of its whole log and of its active path (``%durable status`` and every widget
share them, so each entry is priced once), the log's :class:`Shape` (its entry types and kind
counts: the open reads it, status, the widget and each turn read what came since), the preparation of its next widget
(:mod:`durable_nb.widget.preparation` makes and takes it) and its open widgets. Nothing else keeps
these. Pure: imports nothing from Jupyter; the widget's objects are held, never imported.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Literal, NamedTuple

from .cost import Tally, tally
from .session import CompactionEntry, Entry, MessageEntry

_MESSAGE, _INJECTED, _ROLE = attrgetter("message"), attrgetter("injected"), attrgetter("role")
Counted = Literal["session", "path"]  # what a running tally counts: the whole log, or a root-first path


class Running(NamedTuple):
    """A running tally: of the first ``n`` entries, the last being ``last_id``."""

    n: int
    last_id: str
    tally: Tally


class Shape(NamedTuple):
    """What the first ``n`` entries of a log hold, the last being ``last_id``: ``types`` (their
    classes), ``injected`` (the ``injected`` values of the message entries' messages) and ``kinds``
    (entry counts by :func:`~durable_nb.session.entry_kind`, in the order each kind first appears).
    What holds for the log holds for any of its paths: a path's entries are among the log's. ``kinds``
    is ``None`` unless every entry is a message entry none injected (then its kind is its role, counted
    at C speed; any other log is counted by :func:`~durable_nb.notebook.render.counts`)."""

    n: int
    last_id: str
    types: frozenset[type]
    injected: frozenset[Any]
    kinds: dict[str, int] | None

    @property
    def messages_only(self) -> bool:
        """Every entry is a :class:`~durable_nb.session.MessageEntry` (``False`` for no entry)."""
        return self.types == {MessageEntry}

    @property
    def plain(self) -> bool:
        """Every entry is a message entry, none injected (meta or ephemeral): the common long log."""
        return self.messages_only and self.injected == {None}

    @property
    def compactions(self) -> bool:
        """Some entry is a :class:`~durable_nb.session.CompactionEntry`."""
        return any(issubclass(t, CompactionEntry) for t in self.types)


def shape_of(entries: Sequence[Entry], before: Shape | None = None) -> Shape:
    """Return the :class:`Shape` of ``entries`` (a log in append order), or with ``before`` (the shape
    of the entries logged before them) of the whole. O(len(entries)), at C speed for message entries
    (a type test per entry for others, and their kinds are not counted)."""
    b = before if before is not None else Shape(0, "", frozenset(), frozenset(), {})  # of no entries
    if not entries:
        return b
    types = set(map(type, entries))
    kinds: dict[str, int] | None = None
    if types == {MessageEntry}:
        messages = list(map(_MESSAGE, entries))
        injected = set(map(_INJECTED, messages))
        if injected == {None}:
            kinds = Counter(map(_ROLE, messages))
    else:
        injected = {e.message.injected for e in entries if isinstance(e, MessageEntry)}
    total = None
    if kinds is not None and b.kinds is not None:
        total = dict(b.kinds)  # the kinds seen before keep their places
        for k, v in kinds.items():
            total[k] = total.get(k, 0) + v
    return Shape(b.n + len(entries), entries[-1].id, b.types | types, b.injected | injected, total)


def log_shape(agent: Any) -> Shape:
    """Return the :class:`Shape` of ``agent``'s whole log (``agent.entries()``) from the one kept for it,
    taking in the entries logged since (a log that no longer extends it is read again), and keep it.
    O(entries logged since the last call); O(n) the first time (the notebook's open)."""
    k = kept(agent)
    s = k.shape
    tail = agent.entries(s.n - 1) if s is not None and s.n else []
    if s is not None and s.n and tail and tail[0].id == s.last_id:
        if len(tail) > 1:
            s = k.shape = shape_of(tail[1:], s)
        return s
    s = k.shape = shape_of(agent.entries())
    return s


def kept_shape(agent: Any, entries: Sequence[Entry]) -> Shape | None:
    """Return the :class:`Shape` kept for ``agent`` when it describes exactly ``entries`` (its whole log
    as just read: as many, the same last id), else ``None``; never reads the log. O(1)."""
    s = kept(agent).shape
    if s is not None and s.n == len(entries) and s.last_id == (entries[-1].id if entries else ""):
        return s
    return None


@dataclass
class Kept:
    """What is kept for one agent: ``tallies`` (:func:`kept_tally`), ``prepared`` (its next
    widget's preparation, or ``None``) and ``widgets`` (its open widgets, held weakly)."""

    tallies: dict[Counted, Running] = field(default_factory=dict)
    shape: Shape | None = None  # of the agent's log (log_shape)
    turns: Any = None  # the timeline's turns of its log (durable_nb.widget.turns.turns_of)
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


def kept_tally(owner: Any, counted: Counted, entries: Sequence[Any], messages_only: bool = False) -> Tally:
    """Return the :func:`~durable_nb.cost.tally` of the messages of the message entries among
    ``entries`` (``counted`` ``"session"``: ``owner``'s whole log; ``"path"``: a root-first path),
    starting from the tally kept for ``owner`` and ``counted`` when ``entries`` extends what it
    counted (same length or longer, same entry at the counted end; recounted otherwise), and keep
    the result. ``messages_only``: the caller knows every entry is a message entry (its log's
    :attr:`Shape.messages_only`). O(entries not counted before); O(len(entries)) the first time.
    """
    n, last, t = kept(owner).tallies.get(counted, Running(0, "", Tally()))
    if not (0 < n <= len(entries) and entries[n - 1].id == last):
        n, t = 0, Tally()
    new = entries[n:] if n else entries
    messages = (
        map(_MESSAGE, new)  # at C speed: a log of message entries only (the common long log)
        if new and (messages_only or set(map(type, new)) == {MessageEntry})
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
    too. O(entries not counted before); the log's :func:`log_shape` says whether all are messages."""
    shape = log_shape(agent)
    t = kept_tally(agent, "session", entries, shape.n == len(entries) and shape.messages_only)
    if entries and agent.depth == len(entries):
        keep_tally(agent, "path", len(entries), agent.leaf_id, t)
    return t
