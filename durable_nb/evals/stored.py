"""What a session holds of its evaluation runs: start records, pairs, replies and verdicts (read-only).

:func:`find_runs` lists the start records; :func:`read_run` collects one
run's pairs, each pair's stored reply (a pair whose branch ends in an
assistant message without tool calls) and the verdicts on it. One pass over
the log: O(entries).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..kinds.evaluation import EVAL_KIND
from ..kinds.verdict import VerdictEntry
from ..session import CustomEntry, Entry, MessageEntry, is_ephemeral
from .graders import Verdict


@dataclass
class StoredPair:
    """One case × variant pair as stored: its ``marker`` (pair record), the ``reply`` entry (``None``: not
    replied yet), the ``messages`` of its branch after the input, and its ``verdicts`` by grader name."""

    marker: CustomEntry
    reply: MessageEntry | None = None
    messages: list[Any] = field(default_factory=list)
    verdicts: dict[str, Verdict] = field(default_factory=dict)


@dataclass
class StoredRun:
    """One run as stored: its ``start`` record, its ``end`` record (``None``: not finished), its pairs by
    ``(case, variant)`` (the one with a reply, else the latest attempt)."""

    start: CustomEntry
    end: CustomEntry | None = None
    pairs: dict[tuple[int, int], StoredPair] = field(default_factory=dict)

    @property
    def spec(self) -> dict[str, Any]:
        """The run's spec as recorded at its start."""
        return dict(self.start.data.get("spec") or {})


def is_record(e: Entry, role: str, run: str | None = None) -> bool:
    """True for an ``eval`` record of ``role`` (of run ``run`` when given)."""
    return (
        isinstance(e, CustomEntry)
        and e.kind == EVAL_KIND
        and e.data.get("role") == role
        and (run is None or e.data.get("run") == run)
    )


def find_runs(entries: list[Entry]) -> dict[str, StoredRun]:
    """Return the runs whose start records are among ``entries``, by name, in the order they started."""
    runs: dict[str, StoredRun] = {}
    for e in entries:
        if isinstance(e, CustomEntry) and is_record(e, "start") and e.data.get("run") not in runs:
            runs[str(e.data.get("run"))] = StoredRun(e)
        elif isinstance(e, CustomEntry) and is_record(e, "end") and e.data.get("run") in runs:
            runs[str(e.data["run"])].end = e
    return runs


def read_run(entries: list[Entry], name: str) -> StoredRun | None:
    """Return run ``name`` with its pairs, replies and verdicts read from ``entries`` (``None``: no such run)."""
    run = find_runs(entries).get(name)
    if run is None:
        return None
    children: dict[str, list[Entry]] = defaultdict(list)
    verdicts: dict[str, dict[str, Verdict]] = defaultdict(dict)
    for e in entries:
        if isinstance(e, VerdictEntry):
            if e.run == name:
                verdicts[e.target_id][e.grader] = as_verdict(e)
        elif not is_ephemeral(e):
            children[e.parent_id].append(e)
    for marker in children.get(run.start.id, []):
        if not is_record(marker, "pair", name) or not isinstance(marker, CustomEntry):
            continue
        pair = _follow(marker, children)
        key = (int(marker.data.get("case", -1)), int(marker.data.get("variant", -1)))
        old = run.pairs.get(key)
        if pair.reply is not None:
            pair.verdicts = verdicts.get(pair.reply.id, {})
        if old is None or pair.reply is not None or old.reply is None:  # the latest attempt; a reply wins
            run.pairs[key] = pair
    return run


def _follow(marker: CustomEntry, children: dict[str, list[Entry]]) -> StoredPair:
    """Walk the pair's branch down from its marker (the latest message child each step); find its reply."""
    out = StoredPair(marker)
    at: Entry = marker
    while True:
        nxt = [c for c in children.get(at.id, []) if isinstance(c, MessageEntry)]
        if not nxt:
            break
        at = nxt[-1]
        if at.message.role in ("assistant", "tool_result"):
            out.messages.append(at.message)
    if isinstance(at, MessageEntry) and at.message.role == "assistant" and not at.message.tool_calls():
        out.reply = at
    return out


def as_verdict(e: VerdictEntry) -> Verdict:
    """Return a stored verdict entry as a :class:`~durable_nb.evals.Verdict`."""
    return Verdict(
        passed=bool(e.passed) and not e.error,
        score=e.score,
        reason=e.reason,
        grader=e.grader,
        error=e.error,
        model=e.model,
        tokens=e.tokens,
        judge_id=e.judge_id,
        entry_id=e.id,
    )
