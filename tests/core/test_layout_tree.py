"""The widget's layout draws the tree ``session.tree()`` makes, over logs with orphans, parent cycles and
repeated ids, as far as the layout's module doc says they agree.

- Read off the drawn lines, each entry's parent is the line it hangs under: a ``cont`` line continues the
  nearest line above at its depth or less, a ``branch`` or ``eph`` line hangs under the nearest line above it
  at a smaller depth (none under the START row), a ``root`` under nothing.
- ``tree()`` of the log with its repeated ids dropped (in the layout the first entry keeps an id) gives the
  same parent for every entry: an orphan and a parent cycle's first entry in log order are roots, and an
  entry hanging below a cycle stays under its parent even when it comes first in the log.
- A hidden entry is not drawn: its children hang under its nearest drawn ancestor in ``tree()``'s forest (a
  parent cycle through a hidden entry is cut where ``tree()`` cuts it, among all entries).
- Children of one parent are drawn in ``tree()``'s order (off-chain ones first, then the durable ones).
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from durable_nb.session import CustomEntry, Entry
from durable_nb.session.tree import Node, tree
from durable_nb.widget.layout import START, Layout

IDS = [f"n{i}" for i in range(5)]
TIMES = ["", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]


@st.composite
def logs(draw) -> list[tuple[Entry, bool, bool]]:
    """Entries (id, parent, time), each with an off-chain and a hidden flag."""
    out = []
    for i in range(draw(st.integers(0, 9))):
        e = CustomEntry(
            id=draw(st.sampled_from(IDS)),
            parent_id=draw(st.sampled_from(["", "gone", *IDS])),
            created_at=draw(st.sampled_from(TIMES)),
            kind="x",
            data={"i": i},
        )
        out.append((e, draw(st.booleans()), draw(st.integers(0, 5)) == 0))
    return out


def drawn_parents(lay: Layout) -> dict[str, tuple[str | None, str]]:
    """Each drawn id's parent as read off the lines (``None``: it hangs under nothing), and its mark."""
    out: dict[str, tuple[str | None, str]] = {}
    above: list[tuple[str, int]] = []  # (id, depth) of the lines so far
    for i in lay.lines:
        depth, mark = lay.info(i)
        parent: str | None = None
        if mark != "root":
            deeper = (lambda d: d > depth) if mark == "cont" else (lambda d: d >= depth)
            j = len(above) - 1
            while j >= 0 and deeper(above[j][1]):
                j -= 1
            parent = above[j][0] if j >= 0 and above[j][0] != START else None
        assert i not in out, f"{i} drawn twice"
        if i != START:
            out[i] = (parent, mark)
        above.append((i, depth))
    return out


def tree_parents(nodes: list[Node], parent: Entry | None, into: dict[str, Entry | None]) -> None:
    for n in nodes:
        into[n.entry.id] = parent
        tree_parents(n.children, n.entry, into)


def tree_children(nodes: list[Node], into: dict[str | None, list[str]], parent: str | None = None) -> None:
    into[parent] = [n.entry.id for n in nodes]
    for n in nodes:
        tree_children(n.children, into, n.entry.id)


def check(log: list[tuple[Entry, bool, bool]], lay: Layout) -> None:
    seen: set[str] = set()
    firsts = [x for x in log if not (x[0].id in seen or seen.add(x[0].id))]  # the first entry keeps its id
    entries = [e for e, _, _ in firsts]
    hidden = {e.id for e, _, h in firsts if h}
    off = {e.id for e, o, _ in firsts if o}
    up: dict[str, Entry | None] = {}
    forest = tree(entries)
    tree_parents(forest, None, up)

    def shown(p: Entry | None) -> str | None:  # the nearest drawn ancestor's id
        while p is not None and p.id in hidden:
            p = up[p.id]
        return None if p is None else p.id

    got = drawn_parents(lay)
    assert sorted(got) == sorted(e.id for e in entries if e.id not in hidden), "every drawn entry once"
    for e in entries:
        if e.id not in hidden:
            assert got[e.id][0] == shown(up[e.id]), f"{e.id} drawn under {got[e.id][0]}, tree: {shown(up[e.id])}"
    if not hidden:  # children in tree order: the off-chain ones, then the durable ones
        kids: dict[str | None, list[str]] = {}
        tree_children(forest, kids)
        for parent, ids in kids.items():
            if parent is None:
                continue
            drawn_kids = [i for i in lay.lines if i and got[i][0] == parent]
            assert drawn_kids == [i for i in ids if i in off] + [i for i in ids if i not in off], parent


def columns(log: list[tuple[Entry, bool, bool]]) -> tuple[list, ...]:
    return (
        [e.id for e, _, _ in log],
        [e.parent_id for e, _, _ in log],
        [o for _, o, _ in log],
        [h for _, _, h in log],
        [e.created_at for e, _, _ in log],
    )


def through_hidden(ids: str, parents: str) -> list[tuple[Entry, bool, bool]]:
    """A log of entries named by one letter each, with their parents; ``h`` is hidden."""
    return [(CustomEntry(id=i, parent_id=p, kind="x"), False, i == "h") for i, p in zip(ids, parents)]


@settings(max_examples=300, deadline=None)
@given(logs())
@example(through_hidden("hba", "bah"))
@example(through_hidden("had", "dhh"))
def test_the_layout_draws_the_tree(log):
    check(log, Layout.build(*columns(log)))


@settings(max_examples=300, deadline=None)
@given(logs())
@example(through_hidden("hba", "bah"))
@example(through_hidden("had", "dhh"))
def test_the_layout_kept_one_entry_at_a_time_draws_the_tree(log):
    check(log, one_at_a_time(log))


def test_an_entry_hanging_below_a_cycle_stays_under_its_parent():
    """c hangs below the cycle a -> b -> a and comes first in the log: the cycle is cut at a (its first entry
    in log order), a is a root and c stays a's child (it was drawn as a root of its own)."""
    lay = Layout.build(["c", "a", "b"], ["a", "b", "a"], [False] * 3, [False] * 3, [""] * 3)
    assert [(i, *lay.info(i)) for i in lay.lines] == [("a", 0, "root"), ("c", 1, "branch"), ("b", 1, "branch")]


def test_a_cycle_through_a_hidden_entry_is_cut_where_tree_cuts_it():
    """A cycle h -> b -> a -> h whose first entry in log order, h, is hidden (a bookkeeping entry, say):
    ``tree()`` cuts it at h, so a is drawn as a root and b under a. The layout cut it among the drawn
    entries only, at b, and drew a under b: a parent a never had."""
    log = through_hidden("hba", "bah")
    for lay in (Layout.build(*columns(log)), one_at_a_time(log)):
        assert [(i, *lay.info(i)) for i in lay.lines] == [("a", 0, "root"), ("b", 0, "cont")]
        check(log, lay)


def test_a_hidden_entry_cut_from_a_cycle_leaves_its_children_roots():
    """h (hidden) and d name each other; a names h. ``tree()`` cuts at h, which then has children a and d:
    neither has a drawn ancestor. The layout made d its own parent through h, a root, and drew a under d."""
    log = through_hidden("had", "dhh")
    for lay in (Layout.build(*columns(log)), one_at_a_time(log)):
        assert [(i, *lay.info(i)) for i in lay.lines] == [("a", 0, "root"), ("d", 0, "root")]
        check(log, lay)


def one_at_a_time(log: list[tuple[Entry, bool, bool]]) -> Layout:
    lay = Layout()
    for e, o, h in log:
        lay.add(e.id, e.parent_id, o, h, e.created_at)
    return lay


def test_a_parent_later_in_the_log_takes_its_child_in_when_added():
    """c names a as its parent before a is added: one entry at a time, c moved under a only in a whole
    layout (it stayed a root); an entry its own parent was placed under itself."""
    lay = Layout()
    for entry_id, parent in [("x", ""), ("c", "a"), ("a", "x"), ("s", "s"), ("t", "s")]:
        lay.add(entry_id, parent)
    assert [(i, *lay.info(i)) for i in lay.lines] == [
        ("x", 0, "root"),
        ("a", 0, "cont"),
        ("c", 0, "cont"),
        ("s", 0, "root"),
        ("t", 0, "cont"),
    ]
