"""What an evaluation run gives: :class:`EvalResult` per pair, :class:`EvalRun`, :class:`Comparison`.

Built from what the session stores (:mod:`.stored`), so a run loaded later
(:func:`durable_nb.evals.load`) reads the same as the one just run; only a
pair's ``error`` text is this process's own (a stored run shows a pair
without a reply as ``"no reply stored"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..cost import tally
from ..errors import DurableError
from .graders import Verdict
from .stored import StoredRun

NO_REPLY = "no reply stored"


@dataclass
class EvalResult:
    """One case × variant pair: ``case_index``, the ``case`` (its fields), the ``variant``'s name, the
    reply's ``entry_id`` and text (``reply``), its ``verdicts``, ``passed`` (a reply, and every verdict
    passed), ``tokens`` and ``cost`` (US dollars; ``None`` when unknown), ``ms`` (the model's time), and
    ``error`` (``None`` when it replied)."""

    case_index: int
    case: dict[str, Any]
    variant: str
    entry_id: str = ""
    reply: str = ""
    verdicts: list[Verdict] = field(default_factory=list)
    passed: bool = False
    tokens: int | None = None
    cost: float | None = None
    ms: float | None = None
    error: str | None = None

    def verdict(self, grader: str) -> Verdict | None:
        """Return the verdict of grader ``grader`` (its name), or ``None``."""
        return next((v for v in self.verdicts if v.grader == grader), None)


@dataclass
class Comparison:
    """A run against a baseline, pairs by ``(case_index, variant)``: ``regressed`` (passed there, not here),
    ``improved`` (the other way), ``changed`` (another reply text), ``missing`` (in the baseline only),
    ``matched`` (how many pairs are in both: 0 means nothing was compared)."""

    run: str
    baseline: str
    regressed: list[EvalResult] = field(default_factory=list)
    improved: list[EvalResult] = field(default_factory=list)
    changed: list[EvalResult] = field(default_factory=list)
    missing: list[tuple[int, str]] = field(default_factory=list)
    matched: int = 0

    def __str__(self) -> str:
        if not self.matched:
            return f"{self.run} against {self.baseline}: no pair in common, nothing compared"
        return (
            f"{self.run} against {self.baseline}: {len(self.regressed)} regressed, {len(self.improved)} improved, "
            f"{len(self.changed)} changed reply"
        )


@dataclass
class EvalRun:
    """An evaluation run: its ``name``, the ``session_id`` it lives in, ``graders`` (names, in order),
    ``variants`` (names), ``results`` (one per pair, cases in order, variants within), ``finished``."""

    name: str
    session_id: str
    graders: list[str]
    variants: list[str]
    results: list[EvalResult]
    finished: bool = False
    calls: int = 0  # model calls this process made for the run (replies and judges)

    @property
    def passed(self) -> bool:
        """True when every pair passed."""
        return all(r.passed for r in self.results)

    @property
    def pass_rate(self) -> float:
        """The share of pairs that passed, 0..1 (0 for no pairs)."""
        return sum(r.passed for r in self.results) / len(self.results) if self.results else 0.0

    def failures(self) -> list[EvalResult]:
        """The pairs that did not pass."""
        return [r for r in self.results if not r.passed]

    def frame(self) -> Any:
        """Return a pandas DataFrame, one row per pair: ``case_index``, ``variant``, ``passed``, a column per
        grader (its score when it gave one, else pass/fail; ``None`` when it has no verdict), ``tokens``,
        ``cost``, ``ms``, ``error``, ``reply``, ``entry_id`` and the case's fields (``case.<field>``).
        Raises :class:`DurableError` naming the ``evals`` extra when pandas is not installed."""
        try:
            import pandas as pd
        except ImportError:
            raise DurableError("EvalRun.frame() needs pandas: pip install 'durable_nb[evals]'") from None
        rows = []
        for r in self.results:
            row: dict[str, Any] = {"case_index": r.case_index, "variant": r.variant, "passed": r.passed}
            for g in self.graders:
                v = r.verdict(g)
                row[g] = None if v is None else (v.score if v.score is not None else v.passed)
            row.update(tokens=r.tokens, cost=r.cost, ms=r.ms, error=r.error, reply=r.reply, entry_id=r.entry_id)
            row.update({f"case.{k}": x for k, x in r.case.items()})
            rows.append(row)
        return pd.DataFrame(rows)

    def compare(self, baseline: EvalRun) -> Comparison:
        """Return this run against ``baseline`` (another :class:`EvalRun`): pairs matched by case index and
        variant name, or by the variant's position when the two runs' variant names differ but their number
        does not (a new model against the old one). O(pairs)."""
        if not isinstance(baseline, EvalRun):
            raise DurableError(f"compare() takes another EvalRun (evals.load(...)), not {type(baseline).__name__}")
        by_position = set(self.variants) != set(baseline.variants) and len(self.variants) == len(baseline.variants)
        rename = dict(zip(self.variants, baseline.variants)) if by_position else {}
        theirs = {(r.case_index, r.variant): r for r in baseline.results}
        out = Comparison(self.name, baseline.name)
        for r in self.results:
            b = theirs.pop((r.case_index, rename.get(r.variant, r.variant)), None)
            if b is None:
                continue
            out.matched += 1
            if b.passed and not r.passed:
                out.regressed.append(r)
            elif r.passed and not b.passed:
                out.improved.append(r)
            if r.reply != b.reply:
                out.changed.append(r)
        out.missing = sorted(theirs)
        return out

    def _repr_html_(self) -> str:
        """The grid (:mod:`durable_nb.evals.grid`), static: a notebook cell that shows the run draws it."""
        from . import grid

        return grid.html(grid.state(self))

    def __repr__(self) -> str:
        state = "finished" if self.finished else "unfinished"
        return f"<EvalRun {self.name!r}: {sum(r.passed for r in self.results)}/{len(self.results)} passed, {state}>"


def compared(run: EvalRun, baseline: EvalRun) -> Comparison:
    """Return ``run.compare(baseline)`` where a comparison gates or marks something (the CLI's
    ``--baseline``, the magics). Raises :class:`DurableError` (one line, both runs' cases and variants)
    when no pair of ``run`` is in ``baseline``: nothing would be compared, and a gate would pass on nothing."""
    c = run.compare(baseline)
    if not c.matched:
        raise DurableError(
            f"run {run.name!r} has no pair in common with baseline {baseline.name!r} ({_shape(run)}; baseline: "
            f"{_shape(baseline)}): nothing to compare; give a baseline run of the same cases and variants"
        )
    return c


def _shape(run: EvalRun) -> str:
    n = len({r.case_index for r in run.results})
    return f"{n} case{'' if n == 1 else 's'} × variants {', '.join(run.variants) or 'none'}"


def results_of(run: StoredRun, errors: dict[tuple[int, int], str] | None = None) -> EvalRun:
    """Return the :class:`EvalRun` of a stored run, ``errors`` this process's error lines by ``(case,
    variant)``. The graders that count are every grader that left a verdict on the run, in the order they
    first did: a run is what it stored, so the run that just ran and :func:`durable_nb.evals.load` give the
    same figures, and a later run of the name that leaves a grader out still counts its verdicts."""
    spec = run.spec
    cases: list[dict[str, Any]] = list(spec.get("case_rows") or [])
    variants = [str(v) for v in spec.get("variant_names") or []]  # names, whatever a stored spec holds
    graders = list(dict.fromkeys(g for p in run.pairs.values() for g in p.verdicts))
    errors = errors or {}
    out = []
    for ci, case in enumerate(cases):
        for vi, vname in enumerate(variants):
            p = run.pairs.get((ci, vi))
            r = EvalResult(case_index=ci, case=dict(case), variant=vname)
            if p is not None and p.reply is not None:
                r.entry_id, r.reply = p.reply.id, p.reply.message.text()
                r.verdicts = [
                    p.verdicts[g] if g in p.verdicts else Verdict(grader=g, error="not graded") for g in graders
                ]
                t = tally(p.messages)
                r.tokens = t.input_tokens + t.output_tokens if t.reported else None
                r.cost = float(t.cost) if t.cost is not None and t.reported else None
                r.ms = sum(float((m.timing or {}).get("total_ms", 0)) for m in p.messages if m.role == "assistant")
                r.passed = all(v.passed for v in r.verdicts)
            else:
                r.error = errors.get((ci, vi), NO_REPLY)
            out.append(r)
    return EvalRun(str(run.start.data.get("run")), "", graders, variants, out, finished=run.end is not None)
