"""Fast tests of parsing, interpolation, rendering and the session state, without a kernel."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.error import UsageError

from durable_nb import ai
from durable_nb.errors import DurableError
from durable_nb.notebook.args import Call, cell_kind, parse
from durable_nb.notebook.interpolate import interpolate
from durable_nb.notebook.render import dry_run_text, markdown_html
from durable_nb.notebook.state import Note, NotebookSession, Turn, cell_entry, default_session_name
from durable_nb.notebook.tags import Cell, current_cell
from durable_nb.session import JsonlStore, MessageEntry
from durable_nb.session.store import check_session_id

# -- parsing -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "line,cell,expected",
    [
        ("", False, Call(verb="status")),
        ("sessions", False, Call(verb="sessions")),
        ("branch abc123", False, Call(verb="branch", args=("abc123",))),
        ("compact --keep 2", False, Call(verb="compact", keep=2)),
        ("open 'my log.jsonl'", False, Call(verb="open", args=("my log.jsonl",))),
        ("--dry-run", False, Call(verb="dry-run", dry_run=True)),
        ("", True, Call()),
        ("--meta", True, Call(kind="meta")),
        ("--ephemeral --chat", True, Call(kind="ephemeral", chat=True)),
        ("--out reply --no-interpolate", True, Call(out="reply", interpolate=False)),
        ("--dry-run", True, Call(dry_run=True)),
    ],
)
def test_parse(line, cell, expected):
    assert parse(line, cell) == expected


@pytest.mark.parametrize(
    "line,cell,message",
    [
        ("stauts", False, "unknown verb 'stauts' (did you mean 'status'?)"),
        ("brnach x", False, "did you mean 'branch'?"),
        ("--metta", True, "unknown option --metta (did you mean '--meta'?)"),
        ("--met", True, "unknown option --met"),  # no silent abbreviation
        ("--meta --ephemeral", True, "choose one of --meta / --ephemeral"),
        ("branch", False, "usage: %durable branch <entry>"),
        ("fork a b c", False, "usage: %durable fork <new-session-id> [entry]"),
        ("--out 2x", True, "--out needs a Python variable name"),
        ("--out class", True, "--out needs a Python variable name"),
        ("--out get_ipython", True, "--out get_ipython: 'get_ipython' belongs to IPython or Python"),
        ("--out In", True, "'In' belongs to IPython"),
        ("--out Out", True, "'Out' belongs to IPython"),
        ("--out exit", True, "'exit' belongs to IPython"),
        ("--out _", True, "'_' belongs to IPython"),
        ("--out _i3", True, "'_i3' belongs to IPython"),
        ("--out print", True, "'print' belongs to IPython or Python"),
        ("--meta", False, "--meta applies to a %%durable cell"),
        ("status", True, "%%durable takes options only"),
        ("status --keep 1", False, "--keep belongs to %durable compact"),
        ("compact --keep x", False, "invalid int value"),
        ("open 'unclosed", False, "check its quotes"),
    ],
)
def test_parse_mistakes_are_usage_errors(line, cell, message):
    with pytest.raises(UsageError, match=None) as info:
        parse(line, cell)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_each_verb_is_declared_once_and_drives_parse_and_help():
    from durable_nb.notebook.magics import DurableMagics
    from durable_nb.notebook.verbs import VERBS

    doc = DurableMagics.durable.__doc__
    assert doc.startswith("Run a turn of the notebook's durable session")  # %%durable? shows no stray "::"
    for v in VERBS.values():
        assert f"%durable {v.usage} " in doc
        assert parse(" ".join([v.name, *["x"] * v.min_args]), False).verb == v.name
    assert (VERBS["rewind"].min_args, VERBS["rewind"].max_args) == (0, 1)
    assert (VERBS["compact"].min_args, VERBS["compact"].max_args) == (0, 0)
    assert (VERBS["use"].min_args, VERBS["use"].max_args) == (1, 1)
    with pytest.raises(UsageError, match="usage: %durable use <id>"):
        parse("use a b", False)


def test_the_verb_table_as_data_lists_options_each_verb_accepts():
    from durable_nb.notebook.verbs import VERBS, cell_specs, specs

    table = specs()
    assert [v["name"] for v in table] == list(VERBS)
    by_name = {v["name"]: v for v in table}
    assert [o["flag"] for o in by_name["compact"]["options"]] == ["--keep"]
    assert {"--model", "--system", "--temperature"} <= {o["flag"] for o in by_name["replay"]["options"]}
    for v in table:
        assert v["help"] and "\n" not in v["help"]
        for o in v["options"]:
            value = [("k=1" if "=" in o["metavar"] else "1")] if o["metavar"] else []
            args = ["x"] * VERBS[v["name"]].min_args
            call = parse(" ".join([v["name"], *args, o["flag"], *value]), False)  # accepted where it is listed
            assert call.verb == v["name"]
    cell = {o["flag"] for o in cell_specs()}
    assert {"--meta", "--out", "--models", "--dry-run"} <= cell and "--keep" not in cell


def test_cell_kind_flags_win_over_tags():
    assert cell_kind(None, frozenset()) == "turn"
    assert cell_kind(None, frozenset({"meta", "other"})) == "meta"
    assert cell_kind("note", frozenset({"meta"})) == "note"
    assert cell_kind("ephemeral", frozenset({"meta", "ephemeral"})) == "ephemeral"
    with pytest.raises(UsageError, match="tagged both meta and ephemeral"):
        cell_kind(None, frozenset({"meta", "ephemeral"}))


def test_current_cell_reads_the_shell_parent():
    class K:
        def get_parent(self, channel):
            assert channel == "shell"
            return {"metadata": {"tags": ["meta", 3], "cellId": "c-1", "trusted": False}}

    class Shell:
        kernel = K()

    c = current_cell(Shell())
    assert c == Cell(frozenset({"meta"}), "c-1") and c.origin == "cell:c-1"
    assert current_cell(object()) == Cell() and Cell().origin is None


# -- interpolation ----------------------------------------------------------------------


class Obj:
    name = "Ada"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Hi {{who}}!", "Hi Ada!"),
        ("Hi {{ who }}!", "Hi Ada!"),
        ("{{o.name}} and {{n}}", "Ada and 3"),
        ('{"a": {"b": [1, 2]}}', '{"a": {"b": [1, 2]}}'),
        ("{'k': who}", "{'k': who}"),
        ('f"{who}" and {who}', 'f"{who}" and {who}'),
        ("if (x) { y(); }", "if (x) { y(); }"),
        ("{{ 1 + 2 }} {{}}", "{{ 1 + 2 }} {{}}"),
        (r"literal \{{who}}", "literal {{who}}"),
    ],
)
def test_interpolate(text, expected):
    assert interpolate(text, {"who": "Ada", "o": Obj(), "n": 3}) == expected


def test_interpolate_unknown_name_and_attribute():
    with pytest.raises(UsageError) as info:
        interpolate("Hi {{wh}}", {"who": 1})
    assert "no variable 'wh'" in str(info.value) and "did you mean 'who'" in str(info.value)
    assert r"\{{wh}}" in str(info.value) and "--no-interpolate" in str(info.value)
    with pytest.raises(UsageError, match="has no attribute 'nope'"):
        interpolate("{{o.nope}}", {"o": Obj()})


class Sneaky:
    """Every way an attribute read could run code, each leaving a trace in ``ran``."""

    __slots__ = ("slot", "ran")

    def __init__(self):
        self.slot = "in a slot"
        self.ran = []

    @property
    def prop(self):
        self.ran.append("property")
        return "from a property"

    def method(self):
        self.ran.append("method")

    def __getattr__(self, name):
        self.ran.append(f"__getattr__ {name}")
        return "dynamic"


@pytest.mark.parametrize(
    "text,says",
    [
        ("{{_hidden}}", "'_hidden' starts with _ and is not interpolated"),
        ("{{o.__class__.__mro__}}", "'__class__' starts with _"),
        ("{{s.prop}}", "s.prop is a property; interpolation runs no code"),
        ("{{s.method}}", "s.method is a method"),
        ("{{s.dynamic}}", "s (Sneaky) has no attribute 'dynamic'"),  # __getattr__ is not asked
        ("{{os.environ}}", "the environment variables are never interpolated whole"),
        ("{{env}}", "the environment variables are never interpolated whole"),
        ("{{env_copy}}", "the environment variables are never interpolated whole"),
        ("{{key}}", "its text holds an API key or token from the environment"),
        ("{{cfg}}", "its text holds an API key or token from the environment"),
    ],
)
def test_interpolation_refuses_private_names_code_and_secrets_in_one_line(monkeypatch, text, says):
    import os

    monkeypatch.setenv("OPENAI_API_KEY", "sk-interp-test-0123456789abcdef")
    monkeypatch.setenv("A_VAR", "a")
    monkeypatch.setenv("B_VAR", "b")
    monkeypatch.setenv("C_VAR", "c")
    sneaky = Sneaky()
    ns = {
        "o": Obj(),
        "_hidden": 1,
        "s": sneaky,
        "os": os,
        "env": os.environ,
        "env_copy": {k: os.environ[k] for k in ("A_VAR", "B_VAR", "C_VAR")},
        "key": os.environ["OPENAI_API_KEY"],
        "cfg": {"model": "gpt", "api_key": os.environ["OPENAI_API_KEY"]},
    }
    with pytest.raises(UsageError) as info:
        interpolate(f"Look: {text}", ns)
    assert says in str(info.value) and "\n" not in str(info.value)
    assert "sk-interp" not in str(info.value)
    assert sneaky.ran == []  # no property, method or __getattr__ code ran


def test_interpolation_reads_plain_slot_module_and_builtin_attributes():
    import datetime
    import math

    ns = {"o": Obj(), "s": Sneaky(), "math": math, "d": datetime.date(2026, 12, 1), "Obj": Obj}
    assert interpolate("{{o.name}} {{Obj.name}} {{s.slot}} {{math.pi}} {{d.year}}", ns) == (
        f"Ada Ada in a slot {math.pi} 2026"
    )


# -- rendering ------------------------------------------------------------------------------


def test_markdown_html_shows_raw_html_as_text():
    out = markdown_html('**bold** <img src=x onerror="alert(1)"> <script>x()</script> [a](javascript:alert(1))')
    assert "<strong>bold</strong>" in out
    assert "<img" not in out and "<script" not in out and 'href="javascript' not in out
    assert "&lt;img src=x" in out and "&lt;script&gt;" in out


REMOTE_IMAGES = [
    "![ok](http://127.0.0.1:9/pixel.png?d=secret)",
    "![ok](HTTPS://evil.example/p.gif)",
    "![ok](//evil.example/p.gif)",  # protocol-relative
    "![ok](pixel.png)",  # relative: the Jupyter server's own origin
    "![ok](&#104;ttp://evil.example/p.gif)",  # an entity in the scheme
    '![ok](<http://evil.example/a b.png> "title")',
    "![ref][r]\n\n[r]: http://evil.example/p.gif",  # reference style
    "[![nested](http://evil.example/p.gif)](http://example.org)",
    "- item ![ok](http://evil.example/p.gif)\n\n| a |\n|---|\n| ![t](http://evil.example/t.gif) |",
    "![ok](data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=)",  # SVG can carry links: not drawn either
]


@pytest.mark.parametrize("md", REMOTE_IMAGES)
def test_markdown_images_are_never_fetched_only_shown_as_links(md):
    out = markdown_html(md)
    assert "<img" not in out
    if "evil.example" in md or "127.0.0.1" in md:
        assert 'class="durable-remote-image"' in out and "[image: " in out


def test_markdown_inline_data_images_are_drawn():
    out = markdown_html("![dot](data:image/png;base64,iVBORw0KGgo=) and ![x](data:image/webp;base64,UklGRg==)")
    assert out.count("<img") == 2 and 'src="data:image/png;base64,iVBORw0KGgo="' in out


class _Handle:
    def __init__(self, log):
        self.log = log

    def update(self, bundle, raw=True):
        self.log.append(bundle)


def test_a_long_markdown_reply_streamed_token_by_token_renders_a_bounded_number_of_times(monkeypatch):
    import math

    import IPython.display

    from durable_nb.notebook import render

    shown = []
    monkeypatch.setattr(
        IPython.display, "display", lambda b, raw=True, display_id=True: shown.append(b) or _Handle(shown)
    )
    reply = "".join(f"- item {i}: **bold** and `code` in a bulleted line\n" for i in range(2000))  # ~100 KB
    assert len(reply) > 100_000
    view = render.ReplyView(in_kernel=True, throttle=0)  # no time gate: only the growth rule limits renders
    for end in range(4, len(reply) + 4, 4):  # one 4-character token at a time: ~25,000 updates
        view.update(reply[:end])
    view.final(reply)
    bound = 2 + math.ceil(math.log(len(reply) / 4) / math.log(render.GROWTH))
    assert view.renders == len(shown) <= bound  # 108, not one render per token
    assert shown[-1]["text/plain"] == reply and "item 1999" in shown[-1]["text/html"]


def test_dry_run_text_marks_new_and_injected():
    old = ai.user_message("before")
    meta = ai.Message(role="user", content=[ai.Text("be brief")], injected=ai.Injection.META, origin="cell:m")
    cell = ai.user_message("two\nlines")
    text = dry_run_text([old, meta, cell], [meta, cell], "offline")
    lines = text.splitlines()
    assert lines[0].startswith("dry run: 3 messages would be sent to offline")
    assert lines[1] == "  1. user: before"
    assert lines[2] == "  2. user [meta · cell:m]: be brief  ← new"
    assert lines[3:] == ["  3. user: two", "     lines  ← new"]


# -- session state ---------------------------------------------------------------------------


def test_default_session_name():
    assert default_session_name({"__session__": "/home/u/work/My Notes.ipynb"}, {}) == "My-Notes"
    # the id such a notebook's session has always had (and the extension's nameBasedId migrates to)
    assert default_session_name({"__session__": "My Notes (1).ipynb"}, {}) == "My-Notes--1-"
    assert default_session_name({}, {"JPY_SESSION_NAME": "a/b/x.ipynb"}) == "x"
    assert default_session_name({}, {}) == "default"
    assert default_session_name({"__session__": "../..ipynb"}, {}) == "default"
    long = default_session_name({"__session__": "日本語のノート" * 20 + ".ipynb"}, {})  # 140 characters, 420 bytes
    assert long == "日本語のノート" * 9 + "日本語" and check_session_id(long) == long  # 200 bytes at most, still valid


def _sync_counter(agent):
    """Return an open widget of ``agent``'s session that counts its syncs in ``calls``."""
    from durable_nb.widget import SessionWidget

    class Recorder(SessionWidget):
        calls = 0

        def sync(self):
            self.calls += 1

    return Recorder(agent)


def test_cell_position_rule_and_widget_sync(tmp_path):
    st = NotebookSession(tmp_path, "s")
    w = _sync_counter(st.agent)
    st.stage("meta", "be brief", "cell:m")
    assert st.stage("meta", "be very brief", "cell:m") is True and len(st.staged) == 1
    st.run("hello", "cell:t", Turn())
    assert w.calls == 2  # agent_start and message_end receipts
    meta, user, reply = st.agent.path()
    assert meta.message.text() == "be very brief" and meta.message.origin == "cell:m"
    assert user.message.origin == "cell:t" and st.staged == []
    # re-running the turn cell rewinds before its message (keeping the meta)
    assert st.rewind_for("cell:t").id == user.id and st.agent.leaf_id == meta.id
    assert w.calls == 3  # branch is a lifecycle event
    turn = st.run("hello again", "cell:t", Turn())
    assert [e.id for e in st.agent.path()][:1] == [meta.id] and turn.written == 2
    # the old version is off the path now; the meta cell rewinds to the root
    assert st.cell_position("cell:t", chat=True) is None
    assert st.rewind_for("cell:m").id == meta.id and st.agent.leaf_id == ""
    assert st.rewind_for("cell:t") is None  # its entries are off the path: acts at the leaf
    # reopening (a kernel restart) derives the same positions from the stored log
    again = NotebookSession(tmp_path, "s")
    assert cell_entry(again.agent.entries(), "cell:t").message.text() == "hello again"


def test_a_held_rewind_goes_to_the_widgets_with_what_the_cell_writes_next(tmp_path):
    st = NotebookSession(tmp_path, "s")
    w = _sync_counter(st.agent)
    st.run("hello", "cell:t", Turn())
    assert w.calls == 2
    with st.syncs_held():  # a re-run turn cell: the rewind's sync is the input's
        assert st.rewind_for("cell:t") is not None
    assert w.calls == 2
    st.run("hello again", "cell:t", Turn())
    st.settle()
    assert w.calls == 4  # agent_start and message_end; nothing owed once they synced
    with st.syncs_held():  # a cell that writes nothing after its rewind still syncs, as it ends
        st.rewind_for("cell:t")
    st.settle()
    assert w.calls == 5
    st.settle()
    assert w.calls == 5


def test_note_is_stored_not_sent(tmp_path):
    st = NotebookSession(tmp_path, "s")
    note = st.note("remember this", "n1")
    assert isinstance(note, Note)
    again = NotebookSession(tmp_path, "s")
    (loaded,) = again.agent.entries()
    assert isinstance(loaded, Note) and loaded.body == "remember this" and loaded.cell == "n1"
    assert st.cell_position("cell:n1").id == note.id
    msgs, new = again.preview("hi", "cell:x")
    assert [m.text() for m in msgs] == ["hi"]


def test_preview_writes_nothing_and_follows_the_cell_rule(tmp_path):
    st = NotebookSession(tmp_path, "s")
    st.run("first", "cell:a", Turn())
    st.stage("ephemeral", "it is Monday", "cell:e")
    f = JsonlStore(tmp_path).file("s")
    before = f.read_bytes()
    msgs, new = st.preview("first, edited", "cell:a")
    assert [m.text() for m in msgs] == ["it is Monday", "first, edited"]  # would rewind before "first"
    msgs, _ = st.preview("second", "cell:b")
    assert [m.role for m in msgs] == ["user", "assistant", "user", "user"]
    assert f.read_bytes() == before and len(st.staged) == 1


def test_read_only_inspection_refuses_writes(tmp_path):
    st = NotebookSession(tmp_path, "s")
    st.run("first", "cell:a", Turn())
    imp = st.open("s")
    assert st.agent is imp.agent and st.agent is not st.own
    for call in (lambda: st.run("x", None, Turn()), lambda: st.stage("meta", "m", None), lambda: st.note("n", "")):
        with pytest.raises(DurableError, match="open read-only for inspection"):
            call()
    st.branch(st.agent.path()[0].id[:5])  # browsing the copy is fine, by id prefix too
    assert st.close() and st.agent is st.own and len(st.own.path()) == 2


CLAUDE_LOG = Path(__file__).resolve().parents[2] / "notebooks" / "data" / "claude-code-tool-heavy.jsonl"


def test_fork_continues_a_log_opened_read_only_in_the_notebook_store_and_leaves_the_log_as_it_was(tmp_path):
    st = NotebookSession(tmp_path / "store", "s")
    st.own.append("the notebook's own session exists once written")
    source = CLAUDE_LOG.read_bytes()
    imp = st.open(str(CLAUDE_LOG))
    full = imp.agent.depth
    earlier = [e for e in imp.agent.path() if isinstance(e, MessageEntry)][4]
    st.branch(earlier.id)  # a what-if from an earlier point of the saved session
    copied = [session_text(e) for e in imp.agent.path()]
    assert 5 <= len(copied) < full
    with pytest.raises(DurableError, match="already exists"):
        st.fork("s")
    assert st.inspected is imp  # a refused fork changes nothing

    forked = st.fork("what-if")
    assert st.inspected is None and st.agent is st.own is forked
    assert [session_text(e) for e in forked.path()] == copied and forked.leaf_id != earlier.id  # fresh ids
    reopened = JsonlStore(tmp_path / "store")
    assert reopened.load_session("what-if").parent_id == imp.agent.session_id
    assert [session_text(e) for e in reopened.load_entries("what-if")] == copied
    st.run("and then?", "cell:q", Turn())
    assert st.own.path()[-2].message.text() == "and then?" and len(st.own.path()) == len(copied) + 2
    assert CLAUDE_LOG.read_bytes() == source


def session_text(e):
    return e.message.text() if isinstance(e, MessageEntry) else type(e).__name__


def test_branch_errors(tmp_path):
    st = NotebookSession(tmp_path, "s")
    st.stage("ephemeral", "now", "cell:e")
    st.run("q", "cell:q", Turn())
    eph = next(e for e in st.agent.entries() if isinstance(e, MessageEntry) and e.message.injected)
    with pytest.raises(DurableError, match="ephemeral"):
        st.branch(eph.id)
    with pytest.raises(DurableError, match="no entry or label 'zzz'"):
        st.branch("zzz")
    with pytest.raises(DurableError, match="cannot rewind 2"):
        st.rewind(2)
    assert st.rewind(1) == ""


def test_preview_of_a_tagged_cell_shows_it_staged_in_place_of_its_old_version(tmp_path):
    st = NotebookSession(tmp_path, "s")
    st.stage("meta", "old wording", "cell:m")
    st.stage("ephemeral", "it is Monday", "cell:e")
    msgs, new = st.preview("new wording", "cell:m", kind="meta")
    assert [(m.text(), m.injected.value) for m in msgs] == [("it is Monday", "ephemeral"), ("new wording", "meta")]
    assert new == msgs and [s.message.text() for s in st.staged] == ["old wording", "it is Monday"]


def test_a_failed_turn_stages_its_ephemeral_input_again(tmp_path):
    st = NotebookSession(tmp_path, "s")

    def broken(messages):
        raise ConnectionError("down")

    st.model = broken
    st.stage("meta", "be brief", "cell:m")
    st.stage("ephemeral", "it is Monday", "cell:e")
    turn = Turn()
    with pytest.raises(ConnectionError):
        st.run("hi", "cell:t", turn)
    assert [s.message.text() for s in st.staged] == ["it is Monday"]  # the meta one is stored
    assert [e.message.text() for e in JsonlStore(tmp_path).load_entries("s")] == ["be brief", "hi"]
    assert turn.input_ids and turn.reply is None


def test_a_replys_thinking_is_shown_collapsed_and_as_text():
    from durable_nb.notebook.render import reply_bundle

    evil = "<img src=x onerror=alert(1)> plan"
    bundle = reply_bundle("**Done.**", thinking=[ai.Thinking(evil, "sig"), ai.Thinking(redacted="ENC")])
    page = bundle["text/html"]
    assert page.index("<details") < page.index("<strong>Done.</strong>")  # reasoning first, closed
    assert "<details open" not in page and page.count('<details class="durable-thinking">') == 2
    assert "&lt;img src=x onerror=alert(1)&gt; plan" in page and "<img" not in page
    assert "thinking · 33 chars" in page and "thinking · redacted by the provider" in page and "ENC" not in page
    assert bundle["text/plain"] == "[thinking · 33 chars]\n[thinking · redacted by the provider]\n**Done.**"
    assert reply_bundle("Hi") == reply_bundle("Hi", thinking=[])  # no thinking: as before


def test_help_lines_wrap_at_word_boundaries():
    """%durable? is read in a pager that breaks long lines mid-word: the help wraps itself (#27 item 14)."""
    from durable_nb.notebook.verbs.helptext import WIDTH, help_text

    lines = help_text().splitlines()
    long = [line for line in lines if len(line) > WIDTH]
    # only a usage itself may be longer (it is never broken): its help starts after it
    assert all(line.lstrip().startswith("%durable ") for line in long), long
    assert max(len(line) for line in lines) < 120
