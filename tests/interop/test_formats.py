"""The export formats' one registry: chosen by --format or by suffix (double suffixes too), one line
for an unknown one or one not written yet, the same no-overwrite and temporary-file rules for each."""

from __future__ import annotations

from pathlib import Path

import pytest

from durable_nb import durable
from durable_nb.__main__ import main
from durable_nb.errors import DurableError
from durable_nb.session import JsonlStore
from durable_nb.share import export
from durable_nb.share.formats import FORMATS, Format, choose, register


@pytest.fixture
def agent(tmp_path: Path) -> durable.Agent:
    a = durable.Agent(
        model=lambda m: f"reply to {m[-1].text()}", store=JsonlStore(tmp_path / ".durable"), session_id="a"
    )
    a.run("hi").wait()
    return a


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("x.html", "html"),
        ("x.MD", "md"),
        ("x.jsonl", "jsonl"),
        ("x.pi.jsonl", "pi"),
        ("x.PI.JSONL", "pi"),
        ("x.atif.json", "atif"),
        ("x.otlp.json", "otlp"),
        ("x.eval", "inspect"),
        ("my.session.jsonl", "jsonl"),
    ],
)
def test_the_longest_suffix_chooses(name, fmt):
    assert choose(Path(name)).name == fmt


def test_fixed_names_and_unknown_ones_are_one_line():
    assert list(FORMATS) == ["html", "md", "jsonl", "otlp", "inspect", "pi", "atif"]
    for bad in ("x.txt", "x.json", ".eval", "x"):
        with pytest.raises(DurableError, match=r"must end in \.html, \.md or \.jsonl \(or .*\.pi\.jsonl.*--format"):
            choose(Path(bad))
    with pytest.raises(DurableError, match="no export format 'yaml'"):
        choose(Path("x.html"), "yaml")
    assert choose(Path("x.json"), "inspect").name == "inspect"


def test_a_format_not_written_yet_is_one_line_and_leaves_nothing(agent, tmp_path, monkeypatch):
    monkeypatch.setitem(FORMATS, "later", Format("later", (".later",), "", "a format to come"))
    with pytest.raises(DurableError, match=r"cannot write the later format \(a format to come\) yet"):
        export(agent, tmp_path / "x.later")
    assert not list(tmp_path.glob("*x.later*"))


def test_a_registered_writer_gets_the_job_and_a_temporary_file(agent, tmp_path, monkeypatch):
    seen = []

    def write(job, out):
        seen.append((job.agent.session_id, job.target.name, out.parent, out.name.startswith(".")))
        out.write_text("written")

    import durable_nb.share.formats as formats

    monkeypatch.setattr(formats, "_test_writer", write, raising=False)
    monkeypatch.setitem(FORMATS, "mine", Format("mine", (".mine.json",), "durable_nb.share.formats:_test_writer", "x"))
    out = export(agent, tmp_path / "s.mine.json")
    assert out.read_text() == "written" and seen == [("a", "s.mine.json", tmp_path, True)]
    with pytest.raises(DurableError, match="the file exists"):
        export(agent, out, replace=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".durable", "s.mine.json"]  # no temporary file


def test_an_extra_not_installed_is_one_line(agent, tmp_path, monkeypatch):
    monkeypatch.setitem(
        FORMATS, "gone", Format("gone", (".gone",), "no_such_module_here:w", "x", "gone", ("no_such_module_here",))
    )
    with pytest.raises(DurableError, match=r"needs no_such_module_here: pip install 'durable_nb\[gone\]'"):
        export(agent, tmp_path / "x.gone")


def test_register_replaces_by_name(monkeypatch):
    monkeypatch.setitem(FORMATS, "html", FORMATS["html"])  # restored afterwards
    register(Format("html", (".htm",), "durable_nb.share.export:write_html", "a page"))
    assert choose(Path("x.htm")).name == "html"


def test_cli_format_overrides_the_suffix_and_a_pi_file_never_goes_into_a_store(agent, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["export", "a", "-o", "page.txt", "--format", "html"]) == 0
    assert (tmp_path / "page.txt").read_text().startswith("<!doctype html>")
    assert main(["export", "a", "-o", "page.txt", "--format", "md"]) == 1
    assert "the file exists (use --force" in capsys.readouterr().err
    assert main(["export", "a", "-o", "page.txt", "--format", "md", "--force"]) == 0
    assert main(["export", "a", "-o", ".durable/x.pi.jsonl"]) == 1
    assert "is a session store" in capsys.readouterr().err
    assert main(["export", "a", "-o", "x.otlp.json"]) in (0, 1)  # otlp: written once h-otlp's writer is in
    with pytest.raises(SystemExit):
        main(["export", "a", "-o", "x.html", "--format", "yaml"])  # argparse: invalid choice, status 2


def test_magic_export_chooses_by_suffix_or_format_in_one_line(shell, tmp_path, monkeypatch, capsys):
    from IPython.core.error import UsageError

    monkeypatch.chdir(tmp_path)
    shell.run_line_magic("config", f"DurableMagics.store = {str(tmp_path / '.durable')!r}")
    shell.run_line_magic("config", "DurableMagics.session = 'm'")
    shell.run_cell_magic("durable", "", "hello <b>there</b>")
    shell.run_line_magic("durable", "export notes.txt --format md")
    assert "exported session m" in capsys.readouterr().out
    assert "hello &lt;b&gt;there" in (tmp_path / "notes.txt").read_text()
    with pytest.raises(UsageError, match="no export format 'yaml'"):
        shell.run_line_magic("durable", "export notes.txt --format yaml")
    with pytest.raises(UsageError, match=r"\.otlp\.json, \.eval, \.pi\.jsonl, \.atif\.json\), or give --format"):
        shell.run_line_magic("durable", "export notes.json")


@pytest.mark.parametrize("name", ["s.pi.jsonl", "s.atif.json", "s.eval", "s.json"])
def test_every_new_format_keeps_the_export_rules(agent, tmp_path, name):
    """A plain file's mode, no temporary file left, no overwrite without replace (--force)."""
    import os
    import stat

    if name.endswith((".eval", ".json")) and not name.endswith(".atif.json"):
        pytest.importorskip("inspect_ai")
    fmt = "inspect" if name == "s.json" else None
    out = export(agent, tmp_path / name, format=fmt)
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask
    before = out.read_bytes()
    with pytest.raises(DurableError, match="the file exists"):
        export(agent, out, format=fmt, replace=False)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".durable", name]
