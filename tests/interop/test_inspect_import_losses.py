"""Inspect AI logs written by inspect_ai's own ``write_eval_log``, opened: what the model read of a failed
tool call, and a finished ``.eval`` missing a sample's member (the samples read, and a note)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from durable_nb import ai
from durable_nb.importers import open_session
from durable_nb.session import MessageEntry

log_api = pytest.importorskip("inspect_ai.log")


def _log(path: Path) -> Path:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall, ToolCallError

    def sample(epoch: int) -> EvalSample:
        return EvalSample(id=1, epoch=epoch, input="what?", target="42", messages=[
            ChatMessageUser(content="what?"),
            ChatMessageAssistant(content="calling", tool_calls=[ToolCall(id="c1", function="calc", arguments={})]),
            # what inspect_ai's tool loop writes for a tool that raised: no content, the error
            ChatMessageTool(content="", tool_call_id="c1", function="calc",
                            error=ToolCallError("unknown", "division by zero")),
            ChatMessageAssistant(content="42"),
        ])  # fmt: skip

    spec = EvalSpec(created="2026-01-01T00:00:00+00:00", task="t", dataset=EvalDataset(), model="m1",
                    config=EvalConfig(), eval_id="e1", run_id="r1", task_id="tid")  # fmt: skip
    log_api.write_eval_log(EvalLog(eval=spec, status="success", samples=[sample(1), sample(2)]), str(path))
    return path


@pytest.mark.parametrize("name", ["x.eval", "x.json"])
def test_a_failed_tool_calls_error_is_what_the_model_read(tmp_path, name):
    entries = open_session(_log(tmp_path / name)).agent.entries()
    results = [e.message for e in entries if isinstance(e, MessageEntry) and e.message.role == "tool_result"]
    assert len(results) == 2
    for r in results:
        assert r.is_error and r.tool_call_id == "c1"
        assert [b.text for b in r.content if isinstance(b, ai.Text)] == ["division by zero"]


def _without(src: Path, member: str, out: Path) -> Path:
    """A copy of the ``.eval`` zip ``src`` without one member (a damaged copy, a hand-pruned log)."""
    import inspect_ai.log  # noqa: F401  # its zipfile_zstd patch: inspect_ai compresses members with zstandard

    with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, "w") as w:
        for i in z.infolist():
            if i.filename != member:
                w.writestr(i, z.read(i.filename))
    return out


def test_a_sample_missing_from_the_zip_is_named_and_the_rest_opens(tmp_path):
    log = _log(tmp_path / "x.eval")
    assert sorted(n for n in zipfile.ZipFile(log).namelist() if n.startswith("samples/")) == [
        "samples/1_epoch_1.json",
        "samples/1_epoch_2.json",
    ]
    imported = open_session(_without(log, "samples/1_epoch_2.json", tmp_path / "cut.eval"))
    samples = [e for e in imported.agent.entries() if getattr(e, "kind", "") == "inspect.sample"]
    assert [(s.data["id"], s.data["epoch"]) for s in samples] == [(1, 1)]
    (note,) = [w for w in imported.warnings if "epoch 2" in w]
    assert "cut.eval" in note and "1 sample" in note and "id 1 epoch 2" in note
    # the whole log: no note
    assert not [w for w in open_session(log).warnings if "sample" in w]
