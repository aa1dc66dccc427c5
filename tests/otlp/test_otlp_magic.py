"""``%durable trace otlp [URL]`` / ``off`` / alone, in IPython's own shell in this process."""

from __future__ import annotations

import pytest


def context_of(shell):
    """The kernel's durable Context (what the verbs work with)."""
    from durable_nb.notebook.magics import DurableMagics

    return shell.magics_manager.registry[DurableMagics.__name__].ctx


@pytest.fixture
def fresh(shell, tmp_path, monkeypatch, request):
    monkeypatch.chdir(tmp_path)
    shell.run_line_magic("config", f"DurableMagics.store = {str(tmp_path / '.durable')!r}")
    shell.run_line_magic("config", f"DurableMagics.session = {request.node.name[:40]!r}")
    return shell


def test_trace_otlp_sends_each_turn_and_off_stops(fresh, collector, capsys):
    fresh.run_line_magic("durable", "trace")
    assert "tracing is off" in capsys.readouterr().out
    fresh.run_line_magic("durable", f"trace otlp {collector.url}")
    assert f"tracing each turn to {collector.url}" in capsys.readouterr().out
    fresh.run_cell_magic("durable", "", "first")
    fresh.run_cell_magic("durable", "", "second")
    assert context_of(fresh).tracer.flush(10)
    assert len(collector.requests) == 2
    fresh.run_line_magic("durable", "trace")
    assert "2 turns sent, 0 not sent" in capsys.readouterr().out
    fresh.run_line_magic("durable", "trace off")
    assert "tracing off (2 turns sent" in capsys.readouterr().out
    fresh.run_cell_magic("durable", "", "third")
    assert len(collector.requests) == 2


def test_a_collector_that_is_down_costs_one_warning_line(fresh, closed_port, capsys):
    fresh.run_line_magic("durable", f"trace otlp {closed_port}")
    for text in ("one", "two"):
        fresh.run_cell_magic("durable", "", text)
        assert context_of(fresh).tracer.flush(10)
    out = capsys.readouterr()
    assert out.err.count("warning: trace not sent: cannot reach the collector") == 1
    assert out.out.count("entries written") == 2  # both turns ran and were stored
    fresh.run_line_magic("durable", "trace off")


def test_bad_trace_arguments_are_one_line(fresh):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="no trace mode 'jaeger'"):
        fresh.run_line_magic("durable", "trace jaeger")
    with pytest.raises(UsageError, match="must be an http:// or https:// URL"):
        fresh.run_line_magic("durable", "trace otlp file:///tmp/x")


def test_export_in_the_kernel_keeps_the_ephemeral_input_as_sent(fresh, tmp_path, capsys):
    import json

    fresh.run_cell_magic("durable", "--ephemeral", "the time is 12:00")
    fresh.run_cell_magic("durable", "", "hello")
    fresh.run_line_magic("durable", "export t.otlp.json")
    assert "exported session" in capsys.readouterr().out
    spans = [
        s
        for line in (tmp_path / "t.otlp.json").read_text().splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    ]
    chat = next(s for s in spans if s["name"] == "chat offline")
    sent = next(a["value"]["stringValue"] for a in chat["attributes"] if a["key"] == "gen_ai.input.messages")
    assert [m["parts"][0]["content"] for m in json.loads(sent)] == ["the time is 12:00", "hello"]
