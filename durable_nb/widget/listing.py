"""The widget's flat list, its steps and its timeline, answered in the kernel (never the whole log sent).

    facts(entry, chips)                  # what a filter or a sort reads of one entry
    query(agent, layout, chips, q, sort) # the matching entries in order, and the values to filter by
    step(agent, layout, id, what, dir)   # the next / previous entry, turn, branch point in drawn order
    timeline(agent, buckets)             # the session's turns over time, with each turn's cost

A filter (:data:`FILTER_KEYS`) holds any of ``role``, ``kind``, ``model``, ``tool``, ``tag`` (an
annotation tag: the latest annotation of each author counts), ``error`` (a failed tool result or model
call), ``min_score`` / ``max_score`` (an annotation's score), ``on_path`` (on the active path); all given
must hold. Bookkeeping entries (labels, verdicts, annotations, leaf moves) are never listed: they are
chips on the entries they name. Sorts: ``tree`` (drawn order), ``time`` (``created_at``), ``cost``,
``tokens`` (most first; unknown last). Cost: O(n) per query or timeline (pricing each reply once, cached),
O(lines stepped over) per step; what is sent is bounded (:data:`MAX_ITEMS`, :data:`MAX_BUCKETS`).
"""

from __future__ import annotations

from typing import Any

from ..cost import message_cost, tokens
from ..session import CustomEntry, Entry, MessageEntry, entry_kind, is_turn_start
from ..session.kinds import bookkeeping
from ..session.rules import created_key
from .chips import Chips
from .encoding import agent_row
from .layout import START, Layout

MAX_ITEMS = 200  # list items one "query" reply carries
MAX_BUCKETS = 240  # bars of the timeline strip (turns are grouped beyond that)
FILTER_KEYS = ("role", "kind", "model", "tool", "tag", "error", "min_score", "max_score", "on_path")
SORTS = ("tree", "time", "cost", "tokens")
STEPS = ("entry", "turn", "branch")


def facts(e: Entry, chips: Chips) -> dict[str, Any]:
    """Return what a filter or sort reads of ``e``: ``role``, ``kind`` (:func:`~durable_nb.session.entry_kind`),
    ``model``, ``tools``, ``error``, ``tags`` and ``scores`` (its annotations'), ``at``, ``cost`` (US
    dollars, ``None``: unknown or not a reply) and ``tokens`` (input + output). O(size of the entry)."""
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
    notes = [c for c in chips.on(e.id) if c.get("kind") == "annotation"]
    f["tags"] = sorted({t for c in notes for t in c.get("tags") or ()})
    f["scores"] = [c["score"] for c in notes if isinstance(c.get("score"), (int, float))]
    return f


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


def matches(f: dict[str, Any], q: dict[str, Any], on_path: bool) -> bool:
    """Whether an entry with facts ``f`` (:func:`facts`) passes filter ``q`` (:func:`check`). O(tags)."""
    if any(q.get(k) and f[k] != q[k] for k in ("role", "kind", "model")):
        return False
    if q.get("tool") and q["tool"] not in f["tools"]:
        return False
    if q.get("tag") and q["tag"] not in f["tags"]:
        return False
    if q.get("error") and not f["error"]:
        return False
    if q.get("on_path") and not on_path:
        return False
    lo, hi = q.get("min_score"), q.get("max_score")
    if lo is not None or hi is not None:
        if not any((lo is None or s >= lo) and (hi is None or s <= hi) for s in f["scores"]):
            return False
    return True


def _listed(agent: Any) -> list[Entry]:
    return [e for e in agent.entries() if not (isinstance(e, CustomEntry) and bookkeeping(e))]


def query(
    agent: Any, layout: Layout, chips: Chips, q: dict[str, Any], sort: str, start: int = 0, stop: int = MAX_ITEMS
) -> dict[str, Any]:
    """Return ``{"total", "start", "items", "facets"}``: the entries passing ``q`` in ``sort`` order, items
    ``start`` to ``stop`` (at most :data:`MAX_ITEMS`) as ``{id, index, drawn, row, chips, on}`` (``index``:
    the line drawing it or its nearest drawn ancestor, ``-1`` if none), and ``facets``: every value of
    ``role``, ``kind``, ``model``, ``tool``, ``tag`` in the session (what the page offers). O(n)."""
    hits: list[tuple[Any, int, Entry, dict[str, Any]]] = []
    facet: dict[str, set[str]] = {k: set() for k in ("role", "kind", "model", "tool", "tag")}
    for k, e in enumerate(_listed(agent)):
        f = facts(e, chips)
        for name in ("role", "kind", "model"):
            if f[name]:
                facet[name].add(f[name])
        facet["tool"].update(f["tools"])
        facet["tag"].update(f["tags"])
        on = agent.on_path(e.id)
        if matches(f, q, on):
            hits.append((_sort_key(sort, f, layout, e, k), k, e, f))
    hits.sort(key=lambda h: (h[0], h[1]))
    start = max(0, start)
    items = []
    for _, _, e, _ in hits[start : min(stop, start + MAX_ITEMS)]:
        drawn = layout.drawn(e.id)
        items.append(
            {
                "id": e.id,
                "index": layout.position(drawn) if drawn else -1,
                "drawn": drawn or "",
                "row": agent_row(agent, e),
                "chips": chips.on(e.id),
                "on": agent.on_path(e.id),
            }
        )
    return {"total": len(hits), "start": start, "items": items, "facets": {k: sorted(v) for k, v in facet.items()}}


def _sort_key(sort: str, f: dict[str, Any], layout: Layout, e: Entry, k: int) -> Any:
    if sort == "time":
        return created_key(f["at"])
    if sort == "cost":
        return (f["cost"] is None, -(f["cost"] or 0.0))
    if sort == "tokens":
        return (not f["tokens"], -f["tokens"])
    drawn = layout.drawn(e.id)
    return layout.position(drawn) if drawn else len(layout) + k  # tree: drawn order, undrawn last


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


def timeline(agent: Any, buckets: int = MAX_BUCKETS) -> dict[str, Any]:
    """Return ``{"total", "turns"}``: every turn of the session (every branch) in time order as
    ``{id, at, cost, tokens, n, on}`` (``cost``: its replies' US dollars, ``None`` when one is unknown;
    ``n``: turns it stands for) — consecutive turns grouped so there are at most ``buckets``; a group
    is named by its first turn. A turn's replies are the entries after its start up to the next turn
    start on their chain. O(n)."""
    turn_of: dict[str, str] = {}
    turns: dict[str, dict[str, Any]] = {}
    for e in agent.entries():  # parents come before children: a turn is known when its replies come
        if is_turn_start(e):
            turn_of[e.id] = e.id
            turns[e.id] = {"id": e.id, "at": e.created_at, "cost": 0.0, "tokens": 0, "n": 1, "on": agent.on_path(e.id)}
            continue
        t = turn_of.get(e.parent_id)
        if t is None:
            continue
        turn_of[e.id] = t
        if isinstance(e, MessageEntry) and e.message.role == "assistant":
            cost, used = message_cost(e.message), tokens(e.message)
            turn = turns[t]
            turn["cost"] = None if cost is None or turn["cost"] is None else turn["cost"] + float(cost)
            turn["tokens"] += sum(used) if used else 0
    ordered = sorted(turns.values(), key=lambda t: created_key(t["at"]))
    size = max(1, -(-len(ordered) // max(1, buckets)))
    out = []
    for i in range(0, len(ordered), size):
        group = ordered[i : i + size]
        costs = [t["cost"] for t in group]
        out.append(
            {
                "id": group[0]["id"],
                "at": group[0]["at"],
                "cost": None if None in costs else sum(costs),
                "tokens": sum(t["tokens"] for t in group),
                "n": len(group),
                "on": any(t["on"] for t in group),
            }
        )
    return {"total": len(ordered), "turns": out}


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
    got = query(w.agent, w._layout, w._chips, q, sort, start)
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
    """``{"action": "timeline"}``: reply with :func:`timeline`. O(n)."""
    w.send({"reply": "timeline", "rev": w._rev, **timeline(w.agent)})
