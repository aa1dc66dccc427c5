"""durable_nb.evals through its public API: results, verdicts in every store, resume, bad input."""

from __future__ import annotations

import json
import threading

import pytest

from durable_nb import ai, evals
from durable_nb.durable import Agent
from durable_nb.errors import DurableError
from durable_nb.session import CustomEntry, MemoryStore, model_view, path

CASES = [{"country": "France", "answer": "Paris"}, {"country": "Spain", "answer": "Madrid"}]
CAPITALS = {"France": "Paris", "Spain": "Madrid"}


class Counting:
    """A model answering the capital of the country in the last message; counts its calls."""

    def __init__(self, wrong: str = "") -> None:
        self.calls = 0
        self.seen: list[list[ai.Message]] = []
        self.wrong = wrong
        self.lock = threading.Lock()

    def __call__(self, messages):
        with self.lock:
            self.calls += 1
            self.seen.append(list(messages))
        text = messages[-1].text()
        if text.startswith("Rubric:"):
            return "Looks right.\nVERDICT: PASS"
        for country, city in CAPITALS.items():
            if country in text:
                return "Lyon" if country == self.wrong else city
        return "?"


def test_a_run_gives_one_result_per_pair_with_verdicts_tokens_and_times():
    m = Counting(wrong="Spain")
    r = evals.run(
        "Capital of {country}? One word.",
        CASES,
        variants=[{"model": m, "label": "a"}, {"model": m, "label": "b", "temperature": 1}],
        graders=[evals.equals("answer"), evals.contains("{answer}"), evals.regex(r"^[A-Z]")],
        name="capitals",
    )
    assert [(x.case_index, x.variant) for x in r.results] == [(0, "a"), (0, "b"), (1, "a"), (1, "b")]
    assert [x.passed for x in r.results] == [True, True, False, False]
    assert r.pass_rate == 0.5 and not r.passed and r.name == "capitals" and m.calls == 4
    first = r.results[0]
    assert first.reply == "Paris" and first.entry_id and first.error is None and first.ms is not None
    assert first.case == CASES[0]
    assert [v.grader for v in first.verdicts] == ["equals(answer)", "contains('{answer}')", "regex('^[A-Z]')"]
    assert r.results[2].verdicts[0].reason == "expected 'Madrid'"
    assert set(vars(first)) == {
        "case_index", "case", "variant", "entry_id", "reply", "verdicts", "passed", "tokens", "cost", "ms", "error"
    }  # fmt: skip


def test_verdicts_reload_from_every_store_and_never_reach_a_model_view(reopenable):
    store, reopen = reopenable
    m = Counting()
    r = evals.run("Capital of {country}?", CASES, graders=[evals.contains("{answer}"), evals.judge("Correct?", model=m)],
                  agent=Agent(model=m, store=store, session_id="s1"), name="r1")  # fmt: skip
    assert r.passed and m.calls == 4  # two replies, two judges
    again = evals.load(reopen(), "s1", "r1")
    assert [[(v.grader, v.passed) for v in x.verdicts] for x in again.results] == [
        [(v.grader, v.passed) for v in x.verdicts] for x in r.results
    ]
    judge = again.results[0].verdicts[1]
    assert judge.judge_id and judge.model == "Counting" or judge.model
    entries = reopen().load_entries("s1")
    verdicts = [e for e in entries if isinstance(e, CustomEntry) and e.kind == "verdict"]
    assert len(verdicts) == 4 and {v.target_id for v in verdicts} == {x.entry_id for x in r.results}
    by_id = {e.id: e for e in entries}
    for v in verdicts:  # a path through a verdict sends exactly what the path to the graded reply sends
        assert model_view(path(by_id, v.id)) == model_view(path(by_id, v.target_id))
        assert v.parent_id == v.target_id
    resumed = Agent(store=reopen(), session_id="s1")  # resumes at the run's end record: the history's view
    assert resumed.entry(resumed.leaf_id).kind == "eval" and resumed.messages() == []
    for seen in m.seen:  # what the model received: messages only, never a verdict
        assert all(isinstance(x, ai.Message) and "eval" not in x.text()[:5] for x in seen)
    assert evals.runs(reopen(), "s1")[0].name == "r1" and evals.runs(reopen(), "s1")[0].finished


def test_a_judge_reads_only_its_own_request_and_is_stored_on_its_own_branch():
    m = Counting()
    agent = Agent(model=m, session_id="s")
    agent.append("An earlier turn the cases continue from")
    r = evals.run("Capital of {country}?", CASES[:1], graders=[evals.judge("Is {answer} named?")], agent=agent)
    judge_call = [s for s in m.seen if s[-1].text().startswith("Rubric:")][0]
    assert len(judge_call) == 1 and "Is Paris named?" in judge_call[0].text()
    case_call = [s for s in m.seen if not s[-1].text().startswith("Rubric:")][0]
    assert [x.text() for x in case_call] == ["An earlier turn the cases continue from", "Capital of France?"]
    v = r.results[0].verdicts[0]
    assert agent.entry(v.judge_id).message.text().endswith("VERDICT: PASS")


def test_a_grader_added_later_grades_stored_replies_without_model_calls():
    store, m = MemoryStore(), Counting()
    evals.run("Capital of {country}?", CASES, agent=Agent(model=m, store=store, session_id="s"), name="n")
    assert m.calls == 2
    r = evals.run("Capital of {country}?", CASES, graders=[evals.contains("{answer}")],
                  agent=Agent(model=m, store=store, session_id="s"), name="n")  # fmt: skip
    assert m.calls == 2 and r.calls == 0 and r.passed and len(r.results) == 2
    assert [v.grader for v in r.results[0].verdicts] == ["contains('{answer}')"]


def test_a_rerun_counts_every_verdict_stored_as_load_does_a_grader_left_out_too():
    store, m = MemoryStore(), Counting(wrong="Spain")
    strict, capital, word = evals.equals("answer"), evals.regex(r"^[A-Z]"), evals.regex("[a-z]")

    def rerun(graders):
        return evals.run("Capital of {country}?", CASES, graders=graders,
                         agent=Agent(model=m, store=store, session_id="s"), name="n")  # fmt: skip

    first = rerun([strict, capital])
    again = rerun([word, capital])  # the failing grader left out, one added: a run is what it stored
    loaded = evals.load(store, "s", "n")
    assert m.calls == 2 and again.calls == 0
    for r in (again, loaded):
        assert [x.passed for x in r.results] == [True, False] and r.pass_rate == first.pass_rate == 0.5
        assert r.graders == ["equals(answer)", "regex('^[A-Z]')", "regex('[a-z]')"], r.graders
    assert repr(again) == repr(loaded) == "<EvalRun 'n': 1/2 passed, finished>"
    assert [[(v.grader, v.passed) for v in x.verdicts] for x in again.results] == [
        [(v.grader, v.passed) for v in x.verdicts] for x in loaded.results
    ]


def test_a_changed_spec_under_a_finished_name_is_refused_with_a_new_name_suggested():
    agent = Agent(model=Counting(), session_id="s")
    evals.run("Capital of {country}?", CASES, agent=agent, name="n")
    with pytest.raises(DurableError, match=r"run 'n' was finished with another spec.*name='n-2'"):
        evals.run("Capital city of {country}?", CASES, agent=agent, name="n")


def test_one_failing_pair_is_an_error_row_and_a_rerun_sends_only_it():
    calls = []

    def flaky(messages):
        calls.append(messages[-1].text())
        if "Spain" in messages[-1].text() and calls.count(messages[-1].text()) == 1:
            raise ValueError("boom")
        return "ok"

    agent = Agent(model=flaky, session_id="s")
    r = evals.run("Capital of {country}?", CASES, agent=agent, name="n")
    assert [x.error for x in r.results] == [None, "ValueError: boom"] and not r.passed
    r2 = evals.run("Capital of {country}?", CASES, agent=agent, name="n")
    assert sorted(calls) == ["Capital of France?", "Capital of Spain?", "Capital of Spain?"] and r2.passed


def test_a_rate_limited_call_is_retried(monkeypatch):
    from durable_nb.evals import runner

    monkeypatch.setattr(runner, "BACKOFF", 0.001)
    tries = []

    def limited(messages):
        tries.append(1)
        if len(tries) < 3:
            raise RuntimeError("429 Too Many Requests")
        return "Paris"

    r = evals.run("Capital of {country}?", CASES[:1], agent=Agent(model=limited), graders=[evals.equals("answer")])
    assert r.passed and len(tries) == 3


def test_concurrency_bounds_the_calls_in_flight():
    import time

    now, peak, lock = [0], [0], threading.Lock()

    def slow(messages):
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.02)
        with lock:
            now[0] -= 1
        return "x"

    rows = [{"country": str(i)} for i in range(12)]
    evals.run("{country}", rows, agent=Agent(model=slow), concurrency=3)
    assert peak[0] == 3


def test_cases_from_jsonl_csv_and_a_dataframe(tmp_path):
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(c) for c in CASES) + "\n")
    (tmp_path / "c.csv").write_text("country,answer\nFrance,Paris\nSpain,Madrid\n")
    for src in (tmp_path / "c.jsonl", str(tmp_path / "c.csv")):
        r = evals.run("Capital of {country}?", src, agent=Agent(model=Counting()), graders=[evals.equals("answer")])
        assert r.passed and [x.case for x in r.results] == CASES
    pd = pytest.importorskip("pandas")
    r = evals.run("Capital of {country}?", pd.DataFrame(CASES), agent=Agent(model=Counting()),
                  graders=[evals.equals("answer")])  # fmt: skip
    f = r.frame()
    assert list(f["passed"]) == [True, True] and list(f["equals(answer)"]) == [True, True]
    assert list(f["case.country"]) == ["France", "Spain"]


def test_compare_lists_regressions_improvements_and_changed_replies():
    agent = Agent(session_id="s")
    good = evals.run("Capital of {country}?", CASES, agent=agent, variants=[Counting()], name="a",
                     graders=[evals.equals("answer")])  # fmt: skip
    bad = evals.run("Capital of {country}?", CASES, agent=agent, variants=[Counting(wrong="Spain")], name="b",
                    graders=[evals.equals("answer")])  # fmt: skip
    c = bad.compare(good)
    assert [(x.case_index, x.variant) for x in c.regressed] == [(1, "Counting")] and not c.improved
    assert [x.case_index for x in c.changed] == [1]
    assert [x.case_index for x in good.compare(bad).improved] == [1]


def test_json_schema_with_a_pydantic_model_and_a_dict():
    import pydantic

    class City(pydantic.BaseModel):
        name: str

    def reply(messages):
        return '```json\n{"name": "Paris"}\n```' if "France" in messages[-1].text() else "not json"

    r = evals.run("{country}", CASES, agent=Agent(model=reply),
                  graders=[evals.json_schema(City), evals.json_schema({"type": "object", "required": ["name"]})])  # fmt: skip
    assert [x.passed for x in r.results] == [True, False]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cases": [{"city": "x"}]}, r"case 0 has no field 'country' for \{country\}"),
        ({"cases": "France"}, r"cases file 'France' must end in .jsonl or .csv"),
        ({"cases": 3}, r"cases must be a list of dicts, a pandas DataFrame or a .jsonl/.csv path, not int"),
        ({"cases": []}, r"the case list is empty"),
        ({"cases": [1]}, r"case 0 is a int, not a dict"),
        ({"cases": CASES, "graders": ["x"]}, r"grader 1 \('x'\) is not callable"),
        ({"cases": CASES, "concurrency": 0}, r"concurrency must be a whole number of at least 1"),
        ({"cases": CASES, "variants": [{"modle": "offline"}]}, r"did you mean 'model'"),
    ],
)
def test_bad_input_is_one_line_before_anything_is_written(kwargs, message):
    agent = Agent(model=Counting(), session_id="s")
    with pytest.raises(DurableError, match=message) as e:
        evals.run("Capital of {country}?", agent=agent, **kwargs)
    assert "\n" not in str(e.value) and agent.entries() == []


def test_a_raising_grader_and_a_failing_judge_give_error_verdicts_not_a_failed_run():
    def broken(messages):
        if messages[-1].text().startswith("Rubric:"):
            raise ValueError("judge down")
        return "Paris"

    r = evals.run("{country}", CASES[:1], agent=Agent(model=broken),
                  graders=[lambda reply, case: 1 / 0, evals.judge("ok?")])  # fmt: skip
    v1, v2 = r.results[0].verdicts
    assert v1.error == "ZeroDivisionError: division by zero" and not v1.passed
    assert "the judge's model failed" in v2.error and "judge down" in v2.error
    assert r.results[0].error is None and not r.results[0].passed


def test_templates_escape_braces_and_leave_json_alone():
    seen = []
    evals.run(
        'Say \\{x} and {"k": 1} for {country}', CASES[:1], agent=Agent(model=lambda m: seen.append(m[-1].text()) or "x")
    )
    assert seen == ['Say {x} and {"k": 1} for France']


def test_stop_stores_nothing_after_it():
    started = threading.Event()
    release = threading.Event()

    def slow(messages):
        started.set()
        release.wait(5)
        return "late"

    agent = Agent(model=slow, session_id="s")

    def interrupt(ev):
        if started.is_set():
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evals.run("{country}", CASES, agent=agent, on_event=interrupt, concurrency=2)
    n = len(agent.store.load_entries("s"))
    release.set()
    import time

    time.sleep(0.3)
    assert len(agent.store.load_entries("s")) == n
    assert not [
        e for e in agent.store.load_entries("s") if getattr(e, "message", None) and e.message.role == "assistant"
    ]


def test_every_case_continues_the_pinned_history_and_a_variant_system_prompt_is_stored_on_its_branch():
    m = Counting()
    agent = Agent(model=m, session_id="s")
    agent.append("turn one")
    agent.label("pinned")
    agent.append("a later turn the cases do not see")
    r = evals.run("Capital of {country}?", CASES, agent=agent, history="pinned",
                  variants=[{"label": "plain"}, {"label": "french", "system": "Réponds en français."}])  # fmt: skip
    assert r.passed is True or r.pass_rate == 1.0
    assert all([x.text() for x in seen][:1] == ["turn one"] and len(seen) == 2 for seen in m.seen)
    french = [x for x in r.results if x.variant == "french"][0]
    on_branch = agent.path(french.entry_id)
    assert any(getattr(e, "message", None) is not None and e.message.role == "system" for e in on_branch)
    assert agent.leaf_id == agent.path()[-1].id and "later turn" in agent.path()[-1].message.text()


def test_a_stored_run_whose_variant_names_are_not_strings_still_loads_and_draws(tmp_path):
    """A run read back from a log another tool wrote (or a hand edit) may name a variant with a number:
    the grid, its HTML and JUnit draw it as text, never a traceback."""
    from durable_nb.evals.report import grid, junit
    from durable_nb.session import JsonlStore

    evals.run(
        "Say {w}", [{"w": "hi"}], graders=[evals.contains("{w}")], name="r1", store=str(tmp_path), session_id="ev"
    )
    log = tmp_path / "ev.jsonl"

    def renamed(o):
        if isinstance(o, dict):
            return {k: [7] if k == "variant_names" else renamed(v) for k, v in o.items()}
        return [renamed(v) for v in o] if isinstance(o, list) else o

    lines = [json.dumps(renamed(json.loads(line))) for line in log.read_text().splitlines()]
    assert any('"variant_names": [7]' in line for line in lines)
    log.write_text("\n".join(lines) + "\n")
    run = evals.load(JsonlStore(tmp_path), "ev", "r1")
    assert run.variants == ["7"] and "<th" in run._repr_html_() and "7" in grid(run)
    assert "case 0 × 7" in junit(run, tmp_path / "r1.xml").read_text()
