"""The entry tree as the widget draws it: lines in order, kept up to date one entry at a time.

    from durable_nb.widget.layout import Layout
    lay = Layout.build(ids, parent_ids, off_chain, hidden, created_at)   # a whole log, O(n)
    lay.add(entry_id, parent_id, off_chain=False, hidden=False, created_at="")  # then one at a time
    lay.ids(0, 40)        # the ids drawn on lines 0..39 ("" is the START row)
    lay.info(entry_id)    # (depth, mark); lay.kids_of(entry_id); lay.position(entry_id)
    lay.rails(entry_id)   # the lanes beside its line: [True, False] = "│ " then its own "├"/"└"

The one home of the tree's drawing rule (the widget, its static fallback and
the exported page all use it). Depth-first from each root:

- entries off the chain (ephemeral messages, asides) hang one level in right
  under their parent (mark ``"eph"``);
- a single durable child continues at the same depth (``"cont"``);
- several durable children each start a branch one level in (``"branch"``);
- siblings (and roots) in sibling order, the session's one rule
  (:func:`~durable_nb.session.sort_siblings`: oldest ``created_at`` first, ties in log order);
- several root-level durable entries (an edited first turn) are branches
  under a START row (id ``""``); orphans become roots, and so does a parent cycle's first entry
  in log order (the cycle is cut there, among all entries, hidden ones too, as
  :func:`~durable_nb.session.tree.tree` cuts it; what hangs below stays); a duplicate id: the first keeps it.

Cost: :meth:`build` is O(n), a few list operations an entry (no object an
entry; the columns are left out of the cyclic GC's walks). :meth:`add` is O(1)
for a child of the leaf, plus a memmove of the line list; a new branch point
O(the subtree that becomes a branch); a new root, an orphan, a parent later in
the log or an entry older than its siblings O(n), rare. :meth:`position` is
O(1) above the last insertion, O(lines below it) once otherwise.

``hidden`` entries (a kind filter) are not drawn: their children hang off
their nearest drawn ancestor. Pure: no Jupyter, no entries, only ids.

Lanes (:meth:`rails`): a branch (or an off-chain entry) opens a lane one level in,
running down its chain while a later sibling is still to be drawn (``├`` then
``│``) and ending at the last sibling (``└``): siblings read as siblings, not a
chain. Each entry keeps its lane's head, so a line's lanes cost O(levels drawn).
"""

from __future__ import annotations

import copy
from array import array
from collections.abc import Iterable, MutableSequence

from ..session.compact import untrack_columns
from ..session.rules import created_key, sort_siblings
from .links import ORPHAN, drawn_parents
from .links import children as _children

Ints = MutableSequence[int]  # a list, or an array("q") for a chain laid out without its id index (untracked by GC)

START = ""  # the id of the START row drawn above several root-level entries
MARKS = ("root", "cont", "branch", "eph")
ROOT, CONT, BRANCH, EPH = range(4)
RAIL_LEVELS = 16  # lanes given per line: the innermost ones (the page draws no deeper indent)
NEAR_END = 512  # ids looked up among the first and last entries before the id index of a chain is made


class Layout:
    """The drawn lines of a tree of ids (see the module doc). ``rev`` counts changes;
    :meth:`take_changes` returns the first line index changed since it was last called."""

    def __init__(self) -> None:
        # per entry, by log index k (an entry added twice keeps its first k)
        self._ids: list[str] = []
        self._kd: dict[str, int] | None = {}  # id -> k (None: not made yet, the ids known distinct)
        self._raw: list[str] = []  # parent id as logged
        self._off: list[bool] = []
        self._hidden: list[bool] = []
        self._created: list[str] = []
        self._dpar: Ints = []  # drawn parent (-1: none); for a hidden entry, its nearest drawn ancestor
        self._depth: Ints = []
        self._mark: Ints = []
        self._nk: Ints = []  # durable drawn children
        self._lastk: Ints = []  # the last of them in sibling order (-1)
        self._ne: Ints = []  # off-chain drawn children
        self._laste: Ints = []
        self._pos: Ints = []  # line index (right where _lines[_pos[k]] == k)
        self._head: Ints = []  # the head of k's lane: k itself unless it continues a chain (CONT)
        self._last_top = -1  # the last branch under the START row (-1: no START row)
        self._lines: Ints = []  # log indexes in drawn order; -1 is the START row
        self._valid = 0  # _pos is right for every k in _lines[:_valid]
        self._start_kids = 0  # durable root-level entries (drawn under START when more than one)
        self._awaited: set[str] = set()  # parent ids an entry names that are not in the log (yet)
        self.rev = 0
        self.changed_from: int | None = None

    @classmethod
    def build(
        cls,
        ids: list[str],
        parents: list[str],
        off: list[bool],
        hidden: list[bool],
        created: list[str],
        distinct: bool = False,
    ) -> Layout:
        """Return the layout of a whole log given as parallel lists, in log order. O(n). ``distinct``:
        the caller knows the ids are distinct; then a log that is one chain is laid out without its
        id index (a million ids: ~0.45 s), made when first needed (:attr:`_k`): a lookup of one of
        the first or last :data:`NEAR_END` ids does without it (the lines near the leaf, the static
        fallback's first and last lines)."""
        lay = cls()
        if distinct:
            lay._ids, lay._raw, lay._off, lay._hidden, lay._created, lay._kd = ids, parents, off, hidden, created, None
            if lay._rebuild_chain():
                lay.take_changes()
                return lay
        k_of = dict(zip(ids, range(len(ids))))  # at C speed; with duplicate ids the last one wins here
        if len(k_of) != len(ids):  # duplicate ids: the first entry keeps each
            first: dict[str, int] = {}
            for k, i in enumerate(ids):
                first.setdefault(i, k)
            firsts = sorted(first.values())
            ids, parents, created = ([x[k] for k in firsts] for x in (ids, parents, created))
            off, hidden = ([x[k] for k in firsts] for x in (off, hidden))
            k_of = dict(zip(ids, range(len(ids))))
        lay._ids, lay._kd, lay._raw, lay._off, lay._hidden, lay._created = ids, k_of, parents, off, hidden, created
        lay._rebuild()
        lay.take_changes()
        return lay

    def copy(self) -> Layout:
        """Return an independent copy (each list, array and the id index copied: O(n) at C speed)."""
        c = Layout.__new__(Layout)
        c.__dict__.update(
            {k: copy.copy(v) if isinstance(v, (list, dict, set, array)) else v for k, v in self.__dict__.items()}
        )
        untrack_columns(c)
        return c

    def __len__(self) -> int:
        return len(self._lines)

    @property
    def _k(self) -> dict[str, int]:
        """The id index (id -> log index k), made here the first time for a chain laid out without it. O(1), or O(n) once."""
        if self._kd is None:
            self._kd = dict(zip(self._ids, range(len(self._ids))))  # of strs and ints: never tracked
        return self._kd

    def _find(self, entry_id: object) -> int:
        """Return ``entry_id``'s log index k, ``-1`` if unknown. O(1); before a chain's index is made, O(:data:`NEAR_END`)
        at C speed for one of the first or last ids (k is its place in the log), else it is made then."""
        if self._kd is None:
            ids = self._ids
            for lo, hi in ((max(0, len(ids) - NEAR_END), len(ids)), (0, NEAR_END)):
                try:
                    return ids.index(entry_id, lo, hi)  # type: ignore[arg-type]
                except ValueError:
                    pass
        return self._k.get(entry_id, -1)  # type: ignore[call-overload]

    def __contains__(self, entry_id: object) -> bool:
        return self._find(entry_id) >= 0

    @property
    def lines(self) -> list[str]:
        """Every drawn id in order (``""``: the START row). O(n)."""
        return self.ids(0, len(self._lines))

    def ids(self, start: int, stop: int) -> list[str]:
        """Return the ids drawn on lines ``start`` to ``stop`` (``""``: the START row). O(stop - start)."""
        names = self._ids
        return [names[k] if k >= 0 else START for k in self._lines[max(0, start) : max(0, stop)]]

    def info(self, entry_id: str) -> tuple[int, str]:
        """Return ``(depth, mark)`` of a drawn entry (``""``: the START row). O(1)."""
        if entry_id == START:
            return 0, "root"
        k = self._find(entry_id)
        if k < 0:
            raise KeyError(entry_id)
        return self._depth[k], MARKS[self._mark[k]]

    def rails(self, entry_id: str, levels: int = RAIL_LEVELS) -> list[bool]:
        """Return the lanes beside ``entry_id``'s line, outermost first, for its innermost
        ``min(depth, levels)`` levels: True where a lane runs on past the line (a later sibling
        of that level's branch is still to be drawn). The last one is the line's own level: for a
        branch or off-chain entry ``├`` (True) or ``└`` (False), for a chain entry ``│`` or
        nothing. ``[]`` at depth 0, for the START row and for an unknown or hidden id. O(levels)."""
        k = self._find(entry_id)
        if k < 0 or self._hidden[k]:
            return []
        depth, head, dpar = self._depth, self._head, self._dpar
        out: list[bool] = []
        h = head[k]
        while h >= 0 and depth[h] >= 1 and len(out) < levels:
            out.append(not self._is_last(h))
            p = dpar[h]
            h = head[p] if p >= 0 else -1
        out.reverse()
        return out

    def _is_last(self, h: int) -> bool:
        """True when lane head ``h`` is the last line drawn at its level under its drawn parent."""
        p = self._dpar[h]
        if p < 0:
            return h == self._last_top or self._last_top < 0
        if self._mark[h] == EPH:  # off-chain children come before the durable branches
            return self._laste[p] == h and self._nk[p] <= 1
        return self._lastk[p] == h

    def kids_of(self, entry_id: str) -> int:
        """Return how many durable children ``entry_id`` has drawn (for START: durable roots). O(1)."""
        if entry_id == START:
            return self._start_kids
        k = self._find(entry_id)
        return 0 if k < 0 else self._nk[k]

    def drawn(self, entry_id: str) -> str | None:
        """Return the id drawn for ``entry_id`` (itself, or a hidden entry's nearest drawn
        ancestor: ``""`` if none), or ``None`` if unknown. O(1)."""
        k = self._find(entry_id)
        if k < 0:
            return None
        if not self._hidden[k]:
            return entry_id
        up = self._dpar[k]
        return self._ids[up] if up >= 0 else ""

    def position(self, entry_id: str) -> int:
        """Return the line index of ``entry_id`` (``-1`` if it is not drawn). O(1), or
        O(lines below the last insertion) once after an insertion above the end."""
        if entry_id == START:
            return 0 if self._lines and self._lines[0] < 0 else -1
        k = self._find(entry_id)
        if k < 0 or self._hidden[k]:
            return -1
        return self._position(k)

    def first(self, entry_ids: Iterable[str], first: int | None) -> int:
        """Return the lowest line index drawn for any of ``entry_ids`` (a hidden entry's: its
        nearest drawn ancestor's) and ``first`` (``None``: the number of lines). O(ids)."""
        out = len(self._lines) if first is None else first
        for entry_id in entry_ids:
            drawn = self.drawn(entry_id)
            at = self.position(drawn) if drawn else -1
            if 0 <= at < out:
                out = at
        return out

    def _position(self, k: int) -> int:
        p = self._pos[k]
        lines = self._lines
        if 0 <= p < len(lines) and lines[p] == k:
            return p
        pos = self._pos
        for x in range(self._valid, len(lines)):
            if lines[x] >= 0:
                pos[lines[x]] = x
        self._valid = len(lines)
        return pos[k]

    def take_changes(self) -> int | None:
        """Return the first line index changed since the last call (``None``: nothing) and reset it."""
        out, self.changed_from = self.changed_from, None
        return out

    def _changed(self, index: int) -> None:
        if not index:  # a rebuild (or a change at the top): its new columns out of the GC's walks
            untrack_columns(self)
        self.rev += 1
        self.changed_from = index if self.changed_from is None else min(self.changed_from, index)

    # -- adding ------------------------------------------------------------

    def add(
        self,
        entry_id: str,
        parent_id: str,
        off_chain: bool = False,
        hidden: bool = False,
        created_at: str = "",
        fresh: bool = False,
    ) -> None:
        """Add one entry (in log order): ``off_chain`` hangs off its parent (an ephemeral message,
        an aside), ``hidden`` is not drawn, ``created_at`` orders siblings; ``fresh``: the caller knows
        its id is new (then a chain laid out without its id index still makes none for it). See the
        module doc for the cost."""
        if entry_id == START or ((self._kd is not None or not fresh) and entry_id in self._k):
            return  # a duplicate id: the first entry keeps it
        k = len(self._ids)
        if self._kd is not None:
            self._kd[entry_id] = k
        self._grow(k, entry_id, parent_id, off_chain, hidden, created_at)
        pk = self._find(parent_id) if parent_id else -1
        if pk == k or (parent_id and pk < 0) or entry_id in self._awaited:  # its own parent, an orphan, or an
            return self._rebuild()  # orphan's parent come late: lay out again
        dp = pk if pk < 0 or not self._hidden[pk] else self._dpar[pk]
        self._dpar[k] = dp
        if hidden:
            return
        if dp < 0:
            if self._lines or parent_id:  # a second root, or the child of a hidden root
                return self._rebuild()
            self._lines.append(k)
            self._pos[k] = 0
            if not off_chain:
                self._start_kids = 1
            self._changed(0)
            return
        last = self._laste[dp] if off_chain else self._lastk[dp]
        if last >= 0 and created_key(created_at) < created_key(self._created[last]):
            return self._rebuild()  # older than a sibling: not drawn last
        i = self._position(dp)
        d = self._depth[dp]
        lines, depth, mark = self._lines, self._depth, self._mark
        n = len(lines)
        j = i + 1
        if off_chain:  # after the parent's other off-chain children (and whatever hangs off them)
            dpar = self._dpar
            while j < n:
                x = lines[j]
                if depth[x] > d + 1 or (depth[x] == d + 1 and (mark[x] == CONT or (mark[x] == EPH and dpar[x] == dp))):
                    j += 1
                else:
                    break
            self._place(k, d + 1, EPH, j)
            self._ne[dp] += 1
            self._laste[dp] = k
            self._changed(i)
            return
        while j < n:  # the end of the parent's subtree
            x = lines[j]
            if depth[x] > d or (depth[x] == d and mark[x] == CONT):
                j += 1
            else:
                break
        nk = self._nk[dp]
        head = self._head
        if nk == 0:
            head[k] = head[dp]
            self._place(k, d, CONT, j)
        else:
            if nk == 1:  # the only child becomes a branch: its subtree moves one level in
                self._to_branch(self._lastk[dp], j, head[dp])
            self._place(k, d + 1, BRANCH, j)
        self._nk[dp] = nk + 1
        self._lastk[dp] = k
        self._changed(i)

    def _grow(self, k: int, entry_id: str, parent_id: str, off_chain: bool, hidden: bool, created_at: str) -> None:
        """Append entry ``k`` (``len(ids)``) to every per-entry list, as a root not yet placed. O(1)."""
        self._ids.append(entry_id)
        self._raw.append(parent_id)
        self._off.append(off_chain)
        self._hidden.append(hidden)
        self._created.append(created_at)
        ints = (self._dpar, self._depth, self._mark, self._nk, self._lastk, self._ne, self._laste, self._pos)
        for ys, y in zip((*ints, self._head), (-1, 0, ROOT, 0, -1, 0, -1, -1, k)):
            ys.append(y)

    def _to_branch(self, only: int, end: int, was: int) -> None:
        """Make ``only`` (its parent's only durable child so far) a branch: its subtree (its line up
        to line ``end``) moves one level in, and its chain (lane head ``was``) starts a lane of its
        own. O(subtree)."""
        lines, depth, head = self._lines, self._depth, self._head
        self._mark[only] = BRANCH
        for x in range(self._position(only), end):
            depth[lines[x]] += 1
            if head[lines[x]] == was:
                head[lines[x]] = only

    def _place(self, k: int, depth: int, mark: int, at: int) -> None:
        self._depth[k] = depth
        self._mark[k] = mark
        if at >= len(self._lines):
            self._lines.append(k)
        else:
            self._lines.insert(at, k)
        self._valid = min(self._valid, at)
        self._pos[k] = at
        self._changed(at)

    def _rebuild(self) -> None:
        """Lay the whole tree out again from the entries added so far. O(n), a few list operations
        per entry (a chain, the common shape, takes the shortest path through the walk; a log that
        is one chain from a root is laid out at C speed, :meth:`_rebuild_chain`)."""
        if self._rebuild_chain():
            return
        off, hidden = self._off, self._hidden
        n = len(self._ids)
        pidx = drawn_parents(self._raw, self._k, self._hidden)
        self._awaited = {p for p in self._raw if p and p not in self._k} if ORPHAN in pidx else set()
        any_hidden = any(hidden)
        head_d, head_e, nxt, nk, ne, roots = _children(pidx, off, hidden if any_hidden else None)
        when = self._created.__getitem__

        def kids(head: list[int], p: int) -> list[int]:
            out = []
            x = head[p]
            while x >= 0:
                out.append(x)
                x = nxt[x]
            return sort_siblings(out, when)

        depth = [0] * n
        mark = [ROOT] * n
        pos = [-1] * n
        head = list(range(n))
        lastk = [-1] * n
        laste = [-1] * n
        lines: list[int] = []
        seen = [False] * n

        def walk(root: int, d0: int, m0: int) -> None:
            stack = [(root, d0, m0, root)]
            pop, push, add = stack.pop, stack.append, lines.append
            while stack:
                k, d, m, h = pop()
                while True:
                    if seen[k]:
                        break
                    seen[k] = True
                    pos[k] = len(lines)
                    add(k)
                    depth[k] = d
                    mark[k] = m
                    head[k] = h
                    c = nk[k]
                    if ne[k]:
                        eph = kids(head_e, k)
                        laste[k] = eph[-1]
                        if c == 1:
                            lastk[k] = head_d[k]
                            push((head_d[k], d, CONT, h))
                        elif c:
                            durable = kids(head_d, k)
                            lastk[k] = durable[-1]
                            stack.extend((x, d + 1, BRANCH, x) for x in reversed(durable))
                        stack.extend((x, d + 1, EPH, x) for x in reversed(eph))
                        break
                    if c == 1:  # a chain: go straight on
                        child = head_d[k]
                        lastk[k] = child
                        k, m = child, CONT
                        continue
                    if c:
                        durable = kids(head_d, k)
                        lastk[k] = durable[-1]
                        stack.extend((x, d + 1, BRANCH, x) for x in reversed(durable))
                    break

        roots = sort_siblings(roots, when)
        tops = [k for k in roots if pidx[k] == -1]  # root-level (not orphans): branches of START
        durable_tops = [k for k in tops if not off[k]]
        self._start_kids = len(durable_tops)
        self._last_top = tops[-1] if len(durable_tops) > 1 else -1
        if len(durable_tops) > 1:
            lines.append(-1)
            for k in tops:
                walk(k, 1, EPH if off[k] else BRANCH)
        for k in roots:
            walk(k, 0, ROOT)
        self._dpar = [p if p >= 0 else -1 for p in pidx]
        self._depth, self._mark, self._nk, self._lastk, self._ne, self._laste = depth, mark, nk, lastk, ne, laste
        self._lines, self._pos, self._valid, self._head = lines, pos, len(lines), head
        self._changed(0)

    def _rebuild_chain(self) -> bool:
        """Lay out a log that is one chain from a root (a root-level first entry, each later one the
        durable, drawn child of the one before) as :meth:`_rebuild`'s walk does, in list operations at
        C speed: one column at depth 0, the root then its chain. Returns False, changing nothing,
        for any other log. O(n) at C speed (~30 ns an entry); the lists of indexes share the index's
        int objects (one set of ints, not one per list: 28 bytes an entry each)."""
        ids, raw = self._ids, self._raw
        n = len(ids)
        if not n or raw[0] or any(self._off) or any(self._hidden) or raw[1:] != ids[:-1]:
            return False
        if self._kd is None:  # arrays: no int object per entry, nothing for the collector to walk
            ka = array("q", range(n))
            self._dpar = array("q", [-1]) + ka[:-1]
            self._depth, self._mark = array("q", bytes(8 * n)), array("q", [ROOT]) + array("q", [CONT]) * (n - 1)
            self._nk, self._lastk = array("q", [1]) * (n - 1) + array("q", [0]), ka[1:] + array("q", [-1])
            self._ne, self._laste = array("q", bytes(8 * n)), array("q", [-1]) * n
            self._lines, self._pos, self._valid, self._head = ka, ka[:], n, array("q", bytes(8 * n))
        else:
            ks = list(self._kd.values())  # 0 .. n-1: each id's log index, inserted in log order
            self._dpar = [-1, *ks[:-1]]
            self._depth, self._mark = [0] * n, [ROOT] + [CONT] * (n - 1)
            self._nk, self._lastk = [1] * (n - 1) + [0], [*ks[1:], -1]
            self._ne, self._laste = [0] * n, [-1] * n
            self._lines, self._pos, self._valid, self._head = ks, ks.copy(), n, [0] * n
        self._start_kids, self._last_top, self._awaited = 1, -1, set()
        self._changed(0)
        return True
