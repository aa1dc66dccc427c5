"""%durable compare in a real kernel: labels and ids, the text and HTML it displays, mistakes in one line."""

from __future__ import annotations

from test_kernel import one_line_usage_error

LEAF = "__import__('durable_nb.notebook', fromlist=['current']).current().agent.leaf_id"


def test_compare_two_branches_by_label_and_id(nb):
    nb.fresh()
    nb.cell("Write notes", cell_id="cmp-1")
    first = nb.k.value(LEAF)
    nb.k.ok("%durable label draft")
    nb.k.ok("%durable rewind")
    nb.cell("Write notes, grouped", cell_id="cmp-2", options="--temperature 0.7")
    second = nb.k.value(LEAF)
    r = nb.k.ok(f"%durable compare draft {second[:6]}")
    (shown,) = [d["data"] for d in r.displays if "text/html" in d.get("data", {})]
    text = shown["text/plain"]
    assert text.splitlines()[0] == "compare 2 entries (each against the first):"
    assert f"{second[:8]} against draft ({first[:8]}): 0 messages the same, 1 changed" in text
    assert "  setting   temperature: (not set) → 0.7" in text
    assert "  ~ #1 user: 'Write notes' → #1 user: 'Write notes, grouped'" in text
    assert "cost unknown" in text  # the offline model has no price
    assert "Write notes, grouped" in shown["text/html"] and "<script" not in shown["text/html"]


def test_compare_mistakes_are_one_line(nb):
    nb.fresh()
    nb.cell("Hello", cell_id="cmp-3")
    nb.k.ok("%durable label hello")
    assert one_line_usage_error(nb.k.run("%durable compare hello")).endswith(
        "%durable compare <entry> <entry> [entry...]"
    )
    line = one_line_usage_error(nb.k.run("%durable compare hello helo"))
    assert "helo" in line and "hello" in line  # did you mean
