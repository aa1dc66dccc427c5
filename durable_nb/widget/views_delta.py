"""What a sync sends a drawn page when the views follow the leaf: the change, not the whole ``views``.

    msg = delta(old_views, new_views, widget.view)   # O(view_limit), by object identity

The ``views`` trait (both views' last ``view_limit`` items, ~100 KB) used to be re-sent whole at
each of a turn's syncs. Once a page is drawn, a sync sends a ``views`` reply instead
(:class:`~durable_nb.widget.protocol.ViewsReply`): the small fields, and only the parts the shown
tab draws (:data:`SHOWN`): the entry at the leaf for the tree's details, the model view's or the
transcript's new items as ``{"drop", "keep", "add"}`` (the page keeps ``keep`` items from ``drop``
on and appends ``add``). A part left out is stale on the page until it shows it and asks for the
whole value (the ``views`` request). The page's JavaScript twin is ``js/widget/src/viewsync.ts``.
"""

from __future__ import annotations

from typing import Any

# the parts of ``views`` each tab draws (the page asks for the others when it shows them)
SHOWN: dict[str, tuple[str, ...]] = {"tree": ("entry",), "model": ("model",), "transcript": ("transcript",)}
LISTS = ("model", "transcript")
PARTS = ("entry", *LISTS)


def list_delta(old: list, new: list) -> dict[str, Any]:
    """Return ``{"drop": d, "keep": k, "add": new[k:]}`` where ``old[d:d + k]`` is ``new[:k]`` item
    by item (the same objects: the widget's memo hands out one dict per view item); with no
    overlap ``drop`` is ``len(old)`` and ``add`` all of ``new``. O(len(old) + len(new))."""
    if new:
        at = {id(x): i for i, x in enumerate(old)}
        d = at.get(id(new[0]))
        if d is not None:
            k = 0
            while k < len(new) and d + k < len(old) and old[d + k] is new[k]:
                k += 1
            return {"drop": d, "keep": k, "add": new[k:]}
    return {"drop": len(old), "keep": 0, "add": new}


def delta(old: dict[str, Any], new: dict[str, Any], view: str) -> dict[str, Any]:
    """Return the fields of a ``views`` reply turning ``old`` into ``new`` for a page showing tab
    ``view``: ``views`` (every field but the parts, plus ``entry`` when the tab shows it) and a
    :func:`list_delta` for each view list the tab shows. O(view_limit)."""
    shown = SHOWN.get(view, ())
    small = {k: v for k, v in new.items() if k not in PARTS or (k == "entry" and k in shown)}
    out: dict[str, Any] = {"views": small}
    for k in LISTS:
        if k in shown:
            out[k] = list_delta(old.get(k) or [], new.get(k) or [])
    return out


def opening(views: dict[str, Any], view: str) -> dict[str, Any]:
    """Return ``views`` for a widget's whole state on tab ``view``: without the view lists that tab
    does not draw (the page holds a part it was not sent as stale and asks when it shows it); a tab
    other than the three (compare, evaluation) gets it whole. O(fields)."""
    shown = SHOWN.get(view)
    if shown is None:
        return views
    return {k: v for k, v in views.items() if k not in LISTS or k in shown}
