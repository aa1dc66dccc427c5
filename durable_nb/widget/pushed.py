"""The lines a sync pushes to a drawn page, and the ones it need not: what the page already holds.

    kept = push(widget, changed, leaf_line)   # sends the lines near the leaf; the run the page keeps, or None
    widget.send(reply(widget, start, lines))  # a "lines" reply, pushed or asked for

A layout change from line ``changed_from`` on makes the page drop every line it holds from there
(:mod:`~durable_nb.widget.protocol`, ``Tree``). A re-run cell adds a branch after its older siblings,
so the lines from the fork point to the new leaf were all pushed again, though only the fork's line,
the previous attempt's and the new ones changed: each re-run of one cell pushed two lines more (up to
``2 * PUSH_AROUND + 1``). :class:`Held` remembers the last value of each line index sent to the page
(pushes and replies, dropped as the page drops them); the longest run of pushed lines equal to what
the page holds goes as a ``kept`` range instead (the push skips it,
:class:`~durable_nb.widget.protocol.LinesReply`), which the page does not drop at the ``tree`` update.
:func:`reply` is the one shape of a ``"lines"`` reply: a push's, and the answer to the page's own
request (``SessionWidget._do_lines``).
"""

from __future__ import annotations

from typing import Any

PUSH_AROUND = 40  # lines around the leaf a sync pushes to a page that is drawn (it scrolls there)
HELD_MAX = 2000  # line indices remembered; beyond it the farthest from the last push are forgotten


class Held:
    """The lines a page holds, as far as the kernel knows: index -> the line last sent for it, dropped
    from a change on as the page drops them. A line the page dropped on its own (its cache is bounded)
    is asked for again: the guess is only ever short of the page, never ahead of it. O(lines sent)."""

    def __init__(self) -> None:
        self.at: dict[int, dict[str, Any]] = {}

    def sent(self, start: int, lines: list[dict[str, Any]]) -> None:
        for k, line in enumerate(lines):
            self.at[start + k] = line
        if len(self.at) > HELD_MAX:
            near = sorted(self.at, key=lambda i: abs(i - start))[: HELD_MAX // 2]
            self.at = {i: self.at[i] for i in near}

    def revised(self, changed_from: int, kept: tuple[int, int] | None) -> None:
        """The page drops its lines from ``changed_from`` on, but those in ``kept`` ([lo, hi))."""
        lo, hi = kept or (0, 0)
        self.at = {i: x for i, x in self.at.items() if i < changed_from or lo <= i < hi}

    def kept(self, start: int, lines: list[dict[str, Any]]) -> tuple[int, int] | None:
        """Return the longest run [lo, hi) of ``lines`` (at ``start``, ...) equal to the lines the page
        holds at the same index, or ``None`` when there is none. O(len(lines))."""
        best, lo = (0, 0), -1
        for k, line in enumerate([*lines, None]):
            same = line is not None and self.at.get(start + k) == line
            if same and lo < 0:
                lo = k
            elif not same and lo >= 0:
                if k - lo > best[1] - best[0]:
                    best = (lo, k)
                lo = -1
        return (start + best[0], start + best[1]) if best[1] > best[0] else None


def push(w: Any, changed: int, leaf_line: int) -> tuple[int, int] | None:
    """Send ``w``'s changed lines near the leaf to its drawn page ahead of the ``tree`` update that
    announces them (same ``rev``), so the page has them without asking (a busy kernel answers no request
    until its cell ends): at most ``2 * PUSH_AROUND + 1`` lines around the leaf (from the change when
    there is no leaf), in one reply that skips the longest run the page already holds, named as
    ``kept`` and returned (else ``None``). Only once the page has asked for lines (it is drawn).
    O(lines pushed)."""
    if not w._page_seen:
        return None
    around = leaf_line if leaf_line >= 0 else changed + PUSH_AROUND  # no leaf: the page is at the top
    start = max(changed, around - PUSH_AROUND)
    stop = min(len(w._layout), around + PUSH_AROUND + 1)
    lines = w.lines(start, stop) if start < stop else []
    kept = w._held.kept(start, lines)
    if kept is not None and kept[1] - kept[0] == len(lines):  # nothing changed near the leaf: push it all
        kept = None  # (as before: an empty push would be a reply with no lines)
    w._held.revised(changed, kept)
    if lines:
        lo, hi = kept or (stop, stop)
        w._held.sent(start, lines[: lo - start])
        w._held.sent(hi, lines[hi - start :])
        w.send(reply(w, start, lines if kept is None else lines[: lo - start] + lines[hi - start :], kept))
    return kept


def reply(w: Any, start: int, lines: list[dict[str, Any]], kept: tuple[int, int] | None = None) -> dict[str, Any]:
    """Return ``w``'s ``"lines"`` reply (:class:`~durable_nb.widget.protocol.LinesReply`) carrying
    ``lines`` from index ``start``, at ``w``'s revision; a push that skips a run the page holds names
    it as ``kept`` ([lo, hi)). The answer to a page's request and a sync's push alike. O(1)."""
    msg: dict[str, Any] = {"reply": "lines", "rev": w._rev, "start": start, "total": len(w._layout), "lines": lines}
    if kept is not None:
        msg["kept"] = list(kept)
    return msg
