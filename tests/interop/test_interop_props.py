"""Property tests over random sessions (rich_sessions): each export keeps what docs/exports.md says it keeps."""

from __future__ import annotations

import json
import os
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from rich_sessions import KEY, build, turns
from test_atif import check
from test_pi_format import round_trip

from durable_nb import ai
from durable_nb.importers import open_session
from durable_nb.session import CompactionEntry, MessageEntry, model_view
from durable_nb.share import export
from durable_nb.share.branches import branches

log_api = pytest.importorskip("inspect_ai.log")

PROPS = settings(
    max_examples=int(os.environ.get("PROPS_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@PROPS
@given(turns)
def test_pi_export_reopens_entry_for_entry(tmp_path_factory, ops):
    round_trip(build(ops), tmp_path_factory.mktemp("pi"))


# ---- Inspect AI: the log inspect_ai reads, and back


def _inspect_expected(m):
    """A model-view message as the Inspect log keeps it (docs/exports.md): a reminder is text, a file a line
    naming it, each text a part of its own (never run together), the tool calls after the content (Inspect's
    own field)."""
    blocks = []
    for b in m.content:
        if isinstance(b, ai.ToolCall):
            continue
        if isinstance(b, (ai.Text, ai.Reminder)):
            b = ai.Text(b.text)
        elif isinstance(b, ai.File):
            b = ai.Text(f"[file {b.name or b.url or b.file_id} ({b.mime_type})]")
        elif isinstance(b, ai.Image):
            b = ai.Image(b.data, b.mime_type)
        blocks.append(b)
    blocks = [b for b in blocks if not (isinstance(b, ai.Text) and b.text == "")]
    calls = [(c.id, c.name, c.arguments) for c in m.tool_calls()]
    keeps_origin = m.role != "tool_result"
    return (m.role, str(m.injected) if keeps_origin and m.injected else None, m.origin if keeps_origin else None,
            blocks, calls, m.tool_call_id, m.tool_name, m.is_error, m.model if m.role == "assistant" else None)  # fmt: skip


def _inspect_back(m):
    blocks = [b for b in m.content if not isinstance(b, ai.ToolCall) and not (isinstance(b, ai.Text) and b.text == "")]
    calls = [(c.id, c.name, c.arguments) for c in m.tool_calls()]
    return (m.role, str(m.injected) if m.injected else None, m.origin, blocks, calls, m.tool_call_id, m.tool_name,
            m.is_error, m.model if m.role == "assistant" else None)  # fmt: skip


def _said(m):
    calls = m.tool_calls or [] if m.role == "assistant" else []
    return (m.role, m.text, m.tool_call_id if m.role == "tool" else [c.id for c in calls])


def _transcript_is_the_view(sample):
    """A model event per reply (its input the messages before it, its output the reply), a tool event per
    tool message (the call's function and arguments), in the messages' order."""
    want, calls = [], {}
    for k, m in enumerate(sample.messages):
        if m.role == "assistant":
            want.append(("model", [_said(x) for x in sample.messages[:k]], _said(m)))
            calls.update((c.id, c) for c in m.tool_calls or [])
        elif m.role == "tool":
            call = calls.get(m.tool_call_id)
            want.append(("tool", m.tool_call_id, m.function, call.arguments if call else {}, m.text))
    got = []
    for e in sample.events:
        if e.event == "model":
            got.append(("model", [_said(x) for x in e.input], _said(e.output.message)))
        else:
            said = "\n".join(p.text for p in e.result) if isinstance(e.result, list) else e.result  # parts: as .text
            got.append(("tool", e.id, e.function, e.arguments, said))
    assert got == want


def _samples(agent):
    """Each sample's messages, as the importer reads them back: {sample number: [message, ...]}."""
    out = {}
    for e in agent.entries():
        if isinstance(e, MessageEntry):
            out.setdefault(int(e.id.split(".")[0][1:]), []).append(e.message)
        elif e.kind == "inspect.sample":
            out.setdefault(int(e.id[1:]), [])
    return out


@PROPS
@given(turns)
def test_inspect_export_is_read_by_inspect_and_reopens_as_each_branchs_model_view(tmp_path_factory, ops):
    a = build(ops)
    tmp = tmp_path_factory.mktemp("inspect")
    found = branches(a)
    for name, fmt in (("s.eval", None), ("s.json", "inspect")):
        out = export(a, tmp / name, format=fmt)
        log = log_api.read_eval_log(str(out), resolve_attachments=True)  # long texts in events are attachments
        assert [s.metadata["leaf_id"] for s in log.samples] == [leaf for leaf, _ in found]
        for sample in log.samples:
            _transcript_is_the_view(sample)
        back = open_session(out)
        got = _samples(back.agent)
        assert sorted(got) == list(range(1, len(found) + 1))
        for k, (_, entries) in enumerate(found, 1):
            want = [_inspect_expected(m) for m in model_view(entries)]
            assert [_inspect_back(m) for m in got[k]] == want, (name, k)


# ---- ATIF: every trajectory valid, every entry of its branch in exactly one step, calls and results paired


@PROPS
@given(turns)
def test_atif_trajectories_are_valid_and_hold_each_branch_whole(tmp_path_factory, ops):
    a = build(ops)
    main = json.loads(export(a, tmp_path_factory.mktemp("atif") / "s.atif.json").read_text())
    docs = [main, *main["extra"].pop("branches", [])]
    found = branches(a)
    assert [d["trajectory_id"] for d in docs] == [leaf for leaf, _ in found]
    for d, (_, entries) in zip(docs, found):
        check(d)
        steps = d["steps"]
        where = {i: s for s in steps for i in s["extra"]["entry_ids"]}
        shown = [e for e in entries if isinstance(e, (MessageEntry, CompactionEntry))]
        assert [i for s in steps for i in s["extra"]["entry_ids"]] == [e.id for e in shown]  # each once, in order
        made: dict[str, dict] = {}
        for e, before in zip(shown, [None, *shown]):
            step, previous = where[e.id], where[before.id] if before is not None else None  # the entry before's
            if isinstance(e, CompactionEntry):
                assert (step["source"], step["message"]) == ("system", e.summary)
                continue
            m = e.message
            if m.role == "assistant":
                assert step["source"] == "agent"
                got = [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in step.get("tool_calls", [])]
                assert got == [(c.id, c.name, c.arguments) for c in m.tool_calls()]
                made.update({c.id: step for c in m.tool_calls()})
                thought = "\n\n".join(b.text for b in m.content if isinstance(b, ai.Thinking) and b.text)
                assert step.get("reasoning_content", "") == thought
            elif m.role == "tool_result":
                results = step["observation"]["results"]
                call = made.get(m.tool_call_id or "")
                if call is not None and call is previous:  # no step since its call's: one step with it
                    assert step is call and m.tool_call_id in [r.get("source_call_id") for r in results]
                else:  # late (a step came between), or its call is not on the branch: a step where it arrived
                    assert step is not previous and step["source"] == "system" and len(results) == 1
                    assert step["extra"]["tool_call_id"] == m.tool_call_id
                    assert step["extra"].get("call_step_id") == (call["step_id"] if call else None)
            else:
                assert step["source"] == ("system" if m.role == "system" else "user")
                assert bool(step.get("is_copied_context")) == (m.injected is not None)
            if m.role in ("user", "system") and all(isinstance(b, (ai.Text, ai.Reminder)) for b in m.content):
                said = [b.text for b in m.content]
                assert step["message"] in ("".join(said), "\n\n".join(said)) or m.role == "user"


def test_an_eval_s_images_and_data_urls_come_back_from_inspects_attachments(tmp_path, monkeypatch):
    """inspect_ai's writer moves each data: URL of the messages (an image, a tool argument that is one) into the
    sample's attachments, leaving ``attachment://<hash>``: both readers (the zip's, inspect_ai's) swap it back."""
    from durable_nb.importers import inspect_zip

    url = "data:text/plain;base64,aGk="
    a = build(
        [("user", [ai.Text("look"), ai.Image(b"\x89PNG", "image/png")]), ("assistant", [], [("f", {"u": url}, "ok")])]
    )
    out = export(a, tmp_path / "s.eval")
    assert "attachment://" in zipfile.ZipFile(out).read("samples/1_epoch_1.json").decode()
    for direct in (True, False):
        if not direct:
            monkeypatch.setattr(inspect_zip, "read", lambda p: None)
        got = [e.message for e in open_session(out).agent.entries() if isinstance(e, MessageEntry)]
        assert got[0].content == [ai.Text("look"), ai.Image(b"\x89PNG", "image/png")], direct
        assert got[1].tool_calls()[0].arguments == {"u": url}, direct


# ---- --redact: an API key-looking string leaves no trace in any format's file


@settings(PROPS, max_examples=min(PROPS.max_examples, 10))
@given(turns)
def test_redacted_exports_of_every_format_hold_no_api_key(tmp_path_factory, ops):
    from durable_nb.share.redact import Redactor

    a = build([*ops, ("user", [ai.Text(f"my key is {KEY}")])])
    tmp = tmp_path_factory.mktemp("redact")
    for name in ("s.pi.jsonl", "s.atif.json", "s.eval", "s.md", "s.jsonl", "s.otlp.json"):  # .html: needs a build
        out = export(a, tmp / name, redact=Redactor())
        data = out.read_bytes()
        if name.endswith(".eval"):
            z = zipfile.ZipFile(out)
            data = b"".join(z.read(n) for n in z.namelist())
        assert KEY.encode() not in data and KEY[13:].encode() not in data, name
