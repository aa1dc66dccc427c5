"""Evaluation runs through the magics in a real kernel: --cases / --grade / --eval, %durable evals, eval compare."""

from __future__ import annotations

from kernel import new_cell_id

SETUP = """
from durable_nb import evals
capitals = [{"country": "France", "answer": "Paris"}, {"country": "Spain", "answer": "Madrid"}]
CAP = {"France": "Paris", "Spain": "Madrid"}
def right(messages):
    return next(c for k, c in CAP.items() if k in messages[-1].text())
def wrong(messages):
    return "Lyon"
correct = evals.equals("answer")
"""


def test_a_cases_cell_runs_grades_lists_and_compares(nb):
    nb.fresh()
    nb.k.ok(SETUP)
    r = nb.cell(
        "Capital of {country}?",
        cell_id=new_cell_id(),
        options="--cases capitals --models right --grade correct --eval good",
    )
    assert r.status == "ok", (r.error, r.stderr)
    assert "good: 2/2 passed (100%)" in r.stdout
    r = nb.cell(
        "Capital of {country}?",
        cell_id=new_cell_id(),
        options="--cases capitals --models wrong --grade correct --eval bad",
    )
    assert r.status == "ok" and "bad: 0/2 passed (0%)" in r.stdout and "FAIL equals(answer)" in r.stdout
    listed = nb.k.ok("%durable evals").stdout
    assert "good  2 cases × 1 variant  finished" in listed and "bad  2 cases × 1 variant  finished" in listed
    compared = nb.k.ok("%durable eval compare bad good").stdout
    assert "bad against good: 2 regressed" in compared


def test_cases_mistakes_are_one_line(nb):
    nb.fresh()
    nb.k.ok(SETUP)
    for options, message in [
        ("--cases nothing", "--cases nothing: no notebook variable 'nothing'"),
        ("--cases capitals --grade nope", "--grade nope: no notebook variable 'nope'"),
        ("--grade correct", "--grade goes with --cases NAME"),
        ("--cases capitals --note", "it does not go with a note cell"),
    ]:
        r = nb.cell("Capital of {country}?", cell_id=new_cell_id(), options=options)
        assert r.status == "error" and message in r.stderr, (options, r.stderr)
    r = nb.cell("Capital of {city}?", cell_id=new_cell_id(), options="--cases capitals")
    assert r.status == "error" and "case 0 has no field 'city'" in r.stderr
    assert "Traceback" not in r.stderr
