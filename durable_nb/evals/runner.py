"""Running an evaluation: every case × variant pair on a sibling branch, graded, durable and resumable.

:func:`run` is :func:`durable_nb.evals.run`. The pairs run on
``concurrency`` lanes (threads driven by the fan-out's
:func:`~durable_nb.durable.fanout.drive`, so Stop works as there: every
lane stops, no commit starts after it); a lane takes the next pair, runs
it as a fan-out runs a variant (:func:`~durable_nb.durable.loop.run_loop`
on its own branch, the leaf untouched), then grades its reply. A pair whose
reply is stored is never sent again; a grader without a verdict on a stored
reply grades it without a model call.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from .. import ai
from ..durable import Agent
from ..durable.fanout import built_variants, drive
from ..durable.inputs import mark_ephemeral
from ..durable.inputs import system as system_entry
from ..durable.loop import RunStream, run_loop
from ..durable.reuse import StoredResults, check_mode, reusing
from ..durable.tools import Tool, as_tools
from ..durable.variants import Variant, as_variant, describe, differing, model_word
from ..errors import DurableError
from ..kinds.evaluation import EVAL_KIND
from ..kinds.verdict import VerdictEntry
from ..models import Model, build, model_name
from ..models.failures import env_secrets
from ..session import CustomEntry, Entry, MessageEntry, Store, new_id, now, view_builder
from ..session.locate import open_store
from .cases import Prompt, inputs, read_cases
from .graders import Judge, Verdict, as_verdict, error_verdict, grader_names
from .results import EvalRun, results_of
from .stored import StoredRun, read_run

RETRIES = 4  # a rate-limited or overloaded model call is tried this many times more
BACKOFF = 0.5  # seconds before the first retry; doubled each time, with jitter
_TRANSIENT = ("429", "529", "rate limit", "rate_limit", "overloaded", "too many requests")
_SDK_MODULES = ("durable_nb.models.openai_chat", "durable_nb.models.anthropic_messages")  # their SDK retries


@dataclass
class _Pair:
    case: int
    variant: int
    inputs: list[Entry | str]
    reply: MessageEntry | None = None
    missing: tuple[int, ...] = ()  # the graders (positions) to run on its reply


def run(
    prompt: Prompt,
    cases: object,
    *,
    variants: Sequence[Variant | Mapping[str, Any] | Any] | None = None,
    graders: Sequence[Callable[..., Any]] = (),
    agent: Agent | None = None,
    store: Store | str | None = None,
    session_id: str | None = None,
    name: str | None = None,
    history: str | None = None,
    concurrency: int = 4,
    on_event: Callable[[Any], object] | None = None,
    tools: Sequence[Callable[..., Any]] | None = None,
    tool_results: str = "call",
) -> EvalRun:
    """Run (or continue) evaluation run ``name``; return its :class:`~durable_nb.evals.EvalRun`.

    See :mod:`durable_nb.evals` for the arguments. Everything is checked before
    anything is written or sent: the cases, every case against the template,
    the graders, the variants' models and settings, ``concurrency``. A run of
    that name already in the session continues when its spec (template,
    cases, variants, history) is the same, else is refused with one line
    suggesting a new name. Replies stored are never sent again; every verdict
    stored on the run counts, ``graders`` left out of this call too (the run
    returned reads as :func:`~durable_nb.evals.load` does). One failing
    pair is an error row; a ``KeyboardInterrupt`` stops every pair (nothing
    more is stored) and propagates. Cost: one model call per pair without a
    stored reply, plus one per judge verdict missing. ``tools`` are the
    tools the model is offered (default: the agent's); ``tool_results="reuse"``
    runs none of them: each call is answered with the stored result of the
    same call anywhere in the session (:mod:`durable_nb.durable.reuse`).
    """
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise DurableError(f"concurrency must be a whole number of at least 1, not {concurrency!r}")
    _check_lists(graders, variants)
    rows = read_cases(cases)
    names = grader_names(list(graders))
    vs = [as_variant(v) for v in (variants or [{}])]
    mode = check_mode(tool_results)
    keys = env_secrets()
    made = [inputs(prompt, c, i, keys) for i, c in enumerate(rows)]
    if agent is None:
        agent = Agent(store=open_store(store) if isinstance(store, str) else store, session_id=session_id)
    elif store is not None or session_id is not None:
        raise DurableError("give either agent= or store=/session_id=, not both")
    models, settings = built_variants(agent, vs, None)
    offered = as_tools(agent.tools if tools is None else tools)
    judges = {i: _model(build(g.model) if g.model is not None else agent._built_model())
              for i, g in enumerate(graders) if isinstance(g, Judge)}  # fmt: skip
    spec = _spec(prompt, rows, made, vs, _variant_names(vs))
    name = name or f"eval-{spec['digest'][:8]}"
    _check_name(name)
    start = _start(agent, read_run(agent.entries(), name), name, spec, history)
    stored = read_run(agent.entries(), name)
    assert stored is not None
    pairs = _plan(stored, made, len(vs))
    lanes = _Lanes(agent, start, [_model(m) for m in models], settings, list(graders), names, name, judges, rows)
    lanes.systems = [v.system for v in vs]
    lanes.tools = reusing(offered, StoredResults(agent.entries(), consume=False)) if mode == "reuse" else offered
    lanes.go(pairs, concurrency, on_event)
    done = read_run(agent.entries(), name)
    assert done is not None
    if done.end is None and all(p.reply is not None for p in done.pairs.values()) and len(done.pairs) == len(pairs):
        end = CustomEntry(id=new_id(), parent_id=start.id, created_at=now(), kind=EVAL_KIND,
                          data={"run": name, "role": "end"})  # fmt: skip
        agent._log.commit([end], move=False)
        done.end = end
    out = results_of(done, lanes.errors)  # every verdict stored counts, as evals.load reads it
    out.session_id, out.calls = agent.session_id, lanes.calls
    return out


def _check_lists(graders: object, variants: object) -> None:
    """Raise :class:`DurableError` (one line) for one grader or one variant given without its list."""
    if callable(graders):
        shown = getattr(graders, "name", None) or getattr(graders, "__name__", None) or type(graders).__name__
        raise DurableError(f"graders takes a list, not one grader: graders=[{shown:.40}]")
    if isinstance(variants, (str, Mapping, Variant)):
        raise DurableError(f"variants takes a list, not one variant: variants=[{variants!r:.40}]")


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name):
        raise DurableError(f"a run's name is one word without spaces, not {name!r}")


def _variant_names(vs: list[Variant]) -> list[str]:
    """One name per variant: its label, else what differs (``offline``, ``temperature=1``); repeats get ``.2``."""
    keys = differing(vs) or ["model"]
    out: list[str] = []
    for v in vs:
        base, n = v.label or describe(v, keys), 1
        nm = base
        while nm in out:
            n += 1
            nm = f"{base}.{n}"
        out.append(nm)
    return out


def _spec(prompt: Prompt, rows: list[dict[str, Any]], made: list[list[Entry | str]], vs: list[Variant],
          vnames: list[str]) -> dict[str, Any]:  # fmt: skip
    """Return the run's spec as recorded (JSON), with the ``digest`` of what makes a run the same run (the
    filled inputs and the variants) and the ``cases_digest`` of its case rows (every field, so a changed
    expected answer is a changed spec too)."""
    shown = [[x if isinstance(x, str) else _entry_text(x) for x in m] for m in made]
    variants = [
        {"model": model_word(v.model), "system": v.system, "settings": dict(v.settings), "label": v.label} for v in vs
    ]
    body = {"inputs": shown, "variants": variants}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
    template = prompt if isinstance(prompt, str) else f"<function {getattr(prompt, '__name__', 'prompt')}>"
    case_rows = json.loads(json.dumps(rows, default=str))
    cases_digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()
    return {"template": template, "cases": len(rows), "case_rows": case_rows, "variants": variants,
            "variant_names": vnames, "digest": digest, "cases_digest": cases_digest}  # fmt: skip


def _entry_text(e: Entry) -> str:
    if isinstance(e, MessageEntry):
        return f"{e.message.role}:{e.message.injected}:{e.message.text()}"
    return f"{type(e).__name__}:{getattr(e, 'kind', '')}"


def _start(agent: Agent, stored: StoredRun | None, name: str, spec: dict[str, Any], history: str | None) -> CustomEntry:
    """Return the run's start record: the stored one when the spec is the same (else refuse), or a new one."""
    at = agent.resolve(history) if history is not None else None
    if stored is not None:
        same = stored.spec.get("digest") == spec["digest"]
        if stored.spec.get("cases_digest", spec["cases_digest"]) != spec["cases_digest"]:  # older runs: none
            same = False
        if at is not None and at != stored.start.parent_id:
            same = False
        if not same:
            state = "finished" if stored.end is not None else "started"
            taken = {n for n in _names(agent)}
            new, n = f"{name}-2", 2
            while new in taken:
                n += 1
                new = f"{name}-{n}"
            raise DurableError(
                f"run {name!r} was {state} with another spec (template, cases, variants or history changed); "
                f"runs are immutable: give this one a new name, e.g. name={new!r}"
            )
        return stored.start
    parent = agent.leaf_id if at is None else at
    rec = CustomEntry(id=new_id(), parent_id=parent, created_at=now(), kind=EVAL_KIND,
                      data={"run": name, "role": "start", "spec": spec, "history": parent})  # fmt: skip
    agent._log.commit([rec], move=False)
    return rec


def _names(agent: Agent) -> list[str]:
    from .stored import find_runs

    return list(find_runs(agent.entries()))


def _plan(stored: StoredRun, made: list[list[Entry | str]], n_variants: int) -> list[_Pair]:
    """Return every pair, with its stored reply and the graders it still needs."""
    out = []
    for ci, m in enumerate(made):
        for vi in range(n_variants):
            p = _Pair(ci, vi, m)
            s = stored.pairs.get((ci, vi))
            if s is not None and s.reply is not None:
                p.reply = s.reply
            out.append(p)
    return out


class _Lanes:
    """The pairs' work: ``go`` runs them on lanes; ``errors`` (by pair) and ``calls`` (model calls) after."""

    def __init__(self, agent: Agent, start: CustomEntry, models: list[Model], settings: list[dict[str, Any]],
                 graders: list[Callable[..., Any]], names: list[str], run: str, judges: dict[int, Model],
                 rows: list[dict[str, Any]]) -> None:  # fmt: skip
        self.agent, self.start, self.models, self.settings = agent, start, models, settings
        self.graders, self.names, self.run, self.judges, self.rows = graders, names, run, judges, rows
        self.errors: dict[tuple[int, int], str] = {}
        self.calls = 0
        self._lock = threading.Lock()
        self.halt = threading.Event()
        history = agent.path(start.parent_id) if start.parent_id else []
        self.base = view_builder(history)
        self.system = self.base.system.text() if self.base.system is not None else None
        self.tools: list[Tool] = []
        self.systems: list[str | None] = [None] * len(models)
        self.forward = False  # pass every event on (someone listens), else one a run

    def go(self, pairs: list[_Pair], concurrency: int, on_event: Callable[[Any], object] | None) -> None:
        stored = read_run(self.agent.entries(), self.run)
        assert stored is not None
        for p in pairs:
            s = stored.pairs.get((p.case, p.variant))
            have = set(s.verdicts) if s is not None and s.reply is not None else set()
            p.missing = tuple(i for i, n in enumerate(self.names) if n not in have)
        todo = iter([p for p in pairs if p.reply is None or p.missing])
        self.forward = on_event is not None
        lanes = [self._lane(todo) for _ in range(concurrency)]
        drive(cast(Any, lanes), (lambda i, ev: on_event(ev)) if on_event else None, self.halt, self.agent._log.lock)

    def _lane(self, todo: Iterator[_Pair]) -> Iterator[Any]:
        while not self.halt.is_set():
            with self._lock:
                p = next(todo, None)
            if p is None:
                return
            if p.reply is None:
                yield from self._send(p)
            if p.reply is not None:
                for i in p.missing:
                    yield from self._grade(p, i)

    def _send(self, p: _Pair) -> Iterator[Any]:
        from ..durable.active import RunView

        v_model, v_settings = self.models[p.variant], self.settings[p.variant]
        marker = CustomEntry(kind=EVAL_KIND, data={"run": self.run, "role": "pair", "case": p.case,
                                                   "variant": p.variant})  # fmt: skip
        own: list[Entry | str] = [marker, *p.inputs]
        vsys = self.systems[p.variant]
        if vsys is not None and vsys != self.system:
            own.insert(1, system_entry(vsys))
        prepared = mark_ephemeral(self.agent._log.prepare(own, self.start.id))
        view = RunView(self.base)
        for e in prepared:
            if isinstance(e, MessageEntry):
                view.add(e.message)
        with self._lock:
            self.calls += 1
        stream = RunStream(run_loop(self.agent, v_model, view, prepared, self.tools, v_settings, self.start.id,
                                    move=False, halt=self.halt))  # fmt: skip
        last = yield from self._follow(stream)
        if stream.error is not None:
            self.errors[(p.case, p.variant)] = _line(stream.error)
            return
        p.reply = last

    def _follow(self, stream: RunStream) -> Generator[Any, None, MessageEntry | None]:
        """Drive ``stream``, passing its events on; return its final reply entry (``None``: none, or it ended
        in a tool call). Raises ``KeyboardInterrupt`` when the run was stopped."""
        last: Entry | None = None
        try:
            for ev in stream:
                if ev.type == "message_end" and ev.entries:
                    last = ev.entries[-1]
                if self.forward or ev.type == "agent_end":  # one event a run at least: Stop is checked there
                    yield ev
        except BaseException:  # noqa: BLE001 - kept in stream.error
            pass
        finally:
            stream.close()
        if isinstance(stream.error, KeyboardInterrupt) or self.halt.is_set():
            raise KeyboardInterrupt("stopped: nothing more is written")
        if isinstance(last, MessageEntry) and last.message.role == "assistant" and not last.message.tool_calls():
            return last
        return None

    def _grade(self, p: _Pair, i: int) -> Iterator[Any]:
        assert p.reply is not None
        g, name, case = self.graders[i], self.names[i], self.rows[p.case]
        text = p.reply.message.text()
        if isinstance(g, Judge):
            verdict = yield from self._judge(g, i, text, case)
        else:
            try:
                verdict = as_verdict(g(text, dict(case)), name)
            except Exception as e:  # noqa: BLE001 - a grader that raises gives an error verdict
                verdict = error_verdict(name, e)
        verdict = replace(verdict, grader=name, passed=bool(verdict.passed) and not verdict.error)
        entry = VerdictEntry(id=new_id(), parent_id=p.reply.id, created_at=now(), target_id=p.reply.id, run=self.run,
                             grader=name, passed=verdict.passed, score=verdict.score, reason=verdict.reason,
                             error=verdict.error, model=verdict.model, tokens=verdict.tokens,
                             judge_id=verdict.judge_id)  # fmt: skip
        self.agent._log.commit([entry], move=False, halt=self.halt)

    def _judge(self, g: Judge, i: int, reply: str, case: dict[str, Any]) -> Generator[Any, None, Verdict]:
        """Run judge ``g`` on its own branch off the start record (only its own messages are sent); return its verdict."""
        from ..durable.active import RunView
        from ..session import ViewBuilder
        from .graders import JUDGE_SYSTEM

        model = self.judges[i]
        prepared = self.agent._log.prepare([system_entry(JUDGE_SYSTEM), g.request(reply, case)], self.start.id)
        view = RunView(ViewBuilder())
        for e in prepared:
            if isinstance(e, MessageEntry):
                view.add(e.message)
        with self._lock:
            self.calls += 1
        stream = RunStream(run_loop(self.agent, model, view, prepared, [], {}, self.start.id, move=False,
                                    halt=self.halt))  # fmt: skip
        entry = yield from self._follow(stream)
        if stream.error is not None:
            return Verdict(
                grader=g.name, error=f"the judge's model failed: {_line(stream.error)}", model=model_name(model)
            )
        final = stream.messages[-1] if stream.messages else ai.assistant_message("")
        u = final.usage or {}
        tokens = int(u.get("input_tokens", 0) or 0) + int(u.get("output_tokens", 0) or 0) if u else None
        v = g.read(final.text())
        return replace(v, model=final.model or model_name(model), tokens=tokens, judge_id=entry.id if entry else "")


def _line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _transient(e: BaseException) -> bool:
    """True for a rate-limit (429) or overloaded (529/503) failure: worth waiting and trying again."""
    status = getattr(e, "status_code", None) or getattr(e, "status", None)
    if status in (429, 503, 529):
        return True
    low = str(e).lower()
    return any(t in low for t in _TRANSIENT)


class _Patient:
    """A model whose rate-limited or overloaded calls are retried with backoff before anything streamed."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = model_name(inner)

    def stream(self, messages: Sequence[ai.Message], request: ai.Request | None = None) -> Iterator[str | ai.Message]:
        from ..models import open_stream

        for attempt in range(RETRIES + 1):
            started = False
            try:
                for item in open_stream(self.inner, messages, request):
                    started = True
                    yield item
                return
            except Exception as e:
                if started or attempt == RETRIES or not _transient(e):
                    raise
            time.sleep(BACKOFF * 2**attempt * (1 + random.random()))


def _model(m: Model) -> Model:
    """Return ``m`` with retries on rate limits, unless its provider SDK retries on its own."""
    return m if type(m).__module__ in _SDK_MODULES else cast(Model, _Patient(m))


__all__ = ["run"]
