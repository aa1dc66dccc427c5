"""Which entries the tree draws, and how: off the chain, hidden by a kind filter, laid out.

    layout_of(entries, kind_filter(["aside"]))   # the Layout of a log with asides hidden, O(n)
    off_chain(entry), kind_group(entry)          # the two rules the layout reads per entry

:class:`~durable_nb.widget.layout.Layout` draws ids; this module tells it, per entry, whether
the entry hangs off its parent (:func:`off_chain`) and whether a filter hides it (:func:`kind_filter`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast

from .. import ai
from ..errors import DurableError
from ..kept import Shape
from ..session import Entry, MessageEntry, is_aside, kind_group
from ..session import kinds as _kinds
from .layout import Layout

FILTERS = ("custom", "aside", "tool_result")  # the kind groups the tree can hide (session.kind_group)
_EPHEMERAL = ai.Injection.EPHEMERAL


def off_chain(e: Entry) -> bool:
    """True for an entry drawn hanging off its parent, never a branch: an ephemeral message
    (:func:`~durable_nb.session.is_ephemeral`) or an aside (:func:`~durable_nb.session.is_aside`).
    O(1); written out (not those two calls) because :func:`layout_of` asks it of every entry."""
    if isinstance(e, MessageEntry):
        return e.message.injected is _EPHEMERAL
    return is_aside(e)


def never_drawn(e: Entry) -> bool:
    """True for an entry no tree draws whatever the filters: a bookkeeping entry
    (:func:`~durable_nb.session.kinds.bookkeeping`: a label, a verdict or an annotation, drawn as a
    chip on the entry it names; a leaf move, which the leaf badge shows). Its children (the turn
    after a label) hang off its nearest drawn ancestor. O(1)."""
    return not isinstance(e, MessageEntry) and _kinds.bookkeeping(e)


def leaf_shown(agent: Any) -> str:
    """Return the entry the leaf badge is on: ``agent``'s leaf stepped up over bookkeeping entries
    (:func:`~durable_nb.session.kinds.shown_leaf`: after a label, the labelled chain's end). O(labels at the leaf)."""

    def get(entry_id: str) -> Entry | None:
        try:
            return agent.entry(entry_id)
        except DurableError:
            return None

    return _kinds.shown_leaf(agent.leaf_id, get)


def extended(lay: Layout, new: list[Entry]) -> Layout:
    """Return ``lay`` (no kind filter) with the entries ``new`` added, its changes taken. O(new entries)."""
    for e in new:
        lay.add(e.id, e.parent_id, off_chain(e), never_drawn(e), e.created_at)
    lay.take_changes()
    return lay


def agent_layout(agent: Any, hide: Callable[[Entry], bool] | None = None) -> Layout:
    """Return the :class:`~durable_nb.widget.layout.Layout` of ``agent``'s whole log (``hide``: entries
    not drawn). O(n)."""
    return layout_of(agent.entries(), hide)


def layout_of(
    entries: list[Entry],
    hide: Callable[[Entry], bool] | None = None,
    distinct: bool = False,
    shape: Shape | None = None,
    chain: bool = False,
) -> Layout:
    """Return the :class:`~durable_nb.widget.layout.Layout` of ``entries``, a log in append order
    (``hide``: entries not drawn; ``distinct``: their ids are known distinct, see
    :meth:`~durable_nb.widget.layout.Layout.build`; ``shape``: their :class:`~durable_nb.kept.Shape`,
    when the caller holds it; ``chain``: the log is known to be its active path, each entry the child
    of the one before). O(n); the two rules per entry at C speed for a log of message entries none
    ephemeral (:func:`off_chain` and :func:`never_drawn` are then False), read from ``shape`` when
    given; a chain's parents are its ids shifted by one (no pass over the entries)."""
    n = len(entries)
    ids = [e.id for e in entries]
    parents = [entries[0].parent_id, *ids[:-1]] if chain and n else [e.parent_id for e in entries]
    if shape is not None and shape.n == n:
        plain = shape.messages_only and _EPHEMERAL not in shape.injected
    else:
        plain = bool(n) and set(map(type, entries)) == {MessageEntry}
        plain = plain and _EPHEMERAL not in {e.message.injected for e in cast(list[MessageEntry], entries)}
    if plain:
        off, never = [False] * n, [False] * n
    else:
        off, never = [off_chain(e) for e in entries], [never_drawn(e) for e in entries]
    hidden = [x or hide(e) for x, e in zip(never, entries)] if hide is not None else never
    return Layout.build(ids, parents, off, hidden, [e.created_at for e in entries], distinct)


def log_of(agent: Any, start: int = 0) -> tuple[list[Entry], bool]:
    """Return ``agent``'s log from entry ``start`` (:meth:`~durable_nb.durable.Agent.entries`) and whether
    the whole log's ids are distinct (the id index, counted first, holds as many: the log only grows,
    and an entry joins it before its id joins the index). ``False`` for an agent without
    :meth:`id_count`. O(n - start) at C speed."""
    count = getattr(agent, "id_count", None)
    known = count() if count is not None else -1
    entries = agent.entries(start)
    return entries, known == start + len(entries)


def kind_filter(hide: Iterable[str]) -> Callable[[Entry], bool] | None:
    """Return the predicate hiding the entries whose :func:`~durable_nb.session.kind_group` is in
    ``hide``, or ``None`` when ``hide`` is empty. ``DurableError`` (one line) names a group that is not in :data:`FILTERS`."""
    groups = set(hide)
    unknown = sorted(groups - set(FILTERS))
    if unknown:
        raise DurableError(f"no kind filter {unknown[0]!r}: the groups are {', '.join(FILTERS)}")
    if not groups:
        return None
    return lambda e: kind_group(e) in groups
