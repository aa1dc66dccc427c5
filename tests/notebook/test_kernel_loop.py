"""The agent loop in a real kernel: tools, the system prompt, settings, interrupts and bad input, each one line."""

from __future__ import annotations

import time

from kernel import new_cell_id

TOOLS = '''
import time
def add(a: int, b: int = 1) -> int:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b

def slow(seconds: float) -> str:
    """Sleep, then answer."""
    print("IN SLOW", flush=True)
    time.sleep(seconds)
    return "woke"

not_a_tool = 3
'''


def one_line_error(r) -> str:
    assert r.status == "error" and r.reply["ename"] == "UsageError", (r.reply, r.stdout)
    text = r.reply["evalue"]
    assert "\n" not in text and "Traceback" not in r.stdout + r.stderr
    return text


def test_tools_added_by_name_run_in_a_turn_and_list_with_their_schemas(nb):
    sid = nb.fresh()
    nb.k.ok(TOOLS)
    assert "no tools" in nb.k.ok("%durable tools").stdout
    assert "tools: add (added add)" in nb.k.ok("%durable tools add add").stdout
    listing = nb.k.ok("%durable tools").stdout
    assert "add — Add two numbers." in listing and '"description": "the first number"' in listing
    r = nb.cell('call add {"a": 2, "b": 3}', [], new_cell_id())
    assert r.status == "ok", r
    assert '⚙ add({"a": 2, "b": 3}) → 5 · ' in r.stdout
    assert "— offline · cost unknown · 2 model calls · " in r.stdout and "4 entries written" in r.stdout
    roles = [x["message"]["role"] for x in nb.log(sid)[1:]]
    assert roles == ["user", "assistant", "tool_result", "assistant"]
    assert nb.log(sid)[-1]["message"]["timing"]["total_ms"] >= 0
    assert "4. " not in nb.k.value("_durable") and "3. tool_result (for call_0): 5" in nb.k.value("_durable")
    # one turn with other tools; an unknown name; remove
    r = nb.cell('call slow {"seconds": 0}', [], new_cell_id(), options="--tools slow")
    assert "⚙ slow(" in r.stdout and "→ woke" in r.stdout
    assert "did you mean 'add'" in one_line_error(nb.k.run("%durable tools add ad"))
    assert "did you mean 'add'" in one_line_error(nb.k.run("%durable tools remove ad"))
    assert "not callable" in one_line_error(nb.k.run("%durable tools add not_a_tool"))
    assert "did you mean 'slow'" in one_line_error(nb.cell("hi", [], new_cell_id(), options="--tools slw"))
    assert "removed add; tools: none" in nb.k.ok("%durable tools remove add").stdout


def test_the_system_cell_is_on_the_path_first_and_an_edit_is_a_sibling(nb):
    sid = nb.fresh()
    sys_cell = new_cell_id()
    r = nb.cell("You are terse.", ["system"], sys_cell)
    assert "system prompt set" in r.stdout
    r = nb.cell("hello", [], new_cell_id())
    assert nb.k.value("_durable").startswith("System prompt: You are terse.\nI received 1 message:")
    dry = nb.k.ok("%durable dry-run").stdout
    assert dry.splitlines()[1].strip() == "1. system: You are terse."
    r = nb.cell("You are verbose.", [], sys_cell, options="--system")  # edited and re-run
    assert "rewound to before its entry" in r.stdout
    entries = nb.log(sid)[1:]
    roots = [e for e in entries if not e.get("parent_id")]
    assert [e["message"]["content"][0]["text"] for e in roots] == ["You are terse.", "You are verbose."]
    nb.k.restart()
    nb.k.ok("%load_ext durable_nb")
    nb.k.ok(f"%durable use {sid}")
    assert "system: You are verbose." in nb.k.ok("%durable dry-run").stdout


def test_settings_per_turn_and_as_defaults_with_one_line_mistakes(nb):
    sid = nb.fresh()
    assert "no settings" in nb.k.ok("%durable set").stdout
    assert "settings: temperature=0.2" in nb.k.ok("%durable set temperature=0.2").stdout
    r = nb.cell("hi", [], new_cell_id(), options="--max-tokens 300 --param top_p=0.9 --param reasoning_effort=low")
    assert r.status == "ok"
    reply = nb.log(sid)[-1]["message"]
    assert reply["settings"] == {"temperature": 0.2, "max_tokens": 300, "top_p": 0.9, "reasoning_effort": "low"}
    assert reply["model"] == "offline" and set(reply["timing"]) == {"ttft_ms", "total_ms"}
    n = len(nb.log(sid))
    assert one_line_error(nb.cell("hi", [], new_cell_id(), options="--temperature hot")).startswith(
        "bad setting temperature='hot'"
    )
    assert "bad setting max_tokens" in one_line_error(nb.k.run("%durable set max_tokens=-1"))
    assert "KEY=VALUE" in one_line_error(nb.cell("hi", [], new_cell_id(), options="--param top_p"))
    assert len(nb.log(sid)) == n  # nothing written by a mistake
    assert "no settings" in nb.k.ok("%durable set temperature=").stdout


def test_stop_during_a_tool_keeps_what_was_acknowledged_and_the_next_turn_repairs(nb):
    sid = nb.fresh()
    nb.k.ok(TOOLS)

    def on_output(t, c):
        if t == "stream" and "IN SLOW" in c.get("text", ""):
            time.sleep(0.2)
            nb.k.interrupt()

    msg = nb.k.send('%%durable --tools slow\ncall slow {"seconds": 60}', (), new_cell_id())
    r = nb.k.collect(msg, timeout=30, on_output=on_output)
    assert r.status == "error" and r.reply["ename"] == "TurnInterrupted"
    assert "the unfinished tool call reaches the model as interrupted" in r.reply["evalue"]
    assert [x["message"]["role"] for x in nb.log(sid)[1:]] == ["user", "assistant"]
    r = nb.cell("go on", [], new_cell_id())
    listing = nb.k.value("_durable")
    assert "3. tool_result (for call_0, error): The tool call was interrupted" in listing
    assert "4. user: go on" in listing


def test_a_replys_thinking_shows_collapsed_in_the_cell(nb):
    nb.fresh()
    nb.k.ok(
        "from durable_nb import ai\n"
        "from durable_nb.notebook import current\n"
        "def thinker(messages):\n"
        "    return ai.Message('assistant', [ai.Thinking('<b>plan</b> first', 'sig'), ai.Text('**Done.**')])\n"
        "current().agent.model = thinker"
    )
    r = nb.cell("Go", [], new_cell_id())
    assert r.status == "ok", r
    page = r.html()
    assert '<details class="durable-thinking"><summary>thinking · 17 chars</summary>' in page
    assert "&lt;b&gt;plan&lt;/b&gt; first" in page and "<strong>Done.</strong>" in page
    nb.k.ok("current().agent.model = None")


def test_an_async_tool_runs_inside_the_kernels_event_loop_and_max_steps_says_so(nb):
    sid = nb.fresh()
    nb.k.ok(
        "import asyncio\n"
        "async def fetch(url: str) -> str:\n"
        '    """Pretend to fetch a URL."""\n'
        "    await asyncio.sleep(0.01)\n"
        "    return f'<html>{url}</html>'\n"
    )
    r = nb.cell('call fetch {"url": "https://example.org"}', [], new_cell_id(), options="--tools fetch")
    assert r.status == "ok" and "→ <html>https://example.org</html>" in r.stdout
    assert nb.log(sid)[3]["message"]["content"][0]["text"] == "<html>https://example.org</html>"
    # a model that always calls a tool: the run stops at max_steps and the cell says so in one line
    nb.k.ok(
        "from durable_nb import ai\n"
        "from durable_nb.notebook import current\n"
        "current().agent.max_steps = 3\n"
        "current().agent.model = lambda messages: ai.Message('assistant', [ai.ToolCall('c', 'fetch', {'url': 'x'})])"
    )
    r = nb.cell("go", [], new_cell_id(), options="--tools fetch")
    nb.k.ok("current().agent.model = None\ncurrent().agent.max_steps = 20")
    assert r.status == "ok" and r.stdout.count("⚙ fetch") == 3
    assert "stopped after 3 model calls (max_steps): every result is saved" in r.stdout
