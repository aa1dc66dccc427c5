"""Labels: names for entries (see :mod:`durable_nb.session.labels` for the entry and its rules).

A label entry is bookkeeping: its name is drawn as a chip on the entry it
names (from the session's labels: the latest label entry of a name wins),
never a row or a transcript line, never the leaf a person sees (the agent's
leaf moves onto it and the next turn hangs under it; a reader sees the
labelled chain go straight on). Listings read it as what it does (``label v1 →
<id>``). A replay leaves it out (it names the original's entries; the
replay labels its own end); a fork maps its target to the target's copy
(``""`` when the target is not copied: the copy names nothing).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..session.entry import CustomEntry
from ..session.kinds import Kind, register
from ..session.labels import LABEL_KIND, label_of, label_text


def _fork(copy: CustomEntry, ids: Mapping[str, str]) -> CustomEntry:
    named = label_of(copy)
    if named is not None:
        copy.data = {**copy.data, "target_id": ids.get(named[1], "")}
    return copy


def _target(entry: CustomEntry) -> str:
    named = label_of(entry)
    return named[1] if named is not None else ""


KIND = register(Kind(LABEL_KIND, shown="chip", text=label_text, replayed=False, fork=_fork, target=_target))
