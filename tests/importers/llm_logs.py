"""Write a real llm (simonw/llm >= 0.32) log database, offline, through llm's own Python API.

The model is a local plugin-style model (an ``llm.Model`` subclass answering
from what it received: no network). llm itself logs each response
(``Response.log_to_db``), so the rows, hashes and forks are exactly what llm
writes. ``write_logs(path)`` returns the ids it made.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import llm
import sqlite_utils
from llm.logs import LogStore
from llm.parts import StreamEvent, TextPart, ToolResultPart

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
NOVEL = "It was a dark and stormy night; the rain fell in torrents. " * 4


class Echo(llm.Model):
    """Answers with what it read; calls ``weather`` when asked about the weather; reasons first."""

    model_id = "echo-local"
    can_stream = True
    supports_tools = True
    attachment_types = frozenset({"image/png"})

    def execute(self, prompt, stream, response, conversation):
        last = prompt.messages[-1]
        response.set_usage(input=7 * len(prompt.messages), output=5)
        results = [p for p in last.parts if isinstance(p, ToolResultPart)]
        if results:
            yield "The tool said: " + "; ".join(p.output for p in results)
            return
        text = "".join(p.text for p in last.parts if isinstance(p, TextPart))
        yield StreamEvent(type="reasoning", chunk="thinking about " + text[:24])
        if prompt.tools and "weather" in text:
            response.add_tool_call(llm.ToolCall(name="weather", arguments={"city": "Paris"}, tool_call_id="call_w1"))
            yield "Let me check."
            return
        yield f"echo: {text[:40]}" + (f" (+{len(prompt.attachments)} attachment)" if prompt.attachments else "")


def weather(city: str) -> str:
    "Get the weather for a city."
    return f"sunny in {city}"


@dataclass
class Logged:
    main: str  # the conversation with a tool call, a fragment and an image
    fork: str  # a fork of it after the first answer, continued with another question
    other: str  # an unrelated conversation
    first_answer: str  # hash of the message the fork branches at


def write_logs(path: Path) -> Logged:
    db = sqlite_utils.Database(path)
    m = Echo()
    c = m.conversation(tools=[weather])
    r = c.prompt("hello there", system="You are terse.")
    r.text()
    r.log_to_db(db)
    chained = c.chain("what is the weather?")
    for resp in chained.responses():
        resp.text()
        resp.log_to_db(db)
    r = c.prompt(f"summarise: {NOVEL}", fragments=[NOVEL], attachments=[llm.Attachment(content=PNG, type="image/png")])
    r.text()
    r.log_to_db(db)
    store = LogStore(db)
    rows = list(db.query("select tip_message_hash from turns where thread_id = ? order by rowid limit 1", [c.id]))
    first_answer = rows[0]["tip_message_hash"]
    fork = store.fork(first_answer, name="what if", forked_from=c.id)
    c2 = m.conversation()
    c2.id = fork
    c2.loaded_messages = store.thread_messages(fork)
    r = c2.prompt("a different second question")
    r.text()
    r.log_to_db(db)
    c3 = m.conversation()
    r = c3.prompt("an unrelated chat")
    r.text()
    r.log_to_db(db)
    return Logged(main=c.id, fork=fork, other=c3.id, first_answer=first_answer)
