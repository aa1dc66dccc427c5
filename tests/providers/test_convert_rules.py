"""Model views as the package builds them, converted for each API, held to the API's structural rules.

Hypothesis writes paths the way sessions grow them: user prompts (empty
ones too), injected context (meta, ephemeral, reminders), assistant replies
with thinking and tool calls (fresh ids, ``call_0`` reused every turn as
some servers do, or one id for every call of a reply, as a model or an
imported log may give), results that come at once, late (after the user's
next message) or never, system prompts, custom entries and compactions cut at a
turn start (rule R11). :func:`~durable_nb.session.model_view` builds the
view (rule R6); the converters' output is checked by plain validators that
write out what each API documents about a request's structure:

- Anthropic Messages: the roles alternate, starting with ``user``; no two
  ``tool_use`` blocks of a message share an id; every
  ``tool_use`` of an assistant message has its ``tool_result`` in the very
  next message, a user message, whose ``tool_result`` blocks come first and
  answer only that assistant message's calls; no message and no text block
  is empty.
- OpenAI Chat Completions: no two ``tool_calls`` of a message share an id;
  an assistant message with ``tool_calls`` is followed, before any other
  role, by one ``tool`` message per call id; a ``tool`` message answers a
  call of the nearest assistant message with ``tool_calls`` before it.

The reverse holds too: every text, reminder, call and result the view keeps
reaches the request, once (a call or result the API cannot take as one goes
as text headed by its id). Nothing here opens a socket.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from durable_nb import ai
from durable_nb.models.anthropic_messages import to_anthropic
from durable_nb.models.blocks import reminder_text
from durable_nb.models.openai_chat import to_openai
from durable_nb.session import CompactionEntry, CustomEntry, MessageEntry, model_view, split_system

SIGNED = "anthropic-signature"
UNMATCHED = "Result of tool call "  # how a result that answers no call in the request is sent, as text
REPEATED = "Tool call "  # how a call whose id an earlier call of its message has is sent, as text


class Path:
    """A path being written: its entries, and what a new entry may refer to."""

    def __init__(self) -> None:
        self.entries: list[Any] = []
        self.serial = 0
        self.unanswered: list[ai.ToolCall] = []  # the latest assistant message's calls not answered yet
        self.turn_starts: list[str] = []

    def text(self, kind: str) -> str:
        self.serial += 1
        return f"<{kind}{self.serial}>"  # unique, and no text is a substring of another

    def add(self, entry: Any) -> None:
        entry.id = f"e{len(self.entries)}"
        self.entries.append(entry)


@st.composite
def paths(draw, max_steps: int = 16) -> list[Any]:
    """Return a path (a list of entries) as a session writes one; see the module's docstring."""
    p = Path()
    if draw(st.booleans()):
        p.add(MessageEntry(message=ai.system_message(p.text("sys"))))
    first = MessageEntry(message=ai.user_message(p.text("u")))
    p.add(first)
    p.turn_starts.append(first.id)
    for _ in range(draw(st.integers(0, max_steps))):
        step = draw(
            st.sampled_from(
                ["user", "user", "injected", "assistant", "assistant", "result", "result", "result", "other"]
            )
        )
        if step == "result" and p.unanswered:
            call = p.unanswered.pop(draw(st.integers(0, len(p.unanswered) - 1)))
            blocks: list[ai.Block] = [ai.Text(draw(st.sampled_from([p.text("r"), ""])))]
            if draw(st.booleans()):
                blocks.append(ai.Reminder(p.text("rem")))
            if draw(st.integers(0, 4)) == 0:
                blocks.append(ai.Image(b"PNG", "image/png"))
            msg = ai.Message(
                "tool_result", blocks, tool_call_id=call.id, tool_name=call.name, is_error=draw(st.booleans())
            )
            p.add(MessageEntry(message=msg))
        elif step == "assistant":
            blocks = []
            thinking = draw(st.sampled_from(["", "", "signed", "unsigned"]))
            if thinking:
                blocks.append(ai.Thinking(p.text("th"), SIGNED if thinking == "signed" else ""))
            blocks.append(ai.Text(draw(st.sampled_from([p.text("a"), p.text("a"), ""]))))
            ids = draw(st.sampled_from(["fresh", "reused", "repeated"]))  # reused: call_<index> every turn, as
            one = p.text("id")  # a server that sends no id; repeated: one id for every call of the reply
            calls = [
                ai.ToolCall(
                    {"fresh": p.text("id"), "reused": f"call_{i}", "repeated": one}[ids],
                    draw(st.sampled_from(["ls", "cat"])),
                    {"n": i},
                )
                for i in range(draw(st.integers(0, 3)))
            ]
            blocks += calls
            p.unanswered = list(calls)
            p.add(MessageEntry(message=ai.Message("assistant", blocks)))
        elif step == "injected":
            kind = draw(st.sampled_from([ai.Injection.META, ai.Injection.EPHEMERAL]))
            block = draw(st.sampled_from([ai.Text(p.text("inj")), ai.Reminder(p.text("inj")), ai.Text("")]))
            p.add(MessageEntry(message=ai.Message("user", [block], injected=kind, origin="cell:x")))
        elif step == "user":
            p.add(MessageEntry(message=ai.user_message(draw(st.sampled_from([p.text("u"), p.text("u"), ""])))))
            p.turn_starts.append(p.entries[-1].id)
        elif step == "other":
            other = draw(st.sampled_from(["system", "custom", "compaction"]))
            if other == "system":
                p.add(MessageEntry(message=ai.system_message(p.text("sys"))))
            elif other == "custom":
                p.add(CustomEntry(kind="note"))
            else:  # cut at a turn start, as compaction_cut does, or keep nothing before it
                kept = draw(st.sampled_from(["", *p.turn_starts]))
                p.add(CompactionEntry(summary=p.text("sum"), first_kept_id=kept))
    return p.entries


# --- Anthropic Messages ------------------------------------------------------------------------------


def anthropic_violations(msgs: list[dict[str, Any]]) -> list[str]:
    """Return the Messages API's structural rules ``msgs`` breaks (``[]``: none)."""
    bad = []
    if msgs and msgs[0]["role"] != "user":
        bad.append("the first message is not a user message")
    for i, m in enumerate(msgs):
        if i and m["role"] == msgs[i - 1]["role"]:
            bad.append(f"messages {i - 1} and {i} are both {m['role']}")
        if not m["content"]:
            bad.append(f"message {i} is empty")
        for b in _all_blocks(m["content"]):
            if b["type"] == "text" and not b["text"]:
                bad.append(f"message {i} has an empty text block")
        kinds = [b["type"] for b in m["content"]]
        uses = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
        if len(set(uses)) < len(uses):
            bad.append(f"message {i} holds two tool_use blocks of one id: {uses}")
        if m["role"] == "assistant" and "tool_result" in kinds:
            bad.append(f"assistant message {i} holds a tool_result")
        if m["role"] == "user" and "tool_use" in kinds:
            bad.append(f"user message {i} holds a tool_use")
        results = [b["tool_use_id"] for b in m["content"] if b["type"] == "tool_result"]
        if results and kinds[: len(results)] != ["tool_result"] * len(results):
            bad.append(f"user message {i}: a block comes before its tool_result blocks")
        calls = [b["id"] for b in msgs[i - 1]["content"] if b["type"] == "tool_use"] if i else []
        if m["role"] == "user":
            if sorted(results) != sorted(calls):
                bad.append(f"user message {i} answers {sorted(results)}, the message before it calls {sorted(calls)}")
        elif calls:
            bad.append(f"assistant message {i - 1}'s calls {calls} get no tool_result in the next message")
    if msgs and any(b["type"] == "tool_use" for b in msgs[-1]["content"]):
        bad.append("the last message's tool calls get no tool_result")
    return bad


def _all_blocks(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for b in content:
        out.append(b)
        if b["type"] == "tool_result":
            out += b.get("content", [])
    return out


def anthropic_pieces(msgs: list[dict[str, Any]]) -> Counter[str]:
    """Return the texts, call ids and result ids the request holds, counted."""
    out: Counter[str] = Counter()
    for m in msgs:
        for b in _all_blocks(m["content"]):
            if b["type"] == "text" and b["text"].startswith(UNMATCHED):  # a result whose call is not there
                out["result " + b["text"][len(UNMATCHED) :].split(" (")[0].removesuffix(":")] += 1
            elif b["type"] == "text" and b["text"].startswith(REPEATED):  # a call whose id is taken
                out["call " + b["text"][len(REPEATED) :].split(" (")[0]] += 1
            elif b["type"] == "text":
                out[b["text"]] += 1
            elif b["type"] == "tool_use":
                out["call " + b["id"]] += 1
            elif b["type"] == "tool_result":
                out["result " + b["tool_use_id"]] += 1
            elif b["type"] == "thinking":
                out[b["thinking"]] += 1
    return out


# --- OpenAI Chat Completions -------------------------------------------------------------------------


def openai_violations(msgs: list[dict[str, Any]]) -> list[str]:
    """Return the Chat Completions API's rules about tool messages that ``msgs`` breaks (``[]``: none)."""
    bad = []
    owed: list[str] = []  # the ids the latest assistant message with tool_calls still waits for
    calls: list[str] = []  # that message's call ids
    for i, m in enumerate(msgs):
        if m["role"] == "tool":
            if m["tool_call_id"] not in calls:
                bad.append(f"tool message {i} answers {m['tool_call_id']!r}, not a call of the latest {calls}")
            elif m["tool_call_id"] not in owed:
                bad.append(f"tool message {i} answers {m['tool_call_id']!r} twice, or after another role")
            else:
                owed.remove(m["tool_call_id"])
            continue
        if owed:
            bad.append(f"message {i} ({m['role']}) comes before the tool messages for {owed}")
        calls = [c["id"] for c in m.get("tool_calls") or []]  # another role ends the run of tool messages
        if len(set(calls)) < len(calls):
            bad.append(f"message {i} holds two tool_calls of one id: {calls}")
        owed = list(calls)
    if owed:
        bad.append(f"the tool calls {owed} get no tool message")
    return bad


def openai_text(msgs: list[dict[str, Any]]) -> str:
    """Return every text of the request, joined (a text is found in it as a substring)."""
    pieces = []
    for m in msgs:
        c = m.get("content")
        if isinstance(c, str):
            pieces.append(c)
        elif isinstance(c, list):
            pieces += [p["text"] for p in c if p["type"] == "text"]
    return "\x00".join(pieces)


# --- what the view keeps -------------------------------------------------------------------------------


def view_pieces(view: list[ai.Message], thinking: bool) -> Counter[str]:
    """Return the non-empty texts, call ids and result ids of a view, counted (signed thinking with
    ``thinking``: the one kind of reasoning the Messages API takes back)."""
    out: Counter[str] = Counter()
    for m in view:
        if m.role == "tool_result":
            out["result " + (m.tool_call_id or "")] += 1
        for b in m.content:
            if isinstance(b, ai.Text) and b.text:
                out[b.text] += 1
            elif isinstance(b, ai.Reminder):
                out[reminder_text(b.text)] += 1
            elif isinstance(b, ai.ToolCall):
                out["call " + b.id] += 1
            elif isinstance(b, ai.Thinking) and thinking and b.signature == SIGNED:
                out[b.text] += 1
    return out


def request(entries: list[Any]) -> tuple[str | None, list[ai.Message]]:
    return split_system(model_view(entries))


def late_answer() -> list[Any]:
    """A call answered after the user's next message (the order the view keeps)."""
    msgs = [
        ai.user_message("<u1>"),
        ai.Message("assistant", [ai.ToolCall("c1", "ls", {})]),
        ai.user_message("<u2>"),
        ai.Message("tool_result", [ai.Text("<r1>")], tool_call_id="c1"),
    ]
    return [MessageEntry(id=f"e{i}", message=m) for i, m in enumerate(msgs)]


def late_answer_compacted() -> list[Any]:
    """A compaction kept the last turn, which holds the late answer but not its call."""
    return [*late_answer(), CompactionEntry(id="e4", summary="<sum>", first_kept_id="e2")]


def repeated_ids() -> list[Any]:
    """Two calls of one reply with one id, each answered (a model or an imported log can give this)."""
    msgs = [
        ai.user_message("<u1>"),
        ai.Message("assistant", [ai.Text("<a1>"), ai.ToolCall("c1", "ls", {"n": 0}), ai.ToolCall("c1", "cat", {})]),
        ai.Message("tool_result", [ai.Text("<r1>")], tool_call_id="c1", tool_name="ls"),
        ai.Message("tool_result", [ai.Text("<r2>")], tool_call_id="c1", tool_name="cat", is_error=True),
    ]
    return [MessageEntry(id=f"e{i}", message=m) for i, m in enumerate(msgs)]


def test_openai_sends_a_late_answer_right_after_its_call():
    assert to_openai(request(late_answer())[1]) == [
        {"role": "user", "content": "<u1>"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "<r1>"},
        {"role": "user", "content": "<u2>"},
    ]


def test_an_answer_whose_call_was_compacted_away_goes_as_text():
    msgs = request(late_answer_compacted())[1]
    assert [(m.role, m.tool_call_id) for m in msgs] == [("user", None), ("user", None), ("tool_result", "c1")]
    summary = msgs[0].text()
    assert to_openai(msgs) == [
        {"role": "user", "content": summary},
        {"role": "user", "content": "<u2>"},
        {"role": "user", "content": "Result of tool call c1:\n\n<r1>"},
    ]
    assert to_anthropic(msgs) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": summary},
                {"type": "text", "text": "<u2>"},
                {"type": "text", "text": "Result of tool call c1:"},
                {"type": "text", "text": "<r1>"},
            ],
        }
    ]


def test_two_calls_of_one_id_go_as_one_call_answered_once_and_the_rest_as_text():
    """The APIs refuse two calls of one id in a message (and OpenAI two ``tool`` messages for one id): the
    first call of an id goes as the call, answered by the first result of that id, as the model view pairs
    them; a repeated call and a second result go as text headed by the id, so nothing is dropped."""
    msgs = request(repeated_ids())[1]
    repeat = "Tool call c1 (an earlier call has this id): cat {}"
    assert to_openai(msgs) == [
        {"role": "user", "content": "<u1>"},
        {
            "role": "assistant",
            "content": f"<a1>\n\n{repeat}",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"n": 0}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "<r1>"},
        {"role": "user", "content": "Result of tool call c1 (an error):\n\n<r2>"},
    ]
    assert to_anthropic(msgs) == [
        {"role": "user", "content": [{"type": "text", "text": "<u1>"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "<a1>"},
                {"type": "text", "text": repeat},  # before the tool_use blocks, as in OpenAI's message
                {"type": "tool_use", "id": "c1", "name": "ls", "input": {"n": 0}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "<r1>"}]},
                {"type": "text", "text": "Result of tool call c1 (an error):"},
                {"type": "text", "text": "<r2>"},
            ],
        },
    ]


@settings(max_examples=150, deadline=None)
@given(paths())
@example(late_answer())
@example(late_answer_compacted())
@example(repeated_ids())
def test_anthropic_requests_follow_the_messages_api_rules(entries):
    _, msgs = request(entries)
    out = to_anthropic(msgs)
    assert anthropic_violations(out) == [], json.dumps(out, indent=1)
    assert anthropic_pieces(out) == view_pieces(msgs, thinking=True)


@settings(max_examples=150, deadline=None)
@given(paths())
@example(late_answer())
@example(late_answer_compacted())
@example(repeated_ids())
def test_openai_requests_follow_the_chat_completions_rules(entries):
    system, msgs = request(entries)
    out = to_openai(msgs, system)
    assert openai_violations(out) == [], json.dumps(out, indent=1)
    assert [m["role"] for m in out if m["role"] == "system"] == (["system"] if system else [])
    text = openai_text(out)
    for piece, count in view_pieces(msgs, thinking=False).items():
        kind, _, name = piece.partition(" ")
        if kind == "call":
            calls = sum(c["id"] == name for m in out for c in m.get("tool_calls", []))
            assert calls + text.count(f"{REPEATED}{name} (") == count, piece
        elif kind == "result":
            answers = sum(m.get("tool_call_id") == name for m in out)
            assert answers + text.count(f"{UNMATCHED}{name}:") + text.count(f"{UNMATCHED}{name} (") == count, piece
        else:
            assert piece in text, piece
