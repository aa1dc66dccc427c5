"""Sessions for the widget tests and benchmark, built through the real agent."""

from __future__ import annotations

from durable_nb import ai, durable
from durable_nb.session import CustomEntry, MemoryStore, MessageEntry

HOSTILE = "Here: <img src=x onerror=window.__pwned=1> and <script>window.__pwned=1</script> done."
REMINDER = "Remember: the user is in Paris."


def scripted_model(messages: list[ai.Message]) -> str:
    """A deterministic model: a hostile reply when asked for HTML, a summary when asked to compact."""
    last = messages[-1].text()
    if "HTML" in last:
        return HOSTILE
    if last.startswith("Summarize"):
        return f"Summary of {len(messages) - 1} messages: weather in Paris, sunny."
    return f"Reply to: {last}"


def realistic_agent() -> durable.Agent:
    """Return an agent whose log has every kind of entry the widget draws.

    In append order: meta, ephemeral, user, reply; an assistant tool call and
    its result (with a Reminder block); a custom entry; a user turn whose
    reply is hostile HTML; a branch from the tool result with its own turn;
    a compaction keeping one turn; an ephemeral reminder plus a last turn.
    Attributes ``ids`` name the interesting entries.
    """
    a = durable.Agent(model=scripted_model, store=MemoryStore(), session_id="demo")
    ids = {}
    a.run(
        durable.meta("Answer briefly.", origin="skill:brief"),
        durable.ephemeral("Today is Monday.", origin="cell:clock"),
        durable.text("What day is it?"),
    ).wait()
    log = a.entries()
    ids["meta"], ids["eph"], ids["q1"], ids["r1"] = (e.id for e in log)
    call = MessageEntry(
        message=ai.Message(
            role="assistant", content=[ai.Text("Let me look."), ai.ToolCall("call_1", "search", {"q": "weather Paris"})]
        )
    )
    result = MessageEntry(
        message=ai.Message(
            role="tool_result",
            content=[ai.Text("Sunny, 21 C"), ai.Reminder(REMINDER)],
            tool_call_id="call_1",
            tool_name="search",
        )
    )
    ids["call"], ids["result"] = (e.id for e in a.append(call, result))
    (custom,) = a.append(CustomEntry(kind="artifact", data={"title": "forecast chart", "rows": 3}))
    ids["custom"] = custom.id
    a.run("Show it as HTML").wait()
    ids["html_q"], ids["hostile"] = (e.id for e in a.entries()[-2:])
    a.branch(ids["result"])
    a.run("And tomorrow?").wait()
    ids["alt_q"], ids["alt_r"] = (e.id for e in a.entries()[-2:])
    ids["compaction"] = a.compact(keep_turns=1).id
    a.run(durable.ephemeral("Five minutes left.", origin="cell:timer"), durable.text("Thanks, bye.")).wait()
    ids["eph2"], ids["last_q"], ids["last_r"] = (e.id for e in a.entries()[-3:])
    a.ids = ids
    return a


def long_agent(n: int, branch_every: int = 50) -> durable.Agent:
    """Return an agent with about ``n`` entries: user/assistant turns, a branch every ``branch_every`` turns,
    a meta entry and an ephemeral entry now and then. Appends directly (no model), in O(n)."""
    a = durable.Agent(model=scripted_model, store=MemoryStore())
    batch = []
    turn = 0
    while len(a.entries()) + len(batch) < n:
        turn += 1
        if turn % 10 == 0:
            batch.append(durable.meta(f"Context note {turn}", origin=f"cell:{turn}"))
        batch.append(durable.text(f"Question {turn}: what about item {turn}?"))
        batch.append(MessageEntry(message=ai.assistant_message(f"Answer {turn}: item {turn} is fine. " * 3)))
        if turn % branch_every == 0:
            a.append(*batch)
            batch = []
            a.branch(a.entries()[-3].id)
    if batch:
        a.append(*batch)
    return a


EVIL = '<img src="http://evil.test/x.png" onerror="window.__pwned=1"><script>window.__pwned=1</script>"\'&'


def hostile_agent() -> durable.Agent:
    """Return an agent where every string a page shows is hostile HTML (:data:`EVIL`): message
    text, origins, tool names, ids and arguments, an image's and a file's mime type and name, a
    custom entry's kind and fields, a compaction summary, and a branch. The session id is safe
    (stores refuse others); the pure renderers' tests give them a hostile one directly."""
    a = durable.Agent(model=lambda messages: f"Reply {EVIL}", store=MemoryStore(), session_id="hostile")
    a.run(durable.meta(f"meta {EVIL}", origin=f"cell:{EVIL}"), durable.text(f"Question {EVIL}")).wait()
    call = ai.ToolCall(f"call{EVIL}", f"tool{EVIL}", {EVIL: [EVIL, {"url": "http://evil.test/"}]})
    msg = ai.Message(
        role="assistant",
        content=[
            ai.Text(f"Calling {EVIL}"),
            call,
            ai.Image(data=b"\x89PNG....", mime_type=f"image/png{EVIL}"),
            ai.File(data=b"x", mime_type=EVIL, name=EVIL),
        ],
        origin=f"agent:{EVIL}",
        model=EVIL,
    )
    result = ai.Message(
        role="tool_result",
        content=[ai.Text(f"Result {EVIL}"), ai.Reminder(f"Reminder {EVIL}")],
        tool_call_id=call.id,
        tool_name=call.name,
        is_error=True,
    )
    first, second = a.append(MessageEntry(message=msg), MessageEntry(message=result))
    a.append(CustomEntry(kind=f"kind{EVIL}", data={EVIL: EVIL, "nested": {"html": EVIL}}))
    a.run(f"More {EVIL}").wait()
    a.branch(first.id)
    a.run(f"Branch {EVIL}").wait()
    a.compact(keep_turns=1)  # its summary is the model's hostile reply
    a.run(durable.ephemeral(f"Ephemeral {EVIL}", origin=f"cell:{EVIL}"), durable.text(f"Last {EVIL}")).wait()
    a.ids = {"call": first.id, "result": second.id}
    return a


def tool_agent() -> durable.Agent:
    """Return an agent whose session is a tool-using run, as the agent loop stores one.

    A user question; an assistant reply that thought (a Thinking block with
    hostile text, and a redacted one), said a line, and made two calls, the
    second with malformed arguments kept raw; two tool results with their
    durations (``timing``), the second an error carrying a Reminder block; the
    final answer with its provenance (model, usage, settings, timing).
    Attribute ``ids``: ``q``, ``calls``, ``ok``, ``failed``, ``answer``.
    """
    a = durable.Agent(model=scripted_model, store=MemoryStore(), session_id="tools")
    bad_call = ai.ToolCall("call_1", "lookup", ai.tool_arguments('{"q": "<b>sess'))
    calls = ai.Message(
        "assistant",
        [
            ai.Thinking(f"The user wants two words. {HOSTILE}", "sig-1"),
            ai.Thinking(redacted="EnCrYpTeD"),
            ai.Text("Looking both up."),
            ai.ToolCall("call_0", "lookup", {"q": "durable"}),
            bad_call,
        ],
        model="claude-test",
        stop_reason="tool_use",
        usage={"input_tokens": 120, "output_tokens": 45},
        timing={"ttft_ms": 310.0, "total_ms": 1250.0},
    )
    ok = ai.Message(
        "tool_result",
        [ai.Text("lasting; able to endure")],
        tool_call_id="call_0",
        tool_name="lookup",
        timing={"duration_ms": 12.4},
    )
    failed = ai.Message(
        "tool_result",
        [ai.Text(f"bad arguments: {bad_call.malformed()}"), ai.Reminder(REMINDER)],
        tool_call_id="call_1",
        tool_name="lookup",
        is_error=True,
        timing={"duration_ms": 1530.0},
    )
    answer = ai.Message(
        "assistant",
        [ai.Text("Durable means lasting; the session lookup failed.")],
        model="claude-test",
        stop_reason="end_turn",
        settings={"temperature": 0.2},
        timing={"ttft_ms": 200.0, "total_ms": 640.0},
    )
    entries = a.append(
        durable.text("Define durable and session."),
        *(MessageEntry(message=m) for m in (calls, ok, failed, answer)),
    )
    a.ids = dict(zip(("q", "calls", "ok", "failed", "answer"), (e.id for e in entries)))
    return a
