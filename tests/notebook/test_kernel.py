"""The magics in a real ipykernel, with tags and cellId sent as JupyterLab 4 sends them."""

from __future__ import annotations

import math
import re

from kernel import Kernel, new_cell_id

from durable_nb.notebook.render import GROWTH


def messages_in(reply: str) -> list[str]:
    """The numbered lines of the offline model's reply: what it received, in order."""
    return re.findall(r"^\d+\. (.*)$", reply, re.M)


def one_line_usage_error(r) -> str:
    """Assert ``r`` failed with a UsageError shown as exactly one line, no traceback; return it."""
    assert r.status == "error" and r.reply["ename"] == "UsageError", (r.reply, r.stderr)
    assert r.error is None and r.reply.get("traceback") in ([], None)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("UsageError: "), r.stderr
    return lines[0]


def one_line_turn_failure(r) -> str:
    """Assert ``r`` failed with the package's own one-line turn failure (no traceback, not a UsageError); return it."""
    assert r.status == "error" and r.reply["ename"] == "TurnFailed", (r.reply, r.stderr)
    assert r.error is not None and len(r.error["traceback"]) == 1 and not r.stderr.strip()
    line = re.sub(r"\x1b\[[0-9;]*m", "", r.error["traceback"][0])
    assert line.startswith("TurnFailed: ") and "\n" not in line and "UsageError" not in line, line
    return line


def test_meta_and_ephemeral_are_staged_and_sent_in_order(nb):
    sid = nb.fresh()
    m, e, t = new_cell_id(), new_cell_id(), new_cell_id()
    r = nb.cell("Answer in French.", ["meta"], m)
    assert "staged meta" in r.stdout and nb.log(sid)[1:] == []  # nothing written yet
    r = nb.cell("Answer in German.", ["meta"], m)  # re-run: replaces its staged entry
    assert "re-staged meta" in r.stdout and "(1 staged" in r.stdout
    nb.cell("Today is Monday.", ["ephemeral"], e)
    r = nb.k.ok("%durable staged")
    assert re.search(r"1\. \[meta · cell:\w+\] 'Answer in German\.'\n\s+2\. \[ephemeral", r.stdout)
    r = nb.cell("What day is it?", [], t)
    assert r.status == "ok" and "3 entries written" in r.stdout
    assert messages_in(nb.k.value("_durable")) == [
        f"user [meta · cell:{m}]: Answer in German.",
        f"user [ephemeral · cell:{e}]: Today is Monday.",
        "user: What day is it?",
    ]
    log = nb.path_of(sid).read_text()
    assert '"ephemeral"' not in log and "Answer in French" not in log
    meta, user, reply = nb.log(sid)[1:]  # the ephemeral text is only inside the offline reply's echo
    assert meta["message"]["injected"] == "meta" and meta["message"]["origin"] == f"cell:{m}"
    assert user["message"]["origin"] == f"cell:{t}" and user["parent_id"] == meta["id"]
    assert nb.k.ok("%durable staged").stdout.strip() == "staged   none"  # consumed by the turn


def test_flags_win_over_tags_and_staged_can_be_cleared(nb):
    nb.fresh()
    r = nb.cell("reminder", ["meta"], new_cell_id(), options="--ephemeral")
    assert "staged ephemeral" in r.stdout
    nb.cell("another", [], None, options="--meta")  # no tags, no cellId: terminal / VS Code
    assert "cleared 2 staged entries" in nb.k.ok("%durable clear").stdout
    nb.cell("hi", [], new_cell_id())
    assert messages_in(nb.k.value("_durable")) == ["user: hi"]


def test_note_cells_are_kept_not_sent(nb):
    sid = nb.fresh()
    n = new_cell_id()
    r = nb.cell("Remember: the user is a beginner.", ["note"], n)
    assert "note" in r.stdout and r.status == "ok"
    nb.cell("hello", [], new_cell_id())
    assert messages_in(nb.k.value("_durable")) == ["user: hello"]
    note = nb.log(sid)[1]
    assert note["type"] == "custom" and note["kind"] == "note"
    assert (note["body"], note["cell"]) == (
        "Remember: the user is a beginner.",
        n,
    )  # pi-go layout: fields at the top level


def test_rerunning_a_turn_cell_grows_a_sibling_and_chat_appends(nb):
    sid = nb.fresh()
    a, b = new_cell_id(), new_cell_id()
    nb.cell("first question", [], a)
    nb.cell("second question", [], b)
    r = nb.cell("second question, edited", [], b)
    assert r.stdout.count("\n") == 2 and r.stdout.startswith("↺ this cell ran before: rewound")
    assert messages_in(nb.k.value("_durable"))[0::2] == ["user: first question", "user: second question, edited"]
    entries = nb.log(sid)[1:]
    users = [x for x in entries if x["message"]["role"] == "user"]
    assert users[1]["parent_id"] == users[2]["parent_id"]  # siblings
    leaf_before = entries[-1]["id"]
    r = nb.cell("second question, chat style", [], b, options="--chat")
    assert "rewound" not in r.stdout
    assert nb.log(sid)[-2]["parent_id"] == leaf_before


def test_editing_a_meta_cell_rewinds_before_it(nb):
    sid = nb.fresh()
    m, t = new_cell_id(), new_cell_id()
    nb.cell("Be terse.", ["meta"], m)
    nb.cell("Explain entries.", [], t)
    r = nb.cell("Be verbose.", ["meta"], m)
    assert "rewound to before its entry" in r.stdout and "3 entries left the active path" in r.stdout
    assert "staged meta" in r.stdout
    r = nb.cell("Explain entries.", [], t)
    assert "rewound" not in r.stdout  # its old entry is on the other branch now
    assert messages_in(nb.k.value("_durable")) == [f"user [meta · cell:{m}]: Be verbose.", "user: Explain entries."]
    roots = [x for x in nb.log(sid)[1:] if not x.get("parent_id")]
    assert [x["message"]["content"][0]["text"] for x in roots] == ["Be terse.", "Be verbose."]


def test_dry_run_writes_nothing(nb):
    sid = nb.fresh()
    nb.cell("first", [], new_cell_id())
    nb.cell("Today is Monday.", ["ephemeral"], new_cell_id())
    before = nb.path_of(sid).read_bytes()
    r = nb.cell("What day is it?", [], new_cell_id(), options="--dry-run")
    assert r.stdout.startswith("dry run: 4 messages would be sent to offline (nothing called, nothing written)\n")
    assert re.search(
        r"\n  3\. user \[ephemeral · cell:\w+\]: Today is Monday\.  ← new\n  4\. user: What day is it\?  ← new\n$",
        r.stdout,
    )
    assert "dry run: 3 messages" in nb.k.ok("%durable dry-run").stdout
    assert nb.path_of(sid).read_bytes() == before
    assert "1 for the next turn" in nb.k.ok("%durable").stdout  # still staged


def test_interpolation(nb):
    nb.fresh()
    nb.k.ok("who = 'Ada'\nclass P: lang = 'Python'\np = P()")
    body = 'Hi {{who}} ({{ p.lang }}). Parse {"a": {"b": [1, 2]}} and f"{x}" and \\{{who}}.'
    nb.cell(body, [], new_cell_id())
    assert messages_in(nb.k.value("_durable")) == [
        'user: Hi Ada (Python). Parse {"a": {"b": [1, 2]}} and f"{x}" and {{who}}.'
    ]
    nb.cell("raw {{who}}", [], new_cell_id(), options="--no-interpolate")
    assert messages_in(nb.k.value("_durable"))[-1] == "user: raw {{who}}"
    line = one_line_usage_error(nb.cell("Hi {{whom}}", [], new_cell_id()))
    assert "no variable 'whom'" in line and "did you mean 'who'" in line


def test_reply_is_available_from_python_and_html_is_escaped(nb):
    nb.fresh()
    r = nb.cell("show <img src=x onerror=alert(1)> & **bold**", [], new_cell_id(), options="--out answer")
    assert nb.k.value("answer") == nb.k.value("_durable")
    html = r.html()
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert all("text/markdown" not in d["data"] for d in r.displays)
    assert re.search(
        r"— offline · cost unknown · [\d.]+ m?s · t\d+-\w+ · leaf [0-9a-f]{12} · 2 entries written", r.stdout
    )


def test_one_line_usage_errors(nb):
    sid = nb.fresh()
    assert "did you mean '--meta'" in one_line_usage_error(nb.cell("x", [], new_cell_id(), options="--metta"))
    assert "did you mean 'rewind'" in one_line_usage_error(nb.k.run("%durable rewnid"))
    assert "no entry or label 'deadbeef'" in one_line_usage_error(nb.k.run("%durable branch deadbeef"))
    assert "tagged both meta and ephemeral" in one_line_usage_error(nb.cell("x", ["meta", "ephemeral"], new_cell_id()))
    nb.cell("now", ["ephemeral"], new_cell_id())
    nb.cell("q", [], new_cell_id())
    eph = nb.k.value(
        "[e.id for e in __import__('durable_nb.notebook').notebook.current().agent.entries() "
        "if getattr(getattr(e, 'message', None), 'injected', None)]"
    )[0]
    assert "it is ephemeral" in one_line_usage_error(nb.k.run(f"%durable branch {eph}"))
    assert "unknown model 'nope'" in one_line_usage_error(nb.k.run("%durable model nope"))
    assert nb.k.value("__import__('durable_nb.notebook').notebook.current().model") is None
    assert "the cell is empty" in one_line_usage_error(nb.cell("   ", [], new_cell_id()))
    assert [x["message"]["role"] for x in nb.log(sid)[1:]] == ["user", "assistant"]  # no ephemeral, no errors


def test_model_failure_keeps_the_session_usable(nb):
    sid = nb.fresh()
    c = new_cell_id()
    nb.k.ok(
        "from durable_nb.notebook import current\n"
        "def broken(messages):\n"
        "    def gen():\n"
        "        yield 'partial '\n"
        "        raise ConnectionError('provider down')\n"
        "    return gen()\n"
        "class Broken:\n"
        "    name = 'broken'\n"
        "    def stream(self, messages): return broken(messages)\n"
        "current().agent.model = Broken()"
    )
    e = new_cell_id()
    nb.cell("It is Monday.", ["ephemeral"], e)
    r = nb.cell("hello", [], c)
    line = one_line_turn_failure(r)
    assert "ConnectionError: provider down" in line and "your message is kept in the log without a reply" in line
    assert "partial reply was not saved" in r.html()
    log = nb.log(sid)
    assert [x["message"]["role"] for x in log[1:]] == ["user"] and "partial" not in nb.path_of(sid).read_text()
    assert "1. [ephemeral" in nb.k.ok("%durable staged").stdout  # staged again for the retry
    nb.k.ok("current().agent.model = None")
    assert nb.k.value("current().agent.leaf_id") == ""  # the next turn continues from before the unanswered message
    r = nb.cell("hello", [], c)  # retry: a sibling of the failed message, with the same context
    assert r.status == "ok"
    assert messages_in(nb.k.value("_durable")) == [f"user [ephemeral · cell:{e}]: It is Monday.", "user: hello"]
    assert [x.get("parent_id", "") for x in nb.log(sid)[1:] if x["message"]["role"] == "user"] == ["", ""]


def test_a_model_error_in_a_turn_is_its_own_one_line_not_a_usage_error(nb):
    nb.fresh()
    nb.k.ok(
        "from durable_nb.notebook import current\n"
        "from durable_nb.errors import ModelError\n"
        "class Limited:\n"
        "    name = 'limited'\n"
        "    def stream(self, messages):\n"
        "        raise ModelError('limited: 429 rate limited (retry later)')\n"
        "current().agent.model = Limited()"
    )
    line = one_line_turn_failure(nb.cell("hello", [], new_cell_id()))
    assert line.startswith("TurnFailed: limited: 429 rate limited (retry later) — ") and "ModelError" not in line
    assert "your message is kept in the log without a reply" in line


def use_slow_model(nb, pieces: int, word: str, delay: float) -> None:
    """Give the kernel's session a model that streams ``word0 word1 …``, one piece every ``delay`` s."""
    nb.k.ok(
        "import time\n"
        "from durable_nb.notebook import current\n"
        "class Slow:\n"
        "    name = 'slow'\n"
        "    def stream(self, messages):\n"
        f"        for i in range({pieces}):\n"
        f"            yield f'{word}{{i}} '\n"
        f"            time.sleep({delay})\n"
        "current().agent.model = Slow()"
    )


def test_interrupt_while_streaming(nb):
    sid = nb.fresh()
    use_slow_model(nb, pieces=200, word="word", delay=0.02)
    seen = []

    def on_output(t, c):
        if t in ("display_data", "update_display_data") and not seen:
            seen.append(c)
            nb.k.interrupt()

    r = nb.k.collect(nb.k.send("%%durable\nstream please", (), new_cell_id()), timeout=30, on_output=on_output)
    # two lines (the marked partial reply, then one error line), no traceback
    assert seen and r.status == "error" and r.reply["ename"] == "TurnInterrupted"
    assert r.reply["traceback"] == [
        "\x1b[0;31mTurnInterrupted\x1b[0m: interrupted; your message is kept in the log without a reply "
        "(the next turn continues from before it), the partial reply is not; re-run this cell to retry"
    ]
    assert r.stdout == "" and "Traceback" not in r.stderr
    assert "word0" in r.displays[-1]["data"]["text/plain"] and "not saved" in r.displays[-1]["data"]["text/plain"]
    assert [x["message"]["role"] for x in nb.log(sid)[1:]] == ["user"]
    nb.k.ok("current().agent.model = None")
    r = nb.cell("still there?", [], new_cell_id())  # another cell: the unanswered message is not sent again
    assert r.status == "ok" and messages_in(nb.k.value("_durable")) == ["user: still there?"]
    users = [x for x in nb.log(sid)[1:] if x["message"]["role"] == "user"]
    assert [u.get("parent_id", "") for u in users] == ["", ""]  # the unanswered one stays, as a sibling


def test_after_a_restart_an_unanswered_message_is_not_resent(tmp_path):
    k = Kernel(tmp_path)
    try:
        k.ok("%load_ext durable_nb\nfrom durable_nb.notebook import current")
        k.ok("%%durable\nfirst", (), new_cell_id())
        reply = k.value("current().agent.leaf_id")
        # a turn whose reply never came (the kernel died mid-turn): the log ends at the user message
        k.ok(
            "from durable_nb import durable\n"
            "lost = durable.text('lost question')\n"
            "lost.message.origin = 'cell:c-lost'\n"  # as a %%durable cell writes it
            "current().agent.append(lost)"
        )
        k.restart()
        k.ok("%load_ext durable_nb\nfrom durable_nb.notebook import current")
        r = k.ok("%%durable\nnext question", (), new_cell_id())
        assert r.stdout.startswith("↷ the last message ('lost question') never got a reply: this turn continues from")
        assert messages_in(k.value("_durable"))[-1] == "user: next question"
        assert "lost question" not in k.value("_durable")
        assert k.value("current().agent.path()[-3].id") == reply
    finally:
        k.shutdown()


def test_streaming_updates_one_display(nb):
    nb.fresh()
    use_slow_model(nb, pieces=6, word="part", delay=0.06)
    r = nb.cell("go", [], new_cell_id())
    nb.k.ok("current().agent.model = None")
    assert r.updates >= 3 and len({d["transient"]["display_id"] for d in r.displays}) == 1
    assert (
        r.displays[0]["data"]["text/plain"].startswith("part0") and "part5" not in r.displays[0]["data"]["text/plain"]
    )
    assert r.displays[-1]["data"]["text/plain"] == " ".join(f"part{i}" for i in range(6)) + " "


def test_a_100_kb_markdown_reply_streamed_token_by_token_renders_a_bounded_number_of_times(nb):
    nb.fresh()
    nb.k.ok(
        "from durable_nb.notebook import current\n"
        "REPLY = ''.join(f'- item {i}: **bold** and `code` in a bulleted line\\n' for i in range(2000))\n"
        "class Bullets:\n"
        "    name = 'bullets'\n"
        "    def stream(self, messages):\n"
        "        for i in range(0, len(REPLY), 4):\n"
        "            yield REPLY[i : i + 4]\n"
        "current().agent.model = Bullets()"
    )
    size = nb.k.value("len(REPLY)")
    r = nb.k.run("%%durable\ngo", (), new_cell_id(), timeout=120)
    nb.k.ok("current().agent.model = None")
    assert r.status == "ok", r.reply
    assert size > 100_000 and nb.k.value("_durable == REPLY")
    renders = len(r.displays)  # the first display, its updates and the final one: ~25,000 tokens streamed
    assert renders <= 2 + math.ceil(math.log(size / 4) / math.log(GROWTH)), renders
    assert "item 1999" in r.html()


def test_a_key_in_any_error_of_a_turn_is_masked_in_the_cell(nb):
    nb.fresh()
    key = "sk-kernel-test-5e1d0c9b8a7f6e5d"
    nb.k.ok(
        "import os\n"
        "from durable_nb.notebook import current\n"
        f"os.environ['MY_SERVICE_API_KEY'] = {key!r}\n"
        "class Leaky:\n"
        "    name = 'leaky'\n"
        "    def stream(self, messages):\n"
        "        raise RuntimeError('header Bearer ' + os.environ['MY_SERVICE_API_KEY'] + chr(13) + ' refused')\n"
        "current().agent.model = Leaky()"
    )
    r = nb.cell("hello", [], new_cell_id())
    nb.k.ok("current().agent.model = None\ndel os.environ['MY_SERVICE_API_KEY']")
    line = one_line_turn_failure(r)
    assert line.startswith("TurnFailed: RuntimeError: header Bearer *** refused")
    assert key[:6] not in r.stdout + r.stderr + repr(r.error) + repr(r.displays)


def test_out_refuses_the_shells_own_names_and_leaves_them_working(nb):
    nb.fresh()
    for name in ("get_ipython", "In", "exit", "print", "_"):
        r = nb.cell("hi", [], new_cell_id(), options=f"--out {name}")
        assert f"--out {name}: {name!r} belongs to IPython or Python" in one_line_usage_error(r)
    assert nb.k.value("type(get_ipython()).__name__") == "ZMQInteractiveShell"
    assert nb.k.value("isinstance(In, list)")


def test_sessions_open_fork_compact_config(nb, tmp_path):
    sid = nb.fresh()
    nb.cell("one", [], new_cell_id())
    nb.cell("two", [], new_cell_id())
    r = nb.k.ok("%durable sessions")
    assert re.search(rf"\* {sid}\s+4 entries  last 20\d\d-\d\d-\d\d \d\d:\d\d:\d\d\n", r.shown), r.shown
    r = nb.k.ok("%durable log")
    assert r.stdout.startswith(f"4 entries of {sid} in append order") and "\n> " in r.stdout
    r = nb.k.ok(f"%durable open {sid}")
    assert "read-only" in r.stdout
    assert "open read-only for inspection" in one_line_usage_error(nb.cell("three", [], new_cell_id()))
    assert "read-only copy of" in nb.k.ok("%durable").stdout
    nb.k.ok("%durable close")
    r = nb.k.ok(f"%durable fork {sid}-fork")
    assert f"the notebook now uses {sid}-fork" in r.stdout and len(nb.log(f"{sid}-fork")) == 5
    r = nb.k.ok("%durable compact --keep 1")
    assert "compacted: entry" in r.stdout and nb.log(f"{sid}-fork")[-1]["type"] == "compaction"
    r = nb.k.ok("%durable rewind")
    assert "rewound 1 turn" in r.stdout
    other = tmp_path / "elsewhere"
    nb.k.ok(f"%config DurableMagics.store = {str(other)!r}\n%durable new x")
    assert (other / "x.jsonl").is_file()
    nb.k.ok("%config DurableMagics.store = '.durable'")


def test_live_widgets_are_synced_after_receipts_and_moves(nb):
    nb.fresh()
    nb.k.ok(
        "from durable_nb.notebook import current\n"
        "from durable_nb.widget import SessionWidget\n"
        "class Recorder(SessionWidget):\n"
        "    calls = 0\n"
        "    def sync(self): Recorder.calls += 1\n"
        "rec = Recorder(current().agent)"
    )
    nb.cell("one", [], new_cell_id())
    assert nb.k.value("Recorder.calls") == 2  # agent_start and message_end receipts
    nb.k.ok("%durable compact")
    nb.k.ok("%durable rewind")
    assert nb.k.value("Recorder.calls") == 4
    nb.k.ok("rec.close(); del rec")
    nb.cell("two", [], new_cell_id())  # a dropped widget is not kept alive
    assert nb.k.value("Recorder.calls") == 4


def test_open_a_saved_log_by_path_prints_its_warnings(nb):
    nb.fresh()
    log = nb.k.cwd / "legacy.jsonl"
    log.write_text(
        '{"type":"session_init","id":"legacy","parent_id":"","created_at":"2025-01-01T00:00:00Z"}\n'
        '{"type":"message","id":"a1","parent_id":"","created_at":"2025-01-01T00:00:01Z","meta":true,'
        '"message":{"role":"user","content":[{"type":"text","text":"old reminder"}]}}\n'
        '{"type":"message","id":"a2","parent_id":"a1","created_at":"2025-01-01T00:00:02Z",'
        '"message":{"role":"user","content":[{"type":"text","text":"question"}]}}\n'
    )
    before = log.read_bytes()
    r = nb.k.ok("%durable open legacy.jsonl")
    assert "opened" in r.stdout and "2 entries, leaf a2" in r.stdout
    assert "warning: " in r.stdout and "legacy" in r.stdout.split("warning: ")[1]
    r = nb.k.ok("%durable dry-run")
    assert "1. user: old reminder\n  2. user: question\n" in r.stdout  # legacy flag read as nothing (R13)
    nb.k.ok("%durable branch a1")
    assert "leaf     a1" in nb.k.ok("%durable").stdout
    assert "read-only" in one_line_usage_error(nb.cell("more", ["note"], new_cell_id()))
    nb.k.ok("%durable close")
    assert log.read_bytes() == before


def test_show_displays_the_widget_and_turns_update_it_live(nb):
    nb.fresh()
    r = nb.k.run("%durable show")
    assert r.status == "ok" and any("application/vnd.jupyter.widget-view+json" in d["data"] for d in r.displays)
    # a widget shown by displaying the agent (not through %durable show) is synced by turns too
    nb.k.ok(
        "from durable_nb.notebook import current\nfrom durable_nb.widget import SessionWidget\n"
        "w = SessionWidget(current().agent)"
    )
    nb.cell("one", [], new_cell_id())
    assert nb.k.value("w.tree['entries']") == 2
    assert nb.k.value("w.leaf_id == current().agent.leaf_id") is True


def test_help_documents_every_option(nb):
    r = nb.k.ok("%durable?")
    text = r.reply["payload"][0]["data"]["text/plain"] if r.reply.get("payload") else r.stdout
    for opt in ("--meta", "--ephemeral", "--note", "--chat", "--out", "--no-interpolate", "--dry-run", "--keep"):
        assert opt in text


def test_restart_resumes_the_same_session(tmp_path):
    k = Kernel(tmp_path)
    try:
        a, b = new_cell_id(), new_cell_id()
        k.ok("%load_ext durable_nb")
        k.ok("%%durable\nfirst", (), a)
        k.restart()
        k.ok("%load_ext durable_nb")
        r = k.ok("%%durable\nsecond", (), b)
        assert " · default · leaf" in r.stdout
        assert messages_in(k.value("_durable"))[0::2] == ["user: first", "user: second"]
        k.restart()
        k.ok("%load_ext durable_nb")
        r = k.ok("%%durable\nsecond, edited", (), b)  # the cell's position survives restarts
        assert "rewound" in r.stdout
        assert messages_in(k.value("_durable"))[0::2] == ["user: first", "user: second, edited"]
    finally:
        k.shutdown()


def test_a_long_session_is_prepared_for_its_widget_when_a_cell_ends(nb):
    """After a %durable cell the kernel starts preparing the session's widget in the background
    (a long session's layout, tallies and views); the next %durable show takes that preparation."""
    nb.fresh()
    # the names this test defines in the shared kernel are removed afterwards (another test may assert one is unset)
    nb.k.ok(
        "import durable_nb.widget.preparation as W\nfrom durable_nb.notebook import current\n"
        "_prepare_min, W.PREPARE_MIN = W.PREPARE_MIN, 6"
    )
    try:
        for i in range(2):
            nb.cell(f"turn {i}", [], new_cell_id())
        assert nb.k.value("len(current().agent.entries())") == 4
        # 4 entries: a widget lays them out at once
        assert nb.k.value("W.prepared(current().agent) is not None") is False
        nb.cell("turn 2", [], new_cell_id())  # 6 entries: prepared once this cell has ended
        assert nb.k.value("W.prepared(current().agent) is not None") is True
        nb.k.ok("W.prepared(current().agent).thread.join(timeout=30)")
        assert nb.k.value("W.prepared(current().agent).layout is not None") is True  # laid out
        nb.cell("turn 3", [], new_cell_id())  # logged after the preparation: the widget adds it
        r = nb.k.ok("%durable show")
        assert r.displays and nb.k.value("W.prepared(current().agent) is not None") is False  # taken by the widget
        nb.k.ok("w = W.widgets_of(current().agent)[-1]")
        assert nb.k.value("w.tree['entries']") == 8 and nb.k.value("w.leaf_id == current().agent.leaf_id") is True
        assert nb.k.value("W.prepared(current().agent) is not None") is False  # an open widget: nothing more to prepare
        nb.k.ok("w.close()")
    finally:
        nb.k.ok("W.PREPARE_MIN = _prepare_min\ndel W, current, _prepare_min\nglobals().pop('w', None)")
