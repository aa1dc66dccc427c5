"""The entry tree as the widget draws it: lines in order, kept up to date one entry at a time.

    from durable_nb.layout import Layout
    lay = Layout()
    for e in entries:
        lay.add(e.id, e.parent_id, is_ephemeral(e))
    lay.lines[i]          # the id drawn on line i ("" is the START row)
    lay.depth[id], lay.mark[id], lay.kids_of(id), lay.position(id)

The one home of the tree's drawing rule (the widget, its static fallback and
the exported page all use it). Depth-first from each root in log order:

- ephemeral children hang one level in right under their parent (``"eph"``);
- a single durable child continues at the same depth (``"cont"``);
- several durable children each start a branch one level in (``"branch"``);
- siblings (and roots) in sibling order, the session's one rule
  (:func:`~durable_nb.session.sort_siblings`: oldest ``created_at`` first, ties in log order);
- several root-level durable entries (an edited first turn) are branches
  under a START row (id ``""``); orphans and cycle members become roots; with
  a duplicate id the first entry keeps it.

:meth:`add` is O(1) in the common case (a child of the leaf, which is drawn
near the end of its branch), plus a memmove of the line list; a new branch
point shifts the depth of the subtree that becomes a branch (O(that
subtree)); a new root, an orphan, an entry whose parent comes later in the
log or one older than its siblings relays the whole tree out (O(n), rare). :meth:`position` is O(1) for
lines above the last insertion, O(lines below it) once otherwise.

``hidden`` entries (a kind filter) are not drawn: their children hang off
their nearest drawn ancestor. Pure: no Jupyter, no entries, only ids.
"""

from __future__ import annotations

from .session.rules import created_key, sort_siblings

START = ""  # the id of the START row drawn above several root-level entries


class Layout:
    """The drawn lines of a tree of ids (see the module doc). ``rev`` counts changes;
    ``changed_from`` is the first line index changed since :meth:`take_changes`."""

    def __init__(self) -> None:
        self.lines: list[str] = []  # ids in drawn order
        self.depth: dict[str, int] = {}
        self.mark: dict[str, str] = {}  # "root", "cont", "branch", "eph"
        self.plen: dict[str, int] = {}  # entries from the root of its path (1 for a root), hidden ones counted
        self._order: list[tuple[str, str, bool, bool]] = []  # (id, parent, ephemeral, hidden) as added
        self._created: dict[str, str] = {}
        self._parent: dict[str, str] = {}  # drawn parent ("" for a root)
        self._alias: dict[str, str] = {}  # hidden id -> its nearest drawn ancestor ("" if none)
        self._kids: dict[str, list[str]] = {}  # durable drawn children, sibling order
        self._eph: dict[str, list[str]] = {}
        self._pos: dict[str, int] = {}
        self._valid = 0  # self._pos is right for lines[:_valid] (and wherever lines[_pos[id]] == id)
        self.rev = 0
        self.changed_from: int | None = None

    def __len__(self) -> int:
        return len(self.lines)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.depth or entry_id in self._alias

    def kids_of(self, entry_id: str) -> int:
        """Return how many durable children ``entry_id`` has drawn (for START: durable roots). O(1)."""
        return len(self._kids.get(entry_id, ()))

    def drawn(self, entry_id: str) -> str | None:
        """Return the id drawn for ``entry_id`` (itself, or a hidden entry's nearest drawn
        ancestor: ``""`` if none), or ``None`` if unknown. O(1)."""
        if entry_id in self.depth:
            return entry_id
        return self._alias.get(entry_id)

    def position(self, entry_id: str) -> int:
        """Return the line index of ``entry_id`` (``-1`` if it is not drawn). O(1), or
        O(lines below the last insertion) once after an insertion above the end."""
        if entry_id not in self.depth:
            return -1
        p = self._pos.get(entry_id, -1)
        if 0 <= p < len(self.lines) and self.lines[p] == entry_id:
            return p
        for k in range(self._valid, len(self.lines)):
            self._pos[self.lines[k]] = k
        self._valid = len(self.lines)
        return self._pos[entry_id]

    def take_changes(self) -> int | None:
        """Return the first line index changed since the last call (``None``: nothing) and reset it."""
        out, self.changed_from = self.changed_from, None
        return out

    def _changed(self, index: int) -> None:
        self.rev += 1
        self.changed_from = index if self.changed_from is None else min(self.changed_from, index)

    # -- adding ------------------------------------------------------------

    def add(
        self, entry_id: str, parent_id: str, ephemeral: bool = False, hidden: bool = False, created_at: str = ""
    ) -> None:
        """Add one entry (in log order): ``ephemeral`` hangs off its parent (an ephemeral message, an
        aside), ``hidden`` is not drawn, ``created_at`` orders siblings. See the module doc for the cost."""
        if entry_id in self or entry_id == START:
            return  # a duplicate id: the first entry keeps it
        self._order.append((entry_id, parent_id, ephemeral, hidden))
        self._created[entry_id] = created_at
        known = parent_id and parent_id in self
        self.plen[entry_id] = self.plen[parent_id] + 1 if known else 1
        if hidden:
            self._alias[entry_id] = (self.drawn(parent_id) or "") if known else ""
            return
        parent = self.drawn(parent_id) if known else None
        if parent_id and not known:  # an orphan (or its parent comes later): relay out
            return self._rebuild()
        if not parent:
            if self.lines or parent_id:  # a second root, or the child of a hidden root
                return self._rebuild()
            self._place(entry_id, "", 0, "root", 0, ephemeral)
            return
        i = self.position(parent)
        d = self.depth[parent]
        lines, depth, mark = self.lines, self.depth, self.mark
        j = i + 1
        if not self._sibling_last(parent, entry_id, ephemeral):
            return self._rebuild()
        if ephemeral:  # after the parent's other ephemeral children (and whatever hangs off them)
            while j < len(lines) and (
                depth[lines[j]] > d + 1
                or (depth[lines[j]] == d + 1 and mark[lines[j]] == "cont")  # a chain off an ephemeral child
                or (depth[lines[j]] == d + 1 and mark[lines[j]] == "eph" and self._parent[lines[j]] == parent)
            ):
                j += 1
            self._place(entry_id, parent, d + 1, "eph", j, True)
            self._changed(i)
            return
        while j < len(lines) and (depth[lines[j]] > d or (depth[lines[j]] == d and mark[lines[j]] == "cont")):
            j += 1  # the end of the parent's subtree
        kids = self._kids.get(parent, [])
        if not kids:
            self._place(entry_id, parent, d, "cont", j, False)
        else:
            if len(kids) == 1:  # the only child becomes a branch: its subtree moves one level in
                k = self.position(kids[0])
                mark[kids[0]] = "branch"
                for x in range(k, j):
                    depth[lines[x]] += 1
            self._place(entry_id, parent, d + 1, "branch", j, False)
        self._changed(i)

    def _sibling_last(self, parent: str, entry_id: str, ephemeral: bool) -> bool:
        """True when the new child ``entry_id`` of ``parent`` sorts after its drawn siblings of its
        kind (the usual case: it is the newest); otherwise the caller relays out. O(1)."""
        siblings = (self._eph if ephemeral else self._kids).get(parent)
        if not siblings:
            return True
        return created_key(self._created[entry_id]) >= created_key(self._created[siblings[-1]])

    def _place(self, entry_id: str, parent: str, depth: int, mark: str, at: int, ephemeral: bool) -> None:
        self.depth[entry_id] = depth
        self.mark[entry_id] = mark
        self._parent[entry_id] = parent
        (self._eph if ephemeral else self._kids).setdefault(parent, []).append(entry_id)
        if at >= len(self.lines):
            self.lines.append(entry_id)
        else:
            self.lines.insert(at, entry_id)
        self._valid = min(self._valid, at)
        self._pos[entry_id] = at
        self._changed(at)

    def _rebuild(self) -> None:
        """Lay the whole tree out again from the entries added so far. O(n)."""
        order = self._order
        self.lines, self.depth, self.mark, self.plen = [], {}, {}, {}
        self._parent, self._alias, self._kids, self._eph, self._pos, self._valid = {}, {}, {}, {}, {}, 0
        ids = {x[0] for x in order}
        for entry_id, parent_id, _eph, hidden in order:  # plen and the hidden ones' drawn ancestors
            known = parent_id in ids and parent_id != entry_id and parent_id in self.plen
            self.plen[entry_id] = self.plen[parent_id] + 1 if known else 1
            if hidden:
                self._alias[entry_id] = parent_id if parent_id in ids else ""
        for h in list(self._alias):
            chain = {h}
            up = self._alias[h]
            while up in self._alias and up not in chain:
                chain.add(up)
                up = self._alias[up]
            self._alias[h] = up if up not in self._alias else ""
        shown = [x for x in order if not x[3]]
        shown_ids = {x[0] for x in shown}
        kids: dict[str, list[str]] = {}
        eph: dict[str, list[str]] = {}
        ephemeral = {x[0] for x in shown if x[2]}
        parent_of: dict[str, str] = {}
        roots: list[str] = []  # no drawn parent: root-level entries and orphans, in log order
        top: list[str] = []  # root-level: no parent at all, or only hidden ancestors
        for entry_id, parent_id, is_eph, _h in shown:
            p = self._alias.get(parent_id, parent_id) if parent_id else ""
            if p and p in shown_ids and p != entry_id:
                parent_of[entry_id] = p
                (eph if is_eph else kids).setdefault(p, []).append(entry_id)
                continue
            roots.append(entry_id)
            if not p:
                top.append(entry_id)
        created = self._created.__getitem__
        for siblings in (*kids.values(), *eph.values()):
            sort_siblings(siblings, created)
        sort_siblings(roots, created)
        tops = set(top)
        top = [r for r in roots if r in tops]
        seen: set[str] = set()
        out: list[tuple[str, int, str]] = []

        def walk(root: str, depth: int = 0, mark: str = "root") -> None:
            stack = [(root, depth, mark)]
            while stack:
                x, dep, mk = stack.pop()
                if x in seen:
                    continue
                seen.add(x)
                out.append((x, dep, mk))
                durable = kids.get(x, [])
                if len(durable) == 1:
                    stack.append((durable[0], dep, "cont"))
                else:
                    stack.extend((k, dep + 1, "branch") for k in reversed(durable))
                stack.extend((k, dep + 1, "eph") for k in reversed(eph.get(x, ())))

        durable_top = [r for r in top if r not in ephemeral]
        kids[START] = durable_top
        if len(durable_top) > 1:
            out.append((START, 0, "root"))
            for r in top:
                walk(r, 1, "eph" if r in ephemeral else "branch")
        for r in roots:
            walk(r)
        for entry_id, *_rest in shown:
            if entry_id not in seen:
                walk(entry_id)  # a cycle: cut at its first entry in log order
        for k, (x, dep, mk) in enumerate(out):
            self.lines.append(x)
            self.depth[x] = dep
            self.mark[x] = mk
            self._pos[x] = k
            self._parent[x] = parent_of.get(x, "")
        self._valid = len(out)
        self._kids = kids
        self._eph = eph
        self._changed(0)
