"""The comparison's data (what the widget's compare view draws) and its static forms: exact text on a
hand-built pair of branches; hostile strings stay text in the HTML."""

from __future__ import annotations

from test_fallback import Markup
from widget_sessions import EVIL

from durable_nb import ai, durable
from durable_nb.session import MemoryStore, MessageEntry
from durable_nb.widget import comparison


def reply(text: str, model: str, settings: dict, usage: dict, total_ms: float) -> MessageEntry:
    m = ai.Message(
        role="assistant",
        content=[ai.Text(text)],
        model=model,
        settings=settings,
        usage=usage,
        timing={"total_ms": total_ms},
    )
    return MessageEntry(message=m)


def two_branches(evil: str = "") -> tuple[durable.Agent, str, str]:
    """s, u1 'Write notes' -> a (gpt-4o-mini, t=0.2) | meta + u1' 'Write notes, grouped' -> b (offline, t=0.7)."""
    a = durable.Agent(store=MemoryStore(), system="Be brief.")
    top = a.leaf_id
    a.append(durable.text("Write notes" + evil))
    a.append(
        reply("- one" + evil, "gpt-4o-mini", {"temperature": 0.2}, {"input_tokens": 1000, "output_tokens": 200}, 850)
    )
    first = a.leaf_id
    a.branch(top)
    a.append(durable.meta("Use bullets." + evil, origin="cell:x"), durable.text("Write notes, grouped"))
    a.append(reply("* one", "offline", {"temperature": 0.7, "seed": 1}, {"input_tokens": 12, "output_tokens": 3}, 2))
    return a, first, a.leaf_id


def test_state_and_text_are_exact():
    a, first, second = two_branches()
    s = comparison.state(durable.compare(a, first, second), {first: ["draft"]})
    assert s["diffs"] == [
        {
            "a": 0,
            "b": 1,
            "same": 0,
            "messages": [{"op": "added", "a": None, "b": 0}, {"op": "changed", "a": 0, "b": 1}],
            "system": None,
            "model": ["gpt-4o-mini", "offline"],
            "settings": {"temperature": [0.2, 0.7], "seed": [None, 1]},
        }
    ]
    left, right = s["sides"]
    assert left["labels"] == ["draft"] and right["labels"] == []
    assert left["cost"]["input_tokens"] == 1000 and left["cost"]["cost"].startswith("$")
    assert right["cost"]["cost"] == "cost unknown"  # the offline model has no price: unknown, never $0
    assert right["messages"] == [
        {"i": 0, "role": "user", "text": "Use bullets.", "injected": "meta", "origin": "cell:x"},
        {"i": 1, "role": "user", "text": "Write notes, grouped"},
    ]
    f, g = first[:8], second[:8]
    lines = comparison.text(s).splitlines()
    assert lines[0] == "compare 2 entries (each against the first):"
    assert lines[1].startswith(f"  {f}  gpt-4o-mini · temperature=0.2 · 1,000 in / 200 out tokens · $")
    assert lines[1].endswith(" · 850 ms")
    assert lines[2] == f"  {g}  offline · temperature=0.7, seed=1 · 12 in / 3 out tokens · cost unknown · 2 ms"
    assert lines[3:] == [
        f"{g} against {f}: 0 messages the same, 1 changed, 1 added",
        "  model     gpt-4o-mini → offline",
        "  setting   temperature: 0.2 → 0.7",
        "  setting   seed: (not set) → 1",
        "  + #1 user [meta]: 'Use bullets.'",
        "  ~ #1 user: 'Write notes' → #2 user: 'Write notes, grouped'",
        "replies:",
        f"  {f}: assistant: '- one'",
        f"  {g}: assistant: '* one'",
    ]


def test_html_keeps_hostile_text_as_text():
    a, first, second = two_branches(EVIL)
    s = comparison.state(durable.compare(a, first, second))
    page = comparison.html(s)
    m = Markup(page)
    assert m.tags <= {"div", "p", "b", "table", "tr", "th", "td", "pre"}
    assert m.attrs <= {"class", "style", "colspan"}
    assert "<script" not in page and "<img" not in page
    assert EVIL in "".join(m.text)  # shown, as text


def test_a_long_diff_is_bounded_and_still_counts_every_change():
    a = durable.Agent(store=MemoryStore(), model=lambda m: "ok")
    a.run("start").wait()
    short_leaf = a.leaf_id
    a.branch(a.path()[0].id)
    for i in range(60):
        a.append(durable.text(f"question {i}"), MessageEntry(message=ai.assistant_message(f"answer {i}")))
    a.run("last").wait()
    s = comparison.state(durable.compare(a, short_leaf, a.leaf_id))
    (d,) = s["diffs"]
    assert len(d["messages"]) == 121 and d["same"] == 1  # every change is in the data: 120 turns and 'last' added
    long_side = s["sides"][1]
    assert long_side["message_total"] == 122 and len(long_side["messages"]) == comparison.SHOWN
    assert long_side["messages"][-1]["text"] == "last"  # the request's end is always shown
    text = comparison.text(s)
    assert f"  … and {len(d['messages']) - comparison.CHANGES} more changes" in text
    assert "(not shown: see the model view of that entry)" in text
    assert "more changes" in comparison.html(s)
