"""An evaluation run as a grid: cases as rows × variants as columns, and its static HTML and text forms.

    from durable_nb.evals import grid
    s = grid.state(run, baseline)    # JSON the widget's Evaluation tab draws (protocol: EvalGrid)
    grid.html(s), grid.text(s)       # a saved notebook's or an exported page's fallback; a terminal

Each cell holds its pair's outcome (passed, the verdicts with score and
reason, the error), its cost and time, the reply's entry (the widget opens
it) and, against a baseline, whether it ``regressed``, ``improved`` or
``changed`` reply. At most :data:`MAX_CASES` cases travel (the failing and
differing ones first); ``case_total`` says how many the run has. The HTML
has no script and escapes every string from the session. Pure: imports
nothing from Jupyter.
"""

from __future__ import annotations

from decimal import Decimal
from html import escape
from typing import Any, TypeAlias

from ..cost import format_cost

# durable_nb.evals.results' classes, not imported: EvalRun draws itself (_repr_html_) with this module
EvalRun: TypeAlias = Any
EvalResult: TypeAlias = Any

MAX_CASES = 500  # case rows a grid carries (the rest: r.frame() has every pair)
REPLY_CHARS = 400  # characters of a reply a cell carries
LABEL_CHARS = 80  # characters of a case's one-line label


def _one_line(text: str, limit: int) -> str:
    t = " ".join(str(text).split())
    return t if len(t) <= limit else t[: limit - 1] + "…"


def case_label(case: dict[str, Any]) -> str:
    """Return a case's fields on one line (``country=France · answer=Paris``), cut to :data:`LABEL_CHARS`."""
    return _one_line(" · ".join(f"{k}={v}" for k, v in case.items()), LABEL_CHARS) or "(no fields)"


def _money(cost: float | None) -> str:
    return "" if cost is None else format_cost(Decimal(str(cost)))


def _score(r: EvalResult) -> float | None:
    scores = [v.score for v in r.verdicts if v.score is not None]
    return round(sum(scores) / len(scores), 4) if scores else None


def _cell(r: EvalResult, variant: int, mark: str) -> dict[str, Any]:
    verdicts = []
    for v in r.verdicts:
        d: dict[str, Any] = {"grader": v.grader, "passed": bool(v.passed)}
        if v.score is not None:
            d["score"] = v.score
        if v.reason:
            d["reason"] = _one_line(v.reason, 200)
        if v.error:
            d["error"] = _one_line(v.error, 200)
        verdicts.append(d)
    out: dict[str, Any] = {
        "case": r.case_index,
        "variant": variant,
        "passed": r.passed,
        "entry_id": r.entry_id,
        "reply": r.reply[:REPLY_CHARS],
        "verdicts": verdicts,
        "cost": _money(r.cost),
        "ms": r.ms,
        "tokens": r.tokens,
    }
    score = _score(r)
    if score is not None:
        out["score"] = score
    if r.error:
        out["error"] = r.error
    if mark:
        out["baseline"] = mark
    return out


def state(run: EvalRun, baseline: EvalRun | None = None) -> dict[str, Any]:
    """Return the grid of ``run`` (against ``baseline`` when given) as JSON (see the module doc). O(pairs)."""
    marks: dict[tuple[int, str], str] = {}
    summary = f"{sum(r.passed for r in run.results)}/{len(run.results)} passed ({run.pass_rate:.0%})"
    if baseline is not None:
        c = run.compare(baseline)
        for kind in ("changed", "improved", "regressed"):  # the strongest mark wins
            for r in getattr(c, kind):
                marks[(r.case_index, r.variant)] = kind
        summary += f" · against {baseline.name}: {len(c.regressed)} regressed, {len(c.improved)} improved, "
        summary += f"{len(c.changed)} changed reply"
    vindex = {v: i for i, v in enumerate(run.variants)}
    cases: dict[int, dict[str, Any]] = {}
    for r in run.results:
        cases.setdefault(r.case_index, r.case)
    order = sorted(cases)
    if len(order) > MAX_CASES:  # the failing and differing cases first, then the rest in order
        flagged = {r.case_index for r in run.results if not r.passed or (r.case_index, r.variant) in marks}
        order = _first(order, flagged)
    shown = set(order)
    return {
        "run": run.name,
        "baseline": baseline.name if baseline is not None else "",
        "finished": run.finished,
        "variants": list(run.variants),
        "graders": list(run.graders),
        "cases": [{"index": i, "label": case_label(cases[i])} for i in order],
        "case_total": len(cases),
        "cells": [
            _cell(r, vindex.get(r.variant, 0), marks.get((r.case_index, r.variant), ""))
            for r in run.results
            if r.case_index in shown
        ],
        "summary": summary,
    }


def _first(order: list[int], flagged: set[int]) -> list[int]:
    """The :data:`MAX_CASES` cases shown of a big run: every flagged one (up to the limit), then the first others."""
    keep = [i for i in order if i in flagged][:MAX_CASES]
    keep += [i for i in order if i not in flagged][: MAX_CASES - len(keep)]
    return sorted(keep)


# -- the static forms --------------------------------------------------------------------------------


def outcome(cell: dict[str, Any]) -> str:
    """Return a cell's outcome as a word: ``pass``, ``FAIL`` (the failing graders), ``ERROR``, or ``score 0.75``
    (beside pass/fail) when its graders gave scores."""
    if cell.get("error"):
        return "ERROR"
    word = "pass" if cell["passed"] else "FAIL " + ",".join(v["grader"] for v in cell["verdicts"] if not v["passed"])
    return f"{word.strip()} · score {cell['score']:g}" if "score" in cell else word.strip()


def verdict_line(v: dict[str, Any]) -> str:
    """Return one verdict of a cell as ``grader: pass (reason)`` / ``grader: fail (error)``."""
    why = v.get("error") or v.get("reason")
    return f"{v['grader']}: {'pass' if v['passed'] else 'fail'}" + (f" ({why})" if why else "")


def _ms(ms: Any) -> str:
    if not isinstance(ms, (int, float)):
        return ""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _cost_time(cell: dict[str, Any]) -> str:
    return " · ".join(x for x in (cell.get("cost") or "", _ms(cell.get("ms"))) if x)


def _more(s: dict[str, Any]) -> str:
    n = s["case_total"] - len(s["cases"])
    return f"{n} more case{'' if n == 1 else 's'}"


def _by(s: dict[str, Any]) -> dict[tuple[int, int], dict[str, Any]]:
    return {(c["case"], c["variant"]): c for c in s["cells"]}


def text(s: dict[str, Any]) -> str:
    """Return the grid as plain text: a header line, then one line per case (its label, each variant's outcome)."""
    by = _by(s)
    lines = [f"evaluation {s['run']}: {s['summary']}"]
    for case in s["cases"]:
        cells = [by.get((case["index"], i)) for i in range(len(s["variants"]))]
        parts = [f"{v}: {outcome(c) if c else '—'}" for v, c in zip(s["variants"], cells)]
        lines.append(f"  {case['index']} {case['label']}  |  " + "  |  ".join(parts))
    if s["case_total"] > len(s["cases"]):
        lines.append(f"  … {_more(s)} (EvalRun.frame() has every pair)")
    return "\n".join(lines)


_TD = "text-align:left;vertical-align:top;padding:3px 8px;border:1px solid #8884"
_BG = {"pass": "#e6ffec", "fail": "#ffebe9", "error": "#fff8c5"}


def _cell_html(c: dict[str, Any] | None) -> str:
    if c is None:
        return f"<td style='{_TD}'>—</td>"
    kind = "error" if c.get("error") else "pass" if c["passed"] else "fail"
    mark = f" <code>[{escape(c['baseline'])}]</code>" if c.get("baseline") else ""
    detail = c.get("error") or "; ".join(verdict_line(v) for v in c["verdicts"])
    return (
        f"<td style='{_TD};background:{_BG[kind]}' data-entry='{escape(c['entry_id'])}' title='{escape(detail)}'>"
        f"<b>{escape(outcome(c))}</b>{mark}<br><small>{escape(_cost_time(c))}</small></td>"
    )


def html(s: dict[str, Any]) -> str:
    """Return the grid as static HTML (no script, every session string escaped): a table of cases × variants,
    each cell's outcome, cost and time, its verdicts in its title, the baseline mark."""
    by = _by(s)
    head = "".join(f"<th style='{_TD}'>{escape(v)}</th>" for v in s["variants"])
    rows = []
    for case in s["cases"]:
        cells = "".join(_cell_html(by.get((case["index"], i))) for i in range(len(s["variants"])))
        rows.append(f"<tr><th style='{_TD}'>{case['index']} <small>{escape(case['label'])}</small></th>{cells}</tr>")
    more = ""
    if s["case_total"] > len(s["cases"]):
        more = f"<p><i>… {_more(s)} not shown (EvalRun.frame() has every pair)</i></p>"
    state_word = "finished" if s.get("finished") else "unfinished"
    return (
        "<div class='durable-eval-grid'>"
        f"<p><b>evaluation {escape(s['run'])}</b> · {escape(s['summary'])} · {state_word}</p>"
        f"<table><tr><th style='{_TD}'>case</th>{head}</tr>{''.join(rows)}</table>{more}</div>"
    )
