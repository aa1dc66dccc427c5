"""The views the page shows: at any entry (:func:`views_at`), and kept up to date at the leaf.

    views, error = views_at(agent.path(at), at, False, VIEW_LIMIT)   # O(depth of at) + O(limit)
    f = Followed(agent); f.move(new); f.views(limit, memo)          # the leaf's: O(new entries + limit)

A ``views`` value (declared in :mod:`durable_nb.widget.protocol` as ``Views``) holds each view's
last ``limit`` items within about ``limit * CHARS_PER_ITEM`` characters of JSON, the totals, the
full entry at ``at`` and the path's cost. :class:`PathState` is what following a leaf starts from
(computed on the agent's thread, also ahead of time by :mod:`~durable_nb.widget.preparation`).
"""

from __future__ import annotations

import json
from typing import Any

from ..cost import Tally, format_tally, tally
from ..errors import DurableError
from ..kept import Shape, keep_tally, kept_tally, log_shape
from ..session import (
    CompactionEntry,
    Entry,
    MessageEntry,
    ViewBuilder,
    codec,
    elided_count,
    model_view,
    transcript_view,
    view_builder,
)
from ..session.compact import untrack
from ..session.kinds import bookkeeping
from .encoding import elide_blobs, entry_title, view_entry, view_message
from .tree import leaf_shown

VIEW_LIMIT = 100  # messages per view sent at first ("show earlier" asks for 4x more)
CHARS_PER_ITEM = 500  # a view's JSON budget is this times view_limit (at least one item is sent)


def _last_within(items: list, encode: Any, limit: int) -> list[dict[str, Any]]:
    """Return the encoded last items of ``items``: at most ``limit`` of them and about
    ``limit * CHARS_PER_ITEM`` characters of JSON (always at least one). ``encode(x)``
    returns ``(dict, its JSON size)``. O(limit)."""
    budget = limit * CHARS_PER_ITEM
    out: list[dict[str, Any]] = []
    size = 0
    for x in reversed(items[-limit:]):
        d, n = encode(x)
        size += n
        if out and size > budget:
            break
        out.append(d)
    out.reverse()
    return out


def _sized(encode: Any, memo: dict | None, kind: str) -> Any:
    """Return ``x -> (encode(x), its JSON size)``, remembered in ``memo`` by object when given
    (the memo keeps each object alive, so its ``id`` is not reused while the memo lives)."""

    def sized(x: Any) -> tuple[dict[str, Any], int]:
        key = (kind, id(x))
        if memo is not None and key in memo:
            return memo[key][1]
        d = encode(x)
        pair = (d, len(json.dumps(d, ensure_ascii=False)))
        if memo is not None:
            memo[key] = (x, pair)
        return pair

    return sized


def views_at(
    path: list[Entry], at: str, following_leaf: bool, limit: int, session_id: str = "", memo: dict | None = None
) -> tuple[dict[str, Any], str]:
    """Return the ``views`` value at entry ``at`` (``path`` is its root-to-``at`` path) and an
    error (``""``, or why ``at`` is unknown: it is not empty but ``path`` is).

    Keys: ``at``, ``following_leaf``, ``depth``, ``model`` and ``transcript``
    (each view's last ``limit`` items within about ``limit * CHARS_PER_ITEM``
    characters), ``model_total`` and ``transcript_total`` (how many there
    are), ``entry`` (the full entry at ``at``, blobs elided, or ``None``) and ``title``
    (its details' heading, :func:`~durable_nb.widget.encoding.entry_title`),
    ``cost`` (tokens and cost of the replies on the path, :func:`cost_text`).
    Pass one ``memo`` dict to many calls over one session to encode each item
    once: the calls then return the same dict object for the same item.
    O(len(path)) + O(limit).
    """
    error = f"no entry {at!r} in session {session_id!r}" if at and not path else ""
    source = {id(e.message): e.id for e in path if isinstance(e, MessageEntry)}
    model = model_view(path)
    transcript = transcript_view(path)
    last = path[-1] if path else None
    views = _views(
        at, following_leaf, len(path), model, len(model), transcript, len(transcript), last, source, limit, memo
    )
    views["cost"] = cost_text(tally(e.message for e in path if isinstance(e, MessageEntry)))
    return views, error


def at_shown_leaf(views: dict[str, Any], agent: Any) -> dict[str, Any]:
    """Return the ``views`` at the leaf as the page shows them: when the leaf is a bookkeeping entry (a label
    appended at it), at the entry the leaf badge is on instead (``at``, ``entry``, ``title``, ``depth``); its
    views are the same (a label is never sent nor read). O(1), or O(labels at the leaf)."""
    entry = views.get("entry") or {}
    if entry.get("type") != "custom":
        return views
    at = leaf_shown(agent)
    if not at or at == views.get("at"):
        return views
    e = agent.entry(at)
    steps = len(agent.path(views["at"])) - len(agent.path(at)) if views.get("at") else 0
    return {
        **views,
        "at": at,
        "entry": elide_blobs(codec.encode(e)),
        "title": entry_title(e),
        "depth": views["depth"] - steps,
    }


def cost_text(t: Tally) -> str:
    """Return :func:`~durable_nb.cost.format_tally` of ``t``, or ``""`` when it counts no reply."""
    return format_tally(t) if t.priced or t.unpriced else ""


def _views(
    at: str,
    following_leaf: bool,
    depth: int,
    model: list,
    model_total: int,
    transcript: list,
    transcript_total: int,
    last: Entry | None,
    source: dict[int, str],
    limit: int,
    memo: dict | None,
) -> dict[str, Any]:
    """Return a ``views`` value (see :func:`views_at`) from the views' last items (``model`` and
    ``transcript`` may hold just their tails) and totals. O(limit)."""
    limit = max(1, limit)
    return {
        "at": at,
        "following_leaf": following_leaf,
        "depth": depth,
        "model": _last_within(model, _sized(lambda m: view_message(m, source.get(id(m), "")), memo, "m"), limit),
        "model_total": model_total,
        "transcript": _last_within(transcript, _sized(view_entry, memo, "t"), limit),
        "transcript_total": transcript_total,
        "entry": elide_blobs(codec.encode(last)) if last is not None else None,
        "title": entry_title(last) if last is not None else "",
    }


class PathState:
    """What following a leaf starts from: its path and the path's model view, transcript view,
    elided count and tally, each the widget's own (copies). O(depth)."""

    def __init__(self, agent: Any, later: bool = False, shape: Shape | None = None) -> None:
        """The state at ``agent``'s leaf, from the agent's kept active path and view (copies, at C
        speed; built first if the agent has not yet: O(depth) then, as a first turn would) and the
        path's :func:`~durable_nb.kept.kept_tally`. Call it on the agent's own thread. O(depth).
        ``later``: leave the tally, the transcript, the elided count and the model view's builder
        when the agent does not hold it built (O(depth) in Python) to :meth:`finish`, which reads the
        path copy (any thread: what a preparation does in the background); ``shape``: the log's
        :class:`~durable_nb.kept.Shape` then, if the caller holds it (else each is found from the path)."""
        path = agent.path()
        self.leaf, self.path = agent.leaf_id, path
        self.shape = shape if later else log_shape(agent)  # the log's holds for the path (its entries are the log's)
        kept = agent.view_builder_if_built() if later else agent.view_builder()  # the agent's, when it holds it
        self._build = kept is None  # the builder is made from the path copy in finish()
        self.builder: ViewBuilder = kept if kept is not None else ViewBuilder()
        self.cost = Tally()
        self.transcript: list[Entry] = []
        self.elided = 0
        if not later:
            self.finish(agent)

    def finish(self, agent: Any) -> None:
        """Compute the path's tally (:func:`~durable_nb.kept.kept_tally`: kept, checked when read),
        transcript view and elided count (and the builder, for ``later`` when the agent did not hold
        it: from the path copy, not the agent's cache). O(depth), or O(new entries) for a tally kept
        before; a list copy for the transcript and O(1) for the elided count of a log of plain
        messages (the log's :class:`~durable_nb.kept.Shape`: none injected, no compaction)."""
        if self._build:
            self.builder = view_builder(self.path)
        shape = self.shape
        self.cost = kept_tally(agent, "path", self.path, shape is not None and shape.messages_only)
        self.transcript = transcript_view(self.path, shape is not None and shape.plain)
        self.elided = elided_count(self.path) if shape is None or shape.compactions else 0


def past_fork(old: list[Entry], new: list[Entry]) -> list[str]:
    """Return the ids of either root-first path past where the two fork (what the switch from
    ``old`` to ``new`` moves on or off the active path). O(log depth + the entries returned)."""
    lo, hi = 0, min(len(old), len(new))  # equal up to the fork, apart after it
    while lo < hi:
        mid = (lo + hi) // 2
        if old[mid].id == new[mid].id:
            lo = mid + 1
        else:
            hi = mid
    return [e.id for e in old[lo:]] + [e.id for e in new[lo:]]


class Followed:
    """The views of the active path, kept up to date as it grows (what the widget shows
    while following the leaf): O(new entries) per extension, O(depth) to start over."""

    def __init__(self, agent: Any, start: PathState | None = None) -> None:
        self.agent = agent
        self.reset(start)

    def reset(self, start: PathState | None = None) -> None:
        """Start over from the agent's active path (or from ``start``, a state computed for one of
        the agent's leaves: :meth:`move` then follows the agent). O(depth)."""
        st = start if start is not None else PathState(self.agent)
        path = st.path
        self.leaf = st.leaf
        self.builder: ViewBuilder = st.builder
        self.transcript: list[Entry] = st.transcript
        self.path = path
        if untrack is not None:  # out of the collector's walks, as the agent's path and view (session/compact.py)
            for held in (path, self.transcript, self.builder.out):
                untrack(held)
        # message -> entry id, for the messages the views show: filled backwards from the end as far as
        # the last view_limit message entries reach (never the whole path), plus the system prompt's entry
        self.source: dict[int, str] = {}
        self._covered = len(path)  # self.source holds path[_covered:]
        self._counted = 0  # non-system message entries in it
        system = self.builder.system
        if system is not None:
            self.source[id(system)] = next(
                (e.id for e in path if isinstance(e, MessageEntry) and e.message is system), ""
            )
        self.depth = len(path)
        self.last: Entry | None = path[-1] if path else None
        self.elided = st.elided
        self.elided_ids = frozenset(e.id for e in path[: self.elided])  # what its latest compaction elides
        self.cost = st.cost

    def move(self, new: int) -> bool:
        """Follow the agent's leaf; ``new``: how many entries were appended since the last call.
        Return True when the new leaf continues the old one's path (the old active path is still
        active), False when the views started over. O(new entries), or O(depth) to start over."""
        leaf = self.agent.leaf_id
        if leaf == self.leaf:
            return True
        chain: list[Entry] = []
        cur = leaf
        while cur != self.leaf and len(chain) <= new:
            try:
                e = self.agent.entry(cur)
            except DurableError:
                break
            chain.append(e)
            cur = e.parent_id
            if not cur and self.leaf:
                break
        if cur != self.leaf or any(isinstance(e, CompactionEntry) for e in chain):
            self.reset()
            return False
        chain.reverse()
        self.cost = tally((e.message for e in chain if isinstance(e, MessageEntry)), self.cost)
        for e in chain:
            if isinstance(e, MessageEntry):
                self.builder.add(e.message)
                self.source[id(e.message)] = e.id
                self._counted += e.message.role != "system"
                if e.message.injected is None:
                    self.transcript.append(e)
            elif not bookkeeping(e):  # a label is a chip, never a transcript line (transcript_view's rule)
                self.transcript.append(e)
        self.path.extend(chain)
        self.depth += len(chain)
        self.last = chain[-1]
        self.leaf = leaf
        keep_tally(self.agent, "path", self.depth, leaf, self.cost)
        return True

    def _cover(self, limit: int) -> None:
        """Extend :attr:`source` backwards until it holds the last ``limit`` non-system message entries
        (the view's last ``limit`` items come from them, or are synthesized). O(entries added)."""
        path, source = self.path, self.source
        while self._counted < limit and self._covered > 0:
            self._covered -= 1
            e = path[self._covered]
            if isinstance(e, MessageEntry):
                source[id(e.message)] = e.id
                self._counted += e.message.role != "system"

    def views(self, limit: int, memo: dict | None) -> dict[str, Any]:
        """Return the ``views`` value at the leaf (:func:`views_at`'s, from the kept state). O(limit)."""
        limit = max(1, limit)
        self._cover(limit)
        b = self.builder
        out = b.out
        cut = b.at if b.pending and b.at >= 0 else len(out)
        start = max(0, cut - limit)
        tail = ViewBuilder()  # the view's end only: repairing a dangling call never copies the whole path
        tail.out, tail.pending, tail.at = out[start:], b.pending, (b.at - start if b.at >= 0 else -1)
        body = tail.body()[-limit:]
        total = len(out) + len(b.pending)
        model: list = body
        if b.system is not None:
            total += 1
            if start == 0 and len(body) < limit:
                model = [b.system, *body]
        tr = self.transcript
        views = _views(
            self.leaf, True, self.depth, model, total, tr[-limit:], len(tr), self.last, self.source, limit, memo
        )
        views["cost"] = cost_text(self.cost)
        return views
