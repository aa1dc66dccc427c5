"""Evaluation records: where an evaluation run and each of its pairs begin (see :mod:`durable_nb.evals`).

An ``eval`` entry is one of three ``role``\\ s, all naming the run (``run``):

- ``start``: hangs off the run's history (the pinned prefix); every pair's
  branch hangs off it. It holds the run's ``spec`` (template, variants, case
  count, history), its ``digest`` and its ``cases_digest`` (every case field).
- ``pair``: the first entry of one case × variant branch (``case``,
  ``variant``), stored with the pair's input in one commit.
- ``end``: hangs off the start record once every pair has a reply; the run
  is finished (immutable) from then on.

A row of the tree read as ``eval NAME: ...``; never sent to a model. A
replay leaves it out (it describes the original run); copied as it is.
"""

from __future__ import annotations

from ..session.entry import CustomEntry
from ..session.kinds import Kind, register

EVAL_KIND = "eval"


def _text(entry: CustomEntry) -> str:
    d = entry.data
    run, role = d.get("run", "?"), d.get("role", "")
    if role == "pair":
        return f"eval {run}: case {d.get('case')} × {d.get('variant_name') or d.get('variant')}"
    if role == "end":
        return f"eval {run}: finished"
    spec = d.get("spec") or {}
    return f"eval {run}: {spec.get('cases', '?')} cases × {len(spec.get('variants') or [])} variants"


KIND = register(Kind(EVAL_KIND, text=_text, replayed=False))
