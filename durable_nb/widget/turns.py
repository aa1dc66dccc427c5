"""The timeline's turns: kept per agent, taken in as entries are appended, their bars kept between asks.

    turns_of(agent)                      # the agent's Turns (kept: shared by its widgets, made once)
    timeline(agent, buckets, turns)      # every turn in time order, grouped into at most ``buckets`` bars
    ahead(turns, log, pause)             # a preparation's thread: the turns of the log it copied

#32: the page asks for the whole timeline once after ``%durable show``, and that request built the
turns of the whole log on the kernel's shell (1.1 s CPU at 300k entries, a cell run right after the
show waited for it); each later request sorted every turn again and rebuilt every bar (0.13 s at
300k). Now the turns are kept per agent (:func:`durable_nb.kept.kept`), built in the widget's
preparation thread with the rest of the first look (:mod:`~durable_nb.widget.preparation`), kept in
time order as they come (a new turn is appended, or inserted when its clock is behind) and the bars
are rebuilt only from the first one a change touches (a new turn, a reply's cost, a leaf move along
the path); the reply stays the same. Pure: no Jupyter.
"""

from __future__ import annotations

import math
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from ..cost import message_cost, tokens
from ..errors import DurableError
from ..kept import kept
from ..session import Entry, MessageEntry, is_turn_start
from ..session.rules import created_key

MAX_BUCKETS = 240  # bars of the timeline strip (turns are grouped beyond that)
AHEAD_CHUNK = 4096  # entries a preparation's thread takes in between pauses (the lock is free between)
_NAN = math.nan
WALK_MAX = 4096  # entries walked from a moved leaf to the old one before every bar's "on" is recomputed


class Turns:
    """Every turn of a log (every branch) with its replies' cost and tokens, in time order, extended
    with the entries appended since the last call (a log replaced under it starts over), and the bars
    last built from them. Safe to share between a preparation's thread and the kernel's (``lock``).
    O(new entries) per catch-up; about 100 B an entry (an entry id -> turn number dict, flat arrays a
    turn: 184 B as a dict a turn); the collector walks only its two lists of strings."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._reset()

    def _reset(self) -> None:
        # by turn number (the order turns start in the log): its start's id and created_at (the entries'
        # own strings), its replies' cost (NaN: one is unknown) and tokens; flat arrays, no object a turn
        self.ids: list[str] = []
        self.at: list[str] = []
        self.cost, self.used = array("d"), array("q")
        self.turn_of: dict[str, int] = {}  # entry id -> its turn's number (one int object a turn)
        self.order, self.keys = array("q"), array("d")  # turn numbers by created_key (ties: log order), the keys
        self.seen, self.last = 0, ""
        self.bars: list[dict[str, Any]] = []  # the bars last built
        self.size = self.buckets = 0  # turns per bar, bars asked for, of ``bars``
        self.leaf: str | None = None  # the leaf their ``on`` was read at
        self.dirty = 0  # the first position in ``order`` whose bar changed since

    def catch_up(self, entries: Sequence[Entry], stop: int | None = None) -> Turns:
        """Take in ``entries[seen:stop]`` (``entries``: the whole log; ``stop`` ``None``: its end);
        start over if the log changed. Returns self. O(entries taken in)."""
        with self.lock:
            if self.seen and (len(entries) < self.seen or entries[self.seen - 1].id != self.last):
                self._reset()
            self._take(entries, self.seen, len(entries) if stop is None else min(stop, len(entries)))
            return self

    def follow(self, agent: Any) -> Turns:
        """Take in what ``agent`` logged since (reading only its log's tail; its whole log when it
        changed). Returns self. O(new entries)."""
        with self.lock:
            tail = agent.entries(self.seen - 1) if self.seen else []
            if tail and tail[0].id == self.last:
                self._take(tail, 1, len(tail))
                return self
            return self.catch_up(agent.entries())

    def _take(self, entries: Sequence[Entry], lo: int, hi: int) -> None:
        turn_of, ids, cost, used, built = self.turn_of, self.ids, self.cost, self.used, bool(self.bars)
        for e in entries[lo:hi]:  # parents come before children: a turn is known when its replies come
            if is_turn_start(e):
                turn_of[e.id] = t = len(ids)
                ids.append(e.id)
                self.at.append(e.created_at)
                cost.append(0.0)
                used.append(0)
                self._place(t)
                continue
            of = turn_of.get(e.parent_id) if e.parent_id is not None else None
            if of is None:
                continue
            turn_of[e.id] = t = of
            if isinstance(e, MessageEntry) and e.message.role == "assistant":
                c, u = message_cost(e.message), tokens(e.message)
                cost[t] = _NAN if c is None else cost[t] + float(c)  # NaN stays NaN
                used[t] += sum(u) if u else 0
                if built:
                    self.dirty = min(self.dirty, self._position(t))
        if hi > lo:
            self.seen, self.last = self.seen + hi - lo, entries[hi - 1].id

    def _place(self, t: int) -> None:
        key, keys = created_key(self.at[t]), self.keys
        pos = len(keys) if not keys or key >= keys[-1] else bisect_right(keys, key)
        keys.insert(pos, key)
        self.order.insert(pos, t)
        self.dirty = min(self.dirty, pos)

    def _position(self, t: int) -> int:
        order = self.order
        if order and order[-1] == t:  # a reply to the latest turn: the usual case
            return len(order) - 1
        i = bisect_right(self.keys, created_key(self.at[t])) - 1
        while i >= 0 and order[i] != t:
            i -= 1
        return max(0, i)

    def _moved(self, agent: Any, leaf: str) -> int:
        """The first position whose bar's ``on`` may have changed since the bars were built at
        ``self.leaf``: the turns started on the way between the two leaves when one is an ancestor of
        the other (within :data:`WALK_MAX` entries), else 0 (every bar). O(entries walked)."""
        for low, high in ((self.leaf, leaf), (leaf, self.leaf)):
            walked, at, steps = [], high, 0
            try:
                while at and at != low and steps < WALK_MAX:
                    walked.append(at)
                    at, steps = agent.entry(at).parent_id, steps + 1
            except DurableError:
                return 0
            if at and at == low:
                of, ids = self.turn_of.get, self.ids
                started = [t for x in walked if (t := of(x)) is not None and ids[t] == x]  # turn starts walked
                return min((self._position(t) for t in started), default=len(self.order))
        return 0

    def timeline_bars(self, agent: Any, buckets: int) -> list[dict[str, Any]]:
        """Return the bars of :func:`timeline`: those before the first changed since the last call
        are the same objects. O(bars changed * turns a bar), O(turns) after the grouping doubled or
        the path switched elsewhere."""
        with self.lock:
            order = self.order
            size = 1 << max(0, -(-len(order) // max(1, buckets)) - 1).bit_length()  # the power of two >= n / buckets
            leaf = agent.leaf_id
            start = self.dirty if size == self.size and buckets == self.buckets else 0
            if start and leaf != self.leaf:
                start = min(start, self._moved(agent, leaf))
            out = self.bars[: start // size]
            ids, at, cost, used, on = self.ids, self.at, self.cost, self.used, agent.on_path
            for i in range(len(out) * size, len(order), size):
                group = order[i : i + size]
                first = group[0]
                costs = [cost[t] for t in group]
                total = sum(costs)
                out.append(
                    {
                        "id": ids[first],
                        "at": at[first],
                        "cost": None if total != total else total,  # NaN: a reply's price is unknown
                        "tokens": sum(used[t] for t in group),
                        "n": len(group),
                        "on": any(on(ids[t]) for t in group),
                    }
                )
            self.bars, self.size, self.buckets, self.leaf, self.dirty = out, size, buckets, leaf, len(order)
            return out


def turns_of(agent: Any) -> Turns:
    """Return ``agent``'s kept :class:`Turns` (made empty the first time; shared by its widgets and its
    preparation). O(1)."""
    k = kept(agent)
    if k.turns is None:
        k.turns = Turns()
    return k.turns


def ahead(turns: Turns, log: Sequence[Entry], pause: Callable[[], None]) -> None:
    """Take ``log`` (a copy of an agent's log, in a preparation's thread) into ``turns``, which must
    have seen nothing yet, :data:`AHEAD_CHUNK` entries at a time, calling ``pause()`` before each; stop
    as soon as another caller has taken in entries meanwhile (the kernel's own timeline request: it
    goes on from there). O(len(log))."""
    done = 0
    while done < len(log):
        pause()
        with turns.lock:
            if turns.seen != done:
                return
            turns.catch_up(log, done + AHEAD_CHUNK)
            done = turns.seen


def timeline(agent: Any, buckets: int = MAX_BUCKETS, turns: Turns | None = None) -> dict[str, Any]:
    """Return ``{"total", "turns"}``: every turn of the session (every branch) in time order as
    ``{id, at, cost, tokens, n, on}`` (``cost``: its replies' US dollars, ``None`` when one is unknown;
    ``n``: turns it stands for) — consecutive turns grouped so there are at most ``buckets``; a group
    is named by its first turn. Groups are a power of two turns (from ``buckets / 2`` bars on), so a
    new turn regroups the bars only when the count of turns doubles: the page's timeline delta stays
    a turn's last bar or two. A turn's replies are the entries after its start up to the next turn
    start on their chain. Pass the agent's ``turns`` (:func:`turns_of`) to keep them between calls:
    then O(new entries + the bars they change); without, O(n)."""
    known = turns.follow(agent) if turns is not None else Turns().catch_up(agent.entries())
    with known.lock:
        bars = known.timeline_bars(agent, buckets)
        return {"total": len(known.order), "turns": bars}
