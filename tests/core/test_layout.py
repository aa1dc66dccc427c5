"""durable_nb.widget.layout: the tree's drawn lines, kept up to date one entry at a time."""

from __future__ import annotations

import copy
import random

from durable_nb.widget.layout import START, Layout


def drawn(lay: Layout) -> list[tuple[str, int, str, int]]:
    return [(i, *lay.info(i), lay.kids_of(i)) for i in lay.lines]


def test_lines_depths_and_marks_of_a_small_tree():
    lay = Layout()
    for entry_id, parent, eph in [("a", "", False), ("b", "a", False), ("e", "a", True), ("c", "b", False)]:
        lay.add(entry_id, parent, eph)
    assert drawn(lay) == [("a", 0, "root", 1), ("e", 1, "eph", 0), ("b", 0, "cont", 1), ("c", 0, "cont", 0)]
    lay.add("d", "a")  # a second child: b's whole chain moves one level in, as a branch
    assert drawn(lay) == [
        ("a", 0, "root", 2),
        ("e", 1, "eph", 0),
        ("b", 1, "branch", 1),
        ("c", 1, "cont", 0),
        ("d", 1, "branch", 0),
    ]
    assert lay.take_changes() == 0 and lay.take_changes() is None
    lay.add("x", "")  # a second root: both hang under the START row
    assert lay.lines[0] == START and lay.kids_of(START) == 2 and lay.info("a") == (1, "branch")
    lay.add("h", "c", hidden=True)
    lay.add("k", "h")  # the child of a hidden entry hangs off its nearest drawn ancestor
    assert "h" not in lay.lines and lay.drawn("h") == "c" and lay.lines.index("k") == lay.lines.index("c") + 1


def test_siblings_are_drawn_oldest_first_whatever_the_log_order():
    lay = Layout()
    lay.add("r", "", created_at="2026-01-01T00:00:00Z")
    lay.add("b", "r", created_at="2026-01-01T00:00:09Z")
    lay.add("a", "r", created_at="2026-01-01T00:00:05Z")  # older than its sibling: drawn first
    lay.add("c", "r", created_at="2026-01-01T00:00:09Z")  # as old as b: log order
    assert lay.lines == ["r", "a", "b", "c"] and lay.info("a") == (1, "branch")


def test_adding_one_at_a_time_equals_laying_out_at_once():
    rng = random.Random(7)
    for trial in range(200):
        lay = Layout()
        ids: list[str] = []
        for i in range(rng.randint(1, 40)):
            r = rng.random()
            parent = "" if not ids or r < 0.05 else f"gone{i}" if r < 0.08 else ids[-1] if r < 0.6 else rng.choice(ids)
            entry_id = rng.choice(ids) if ids and rng.random() < 0.03 else f"e{i}"  # now and then a duplicate id
            # times mostly grow with the log; now and then one is older, equal, or unreadable
            when = (
                f"2026-01-01T00:{min(59, i + rng.choice([0, 0, 0, 0, -3, -i])):02d}:00Z" if rng.random() > 0.05 else ""
            )
            lay.add(entry_id, parent, rng.random() < 0.15, trial % 3 == 0 and rng.random() < 0.1, when)
            ids.append(entry_id)
            fresh = copy.deepcopy(lay)
            fresh._rebuild()
            assert drawn(lay) == drawn(fresh), (trial, i)
            built = Layout.build(
                *(list(x) for x in (fresh._ids, fresh._raw, fresh._off, fresh._hidden, fresh._created))
            )
            assert drawn(built) == drawn(lay)
            assert [lay.position(x) for x in lay.lines] == list(range(len(lay.lines)))


def test_a_copy_grows_apart_from_its_original():
    lay = Layout()
    for entry_id, parent in [("a", ""), ("b", "a"), ("c", "b")]:
        lay.add(entry_id, parent)
    before = drawn(lay)
    twin = lay.copy()
    twin.add("d", "a")  # a branch point in the copy only
    twin.add("x", "")
    assert drawn(lay) == before and lay.position("c") == 2
    lay.add("e", "c")
    assert "e" not in twin and twin.kids_of("a") == 2 and twin.lines[0] == START
    assert drawn(lay) == [*before[:2], ("c", 0, "cont", 1), ("e", 0, "cont", 0)]
