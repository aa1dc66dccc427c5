"""Rule R6's repair of dangling tool calls, held to the rule written out plainly.

Each assistant message opens a segment (until the next assistant message).
A call of its message is answered by a ``tool_result`` with the call's id
anywhere in the segment; each call left unanswered gets one synthesized
"interrupted" error result, placed right after the results that directly
follow the message (before the segment's first message that is not a
result). The latest system message goes first.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from durable_nb import ai
from durable_nb.session import MessageEntry, model_view
from durable_nb.session.view import INTERRUPTED, ViewBuilder

IDS = ["a", "b", "c"]


def interrupted(call: ai.ToolCall) -> ai.Message:
    return ai.Message(
        role="tool_result", content=[ai.Text(INTERRUPTED)], tool_call_id=call.id, tool_name=call.name, is_error=True
    )


def reference(msgs: list[ai.Message]) -> list[ai.Message]:
    system = None
    segments: list[list[ai.Message]] = []
    for m in msgs:
        if m.role == "system":
            system = m
        elif m.role == "assistant" or not segments:
            segments.append([m])
        else:
            segments[-1].append(m)
    out: list[ai.Message] = [system] if system is not None else []
    for seg in segments:
        calls: dict[str, ai.ToolCall] = {}
        if seg[0].role == "assistant":
            for b in seg[0].content:
                if type(b) is ai.ToolCall:
                    calls[b.id] = b  # a repeated id: its first place, its last call
        answered = {m.tool_call_id or "" for m in seg[1:] if m.role == "tool_result"}
        k = 1
        while k < len(seg) and seg[k].role == "tool_result":
            k += 1
        out += seg[:k] + [interrupted(c) for i, c in calls.items() if i not in answered] + seg[k:]
    return out


def message(draw) -> ai.Message:
    role = draw(st.sampled_from(["user", "assistant", "assistant", "tool_result", "tool_result", "system"]))
    if role == "assistant":
        ids = draw(st.lists(st.sampled_from(IDS), max_size=3))
        return ai.Message(role, [ai.Text("r"), *(ai.ToolCall(i, f"tool_{i}", {}) for i in ids)])
    if role == "tool_result":
        return ai.Message(role, [ai.Text("ok")], tool_call_id=draw(st.sampled_from(IDS)))
    return ai.Message(role, [ai.Text(role)])


messages = st.lists(st.composite(message)(), max_size=14)


def test_a_call_answered_late_never_moves_a_later_calls_repair():
    """A result that comes after the user's next message still answers its call; the next message's
    dangling call is then repaired right after that message, not where the first one's would have gone."""
    first = ai.Message("assistant", [ai.ToolCall("c1", "f", {})])
    later = ai.Message("assistant", [ai.ToolCall("c2", "f", {})])
    msgs = [
        first,
        ai.Message("user", [ai.Text("u")]),
        ai.Message("tool_result", [ai.Text("r1")], tool_call_id="c1"),
        later,
        ai.Message("user", [ai.Text("u2")]),
        ai.Message("assistant", [ai.Text("done")]),
    ]
    view = model_view([MessageEntry(id=str(i), message=m) for i, m in enumerate(msgs)])
    assert [(m.role, m.tool_call_id) for m in view] == [
        ("assistant", None),
        ("user", None),
        ("tool_result", "c1"),
        ("assistant", None),
        ("tool_result", "c2"),
        ("user", None),
        ("assistant", None),
    ]
    assert view[4].is_error and view[4].text() == INTERRUPTED


@settings(max_examples=300, deadline=None)
@given(messages)
def test_the_repaired_view_is_the_rule_written_out(msgs):
    builder = ViewBuilder()
    for m in msgs:
        builder.add(m)
    assert builder.messages() == reference(msgs)
