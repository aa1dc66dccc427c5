"""A run killed with SIGKILL resumes paying only for what was missing; the CLI's grid, exit codes and JUnit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from durable_nb import evals

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from durable_nb import evals
    log, store, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])

    def counting(messages):
        with open(log, "a") as f:
            f.write(messages[-1].text() + "\\n")
        n = sum(1 for _ in open(log))
        if kill_at and n >= kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return "reply to " + messages[-1].text()

    cases = [{"n": i} for i in range(4)]
    r = evals.run("case {n}", cases, variants=[{"model": counting, "label": "a"}, {"model": counting, "label": "b"}],
                  graders=[evals.contains("case")], store=store, session_id="s", name="killed", concurrency=2)
    print(len(r.results), r.passed)
    """
)


def test_a_run_killed_with_sigkill_and_rerun_makes_exactly_the_missing_calls(tmp_path):
    store, log = str(tmp_path / "store.db"), tmp_path / "calls.txt"
    first = subprocess.run([sys.executable, "-c", CHILD, str(log), store, "5"], capture_output=True, text=True)
    assert first.returncode == -9, first.stderr
    before = evals.load(store, "s", "killed")
    replied = sum(1 for r in before.results if r.entry_id)
    assert 2 <= replied < 8 and not before.finished
    calls_before = len(log.read_text().splitlines())
    second = subprocess.run([sys.executable, "-c", CHILD, str(log), store, "0"], capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["8", "True"]
    assert len(log.read_text().splitlines()) - calls_before == 8 - replied
    after = evals.load(store, "s", "killed")
    assert after.finished and len(after.results) == 8 and len({(r.case_index, r.variant) for r in after.results}) == 8


SPEC = """
from durable_nb import evals
prompt = "Capital of {country}?"
cases = [{"country": "France", "answer": "Paris"}, {"country": "Spain", "answer": "Madrid"}]
CAP = {"France": "Paris", "Spain": "%s"}
def model(messages):
    return next(c for k, c in CAP.items() if k in messages[-1].text())
variants = [{"model": model, "label": "m"}]
graders = [evals.equals("answer")]
"""


def cli(*args):
    return subprocess.run([sys.executable, "-m", "durable_nb", "eval", *args], capture_output=True, text=True)


def test_the_cli_prints_the_grid_exits_by_outcome_and_writes_junit(tmp_path):
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(SPEC % "Madrid")
    bad.write_text(SPEC % "Lyon")
    store = str(tmp_path / "runs")
    ok = cli(str(good), "--store", store, "--name", "v1", "--junit", str(tmp_path / "v1.xml"))
    assert ok.returncode == 0, ok.stderr
    assert "case  m" in ok.stdout and "v1: 2/2 passed (100%)" in ok.stdout
    suite = ET.parse(tmp_path / "v1.xml").getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "0" and len(suite.findall("testcase")) == 2
    failed = cli(str(bad), "--store", store, "--name", "v2", "--junit", str(tmp_path / "v2.xml"))
    assert failed.returncode == 1 and "FAIL equals(answer)" in failed.stdout
    suite = ET.parse(tmp_path / "v2.xml").getroot()
    assert suite.get("failures") == "1" and len(suite.findall("testcase/failure")) == 1
    assert "expected 'Madrid'" in suite.find("testcase/failure").get("message")
    regressed = cli(str(bad), "--store", store, "--name", "v2", "--baseline", "v1")
    assert regressed.returncode == 1 and "1 regressed" in regressed.stdout
    same = cli(str(good), "--store", store, "--name", "v3", "--baseline", "v1")
    assert same.returncode == 0 and "0 regressed" in same.stdout


def test_cli_usage_errors_exit_2_with_one_line(tmp_path):
    store = str(tmp_path / "runs")
    empty = tmp_path / "empty.py"
    empty.write_text("cases = [{'a': 1}]\n")
    for args, message in [
        ((str(empty), "--store", store), "defines no prompt"),
        ((str(tmp_path / "nope.py"), "--store", store), "no spec file"),
        ((), "the following arguments are required"),
    ]:
        p = cli(*args)
        assert p.returncode == 2 and message in p.stderr, p.stderr
        assert "Traceback" not in p.stderr
    spec = tmp_path / "s.py"
    spec.write_text(SPEC % "Madrid")
    assert cli(str(spec), "--store", store, "--name", "x").returncode == 0
    spec.write_text(SPEC.replace("Capital of", "Capital city of") % "Madrid")
    p = cli(str(spec), "--store", store, "--name", "x")
    assert p.returncode == 2 and "give this one a new name, e.g. name='x-2'" in p.stderr
    p = cli(str(spec), "--store", store, "--baseline", "nope")
    assert p.returncode == 2 and "no evaluation run 'nope'" in p.stderr


def test_a_rerun_without_its_failing_grader_still_fails(tmp_path):
    spec, store = tmp_path / "s.py", str(tmp_path / "runs")
    spec.write_text(SPEC % "Lyon")
    assert cli(str(spec), "--store", store, "--name", "v").returncode == 1
    spec.write_text((SPEC % "Lyon").replace('graders = [evals.equals("answer")]', "graders = []"))
    p = cli(str(spec), "--store", store, "--name", "v")  # the same run: its verdicts stored count
    assert p.returncode == 1 and "v: 1/2 passed" in p.stdout and "FAIL equals(answer)" in p.stdout, p.stdout


TWO_VARIANTS = 'variants = [{"model": model, "label": "a"}, {"model": model, "label": "b"}]\n'


def test_a_baseline_with_no_pair_in_common_is_a_usage_error_not_a_pass(tmp_path):
    store = str(tmp_path / "runs")
    base, new = tmp_path / "base.py", tmp_path / "new.py"
    base.write_text(SPEC % "Madrid" + TWO_VARIANTS)  # variants a and b
    new.write_text(SPEC % "Lyon")  # variant m, and a failing pair: not one pair of it is in the baseline
    assert cli(str(base), "--store", store, "--name", "base").returncode == 0
    p = cli(str(new), "--store", store, "--name", "new", "--baseline", "base")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert "run 'new' has no pair in common with baseline 'base'" in p.stderr
    assert "new: 1/2 passed" in p.stdout  # the run itself is stored and shown; the same command continues it
    c = evals.load(store, "eval", "new").compare(evals.load(store, "eval", "base"))
    assert c.matched == 0 and "no pair in common" in str(c)
    assert evals.load(store, "eval", "new").compare(evals.load(store, "eval", "new")).matched == 2


def test_the_magics_refuse_a_baseline_with_no_pair_in_common_in_one_line(shell, tmp_path):
    from IPython.core.error import UsageError

    shell.run_line_magic("config", f"DurableMagics.store = {str(tmp_path / '.durable')!r}")
    shell.run_line_magic("config", "DurableMagics.session = 'baselines'")
    shell.user_ns.update(cases=[{"word": "hi"}], g=evals.contains("{word}"))
    shell.run_cell("def a(messages): return 'hi'\ndef b(messages): return 'hi'\ndef c(messages): return 'hi'")
    shell.run_cell_magic("durable", "--cases cases --models a,b --grade g --eval two", "Say {word}")
    shell.run_cell_magic("durable", "--cases cases --models c --grade g --eval one", "Say {word}")
    for line in ("eval compare one two", "evals one --baseline two"):
        with pytest.raises(UsageError) as info:
            shell.run_line_magic("durable", line)
        assert str(info.value).startswith("run 'one' has no pair in common with baseline 'two'"), line
        assert "\n" not in str(info.value)
