"""Verdicts: a grader's judgement of one reply in an evaluation run (see :mod:`durable_nb.evals`).

A verdict entry hangs off the reply it grades (its parent, and ``target_id``
names it) without continuing from it: drawn as a chip on that reply, never a
branch, never the leaf a run continues from, never sent to a model. It holds
the run's ``run`` name, the ``grader``'s name, ``passed`` / ``score``,
``reason``, an ``error`` (a grader that raised), and for a judge its
``model``, ``tokens`` and ``judge_id`` (the judge's own reply, on a branch of
its own). A replay leaves it out (it grades the original's reply); a fork
maps its target to the target's copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..session.entry import CustomEntry, register_custom
from ..session.kinds import Kind, register

VERDICT_KIND = "verdict"


class VerdictEntry(CustomEntry):
    """One grader's verdict on the reply ``target_id`` in evaluation run ``run``."""

    kind: str = VERDICT_KIND
    target_id: str = ""
    run: str = ""
    grader: str = ""
    passed: bool | None = None
    score: float | None = None
    reason: str = ""
    error: str | None = None
    model: str | None = None
    tokens: int | None = None
    judge_id: str = ""


register_custom(VERDICT_KIND, VerdictEntry)


def _text(entry: CustomEntry) -> str:
    grader = getattr(entry, "grader", "") or "grader"
    if getattr(entry, "error", None):
        return f"verdict {grader}: error"
    score = getattr(entry, "score", None)
    shown = "pass" if getattr(entry, "passed", None) else "fail"
    return f"verdict {grader}: {shown}" + (f" ({score:g})" if isinstance(score, (int, float)) else "")


def _fork(copy: CustomEntry, ids: Mapping[str, str]) -> CustomEntry:
    if isinstance(copy, VerdictEntry):
        copy.target_id = ids.get(copy.target_id, "")
        copy.judge_id = ids.get(copy.judge_id, "")
    return copy


def _target(entry: CustomEntry) -> str:
    return str(getattr(entry, "target_id", "") or "")


def _chip(entry: CustomEntry) -> dict[str, Any]:
    """The chip on the graded reply: one per run and grader (``key``), the latest wins."""
    run, grader = str(getattr(entry, "run", "") or ""), str(getattr(entry, "grader", "") or "")
    chip: dict[str, Any] = {"kind": VERDICT_KIND, "key": f"{run}/{grader}", "id": entry.id, "run": run}
    chip["grader"] = grader
    chip["passed"] = getattr(entry, "passed", None) is True
    score, reason, error = (getattr(entry, k, None) for k in ("score", "reason", "error"))
    if isinstance(score, (int, float)) and not isinstance(score, bool):
        chip["score"] = score
    if reason:
        chip["reason"] = str(reason)
    if error:
        chip["error"] = str(error)
    return chip


KIND = register(
    Kind(
        VERDICT_KIND,
        shown="chip",
        off_chain=True,
        text=_text,
        replayed=False,
        fork=_fork,
        target=_target,
        chip=_chip,
    )
)
