"""A Hypothesis strategy for sessions the exporters' property tests share: several turns of user,
assistant (text, thinking, a redacted thought, tool calls), tool results (some failed, some late, some
missing), reminders, images, files, system prompts, meta input, compactions, custom entries and branches,
with odd text (empty strings, line and paragraph separators, quotes, markup, very long lines)."""

from __future__ import annotations

from hypothesis import strategies as st

from durable_nb import ai, durable
from durable_nb.session import CompactionEntry, CustomEntry, MemoryStore, MessageEntry, is_ephemeral

KEY = "sk-ant-api03-q8ZrT4vN2mLx7WcP0bY5sKd3HjF6gUe9RtAo1Vi"  # an API key-looking string
ODD = ["", " ", "\u2028", "\u2029", '"', "'", "\\", "\n", "\r\n", "</script>", "<b>x</b>", "&amp;", "]]>",
       "\x1b[31m", "\ufeff", "é", "日本", "😀", "x" * 3000, KEY]  # fmt: skip
text = st.one_of(st.sampled_from(ODD), st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)) | st.lists(
    st.sampled_from(ODD), min_size=2, max_size=3
).map(" ".join)  # a key glued to letters is one token, which --redact documents it leaves
ident = st.text("abcxyz_0123456789", min_size=1, max_size=6)
name = text.filter(lambda t: KEY not in t)  # a dict key: --redact leaves keys' names (docs/sharing.md), so no API key
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(name, inner, max_size=3),
    max_leaves=6,
)
image = st.builds(
    ai.Image,
    st.binary(min_size=1, max_size=12),
    st.sampled_from(["image/png", "image/jpeg", "image/webp", "image/tiff"]),
)
file = st.builds(ai.File, data=st.binary(max_size=5), mime_type=st.just("application/pdf"), name=ident)
thinking = st.builds(ai.Thinking, text, ident) | st.builds(lambda r: ai.Thinking(redacted=r), ident)
user_block = st.one_of(st.builds(ai.Text, text), st.builds(ai.Reminder, text), image, file)
assistant_block = st.one_of(st.builds(ai.Text, text), thinking)
arguments = st.dictionaries(name, json_value, max_size=3)

turn = st.one_of(
    st.tuples(st.just("user"), st.lists(user_block, min_size=1, max_size=3)),
    st.tuples(
        st.just("assistant"),
        st.lists(assistant_block, max_size=3),
        st.lists(st.tuples(ident, arguments, st.sampled_from(["ok", "error", "none", "late"])), max_size=3),
    ),
    st.tuples(st.just("system"), text),
    st.tuples(st.just("meta"), text, st.none() | ident),
    st.tuples(st.just("compaction"), text, st.integers(0, 10**6)),
    st.tuples(st.just("custom"), ident, st.dictionaries(ident, json_value, max_size=3)),
    st.tuples(st.just("branch"), st.integers(0, 10**6)),
)
turns = st.tuples(
    st.tuples(st.just("user"), st.lists(user_block, min_size=1, max_size=2)), st.lists(turn, max_size=11)
).map(lambda t: [t[0], *t[1]])  # a session with at least one entry (an empty one is refused in one line)


def build(ops: list) -> durable.Agent:
    """Return an agent (MemoryStore, session ``rich``, offline model) whose log ``ops`` made. A tool call's
    fate: ``ok`` / ``error`` a result right after, ``late`` a result after the next turn, ``none`` none."""
    a = durable.Agent(model=lambda messages: "ok", store=MemoryStore(), session_id="rich")
    late: list[MessageEntry] = []
    n = 0
    for o in ops:
        kind = o[0]
        ids = [e.id for e in a.entries() if not is_ephemeral(e)]
        if kind == "user":
            a.append(MessageEntry(message=ai.Message("user", o[1])))
        elif kind == "assistant":
            calls = []
            for name, args, _ in o[2]:
                n += 1
                calls.append(ai.ToolCall(f"call_{n}", name, args))
            usage = {"input_tokens": 5, "output_tokens": 2}
            a.append(MessageEntry(message=ai.Message("assistant", [*o[1], *calls], model="m", usage=usage)))
            now = []
            for call, (_, _, fate) in zip(calls, o[2]):
                result = ai.Message("tool_result", [ai.Text(f"result of {call.id}")], tool_call_id=call.id,
                                    tool_name=call.name, is_error=fate == "error")  # fmt: skip
                if fate in ("ok", "error"):
                    now.append(MessageEntry(message=result))
                elif fate == "late":
                    late.append(MessageEntry(message=result))
            if now:
                a.append(*now)
            continue
        elif kind == "system":
            a.append(durable.system(o[1]))
        elif kind == "meta":
            a.append(durable.meta(o[1], origin=o[2]))
        elif kind == "compaction" and ids:
            a.append(CompactionEntry(summary=o[1], first_kept_id=ids[o[2] % len(ids)], tokens_before=o[2]))
        elif kind == "custom":
            a.append(CustomEntry(kind=o[1], data=o[2]))
        elif kind == "branch" and ids:
            a.branch(ids[o[1] % len(ids)])
            late = []
        if late and kind != "branch":
            a.append(*late)
            late = []
    return a
