"""durable_nb.widget.layout lanes: sibling branches read as siblings (├ … └), never as a chain."""

from __future__ import annotations

import random

from durable_nb.widget.layout import START, Layout


def lanes_by_rule(lay: Layout) -> dict[str, list[bool]]:
    """The lanes of every drawn line, from the drawn lines alone (the rule :meth:`Layout.rails`
    keeps incrementally): a lane at level l runs on past line i when, going down, a branch or
    off-chain line at level l comes before any line shallower than l. O(lines^2): tests only."""
    lines = lay.lines
    info = [lay.info(i) for i in lines]
    out = {}
    for i, entry_id in enumerate(lines):
        if entry_id == START:
            continue
        depth = info[i][0]
        rails = []
        for level in range(1, depth + 1):
            on = False
            for d, mark in info[i + 1 :]:
                if d < level:
                    break
                if d == level and mark != "cont":
                    on = True
                    break
            rails.append(on)
        out[entry_id] = rails
    return out


def test_two_sibling_branches_draw_a_tee_then_an_elbow():
    lay = Layout()
    for entry_id, parent in [("r", ""), ("a", "r"), ("a2", "a"), ("b", "r"), ("b2", "b")]:
        lay.add(entry_id, parent)
    assert lay.lines == ["r", "a", "a2", "b", "b2"]
    # ├ a / │ a2 / └ b / (nothing) b2
    assert [lay.rails(i) for i in lay.lines] == [[], [True], [True], [False], [False]]
    lay.add("c", "r")  # a third branch: b is no longer the last one
    assert lay.rails("b") == [True] and lay.rails("b2") == [True] and lay.rails("c") == [False]
    lay.add("x", "")  # a second root: the session's branches hang under START, a lane of their own
    assert lay.lines[0] == START and lay.rails(START) == []
    assert lay.rails("r") == [True] and lay.rails("a") == [True, True] and lay.rails("x") == [False]


def test_off_chain_entries_open_a_lane_until_the_chain_goes_on():
    lay = Layout()
    for entry_id, parent, off in [("r", "", False), ("e1", "r", True), ("e2", "r", True), ("c", "r", False)]:
        lay.add(entry_id, parent, off)
    assert lay.lines == ["r", "e1", "e2", "c"]
    assert [lay.rails(i) for i in lay.lines] == [[], [True], [False], []]
    lay.add("d", "r")  # two durable children: the asides' lane runs on to the branches
    assert lay.rails("e2") == [True] and lay.rails("d") == [False]


def test_deep_lanes_give_the_innermost_levels_only():
    lay = Layout()
    lay.add("r", "")
    parent = "r"
    for i in range(40):  # each level forks: depth grows by one per level
        lay.add(f"a{i}", parent)
        lay.add(f"b{i}", parent)
        parent = f"a{i}"
    assert lay.info("a39")[0] == 40 and len(lay.rails("a39")) == 16 and len(lay.rails("a39", 100)) == 40


def test_lanes_kept_one_entry_at_a_time_equal_the_rule_and_a_fresh_layout():
    rng = random.Random(11)
    for trial in range(150):
        lay = Layout()
        ids: list[str] = []
        for i in range(rng.randint(1, 35)):
            r = rng.random()
            parent = "" if not ids or r < 0.05 else ids[-1] if r < 0.55 else rng.choice(ids)
            when = f"2026-01-01T00:{min(59, i + rng.choice([0, 0, 0, -2])):02d}:00Z"
            lay.add(f"e{i}", parent, rng.random() < 0.15, trial % 3 == 0 and rng.random() < 0.1, when)
            ids.append(f"e{i}")
            want = lanes_by_rule(lay)
            assert {x: lay.rails(x, 100) for x in want} == want, (trial, i)
            fresh = Layout.build(*(list(x) for x in (lay._ids, lay._raw, lay._off, lay._hidden, lay._created)))
            assert {x: fresh.rails(x, 100) for x in want} == want, (trial, i)
