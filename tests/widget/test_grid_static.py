"""The evaluation grid without a browser: its state (cases × variants, baseline marks), the static HTML and
text forms (no script, session text escaped), the widget's fallback, the exported page, ``%durable evals RUN``."""

from __future__ import annotations

import re

import pytest

from durable_nb import durable, evals
from durable_nb.evals import grid
from durable_nb.session import MemoryStore
from durable_nb.widget import SessionWidget

pytestmark = pytest.mark.usefixtures("recording")

CASES = [
    {"country": "France", "answer": "Paris"},
    {"country": "Japan", "answer": "Tokyo"},
    {"country": "<b>Peru</b><script>alert(1)</script>", "answer": "Lima"},
]
CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Peru": "Lima"}


def right(messages):
    """Knows every capital."""
    text = messages[-1].text()
    return next((v for k, v in CAPITALS.items() if k in text), "?")


def sloppy(messages):
    """Says Paris to everything."""
    return "Paris"


def lengthy(reply, case):
    """A score grader: short replies score high."""
    return 1.0 if len(reply) < 10 else 0.25


def eval_agent():
    """A session with two runs of two variants over three cases: ``base`` (both right) and ``v2`` (one sloppy)."""
    a = durable.Agent(store=MemoryStore(), session_id="grid")
    graders = [evals.contains("{answer}"), lengthy]
    prompt = "Capital of {country}? One word."
    base = evals.run(prompt, CASES, agent=a, name="base", graders=graders,
                     variants=[{"model": right, "label": "careful"}, {"model": right, "label": "quick"}])  # fmt: skip
    v2 = evals.run(prompt, CASES, agent=a, name="v2", graders=graders,
                   variants=[{"model": right, "label": "careful"}, {"model": sloppy, "label": "quick"}])  # fmt: skip
    return a, base, v2


def test_the_state_holds_a_cell_per_pair_with_its_outcome_cost_time_and_baseline_mark():
    a, base, v2 = eval_agent()
    s = grid.state(v2, base)
    assert s["run"] == "v2" and s["baseline"] == "base" and s["variants"] == ["careful", "quick"]
    assert [c["index"] for c in s["cases"]] == [0, 1, 2] and s["case_total"] == 3 and len(s["cells"]) == 6
    by = {(c["case"], c["variant"]): c for c in s["cells"]}
    assert by[(0, 1)]["passed"] and "baseline" not in by[(0, 1)]  # Paris is right for France
    assert not by[(1, 1)]["passed"] and by[(1, 1)]["baseline"] == "regressed"
    assert by[(1, 0)]["passed"] and by[(1, 0)]["score"] == 1.0 and by[(1, 0)]["entry_id"]
    assert a.entry(by[(1, 0)]["entry_id"]).message.text() == "Tokyo"  # the reply a click opens
    assert [v["grader"] for v in by[(1, 1)]["verdicts"]] == ["contains('{answer}')", "lengthy"]
    assert "2 regressed" in s["summary"] and s["summary"].startswith("4/6 passed")
    assert grid.outcome(by[(1, 1)]).startswith("FAIL contains")


def test_the_static_html_has_no_script_and_escapes_the_session_s_text():
    _, base, v2 = eval_agent()
    html = grid.html(grid.state(v2, base))
    assert "<script" not in html and "&lt;script&gt;" in html and "&lt;b&gt;Peru" in html
    assert html.count("<tr>") == 4  # the head and three cases
    assert "[regressed]" in html and "FAIL" in html and "pass · score 1" in html
    text = grid.text(grid.state(v2, base))
    assert "evaluation v2: 4/6 passed" in text and "quick: FAIL" in text
    assert "<table" in v2._repr_html_()  # an EvalRun shown in a cell draws the grid


def test_the_widget_s_fallback_and_the_exported_page_show_the_grid(tmp_path):
    from durable_nb.share.page import page_html

    a, base, v2 = eval_agent()
    w = SessionWidget(a, view="grid", evaluation=grid.state(v2, base))
    data, _ = w._repr_mimebundle_()
    assert "Evaluation grid: v2" in data["text/html"] and "[regressed]" in data["text/html"]
    assert "<script" not in data["text/html"] and "evaluation v2: 4/6" in data["text/plain"]
    page = page_html(a)
    noscript = re.search(r"<noscript>(.*)</noscript>", page, re.S).group(1)
    assert "Evaluation grid: v2" in noscript and "<script" not in noscript  # the newest run
    assert '"evaluation":{"run":"v2"' in page  # the page's Evaluation tab draws it


def test_the_magic_shows_a_run_s_grid_and_refuses_bad_names_in_one_line(shell, tmp_path, capsys):
    from IPython.core.error import UsageError

    sh = shell
    try:
        sh.run_line_magic("config", f"DurableMagics.store = {str(tmp_path)!r}")
        sh.run_line_magic("config", "DurableMagics.session = 'g'")
        sh.user_ns.update(cases=CASES, right=right, sloppy=sloppy, correct=evals.contains("{answer}"))
        body = "Capital of {country}? One word."
        sh.run_cell_magic("durable", "--cases cases --models right,right --grade correct --eval one", body)
        sh.run_cell_magic("durable", "--cases cases --models right,sloppy --grade correct --eval two", body)
        w = sh.run_line_magic("durable", "evals two --baseline one")
        assert isinstance(w, SessionWidget) and w.view == "grid" and w.evaluation["baseline"] == "one"
        assert sum(c.get("baseline") == "regressed" for c in w.evaluation["cells"]) == 2
        sh.run_line_magic("durable", "evals")
        assert "one  3 cases × 2 variants  finished" in capsys.readouterr().out
        with pytest.raises(UsageError, match="no evaluation run 'three'"):
            sh.run_line_magic("durable", "evals three")
        with pytest.raises(UsageError, match="--baseline goes with a run"):
            sh.run_line_magic("durable", "evals --baseline one")
    finally:
        sh.run_line_magic("config", "DurableMagics.store = '.durable'")


def test_a_big_run_carries_its_failing_cases_first_within_the_limit(monkeypatch):
    monkeypatch.setattr(grid, "MAX_CASES", 2)
    _, base, v2 = eval_agent()
    s = grid.state(v2, base)
    assert [c["index"] for c in s["cases"]] == [1, 2] and s["case_total"] == 3  # the two failing cases
    assert "1 more case (" in grid.text(s)
