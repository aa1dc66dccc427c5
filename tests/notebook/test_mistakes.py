"""A newcomer's typos in this round's verbs, in IPython's own shell in this process: each mistake is
one ``UsageError`` line (a did-you-mean where one is near), never a traceback, never a secret; and
the command line's mistakes are one line on stderr with status 2 (the evaluation API's: one DurableError)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from durable_nb.__main__ import main

SECRET = "s3cr3t-value-123"


@pytest.fixture(scope="module")
def newcomer(shell, tmp_path_factory):
    """IPython's shell (tests/conftest.py) on one session with a turn (label ``first``), a function
    ``clock``, a case table ``cases``, a grader ``g`` and an evaluation run ``r1``."""
    from durable_nb import evals

    where = tmp_path_factory.mktemp("mistakes")
    sh = shell
    sh.run_line_magic("config", f"DurableMagics.store = {str(where / '.durable')!r}")
    sh.run_line_magic("config", "DurableMagics.session = 'newcomer'")
    sh.user_ns.update(cases=[{"word": "hello"}], g=evals.contains("{word}"), clock=lambda: "12:00")
    sh.run_cell_magic("durable", "", "hello there")
    sh.run_line_magic("durable", "label first")
    sh.run_cell_magic("durable", "--cases cases --grade g --eval r1", "Say {word}")
    sh.run_line_magic("durable", f"export {where / 'taken.html'}")
    sh.user_ns["where"] = where
    return sh


@pytest.mark.parametrize(
    ("line", "cell", "message"),
    [
        ("export --formt html y.html", None, "unknown option --formt (did you mean '--format'?)"),
        ("export y.html --redcat", None, "unknown option --redcat (did you mean '--redact'?)"),
        ("export y.html --redact emial", None, "--redact takes nothing (secrets"),
        ("export", None, "usage: %durable export <path>"),
        ("export a.html b.html", None, "usage: %durable export <path>"),  # a second path is not ignored
        ("export y4 --format xml", None, "no export format 'xml' (formats: html, md"),
        ("export y.xml", None, "the file name must end in .html, .md or .jsonl"),
        ("export {where}/missing/y.html", None, "no folder"),
        ("export {where}/taken.html", None, "the file exists (use --force to replace it)"),
        ("export r2.html --run r1", None, "cannot export an evaluation run as html"),
        ("trace otlpp", None, "no trace mode 'otlpp'"),
        ("trace off extra", None, "usage: %durable trace off (it takes nothing, not 'extra')"),
        ("trace otlp localhost:4318", None, "must be an http:// or https:// URL"),
        ("trace otlp ftp://x", None, "must be an http:// or https:// URL, not 'ftp://x'"),  # as typed
        ("sessions --log", None, "unknown option --log (did you mean '--logs'?)"),
        ("open nosuch.eval", None, "no session 'nosuch.eval'"),
        ("evals nosuchrun", None, "has no evaluation run 'nosuchrun' (runs there: r1)"),
        ("eval compar r1 r1", None, "(did you mean 'compare'?)"),
        ("eval compare r1", None, "usage: %durable eval compare <run> <baseline>"),
        ("eval compare r1 nosuch", None, "has no evaluation run 'nosuch'"),
        ("--cases nocases", "Say {word}", "no notebook variable 'nocases' (did you mean 'cases'?)"),
        ("--case cases", "Say {word}", "unknown option --case (did you mean '--cases'?)"),
        ("--eval r3", "Say {word}", "--eval goes with --cases NAME"),
        ("--cases cases --tools reus", "Say {word}", "--tools reus: neither reuse, call nor a notebook function"),
        ("annotate fir text", None, "no entry or label 'fir' in session 'newcomer' (did you mean 'first'?)"),
        ("annotate first --score high", None, "--score needs a number"),
        ("annotate first --scor 1", None, "unknown option --scor (did you mean '--score'?)"),
        ("annotate first", None, "an annotation needs a note, a score or a tag"),
        ("tools add nosuchfunc", None, "no 'nosuchfunc' in the notebook"),
        ("tools add --mpc x", None, "unknown option --mpc (did you mean '--mcp'?)"),
        ("tools add --mcp nosuchcommand-xyz --approve sometimes", None, "--approve takes always or ask"),
        ("tools add clock --mcp x", None, "takes one server and no function names"),
        ("tools remove", None, "needs the name of a tool (%durable tools lists them)"),
        ("tools remove nosuchtool", None, "no tool 'nosuchtool'"),
        ("tools delete x", None, "not 'delete'"),
        ("replay --tools reus", None, "neither reuse, call nor a notebook function (did you mean 'reuse'?)"),
        ("replay --tools reuse,clock", None, "--tools reuse stands alone (reuse or call)"),
        ("replay --tools clcok", None, "no 'clcok' in the notebook (did you mean 'clock'?)"),
        ("replay nosuchentry", None, "no entry or label 'nosuchentry'"),
    ],
)
def test_a_mistake_is_one_usage_line(newcomer, line, cell, message):
    line = line.format(where=newcomer.user_ns["where"])
    with pytest.raises(UsageError) as info:
        if cell is None:
            newcomer.run_line_magic("durable", line)
        else:
            newcomer.run_cell_magic("durable", line, cell)
    text = str(info.value)
    assert message in text
    assert "\n" not in text


def test_a_credential_given_as_a_setting_is_refused_without_showing_it(newcomer):
    for line in (f"set api_key={SECRET}", f"""set 'extra_headers={{"Authorization":"Bearer-{SECRET}"}}'"""):
        with pytest.raises(UsageError) as e:
            newcomer.run_line_magic("durable", line)
        text = str(e.value)
        assert "is a credential" in text and SECRET not in text and "\n" not in text


def test_a_collector_url_with_a_password_is_refused_without_showing_it(newcomer):
    with pytest.raises(UsageError) as info:
        newcomer.run_line_magic("durable", f"trace otlp http://user:{SECRET}@localhost:9/v1/traces")
    text = str(info.value)
    assert text.startswith("the OTLP endpoint http://localhost:9/v1/traces holds a user or password")
    assert "OTEL_EXPORTER_OTLP_HEADERS" in text and SECRET not in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "s", "--formt", "html", "-o", "b.html"], "unknown option --formt (did you mean '--format'?)"),
        (["export", "s", "-o", "b.html", "--redcat"], "unknown option --redcat (did you mean '--redact'?)"),
        (["export", "s", "--output=b.html", "--formt=md"], "unknown option --formt (did you mean '--format'?)"),
        (["export", "s", "-o", "b.html", "extra"], "unexpected argument 'extra'"),
        (["export", "s", "-o", "b.html", "--format", "xml"], "invalid choice: 'xml'"),
        (["export", "s", "--to", "otlpp"], "invalid choice: 'otlpp'"),
        (["export"], "the following arguments are required: SESSION_OR_LOG"),
        (["exprot", "s"], "invalid choice: 'exprot'"),
        (["copy", "a", "b", "--frce"], "unknown option --frce (see"),  # copy has no --force: no hint, not --help
        (["eval", "spec.py", "--store", ".durable", "--tools", "reus"], "invalid choice: 'reus'"),
        (["eval", "spec.py", "--store", ".durable", "--nmae", "x"], "unknown option --nmae (did you mean '--name'?)"),
    ],
)
def test_a_command_line_mistake_is_one_line_and_status_2(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and err.endswith(" --help)\n")


def test_eval_with_a_junit_path_in_a_missing_folder_stops_first(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.py").write_text('prompt = "Say {word}"\ncases = [{"word": "hi"}]\n')
    assert main(["eval", "spec.py", "--store", ".durable", "--junit", "missing/x.xml"]) == 2
    out = capsys.readouterr()
    assert out.err == "error: cannot write --junit missing/x.xml: no folder missing\n"
    assert out.out == ""  # nothing ran


def test_one_grader_or_variant_without_its_list_is_one_line():
    from durable_nb import evals, session
    from durable_nb.errors import DurableError

    store = session.MemoryStore()
    with pytest.raises(
        DurableError, match=r"^graders takes a list, not one grader: graders=\[contains\('\{word\}'\)\]$"
    ):
        evals.run("Say {word}", [{"word": "x"}], store=store, graders=evals.contains("{word}"))
    with pytest.raises(DurableError, match=r"^variants takes a list, not one variant: variants=\['offline'\]$"):
        evals.run("Say {word}", [{"word": "x"}], store=store, variants="offline")
    assert store.list_sessions() == []  # nothing written


def test_an_mcp_command_or_error_never_shows_a_secret_env_value(monkeypatch):
    from durable_nb.durable.mcp_server import masked_command

    monkeypatch.setenv("SECRET_TOKEN", SECRET)
    shown = masked_command(["my-server", "--db", f"postgres://me@db/{SECRET}"], {})
    assert SECRET not in shown and shown.startswith("my-server --db ")


def test_exporting_a_run_says_it_is_the_run(newcomer, capsys):
    pytest.importorskip("inspect_ai")
    where = newcomer.user_ns["where"]
    newcomer.run_line_magic("durable", f"export {where / 'r1.eval'} --run r1")
    assert capsys.readouterr().out == f"exported evaluation run r1 of session newcomer to {where / 'r1.eval'}\n"


def test_an_mcp_server_whose_tool_names_are_taken_is_refused_in_one_line(newcomer, capsys):
    """Two servers (or a server and a notebook function) offering one tool name: the second add is refused,
    naming the tool and who has it, and its server stopped; the session's tools and turns still work."""
    pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install -e '.[mcp]'")
    import sys

    time_server = f'"{sys.executable} -m mcp_server_time --local-timezone UTC"'
    newcomer.run_line_magic("durable", f"tools add --mcp {time_server} --name clock1")
    try:
        with pytest.raises(UsageError) as e:
            newcomer.run_line_magic("durable", f"tools add --mcp {time_server} --name clock2")
        assert str(e.value) == (
            "the MCP server clock2's tool 'get_current_time' is already a tool here (of the MCP server clock1): "
            "two tools cannot share a name; remove that one first"
        )

        def convert_time() -> str:
            return "12:00"

        newcomer.user_ns["convert_time"] = convert_time
        with pytest.raises(UsageError) as e:
            newcomer.run_line_magic("durable", "tools add convert_time")
        assert "'convert_time'" in str(e.value) and "MCP server clock1" in str(e.value)
        capsys.readouterr()
        newcomer.run_line_magic("durable", "tools")  # still lists, so turns still run
        listed = capsys.readouterr().out
        assert "get_current_time" in listed and "convert_time" in listed
    finally:
        newcomer.run_line_magic("durable", "tools remove clock1")
    from durable_nb.durable.mcp_server import _open

    assert not [s for s in _open if s.info.get("label") == "clock2"]  # the refused server was stopped
