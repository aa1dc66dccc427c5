"""Inspect AI eval logs (``.eval``, or ``.json`` with ``--format inspect``), written with inspect_ai's own classes.

- A session is an eval of one sample per leaf branch (sample 1: the agent's
  leaf; ``metadata.leaf_id`` names each one's leaf): the branch's model view
  (system prompt, meta input, compaction summary: what the model read) as
  ``messages`` with tool calls and their results paired, the last reply as
  ``output``, the branch's usage as ``model_usage``, its replies and tool
  results as ``events`` (:mod:`.inspect_events`: the Transcript tab).
- An evaluation run (:mod:`durable_nb.evals`, ``run=NAME``) is an eval of one
  sample per case × variant (cases in order, variants within; ``metadata``
  names the case and the variant: the pair's model view, its reply) whose
  ``scores`` are the verdicts, one scorer per grader with its pass rate as
  ``accuracy``: ``inspect view`` shows it in its scoring tab.

A message's blocks are its ``content``, a part each in order (one text: a
plain string); a reply's tool calls are its ``tool_calls``, in order, but
Inspect keeps them apart from the content, so where a call stood among the
text is lost. Each message's ``metadata`` names its entry (``entry_id``) and,
for injected input, ``injected`` and ``origin``. ``docs/exports.md`` has the table and what
is lost. Needs the ``inspect`` extra (``inspect_ai`` is imported here only).
"""

from __future__ import annotations

import base64
from collections import Counter
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentReasoning,
    ContentText,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall

from .. import __version__, ai, cost
from ..errors import DurableError
from ..evals.results import results_of
from ..evals.stored import find_runs, is_record, read_run
from ..session import Entry, MessageEntry, is_ephemeral, model_view
from ..session.tree import index, path
from .branches import branches
from .export import session_record
from .formats import Job
from .inspect_events import Viewed, events, tool_error

NO_MODEL = "none/none"  # Inspect names a model provider/name; a session without replies has neither


def write_inspect(job: Job, out: Path) -> None:
    """Write ``job``'s session (or its evaluation run ``job.run``) to ``out`` as an Inspect log: the
    ``.json`` layout when the target ends in ``.json``, else ``.eval``. Raises :class:`DurableError` in
    one line for an empty session or an unknown run. O(leaves × depth) (a run: O(pairs × depth))."""
    log = run_log(job.agent, job.run) if job.run else session_log(job.agent, job.source)
    write_eval_log(log, str(out), format="json" if job.target.suffix.lower() == ".json" else "eval")


def session_log(agent: Any, source: str = "") -> EvalLog:
    """Return ``agent``'s session as an :class:`EvalLog`: one sample per leaf branch, the agent's leaf first."""
    found = branches(agent)
    if not found:
        raise DurableError(f"session {agent.session_id!r} has no entries, so no Inspect samples")
    created = session_record(agent, source)["created_at"]
    samples = [_sample(leaf, entries, k) for k, (leaf, entries) in enumerate(found, 1)]
    spec = _spec(agent.session_id, f"durable_nb/{agent.session_id}", created, samples,
                 {"session_id": agent.session_id, "source": source, "leaf_id": agent.leaf_id})  # fmt: skip
    return _log(spec, samples, [])


def _sample(leaf: str, entries: list[Entry], k: int) -> EvalSample:
    view = viewed(entries)
    messages = [chat for _, chat, _ in view]
    happened, pool = events(view)
    first = next((m for m in messages if m.role == "user" and not _context(m)), None)
    return EvalSample(
        id=k,  # a number: Inspect orders string ids as strings, numbers as numbers
        epoch=1,
        input=first.text if first is not None else "",
        target="",
        messages=messages,
        output=_output(entries),
        model_usage=usage([e.message for e in entries if isinstance(e, MessageEntry)]),
        metadata={"leaf_id": leaf, "branch": k},
        events=happened,
        events_data=pool,
    )


def _context(m: ChatMessage) -> bool:
    """True for input the session injected (meta input, a compaction's summary), not a person's question."""
    meta = m.metadata or {}
    return bool(meta.get("injected")) or str(meta.get("origin", "")).startswith("compaction:")


def run_log(agent: Any, name: str) -> EvalLog:
    """Return evaluation run ``name`` of ``agent``'s session as an :class:`EvalLog`: a sample per case ×
    variant, the verdicts as scores. Raises :class:`DurableError` naming the runs there for another name."""
    entries = [e for e in agent.entries() if not is_ephemeral(e)]
    stored = read_run(entries, name)
    if stored is None:
        known = ", ".join(find_runs(entries)) or "none"
        raise DurableError(f"session {agent.session_id!r} has no evaluation run {name!r} (runs there: {known})")
    run = results_of(stored)
    by_id = index(entries)
    samples = []
    variants = {name: i for i, name in enumerate(run.variants)}
    for k, r in enumerate(run.results, 1):
        pair = stored.pairs.get((r.case_index, variants.get(r.variant, -1)))
        end = r.entry_id or (_last_under(pair.marker.id, entries) if pair is not None else "")
        branch = path(by_id, end) if end else []  # an unanswered pair: its input, no reply
        scores = {v.grader: Score(value=v.score if v.score is not None else "C" if v.passed else "I",
                                  answer=r.reply, explanation=v.error or v.reason or None) for v in r.verdicts}  # fmt: skip
        view = viewed(branch)
        messages = [chat for _, chat, _ in view]
        happened, pool = events(view)
        asked = next((m.text for m in reversed(messages) if m.role == "user"), "")  # the case's prompt
        samples.append(EvalSample(
            id=k, epoch=1, input=asked or str(r.case), target="",
            messages=messages, output=_output(branch), scores=scores or None,
            model_usage=usage([e.message for e in _own(branch) if isinstance(e, MessageEntry)]),
            metadata={"case": r.case, "case_index": r.case_index, "variant": r.variant, "reply_id": r.entry_id},
            error=None if r.error is None else _error(r.error), events=happened, events_data=pool,
        ))  # fmt: skip
    metrics = []
    for g in run.graders:
        got = [r.verdict(g) for r in run.results]
        rate = sum(bool(v and v.passed) for v in got) / len(got) if got else 0.0
        metrics.append(EvalScore(name=g, scorer=g, scored_samples=sum(v is not None for v in got),
                                 metrics={"accuracy": EvalMetric(name="accuracy", value=rate)}))  # fmt: skip
    spec = _spec(name, f"durable_nb/{name}", stored.start.created_at, samples,
                 {"session_id": agent.session_id, "run": name, "variants": run.variants})  # fmt: skip
    return _log(spec, samples, metrics)


def _last_under(start: str, entries: list[Entry]) -> str:
    """The id of the latest message entry down the branch from ``start`` (``start`` itself when none)."""
    at = start
    for e in entries:  # append order: a child after its parent
        if e.parent_id == at and isinstance(e, MessageEntry):
            at = e.id
    return at


def _own(branch: list[Entry]) -> list[Entry]:
    """The pair's own entries: those after its pair record (the history before it is every pair's)."""
    starts = [k for k, e in enumerate(branch) if is_record(e, "pair")]
    return branch[starts[-1] + 1 :] if starts else branch


def _error(text: str) -> EvalError:
    return EvalError(message=text, traceback="", traceback_ansi="")


def _spec(name: str, task: str, created: str, samples: list[EvalSample], meta: dict[str, Any]) -> EvalSpec:
    models = Counter(m for s in samples for m in s.model_usage)
    return EvalSpec(
        created=created or "1970-01-01T00:00:00+00:00",
        task=task,
        task_id=name,
        run_id=name,
        eval_id=name,
        dataset=EvalDataset(name=name, samples=len(samples), sample_ids=[s.id for s in samples]),
        model=models.most_common(1)[0][0] if models else NO_MODEL,
        config=EvalConfig(),
        packages={"durable_nb": __version__},
        metadata=meta,
    )


def _log(spec: EvalSpec, samples: list[EvalSample], scores: list[EvalScore]) -> EvalLog:
    total: dict[str, ModelUsage] = {}
    for s in samples:
        for model, u in s.model_usage.items():
            total[model] = total[model] + u if model in total else u
    results = EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=scores)
    stats = EvalStats(started_at=spec.created, completed_at=spec.created, model_usage=total)
    return EvalLog(eval=spec, status="success", samples=samples, results=results, stats=stats)


def usage(messages: list[ai.Message]) -> dict[str, ModelUsage]:
    """Return the token counts of ``messages``' replies summed per model (:mod:`durable_nb.cost`'s rule:
    input counts cached tokens)."""
    out: dict[str, ModelUsage] = {}
    for m in messages:
        counts = cost.tokens(m) if m.role == "assistant" else None
        if counts is None:
            continue
        u = m.usage or {}
        read = u.get("cache_read_input_tokens") if isinstance(u.get("cache_read_input_tokens"), int) else None
        price = cost.message_cost(m)
        one = ModelUsage(input_tokens=counts[0], output_tokens=counts[1], total_tokens=sum(counts),
                         input_tokens_cache_read=read, total_cost=float(price) if price is not None else None)  # fmt: skip
        name = m.model or "unknown"
        out[name] = out[name] + one if name in out else one
    return out


def _output(entries: list[Entry]) -> ModelOutput:
    reply = next((e.message for e in reversed(entries) if isinstance(e, MessageEntry)
                  and e.message.role == "assistant"), None)  # fmt: skip
    if reply is None:
        return ModelOutput(model="")
    return ModelOutput.from_message(_assistant(reply, {}), stop_reason="stop")


def chat_messages(entries: list[Entry]) -> list[ChatMessage]:
    """Return the model view of the branch ``entries`` (root to leaf) as Inspect's chat messages."""
    return [chat for _, chat, _ in viewed(entries)]


def viewed(entries: list[Entry]) -> list[Viewed]:
    """Return the model view of the branch ``entries``: each message, as Inspect's, and its entry's time."""
    by_message = {id(e.message): e for e in entries if isinstance(e, MessageEntry)}
    out: list[Viewed] = []
    for m in model_view(entries):
        e = by_message.get(id(m))
        meta: dict[str, Any] = {"entry_id": e.id} if e is not None else {}
        if m.injected is not None:
            meta["injected"] = str(m.injected)
        if m.origin:
            meta["origin"] = m.origin
        out.append((m, chat_message(m, meta), e.created_at if e is not None else ""))
    return out


def chat_message(m: ai.Message, meta: dict[str, Any]) -> ChatMessage:
    """Return one message as Inspect's: system, user, assistant (reasoning, tool calls) or tool."""
    if m.role == "system":
        return ChatMessageSystem(content=_content(m.content), metadata=meta or None)
    if m.role == "user":
        return ChatMessageUser(content=_content(m.content), metadata=meta or None)
    if m.role == "assistant":
        return _assistant(m, meta)
    return ChatMessageTool(content=_content(m.content), tool_call_id=m.tool_call_id, function=m.tool_name,
                           error=tool_error(m), metadata=meta or None)  # fmt: skip


def _assistant(m: ai.Message, meta: dict[str, Any]) -> ChatMessageAssistant:
    """The reply: its blocks but the tool calls as ``content``, the calls in order as ``tool_calls``
    (Inspect's own field, so where a call stood among the text is not kept)."""
    calls = [ToolCall(id=c.id, function=c.name, arguments=c.arguments) for c in m.tool_calls()]
    return ChatMessageAssistant(content=_content(m.content), tool_calls=calls or None, model=m.model,
                                metadata=meta or None)  # fmt: skip


def _content(blocks: list[ai.Block]) -> str | list[Content]:
    """Return Inspect content for ours, a part per block in order: text, reasoning (a redacted one kept
    redacted), images as ``data:`` URLs; a reminder is text, a file a line naming it; tool calls are left
    to ``tool_calls``. A single text (or none) is a plain string; two texts stay two parts, never glued."""
    parts: list[Content] = []
    for b in blocks:
        if isinstance(b, (ai.Text, ai.Reminder)):
            parts.append(ContentText(text=b.text))
        elif isinstance(b, ai.Thinking):
            if b.redacted:
                parts.append(ContentReasoning(reasoning=b.redacted, redacted=True))
            else:
                parts.append(ContentReasoning(reasoning=b.text, signature=b.signature or None))
        elif isinstance(b, ai.Image):
            parts.append(ContentImage(image=f"data:{b.mime_type};base64,{base64.b64encode(b.data).decode('ascii')}"))
        elif isinstance(b, ai.File):
            parts.append(ContentText(text=f"[file {b.name or b.url or b.file_id} ({b.mime_type})]"))
    if not parts:
        return ""
    if len(parts) == 1 and isinstance(parts[0], ContentText):
        return parts[0].text
    return parts
