"""The documented rules of evaluation runs (docs/evals.md), held with properties and pinned examples.

- a grader returns a bool (pass/fail), a number (a score, passing from 0.5) or a Verdict; anything else,
  NaN too, is an error verdict, and an error never passes;
- a pair passes when it has a reply and every verdict passed; ``pass_rate`` is the share that passed;
- against a baseline a pair ``regressed`` (passed there, not here), ``improved`` (the other way) or
  ``changed`` reply;
- the command line exits 0 when every pair passed (with ``--baseline``: nothing regressed), 1 when some
  failed (or regressed), 2 on a usage error, with one line and never a traceback; stored runs survive;
- a changed spec (template, cases, variants, history) under a used name is refused;
- a ``.jsonl`` / ``.csv`` case file is read as its format defines, a bad line named.

Offline callable models only; no network.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from durable_nb import evals
from durable_nb.__main__ import main
from durable_nb.durable import Agent
from durable_nb.errors import DurableError
from durable_nb.evals.cases import CaseError, read_cases
from durable_nb.evals.report import junit
from durable_nb.kinds.verdict import VerdictEntry
from durable_nb.session import CustomEntry, MemoryStore

QUICK = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def echo(messages):
    """A model replying with the last message's text."""
    return messages[-1].text()


# -- what a grader returns, and how a pair and a run aggregate ----------------------------------------

RETURNS = st.one_of(
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_infinity=False),  # NaN included: an error verdict
    st.sampled_from(["yes", None, [True]]),  # not a grader's value: an error verdict
)


def _expected(value: object) -> tuple[bool, float | None, bool]:
    """(passed, score, error?) the docs give a grader's return value."""
    if isinstance(value, bool):
        return value, None, False
    if isinstance(value, (int, float)) and not math.isnan(value):
        return float(value) >= 0.5, float(value), False
    return False, None, True


@QUICK
@given(st.lists(st.lists(RETURNS, min_size=1, max_size=3), min_size=1, max_size=3))
def test_grader_values_give_verdicts_and_pairs_pass_when_every_verdict_passes(table):
    """``table[case][grader]`` is what grader ``grader`` returns for case ``case``."""
    n_graders = max(len(row) for row in table)

    def grader(k):
        def g(reply, case):
            row = json.loads(case["values"])
            return row[k] if k < len(row) else True

        g.__name__ = f"g{k}"
        return g

    cases = [{"n": i, "values": json.dumps(row)} for i, row in enumerate(table)]
    store = MemoryStore()
    run = evals.run("case {n}", cases, graders=[grader(k) for k in range(n_graders)],
                    agent=Agent(model=echo, store=store, session_id="s"), name="r")  # fmt: skip
    loaded = evals.load(store, "s", "r")
    for r, back, row in zip(run.results, loaded.results, table):
        row = row + [True] * (n_graders - len(row))
        want = [_expected(v) for v in row]
        got = [(v.passed, v.score, v.error is not None) for v in r.verdicts]
        assert [(p, e) for p, _, e in got] == [(p, e) for p, _, e in want], (row, r.verdicts)
        for (_, s_got, _), (_, s_want, _) in zip(got, want):
            assert s_got == s_want or (s_got is None and s_want is None)
        assert r.passed == all(p for p, _, _ in want) and r.error is None
        assert [(v.grader, v.passed, v.score) for v in back.verdicts] == [(v.grader, v.passed, v.score) for v in r.verdicts]  # fmt: skip
        assert back.passed == r.passed
    assert run.pass_rate == sum(r.passed for r in run.results) / len(run.results)
    assert run.passed == all(r.passed for r in run.results) and run.finished


def test_numpy_scalars_count_as_the_bool_or_number_they_hold():
    np = pytest.importorskip("numpy")
    graders = [lambda r, c: np.bool_(True), lambda r, c: np.bool_(False), lambda r, c: np.int64(1)]
    run = evals.run("hi", [{}], graders=graders, agent=Agent(model=echo))
    assert [(v.passed, v.score, v.error) for v in run.results[0].verdicts] == [
        (True, None, None), (False, None, None), (True, 1.0, None)
    ]  # fmt: skip


# -- against a baseline, and the command line's exit code ----------------------------------------------

SPEC = """
from durable_nb import evals
prompt = "case {{i}} says {{say}}"
cases = {cases!r}
def model(messages):
    text = messages[-1].text()
    if text.endswith("err"):
        raise RuntimeError("the model failed")
    return text.split()[-1]
variants = [{{"model": model, "label": "m"}}]
graders = [evals.contains("yes")]
"""
OUTCOME = st.sampled_from(["yes", "no", "err"])  # passes, fails, the model fails (an error row)


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["eval", *args])
    return code, out.getvalue(), err.getvalue()


@settings(QUICK, max_examples=15)
@given(st.lists(st.tuples(OUTCOME, OUTCOME), min_size=1, max_size=4))
def test_compare_and_the_exit_code_follow_each_pairs_outcome(pairs):
    """``pairs[i]`` is case ``i``'s outcome in the baseline and in the new run."""
    with tempfile.TemporaryDirectory() as d:
        store = str(Path(d) / "store")
        for name, k in (("base", 0), ("new", 1)):
            spec = Path(d) / f"{name}.py"
            spec.write_text(SPEC.format(cases=[{"i": i, "say": p[k]} for i, p in enumerate(pairs)]))
            alone, out, err = _cli(str(spec), "--store", store, "--name", name)
            assert alone == (0 if all(p[k] == "yes" for p in pairs) else 1), (out, err)
            assert err == ""
        code, out, err = _cli(str(Path(d) / "new.py"), "--store", store, "--name", "new", "--baseline", "base")
        new, base = evals.load(store, "eval", "new"), evals.load(store, "eval", "base")
    c = new.compare(base)
    passes = [(b == "yes", n == "yes") for b, n in pairs]
    assert [r.case_index for r in c.regressed] == [i for i, (b, n) in enumerate(passes) if b and not n]
    assert [r.case_index for r in c.improved] == [i for i, (b, n) in enumerate(passes) if n and not b]
    reply = {"yes": "yes", "no": "no", "err": ""}
    assert [r.case_index for r in c.changed] == [i for i, (b, n) in enumerate(pairs) if reply[b] != reply[n]]
    assert not c.missing
    assert code == (1 if c.regressed else 0) and err == "", (out, err)
    assert f"{len(c.regressed)} regressed, {len(c.improved)} improved" in out


# -- what the store holds for each pair -----------------------------------------------------------------


def test_the_store_holds_a_start_record_a_branch_per_pair_and_a_verdict_per_grader():
    store = MemoryStore()
    agent = Agent(model=echo, store=store, session_id="s")
    cases = [{"w": "a"}, {"w": "b"}]
    run = evals.run("say {w}", cases, variants=[{"model": echo, "label": "x"}, {"model": echo, "label": "y"}],
                    graders=[evals.contains("{w}"), evals.regex("^say")], agent=agent, name="r")  # fmt: skip
    entries = store.load_entries("s")
    by_id = {e.id: e for e in entries}
    records = [e for e in entries if isinstance(e, CustomEntry) and e.kind == "eval"]
    start = next(e for e in records if e.data["role"] == "start")
    assert start.data["spec"]["case_rows"] == cases and start.data["spec"]["variant_names"] == ["x", "y"]
    assert [e.data["role"] for e in records].count("end") == 1
    markers = {(e.data["case"], e.data["variant"]): e for e in records if e.data["role"] == "pair"}
    assert set(markers) == {(c, v) for c in range(2) for v in range(2)}
    assert all(m.parent_id == start.id for m in markers.values())
    verdicts = [e for e in entries if isinstance(e, VerdictEntry)]
    assert len(verdicts) == 4 * 2 and all(v.run == "r" for v in verdicts)
    for r in run.results:
        reply = by_id[r.entry_id]
        at = reply
        while at.id not in {m.id for m in markers.values()}:
            at = by_id[at.parent_id]
        assert (at.data["case"], at.data["variant"]) == (r.case_index, ["x", "y"].index(r.variant))
        mine = sorted(v.grader for v in verdicts if v.target_id == reply.id)
        assert mine == sorted(run.graders) and all(v.parent_id == reply.id for v in verdicts if v.target_id == reply.id)


# -- a run's name holds one spec -------------------------------------------------------------------------


def test_a_changed_case_field_outside_the_template_is_a_changed_spec():
    """The expected answer is part of the cases: changing it under a used name is refused, not graded
    against answers the stored run does not show."""
    agent = Agent(model=lambda m: "Paris", session_id="s")
    evals.run("Capital of {country}?", [{"country": "France", "answer": "Paris"}], agent=agent, name="n",
              graders=[evals.equals("answer")])  # fmt: skip
    with pytest.raises(DurableError, match=r"run 'n' was finished with another spec.*name='n-2'"):
        evals.run("Capital of {country}?", [{"country": "France", "answer": "Lyon"}], agent=agent, name="n",
                  graders=[evals.equals("answer"), evals.contains("{answer}")])  # fmt: skip
    same = [{"answer": "Paris", "country": "France"}]  # the same fields in another order: the same cases
    again = evals.run("Capital of {country}?", same, agent=agent, name="n", graders=[evals.equals("answer")])
    assert again.calls == 0 and again.passed


# -- case files ------------------------------------------------------------------------------------------


def test_case_files_are_read_as_their_formats_define(tmp_path):
    bom = tmp_path / "excel.csv"
    bom.write_bytes("\ufeffcountry,answer\r\nFrance,Paris\r\n".encode())
    assert read_cases(bom) == [{"country": "France", "answer": "Paris"}]  # a spreadsheet's byte-order mark
    multi = tmp_path / "multi.csv"
    multi.write_text('q,a\n"two\nlines",x\n"p\u2028q",y\n', encoding="utf-8")
    assert read_cases(multi) == [{"q": "two\nlines", "a": "x"}, {"q": "p\u2028q", "a": "y"}]
    lines = tmp_path / "sep.jsonl"
    lines.write_text(json.dumps({"q": "a\u2028b\x85c"}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert read_cases(lines) == [{"q": "a\u2028b\x85c"}]  # JSON Lines end at \n only
    ragged = tmp_path / "ragged.csv"
    for body, line in (("a,b\n1,2\n3,4,5\n", 3), ("a,b\n1,2\n\n3\n", 4)):
        ragged.write_text(body)
        with pytest.raises(CaseError, match=rf"^ragged.csv line {line} has \d values, its header names 2 fields$"):
            read_cases(ragged)
    big = tmp_path / "big.csv"
    big.write_text("a\n" + "x" * 200_000 + "\n")
    with pytest.raises(CaseError, match=r"^big.csv line 2 is not CSV: field larger than field limit"):
        read_cases(big)


def test_a_bad_case_file_is_one_line_exit_2_and_the_stored_run_survives(tmp_path):
    store = str(tmp_path / "store")
    good = tmp_path / "cases.jsonl"
    good.write_text('{"w": "a"}\n{"w": "b"}\n')
    spec = tmp_path / "spec.py"
    spec.write_text(f"from durable_nb import evals\nprompt = 'say {{w}}'\ncases = {str(good)!r}\n"
                    "graders = [evals.contains('{w}')]\n")  # fmt: skip
    assert _cli(str(spec), "--store", store, "--name", "r")[0] == 0
    before = evals.load(store, "eval", "r")
    for body in ('{"w": "a"}\n{"w": "b",}\n', '{"w": "a"}\n[1]\n', ""):
        good.write_text(body)
        code, out, err = _cli(str(spec), "--store", store, "--name", "r")
        assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: "), err
    ragged = tmp_path / "cases.csv"
    ragged.write_text("w\na\nb,c\n")
    spec.write_text(spec.read_text().replace(str(good), str(ragged)))
    code, out, err = _cli(str(spec), "--store", store, "--name", "r2")
    assert (code, err) == (2, "error: cases.csv line 3 has 2 values, its header names 1 fields\n")
    after = evals.load(store, "eval", "r")
    assert [(r.entry_id, r.passed) for r in after.results] == [(r.entry_id, r.passed) for r in before.results]
    assert [i.name for i in evals.runs(store, "eval")] == ["r"]


def test_a_typo_of_a_spec_name_is_a_usage_error_not_an_ungraded_pass(tmp_path):
    spec = tmp_path / "spec.py"
    base = "from durable_nb import evals\nfrom os.path import join as tool\nprompt = 'say {w}'\ncases = [{'w': 'a'}]\n"
    for typo, meant in (("grader = [evals.contains('b')]", "graders"), ("Variants = ['offline']", "variants")):
        spec.write_text(base + typo + "\n")
        code, out, err = _cli(str(spec), "--store", str(tmp_path / "s"))
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert f"but no {meant!r}: rename it" in err
    spec.write_text(base + "_grader = 1\nnames = ['a']\nsession = 'x'\n")  # helpers, and an imported 'tool'
    assert _cli(str(spec), "--store", str(tmp_path / "s"))[0] == 0


def test_ctrl_c_is_one_line_and_the_same_command_continues(tmp_path):
    spec = tmp_path / "spec.py"
    spec.write_text(
        "import os, signal, time\nprompt = 'say {w}'\ncases = [{'w': str(i)} for i in range(4)]\nconcurrency = 1\n"
        "def model(messages):\n"
        "    if messages[-1].text() == os.environ.get('STOP_AT'):\n"
        "        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C: the main thread gets KeyboardInterrupt\n"
        "        time.sleep(0.5)\n"
        "    return messages[-1].text()\n"
        "variants = [model]\n"
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STOP_AT", "say 2")
        try:
            code, out, err = _cli(str(spec), "--store", str(tmp_path / "s"), "--name", "r")
        except KeyboardInterrupt:
            pytest.fail("Ctrl-C escaped the command line (a traceback)")
    assert (code, out) == (130, "") and err.startswith("stopped: ") and err.count("\n") == 1, err
    assert 2 <= sum(1 for r in evals.load(str(tmp_path / "s"), "eval", "r").results if r.entry_id) < 4
    assert _cli(str(spec), "--store", str(tmp_path / "s"), "--name", "r")[0] == 0


# -- JUnit XML -------------------------------------------------------------------------------------------


@QUICK
@given(st.text(max_size=40), st.text(max_size=20))
def test_junit_is_well_formed_xml_whatever_the_model_replied_or_raised(reply, error):
    def model(messages):
        if messages[-1].text() == "fail":
            raise RuntimeError(error or "x")
        return reply

    run = evals.run("{w}", [{"w": "ok"}, {"w": "fail"}], graders=[lambda r, c: False],
                    agent=Agent(model=model))  # fmt: skip
    with tempfile.TemporaryDirectory() as d:
        suite = ET.parse(junit(run, Path(d) / "j.xml")).getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "1" and suite.get("errors") == "1"
