"""What a sync sends a drawn page when the views follow the leaf: the change, not the whole ``views``.

    msg = sent.delta(old_views, new_views, widget.view)   # O(view_limit), by object identity (sent = Sent())

The ``views`` trait (both views' last ``view_limit`` items, ~100 KB) used to be re-sent whole at
each of a turn's syncs. Once a page is drawn, a sync sends a ``views`` reply instead
(:class:`~durable_nb.widget.protocol.ViewsReply`): the small fields, and only the parts the shown
tab draws (:data:`SHOWN`): the entry at the leaf for the tree's details, the model view's or the
transcript's new items as ``{"drop", "keep", "add"}`` (the page keeps ``keep`` items from ``drop``
on, puts ``head`` and the last ``back`` items it dropped at the previous delta before them, and
appends ``add``). A part left out is stale on the page until it shows it and asks for the
whole value (the ``views`` request). The page's JavaScript twin is ``js/widget/src/viewsync.ts``.
"""

from __future__ import annotations

from typing import Any

# the parts of ``views`` each tab draws (the page asks for the others when it shows them)
SHOWN: dict[str, tuple[str, ...]] = {"tree": ("entry",), "model": ("model",), "transcript": ("transcript",)}
LISTS = ("model", "transcript")
PARTS = ("entry", *LISTS)


def list_delta(old: list, new: list, gone: list | None = None) -> dict[str, Any]:
    """Return ``{"drop": d, "keep": k, "add": new[h + k:]}``, with ``"head": new[:h - b]`` and
    ``"back": b`` when not empty, where ``old[d:d + k]`` is ``new[h:h + k]`` item by item (the same
    objects: the widget's memo hands out one dict per view item) and ``new[h]`` is the first item of
    ``new`` that ``old`` holds. A head is the window moving back (a re-run cell's branch starts before
    the old leaf); its last ``b`` items are the last of ``gone`` (the items the previous delta
    dropped, which the page still holds), so they are not sent again: an append that drops the
    window's first items and a re-run that brings them back cost only the new items. With no
    overlap ``drop`` is ``len(old)`` and ``add`` all of ``new``. O(len(old) + len(new))."""
    at = {id(x): i for i, x in enumerate(old)}
    for h, x in enumerate(new):
        d = at.get(id(x))
        if d is None:
            continue
        k = 0
        while h + k < len(new) and d + k < len(old) and old[d + k] is new[h + k]:
            k += 1
        out: dict[str, Any] = {"drop": d, "keep": k, "add": new[h + k :]}
        gone = gone or []
        b = 0
        while b < h and b < len(gone) and new[h - 1 - b] is gone[-1 - b]:
            b += 1
        if h > b:
            out["head"] = new[: h - b]
        if b:
            out["back"] = b
        return out
    return {"drop": len(old), "keep": 0, "add": new}


class Sent:
    """What a drawn page holds beyond ``views`` for the next delta: per view list, the items the last
    delta sent for it dropped from the front (the page keeps them until its next change of that list,
    ``js/widget/src/viewsync.ts``). Forgotten when the page got the whole value: :meth:`whole` (a
    ``views`` request), or a delta from a value other than the last one's (the trait went whole)."""

    def __init__(self) -> None:
        self.gone: dict[str, list] = {}
        self._last: dict[str, Any] | None = None  # the value the last delta led to

    def whole(self) -> None:
        self.gone = {}

    def delta(self, old: dict[str, Any], new: dict[str, Any], view: str) -> dict[str, Any]:
        """Return the fields of a ``views`` reply turning ``old`` into ``new`` for a page showing tab
        ``view``: ``views`` (every field but the parts, plus ``entry`` when the tab shows it) and a
        :func:`list_delta` for each view list the tab shows. O(view_limit)."""
        shown = SHOWN.get(view, ())
        small = {k: v for k, v in new.items() if k not in PARTS or (k == "entry" and k in shown)}
        out: dict[str, Any] = {"views": small}
        gone, self.gone, self._last = (self.gone if old is self._last else {}), {}, new
        for k in LISTS:
            if k in shown:
                before = old.get(k) or []
                out[k] = change = list_delta(before, new.get(k) or [], gone.get(k))
                self.gone[k] = before[: change["drop"]] if change["keep"] else []
        return out


def delta(old: dict[str, Any], new: dict[str, Any], view: str) -> dict[str, Any]:
    """:meth:`Sent.delta` for a page holding nothing dropped before (every list delta without ``back``)."""
    return Sent().delta(old, new, view)


def opening(views: dict[str, Any], view: str) -> dict[str, Any]:
    """Return ``views`` for a widget's whole state on tab ``view``: without the view lists that tab
    does not draw (the page holds a part it was not sent as stale and asks when it shows it); a tab
    other than the three (compare, evaluation) gets it whole. O(fields)."""
    shown = SHOWN.get(view)
    if shown is None:
        return views
    return {k: v for k, v in views.items() if k not in LISTS or k in shown}
