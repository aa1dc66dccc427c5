"""``tool_results="reuse"``: a replay or an evaluation run answers tool calls from stored results, running no tool."""

from __future__ import annotations

import pytest

from durable_nb import ai, durable, evals
from durable_nb.errors import DurableError
from durable_nb.session import JsonlStore, MessageEntry

CALLS: list[dict] = []


def lookup(city: str) -> str:
    """The weather in a city (a tool with an outside effect: it is counted)."""
    CALLS.append({"city": city})
    return f"sunny in {city} (call {len(CALLS)})"


def results(entries) -> list[ai.Message]:
    return [e.message for e in entries if isinstance(e, MessageEntry) and e.message.role == "tool_result"]


@pytest.fixture(autouse=True)
def _reset():
    CALLS.clear()


def test_replay_reuse_makes_no_tool_call_and_the_new_model_sees_the_same_outputs(tmp_path):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=[lookup])
    agent.run('call lookup {"city": "Paris"}').wait()
    agent.run('call lookup {"city": "Oslo"}\ncall lookup {"city": "Paris"}').wait()
    assert len(CALLS) == 3
    original = results(agent.path())
    r = agent.replay(tool_results="reuse")
    assert len(CALLS) == 3  # counted: no tool ran
    reused = results(r.entries)
    assert [m.text() for m in reused] == [m.text() for m in original]  # the same outputs, in order
    assert all(m.extra["reused"] for m in reused)  # each names the entry it copies
    ids = {e.id for e in agent.path(r.original_leaf_id)}
    assert all(m.extra["reused"] in ids for m in reused)
    again = durable.Agent(store=JsonlStore(tmp_path), session_id="s")  # it reloads as written
    assert [m.text() for m in results(again.path())] == [m.text() for m in reused]
    agent.replay()  # "call", the default: the tools run again
    assert len(CALLS) == 6


def test_replay_reuse_answers_a_call_it_has_no_twin_for_with_an_error_result(tmp_path):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=[lookup])
    agent.run('call lookup {"city": "Paris"}').wait()

    def other(messages):  # another model: it calls with other arguments
        if messages[-1].role == "user":
            return ai.Message(
                role="assistant", content=[ai.ToolCall(name="lookup", arguments={"city": "Rome"}, id="c1")]
            )
        return "done"

    r = agent.replay(model=other, tool_results="reuse")
    (res,) = results(r.entries)
    assert res.is_error and "no stored result of lookup" in res.text() and CALLS == [{"city": "Paris"}]


def test_a_bad_mode_is_one_line_before_anything_is_written(tmp_path):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=[lookup])
    agent.run("hello").wait()
    n = len(agent.entries())
    with pytest.raises(DurableError, match="tool_results must be 'call'"):
        agent.replay(tool_results="cache")
    with pytest.raises(DurableError, match="tool_results must be 'call'"):
        evals.run("q {x}", [{"x": 1}], agent=agent, tool_results="nope")
    assert len(agent.entries()) == n


def test_an_evaluation_run_with_reuse_answers_from_the_baseline_run_s_results(tmp_path):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=[lookup])
    cases = [{"city": "Paris"}, {"city": "Oslo"}]

    def prompt(case):
        return [f'call lookup {{"city": "{case["city"]}"}}']

    base = evals.run(prompt, cases, agent=agent, name="base", graders=[evals.contains("sunny")])
    assert base.passed and len(CALLS) == 2
    again = evals.run(prompt, cases, agent=agent, name="again", variants=[{"label": "v2"}],
                      graders=[evals.contains("sunny")], tool_results="reuse")  # fmt: skip
    assert again.passed and len(CALLS) == 2  # counted: no tool ran
    assert [r.reply for r in again.results] == [r.reply for r in base.results]


def test_the_magic_replay_and_a_cases_cell_take_tools_reuse(shell, tmp_path, capsys):
    sh = shell
    try:
        sh.run_line_magic("config", f"DurableMagics.store = {str(tmp_path)!r}")
        sh.run_line_magic("config", "DurableMagics.session = 'reuse'")
        sh.user_ns["lookup"] = lookup
        sh.run_line_magic("durable", "tools add lookup")
        sh.run_cell_magic("durable", "", 'call lookup {"city": "Paris"}')
        assert len(CALLS) == 1
        sh.run_line_magic("durable", "replay --tools reuse")
        assert len(CALLS) == 1  # counted: the replay ran no tool
        out = capsys.readouterr().out
        assert "replayed 1 turn" in out and "sunny in Paris (call 1)" in out
        sh.run_line_magic("durable", "replay --tools call")
        assert len(CALLS) == 2
        sh.user_ns["towns"] = [{"city": "Paris"}]
        sh.run_cell_magic("durable", "--cases towns --eval t1", 'call lookup {"city": "{city}"}')
        assert len(CALLS) == 3
        sh.run_cell_magic("durable", "--cases towns --eval t2 --tools reuse", 'call lookup {"city": "{city}"}')
        assert len(CALLS) == 3
    finally:
        sh.run_line_magic("config", "DurableMagics.store = '.durable'")


def test_the_cli_takes_tools_reuse(tmp_path):
    import subprocess
    import sys

    calls = tmp_path / "calls.txt"
    spec = tmp_path / "spec.py"
    spec.write_text(
        "def lookup(city: str) -> str:\n"
        "    '''The weather.'''\n"
        f"    open({str(calls)!r}, 'a').write(city + '\\n')\n"
        "    return 'sunny in ' + city\n"
        "tools = [lookup]\n"
        'prompt = \'call lookup {"city": "{city}"}\'\n'
        "cases = [{'city': 'Paris'}]\n"
        "from durable_nb import evals\n"
        "graders = [evals.contains('sunny')]\n"
    )

    def cli(*args):
        cmd = [sys.executable, "-m", "durable_nb", "eval", str(spec), "--store", str(tmp_path / "st"), *args]
        return subprocess.run(cmd, capture_output=True, text=True)

    assert cli("--name", "a").returncode == 0
    assert calls.read_text().split() == ["Paris"]
    second = cli("--name", "b", "--tools", "reuse")
    assert second.returncode == 0, second.stdout + second.stderr
    assert calls.read_text().split() == ["Paris"]  # counted: no tool ran
    assert cli("--tools", "maybe").returncode == 2
