"""The widget's flat list, its steps and its timeline, answered in the kernel (never the whole log sent).

    facts(entry), noted(chips, id)       # what a filter or a sort reads of one entry, and of its annotations
    query(agent, layout, chips, q, sort, columns=Columns())  # the matching entries in order, the facets
    step(agent, layout, id, what, dir)   # the next / previous entry, turn, branch point in drawn order
    timeline(agent, buckets)             # the session's turns over time, with each turn's cost

A filter (:data:`FILTER_KEYS`) holds any of ``role``, ``kind``, ``model``, ``tool``, ``tag`` (an
annotation tag: the latest annotation of each author counts), ``error`` (a failed tool result or model
call), ``min_score`` / ``max_score`` (an annotation's score), ``on_path`` (on the active path); all given
must hold. Bookkeeping entries (labels, verdicts, annotations, leaf moves) are never listed: they are
chips on the entries they name. Sorts: ``tree`` (drawn order), ``time`` (``created_at``), ``cost``,
``tokens`` (most first; unknown last). Cost: a query filters :class:`Columns` kept between queries
(O(n) at list speed: about 0.2 s at 300,000 entries, plus O(new entries) to catch up: pricing each
reply once), a timeline O(new entries) (:mod:`~durable_nb.widget.turns`), a step O(lines stepped over); what is sent is bounded (:data:`MAX_ITEMS`, :data:`MAX_BUCKETS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cost import message_cost, tokens
from ..session import CustomEntry, Entry, MessageEntry, entry_kind, is_turn_start
from ..session.kinds import bookkeeping
from ..session.rules import created_key
from .chips import Chips
from .encoding import agent_row
from .layout import START, Layout
from .turns import MAX_BUCKETS, Turns, timeline, turns_of  # noqa: F401 - the timeline's home, importable from here

MAX_ITEMS = 200  # list items one "query" reply carries
TIMELINE_VIEWS = 8  # views of one widget whose last timeline is kept (each asks for its change)
FILTER_KEYS = ("role", "kind", "model", "tool", "tag", "error", "min_score", "max_score", "on_path")
SORTS = ("tree", "time", "cost", "tokens")
STEPS = ("entry", "turn", "branch")


def facts(e: Entry) -> dict[str, Any]:
    """Return what a filter or sort reads of ``e`` itself: ``role``, ``kind`` (:func:`~durable_nb.session.entry_kind`),
    ``model``, ``tools``, ``error``, ``at``, ``cost`` (US dollars, ``None``: unknown or not a reply) and
    ``tokens`` (input + output); its annotations' tags and scores are its chips'. O(size of the entry)."""
    f: dict[str, Any] = {"role": "", "kind": entry_kind(e), "model": "", "tools": [], "error": False}
    f.update(at=e.created_at, cost=None, tokens=0)
    if isinstance(e, MessageEntry):
        m = e.message
        f["role"] = m.role
        f["model"] = m.model or ""
        f["tools"] = [c.name for c in m.tool_calls()] or ([m.tool_name] if m.tool_name else [])
        f["error"] = bool(m.is_error or m.error or m.stop_reason == "error")
        if m.role == "assistant":
            cost = message_cost(m)
            f["cost"] = float(cost) if cost is not None else None
            t = tokens(m)
            f["tokens"] = sum(t) if t else 0
    return f


def noted(chips: Chips, entry_id: str) -> dict[str, Any]:
    """Return ``{"tags", "scores"}`` of the latest annotation of each author on ``entry_id``. O(its chips)."""
    notes = [c for c in chips.on(entry_id) if c.get("kind") == "annotation"]
    tags = sorted({t for c in notes for t in c.get("tags") or ()})
    return {"tags": tags, "scores": [c["score"] for c in notes if isinstance(c.get("score"), (int, float))]}


def check(q: Any) -> dict[str, Any]:
    """Return the filter ``q`` (a dict from the page) with only known keys and sane values; raise
    ``ValueError`` (one line) for a score that is not a number. O(keys)."""
    if not isinstance(q, dict):
        return {}
    out: dict[str, Any] = {}
    for k in ("role", "kind", "model", "tool", "tag"):
        if isinstance(q.get(k), str) and q[k]:
            out[k] = q[k][:200]
    for k in ("error", "on_path"):
        if q.get(k) is True:
            out[k] = True
    for k in ("min_score", "max_score"):
        v = q.get(k)
        if v is None or v == "":
            continue
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"an annotation score filter is a number, not {v!r}") from None
    return out


class Columns:
    """The listed entries' :func:`facts` as columns (one list per field, by position), kept from one
    query to the next and extended with the entries appended since (a log replaced under it starts
    over): a query then filters at list speed. O(new entries) per query; O(n) memory."""

    FIELDS = ("role", "kind", "model", "tools", "error", "at", "cost", "tokens")

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.cols: dict[str, list[Any]] = {k: [] for k in self.FIELDS}
        self.seen, self.last = 0, ""

    def catch_up(self, entries: list[Entry]) -> Columns:
        """Take in ``entries[seen:]`` (``entries``: the whole log); start over if the log changed. Returns self."""
        if self.seen and (len(entries) < self.seen or entries[self.seen - 1].id != self.last):
            self.__init__()  # type: ignore[misc]
        cols = [self.cols[k] for k in self.FIELDS]
        for e in entries[self.seen :]:
            if isinstance(e, CustomEntry) and bookkeeping(e):
                continue  # a chip on its entry, never listed
            f = facts(e)
            self.ids.append(e.id)
            for col, k in zip(cols, self.FIELDS):
                col.append(f[k])
        self.seen, self.last = len(entries), entries[-1].id if entries else ""
        return self


def query(
    agent: Any,
    layout: Layout,
    chips: Chips,
    q: dict[str, Any],
    sort: str,
    start: int = 0,
    columns: Columns | None = None,
) -> dict[str, Any]:
    """Return ``{"total", "start", "items", "facets"}``: the entries passing ``q`` in ``sort`` order, items
    ``start`` on (at most :data:`MAX_ITEMS`) as ``{id, index, drawn, row, chips, on}`` (``index``: the line
    drawing it or its nearest drawn ancestor, ``-1`` if none), and ``facets``: every value of ``role``,
    ``kind``, ``model``, ``tool``, ``tag`` in the session (what the page offers). Pass the widget's
    ``columns`` to keep them between queries. O(n) at list speed, plus O(new entries) to catch up."""
    cols = (columns or Columns()).catch_up(agent.entries())
    c, ids = cols.cols, cols.ids
    keep: Sequence[int] = range(len(ids))
    for k in ("role", "kind", "model"):
        if q.get(k):
            col, want = c[k], q[k]
            keep = [i for i in keep if col[i] == want]
    if q.get("tool"):
        keep = [i for i in keep if q["tool"] in c["tools"][i]]
    if q.get("error"):
        keep = [i for i in keep if c["error"][i]]
    noted = _noted(chips, q)
    if noted is not None:
        keep = [i for i in keep if ids[i] in noted]
    if q.get("on_path"):
        path = {e.id for e in agent.path()}
        keep = [i for i in keep if ids[i] in path]
    hits = _sorted(list(keep), sort, cols, layout)
    start = max(0, start)
    items = [_item(agent, layout, chips, ids[i]) for i in hits[start : start + MAX_ITEMS]]
    tags = sorted(
        {t for _, cs in chips.items() for ch in cs if ch.get("kind") == "annotation" for t in ch.get("tags") or ()}
    )
    facets = {k: sorted(set(c[k]) - {""}) for k in ("role", "kind", "model")}
    facets["tool"] = sorted(set().union(*(t for t in c["tools"] if t))) if ids else []
    facets["tag"] = tags
    return {"total": len(hits), "start": start, "items": items, "facets": facets}


def _noted(chips: Chips, q: dict[str, Any]) -> set[str] | None:
    """The ids whose annotations (the latest of each author) pass ``q``'s tag and score, ``None`` without those."""
    tag, lo, hi = q.get("tag"), q.get("min_score"), q.get("max_score")
    if not tag and lo is None and hi is None:
        return None
    out = set()
    for target, cs in chips.items():
        notes = [ch for ch in cs if ch.get("kind") == "annotation"]
        if tag and not any(tag in (ch.get("tags") or ()) for ch in notes):
            continue
        if lo is not None or hi is not None:
            scores = [ch["score"] for ch in notes if isinstance(ch.get("score"), (int, float))]
            if not any((lo is None or x >= lo) and (hi is None or x <= hi) for x in scores):
                continue
        out.add(target)
    return out


def _sorted(hits: list[int], sort: str, cols: Columns, layout: Layout) -> list[int]:
    c = cols.cols
    if sort == "time":
        at = c["at"]
        return sorted(hits, key=lambda i: created_key(at[i]))
    if sort == "cost":
        cost = c["cost"]
        return sorted(hits, key=lambda i: (cost[i] is None, -(cost[i] or 0.0)))
    if sort == "tokens":
        tok = c["tokens"]
        return sorted(hits, key=lambda i: (not tok[i], -tok[i]))
    rank = {x: k for k, x in enumerate(layout.ids(0, len(layout)))}  # drawn order; undrawn last, in log order
    n, ids = len(layout), cols.ids
    return sorted(hits, key=lambda i: rank.get(ids[i], n + i))


def _item(agent: Any, layout: Layout, chips: Chips, entry_id: str) -> dict[str, Any]:
    drawn = layout.drawn(entry_id)
    return {
        "id": entry_id,
        "index": layout.position(drawn) if drawn else -1,
        "drawn": drawn or "",
        "row": agent_row(agent, agent.entry(entry_id)),
        "chips": chips.on(entry_id),
        "on": agent.on_path(entry_id),
    }


def step(agent: Any, layout: Layout, entry_id: str, what: str, direction: int) -> tuple[str, int]:
    """Return ``(id, line)`` of the next (``direction > 0``) or previous drawn line after ``entry_id``'s
    that is an ``entry`` (any line), a ``turn`` (a user message starting one) or a ``branch`` (a branch
    point: two or more durable children), ``("", -1)`` when there is none. An unknown or undrawn id
    starts from its nearest drawn ancestor, else from the top. O(lines stepped over)."""
    drawn = layout.drawn(entry_id) if entry_id else None
    at = layout.position(drawn) if drawn is not None else -1
    d = 1 if direction > 0 else -1
    i, n = at + d if at >= 0 or d > 0 else len(layout) - 1, len(layout)
    chunk = 256
    while 0 <= i < n:
        lo, hi = (i, min(n, i + chunk)) if d > 0 else (max(0, i - chunk + 1), i + 1)
        ids = layout.ids(lo, hi)
        for j in range(len(ids)) if d > 0 else range(len(ids) - 1, -1, -1):
            x = ids[j]
            if x != START and _is(what, agent, layout, x):
                return x, lo + j
        i = hi if d > 0 else lo - 1
    return "", -1


def _is(what: str, agent: Any, layout: Layout, entry_id: str) -> bool:
    if what == "turn":
        return is_turn_start(agent.entry(entry_id))
    if what == "branch":
        return layout.kids_of(entry_id) > 1
    return True


# -- the widget's requests (SessionWidget.ACTIONS maps them here; ``w`` is the widget) --------------------


def do_query(w: Any, req: dict[str, Any]) -> None:
    """``{"action": "query", "query", "sort", "start", "seq"}``: reply with :func:`query`'s answer (``error``
    set, one line, for a bad score). O(n)."""
    try:
        q = check(req.get("query"))
        start = int(req.get("start") or 0)
    except (TypeError, ValueError) as e:
        w.error = str(e)
        return
    sort = str(req.get("sort") or "tree")
    if sort not in SORTS:
        w.error = f"no sort {sort!r}: the sorts are {', '.join(SORTS)}"
        return
    w.error = ""
    if getattr(w, "_columns", None) is None:
        w._columns = Columns()
    got = query(w.agent, w._layout, w._chips, q, sort, start, w._columns)
    w.send({"reply": "query", "rev": w._rev, "seq": int(req.get("seq") or 0), "sort": sort, **got})


def do_step(w: Any, req: dict[str, Any]) -> None:
    """``{"action": "step", "id", "what", "dir"}``: reply with the line :func:`step` finds. O(lines stepped over)."""
    what = str(req.get("what") or "entry")
    if what not in STEPS:
        return
    try:
        direction = int(req.get("dir") or 1)
    except (TypeError, ValueError):
        return
    found, index = step(w.agent, w._layout, str(req.get("id") or ""), what, direction)
    w.send({"reply": "step", "rev": w._rev, "what": what, "id": found, "index": index})


def do_timeline(w: Any, req: dict[str, Any]) -> None:
    """``{"action": "timeline", "have", "view"}``: reply with :func:`timeline`, as its change from the
    one last sent to that view when it holds that one (``have`` is its seq): the bars from the first
    that differs (a turn: the last one or two). Each view of the widget (shown twice: every view
    receives every reply) has its own; the :data:`TIMELINE_VIEWS` that asked last are remembered
    (one asking after them gets the whole timeline). O(new entries + the bars they change) plus O(bars)."""
    t = timeline(w.agent, turns=turns_of(w.agent))  # the agent's, kept: often built ahead by its preparation
    view = str(req.get("view") or "")
    if getattr(w, "_timelines_sent", None) is None:
        w._timelines_sent = {}
    sent: dict[str, tuple[int, list[dict[str, Any]]]] = w._timelines_sent
    seq, old = sent.pop(view, (0, None))
    start, base, bars = 0, -1, t["turns"]
    if old is not None and req.get("have") == seq:
        base = seq
        while start < min(len(old), len(bars)) and old[start] == bars[start]:
            start += 1
    sent[view] = (seq + 1, bars)
    if len(sent) > TIMELINE_VIEWS:
        del sent[next(iter(sent))]  # the view that asked longest ago
    change = {"turns": bars[start:], "start": start, "base": base, "seq": seq + 1, "view": view}
    w.send({"reply": "timeline", "rev": w._rev, **t, **change})
