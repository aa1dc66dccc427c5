"""Inspect AI eval logs: a session as one sample per leaf branch, an evaluation run as samples with the
verdicts as scores, read by inspect_ai's own read_eval_log; and back: each sample a branch of one
read-only session. A log of a newer format is one line; inspect_ai is never imported by durable_nb itself."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from interop_sessions import eval_agent, every_kind_agent
from widget_sessions import EVIL, hostile_agent

from durable_nb import ai, durable, evals
from durable_nb.errors import DurableError
from durable_nb.importers import open_session
from durable_nb.kinds.verdict import VerdictEntry
from durable_nb.session import CustomEntry, MemoryStore, MessageEntry
from durable_nb.share import export
from durable_nb.share.branches import leaves

log_api = pytest.importorskip("inspect_ai.log")


def paired(messages) -> None:
    """Every tool message answers a call of the assistant message before it."""
    calls: set[str] = set()
    for m in messages:
        if m.role == "assistant":
            calls = {c.id for c in m.tool_calls or []}
        elif m.role == "tool":
            assert m.tool_call_id in calls, m


def test_a_session_is_one_sample_per_leaf_branch(tmp_path):
    a = every_kind_agent()
    log = log_api.read_eval_log(str(export(a, tmp_path / "s.eval")))
    assert log.status == "success" and log.eval.task == "durable_nb/tools" and log.eval.model == "claude-test"
    assert [s.metadata["leaf_id"] for s in log.samples] == leaves(a.entries(), a.leaf_id)
    assert [s.id for s in log.samples] == [1, 2]
    main, other = log.samples
    assert [m.role for m in main.messages] == ["user", "assistant", "tool", "tool", "assistant", "user", "assistant"]
    paired(main.messages)
    calls = main.messages[1]
    assert [c.function for c in calls.tool_calls] == ["lookup", "lookup"] and calls.model == "claude-test"
    assert [c.type for c in calls.content][:2] == ["reasoning", "reasoning"] and calls.content[1].redacted
    assert main.messages[3].error is not None and main.messages[2].error is None
    assert main.model_usage["claude-test"].input_tokens == 120 and main.model_usage["claude-test"].output_tokens == 45
    assert main.input == "Define durable and session." and main.output.completion == a.messages()[-1].text()
    assert main.messages[0].metadata == {"entry_id": a.ids["q"]}
    # the other branch's model view: system prompt first, the compaction's summary, meta input marked
    assert other.messages[0].role == "system" and other.messages[0].text == "You are terse."
    assert other.messages[1].text.startswith("The conversation before this point was compacted")
    assert log.stats.model_usage["claude-test"].input_tokens == 240  # both branches share the tool run
    # the Transcript: a model event per reply (its input the view before it), a tool event per result
    assert [(e.event, len(getattr(e, "input", ()))) for e in main.events] == [
        ("model", 1), ("tool", 0), ("tool", 0), ("model", 4), ("model", 6)]  # fmt: skip
    first, ok, failed = main.events[:3]
    assert first.output.usage.total_tokens == 165 and first.working_time == 1.25 and first.model == "claude-test"
    assert (ok.function, ok.arguments, ok.result, ok.error) == (
        "lookup",
        {"q": "durable"},
        "lasting; able to endure",
        None,
    )
    assert failed.error is not None and failed.working_time == 1.53
    assert main.events[3].config.temperature == 0.2


def test_inspect_json_by_format_and_the_meta_input_it_keeps(tmp_path):
    a = every_kind_agent()
    a.branch(a.ids["compaction"])  # a leaf whose view keeps the meta input
    a.run("After the summary?").wait()
    out = export(a, tmp_path / "s.json", format="inspect")
    raw = json.loads(out.read_text())
    assert raw["version"] == 2
    # a model event's input is a range of the sample's message pool: a long branch costs O(view), not O(view²)
    model_events = [e for e in raw["samples"][0]["events"] if e["event"] == "model"]
    assert model_events and all(e["input"] == [] and e["input_refs"] is not None for e in model_events)
    log = log_api.read_eval_log(str(out))
    first = log.samples[0]
    assert first.metadata["leaf_id"] == a.leaf_id and [m.role for m in first.messages][-2:] == ["user", "assistant"]


def test_an_evaluation_run_is_one_sample_per_pair_with_the_verdicts_as_scores(tmp_path, capsys, monkeypatch):
    a = eval_agent()
    log = log_api.read_eval_log(str(export(a, tmp_path / "r.eval", run="capitals")))
    assert [(s.id, s.metadata["case_index"], s.metadata["variant"]) for s in log.samples] == [
        (1, 0, "plain"), (2, 0, "warm"), (3, 1, "plain"), (4, 1, "warm")]  # fmt: skip
    grader = "contains('{answer}')"
    assert [s.scores[grader].value for s in log.samples] == ["C", "C", "I", "I"]
    assert log.samples[0].scores[grader].answer == "Paris" and log.samples[2].scores[grader].explanation
    (score,) = log.results.scores
    assert score.name == grader and score.metrics["accuracy"].value == 0.5
    s = log.samples[0]
    assert s.metadata["case"] == {"country": "France", "answer": "Paris"} and s.metadata["variant"] == "plain"
    assert s.messages[-1].role == "assistant" and s.messages[-1].text == "Paris"
    assert "Capital of France" in s.input
    assert s.model_usage["capitals-1"].total_tokens == 15  # the pair's own call, not the history's
    with pytest.raises(DurableError, match=r"no evaluation run 'nope' \(runs there: capitals\)"):
        export(a, tmp_path / "x.eval", run="nope")
    with pytest.raises(DurableError, match="cannot export an evaluation run as pi: only as inspect"):
        export(a, tmp_path / "x.pi.jsonl", run="capitals")
    assert not (tmp_path / "x.eval").exists()


def test_the_cli_writes_a_run(tmp_path, monkeypatch, capsys):
    from durable_nb.__main__ import main
    from durable_nb.session import JsonlStore

    a = eval_agent()
    store = JsonlStore(tmp_path / ".durable")
    store.create_session("evals")
    store.append_entries("evals", [e for e in a.entries()])
    monkeypatch.chdir(tmp_path)
    assert main(["export", "evals", "-o", "run.eval", "--run", "capitals"]) == 0
    assert len(log_api.read_eval_log(str(tmp_path / "run.eval")).samples) == 4
    assert main(["export", "evals", "-o", "run.html", "--run", "capitals"]) == 1
    assert "only as inspect" in capsys.readouterr().err


def test_each_sample_reopens_as_a_branch_of_one_read_only_session(tmp_path, capsys):
    a = eval_agent()
    out = export(a, tmp_path / "r.eval", run="capitals")
    back = open_session(out)
    assert back.format == "inspect" and back.warnings == []
    b = back.agent
    entries = b.entries()
    root = entries[0]
    assert root.kind == "inspect.eval" and root.data["metrics"] == {"contains('{answer}')/accuracy": 0.5}
    samples = [e for e in entries if isinstance(e, CustomEntry) and e.kind == "inspect.sample"]
    assert [s.data["id"] for s in samples] == [1, 2, 3, 4]
    assert {s.parent_id for s in samples} == {"eval"}
    assert len(leaves(entries, b.leaf_id)) == 4  # one branch per sample; verdicts hang off, never a branch
    verdicts = [e for e in entries if isinstance(e, VerdictEntry)]
    assert [(v.passed, b.entry(v.target_id).message.text()) for v in verdicts] == [
        (True, "Paris"), (True, "Paris"), (False, "I do not know"), (False, "I do not know")]  # fmt: skip
    assert b.messages()[-1].text() == "I do not know"
    # the notebook: %durable open x.eval, read-only
    from durable_nb.notebook.args import parse
    from durable_nb.notebook.state import NotebookSession
    from durable_nb.notebook.verbs import VERBS

    m = SimpleNamespace(state=NotebookSession(tmp_path / "store", "nb"))
    call = parse(f"open {out}", False)
    VERBS[call.verb].run(m, call)
    said = capsys.readouterr().out
    assert said.startswith(f"opened {out} read-only (inspect, ") and "entries" in said


def test_our_meta_input_comes_back_as_meta(tmp_path):
    a = durable.Agent(model=lambda m: "ok", store=MemoryStore(), session_id="m")
    a.run(durable.meta("Context: Paris.", origin="skill:ctx"), durable.meta("Unattributed."), "Where?").wait()
    back = open_session(export(a, tmp_path / "s.eval")).agent
    metas = [e.message for e in back.entries() if isinstance(e, MessageEntry) and e.message.injected is not None]
    assert [(str(m.injected), m.origin, m.text()) for m in metas] == [
        ("meta", "skill:ctx", "Context: Paris."), ("meta", None, "Unattributed.")]  # fmt: skip
    assert [m.text() for m in back.messages()] == [m.text() for m in a.messages()]


def _rewrite_version(src: Path, dst: Path, version: int) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename in ("header.json", "_journal/start.json"):
                d = json.loads(data)
                d["version"] = version
                data = json.dumps(d).encode()
            zout.writestr(item, data)


def test_a_log_of_a_newer_format_is_one_line(tmp_path):
    a = eval_agent()
    src = export(a, tmp_path / "r.eval", run="capitals")
    _rewrite_version(src, tmp_path / "newer.eval", 99)
    with pytest.raises(DurableError, match=r"newer format \(version 99\) than inspect_ai .* reads \(version 2\)"):
        open_session(tmp_path / "newer.eval")
    j = export(a, tmp_path / "r.json", run="capitals", format="inspect")
    (tmp_path / "newer.json").write_text(j.read_text().replace('"version": 2,', '"version": 7,', 1))
    with pytest.raises(DurableError, match=r"newer format \(version 7\)"):
        open_session(tmp_path / "newer.json")
    (tmp_path / "broken.eval").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(DurableError, match="not an Inspect log inspect_ai"):
        open_session(tmp_path / "broken.eval")


def test_hostile_text_stays_text(tmp_path):
    out = export(hostile_agent(), tmp_path / "h.json", format="inspect")
    json.loads(out.read_text())
    log = log_api.read_eval_log(str(out))
    texts = [m.text for s in log.samples for m in s.messages]
    assert sum(EVIL in t for t in texts) > 3
    back = open_session(out).agent
    assert any(EVIL in e.message.text() for e in back.entries() if isinstance(e, MessageEntry))


def test_durable_nb_and_its_magics_never_import_inspect_ai():
    code = (
        "import sys; import durable_nb, durable_nb.share, durable_nb.importers, durable_nb.share.formats\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().run_line_magic('load_ext', 'durable_nb')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('inspect_ai', 'atif'))\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_session_with_no_replies_is_still_a_log(tmp_path):
    a = durable.Agent(store=MemoryStore(), session_id="quiet")
    a.append("only a question")
    for name in ("q.eval", "q.atif.json", "q.pi.jsonl"):
        export(a, tmp_path / name)
    log = log_api.read_eval_log(str(tmp_path / "q.eval"))
    (s,) = log.samples
    assert s.input == "only a question" and s.output.completion == "" and s.model_usage == {}
    assert log.eval.model == "none/none"
    assert open_session(tmp_path / "q.eval").agent.messages()[-1].text() == "only a question"


def test_open_lists_the_eval_files_in_inspects_log_folder(tmp_path, monkeypatch, capsys):
    from durable_nb.importers import found

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert "Inspect" not in "\n".join(found.listing(found.known_logs()))  # no logs folder: not named at all
    (tmp_path / "logs").mkdir()
    export(eval_agent(), tmp_path / "logs" / "capitals.eval", run="capitals")
    lines = found.listing(found.known_logs())
    assert "Inspect AI:" in lines and any(line.strip().startswith("logs/capitals.eval") for line in lines)
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "elsewhere"))
    assert "Inspect AI:" not in found.listing(found.known_logs())


def test_an_unanswered_pair_is_a_sample_with_its_input_and_an_error(tmp_path):
    def model(messages):
        if "Peru" in messages[-1].text():
            raise RuntimeError("the provider is down")
        return "Paris"

    a = durable.Agent(model=model, store=MemoryStore(), session_id="half")
    evals.run("Capital of {country}?", [{"country": "France"}, {"country": "Peru"}], graders=[evals.contains("Paris")],
              agent=a, name="half")  # fmt: skip
    log = log_api.read_eval_log(str(export(a, tmp_path / "h.eval", run="half")))
    ok, failed = log.samples
    assert ok.error is None and ok.scores["contains('Paris')"].value == "C"
    assert failed.error is not None and failed.scores is None and failed.input == "Capital of Peru?"
    assert [m.role for m in failed.messages] == ["user"]


def _rewrite_sample(src: Path, dst: Path, change) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.startswith("samples/"):
                d = json.loads(data)
                change(d)
                data = json.dumps(d).encode()
            zout.writestr(item, data)


def test_a_finished_eval_is_read_from_its_zip_as_inspect_ai_reads_it(tmp_path):
    from durable_nb.importers import inspect_eval, inspect_zip
    from durable_nb.session import encode

    def both(p: Path):
        direct = inspect_zip.read(p)
        slow = inspect_eval._loaded(
            p, log_api.read_eval_log(str(p), exclude_fields={"events"}, resolve_attachments=True)
        )
        return direct and [encode(e) for e in inspect_eval._loaded(p, direct).entries], [
            encode(e) for e in slow.entries
        ]

    logs = [export(every_kind_agent(), tmp_path / "k.eval"), export(hostile_agent(), tmp_path / "h.eval"),
            export(eval_agent(), tmp_path / "r.eval", run="capitals")]  # fmt: skip
    for p in logs:
        direct, slow = both(p)
        assert direct == slow and len(slow) > 5, p
    # what inspect_ai migrates or refuses is left to it: a legacy `score`, a content part of another kind
    _rewrite_sample(logs[2], tmp_path / "legacy.eval", lambda d: d.update(score=d.pop("scores", {}).popitem()[1]))
    _rewrite_sample(logs[0], tmp_path / "audio.eval", lambda d: d["messages"][0].update(
        content=[{"type": "audio", "audio": "a.mp3", "format": "mp3"}]))  # fmt: skip
    for name in ("legacy.eval", "audio.eval"):
        assert inspect_zip.read(tmp_path / name) is None
        direct, slow = both(tmp_path / name)
        assert open_session(tmp_path / name).agent.entries() and slow


def test_opening_a_finished_eval_never_imports_inspect_ai(tmp_path):
    out = export(eval_agent(), tmp_path / "r.eval", run="capitals")
    code = (
        "import sys; from durable_nb.importers import open_session\n"
        f"n = len(open_session({str(out)!r}).agent.entries())\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] == 'inspect_ai')\n"
        "print(n, bad[:3]); sys.exit(1 if bad or n < 5 else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_text_parts_stay_parts_and_the_calls_keep_their_order(tmp_path):
    """Two text blocks are two ``ContentText`` parts (never glued into one string), in their order among the
    reasoning; the tool calls keep their order in ``tool_calls`` (Inspect's own field: where they stood among
    the text is not kept); a message of one text stays a plain string. As inspect_ai reads it, and back."""
    from inspect_ai.model import ContentText

    a = durable.Agent(store=MemoryStore(), session_id="parts")
    said = ai.Message("assistant", [ai.Thinking("hm", "sig"), ai.Text("First"), ai.ToolCall("c1", "look", {"q": 1}),
                                    ai.Text("then"), ai.ToolCall("c2", "look", {"q": 2})], model="m1")  # fmt: skip
    failed = ai.Message("tool_result", [ai.Text("x"), ai.Text("y")], tool_call_id="c1", tool_name="look", is_error=True)
    ok = ai.Message("tool_result", [ai.Text("z"), ai.Reminder("note")], tool_call_id="c2", tool_name="look")
    asked = ai.Message("user", [ai.Text("a"), ai.Text("b")])
    done = ai.assistant_message("Done.", model="m1")
    a.append(*(MessageEntry(message=m) for m in (asked, said, failed, ok, done)))
    for name, fmt in (("p.eval", None), ("p.json", "inspect")):
        out = export(a, tmp_path / name, format=fmt)
        (s,) = log_api.read_eval_log(str(out)).samples
        user, calls, x, z, done = s.messages
        assert user.content == [ContentText(text="a"), ContentText(text="b")] and user.text == "a\nb"
        assert s.input == "a\nb"  # Inspect's own joining of the parts
        assert [(c.type, c.text if c.type == "text" else c.reasoning) for c in calls.content] == [
            ("reasoning", "hm"), ("text", "First"), ("text", "then")]  # fmt: skip
        assert [(c.id, c.arguments) for c in calls.tool_calls] == [("c1", {"q": 1}), ("c2", {"q": 2})]
        assert x.content == [ContentText(text="x"), ContentText(text="y")] and x.error.message == "x\ny"
        assert z.content == [ContentText(text="z"), ContentText(text="note")]  # the reminder: text the model read
        assert done.content == "Done." and user.metadata["entry_id"]
        tools = [e for e in s.events if e.event == "tool"]
        assert [(e.id, e.result) for e in tools] == [("c1", [ContentText(text="x"), ContentText(text="y")]),
                                                     ("c2", "z")]  # fmt: skip
        assert tools[0].error.message == "x\ny"
        back = [e.message for e in open_session(out).agent.entries() if isinstance(e, MessageEntry)]
        assert back[0].content == [ai.Text("a"), ai.Text("b")] and back[2].content == [ai.Text("x"), ai.Text("y")]
        assert [b.text for b in back[1].content if isinstance(b, ai.Text)] == ["First", "then"]
        assert [c.id for c in back[1].tool_calls()] == ["c1", "c2"]
