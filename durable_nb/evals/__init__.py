"""Evaluate a prompt over cases × variants × graders, in the session tree, resumable, with a CI gate.

::

    from durable_nb import evals
    r = evals.run("Capital of {country}? One word.", [{"country": "France", "answer": "Paris"}],
                  variants=[{"model": "offline"}, {"model": "offline", "temperature": 1}],
                  graders=[evals.contains("{answer}")], store=".durable", session_id="capitals")
    r.pass_rate, r.results[0].verdicts, r.frame()          # frame() needs pandas: durable_nb[evals]

- ``prompt``: a template whose ``{field}`` (or ``{{field}}``) placeholders are
  filled from each case by the project's safe interpolation rules (a
  missing field is one error before any model call), or a function
  ``case -> list of entries`` (meta and ephemeral input too).
- ``cases``: a list of dicts, a pandas DataFrame, or a ``.jsonl`` / ``.csv`` path.
- ``history``: an entry id or label whose path every case continues from
  (multi-turn tests); default: the session's leaf.
- ``variants``: as a fan-out takes them (a model, or a dict of ``model``,
  ``system``, ``label`` and settings); default: the agent's model.
- ``graders``: callables ``(reply, case) -> bool | float | Verdict`` and the
  built-ins :func:`contains`, :func:`regex`, :func:`equals`,
  :func:`json_schema`, :func:`judge`.

In the session: a start record (custom entry, kind ``eval``) hangs off the
history; each pair is a sibling branch under it (a pair record, the input,
the reply); each verdict is a custom entry of kind ``verdict`` hanging off
the reply it grades (stored, never sent). A run is named (default: from
its spec) and resumable: a pair whose reply is stored is never sent again,
a grader added later grades stored replies without model calls, and every
verdict stored on the run counts (one a later run leaves out too: what
:func:`run` returns is what :func:`load` reads); a changed spec under a
used name is refused. Pure: imports nothing from Jupyter.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import DurableError
from ..session import Store
from ..session.locate import open_store
from .graders import Verdict, contains, equals, json_schema, judge, regex
from .results import Comparison, EvalResult, EvalRun, results_of
from .runner import run
from .stored import find_runs, read_run

__all__ = [
    "Comparison", "EvalResult", "EvalRun", "RunInfo", "Verdict", "contains", "equals", "json_schema", "judge",
    "load", "regex", "run", "runs",
]  # fmt: skip


@dataclass(frozen=True)
class RunInfo:
    """One run in a session: its ``name``, ``cases`` and ``variants`` counts, ``pairs`` replied so far,
    ``finished``, and when it started (``created_at``)."""

    name: str
    cases: int
    variants: int
    replied: int
    finished: bool
    created_at: str


def _entries(store: Store | str, session_id: str) -> list:
    s = open_store(store) if isinstance(store, str) else store
    return s.load_entries(session_id)


def load(store: Store | str, session_id: str, name: str) -> EvalRun:
    """Return evaluation run ``name`` of session ``session_id`` as stored (read only; no model call).

    ``store`` is a store or a store string. Raises :class:`DurableError` naming the runs the session has
    when it has no run ``name``, and ``SessionNotFound`` for an unknown session. O(entries).
    """
    entries = _entries(store, session_id)
    stored = read_run(entries, name)
    if stored is None:
        known = ", ".join(find_runs(entries)) or "none"
        raise DurableError(f"session {session_id!r} has no evaluation run {name!r} (runs there: {known})")
    out = results_of(stored)
    out.session_id = session_id
    return out


def latest_grid(entries: list, session_id: str = "") -> dict:
    """Return the grid (:func:`durable_nb.evals.grid.state`) of the newest run among a session's ``entries``
    (``{}``: none), as an exported page shows it. O(entries)."""
    from . import grid

    names = list(find_runs(entries))
    stored = read_run(entries, names[-1]) if names else None
    if stored is None:
        return {}
    run = results_of(stored)
    run.session_id = session_id
    return grid.state(run)


def runs(store: Store | str, session_id: str) -> list[RunInfo]:
    """Return the evaluation runs of session ``session_id``, in the order they started. O(entries)."""
    entries = _entries(store, session_id)
    out = []
    for name in find_runs(entries):
        r = read_run(entries, name)
        assert r is not None
        spec = r.spec
        replied = sum(1 for p in r.pairs.values() if p.reply is not None)
        out.append(RunInfo(name, int(spec.get("cases", 0)), len(spec.get("variant_names") or []), replied,
                           r.end is not None, r.start.created_at))  # fmt: skip
    return out
