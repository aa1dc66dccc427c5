"""Sessions as pandas data frames: :func:`frame` (one row per entry) and :func:`annotations`.

Needs the ``frames`` extra (``pip install 'durable_nb[frames]'``: pandas and
pyarrow). The columns are fixed (:data:`COLUMNS`, then :data:`EXTRAS`); the
frame is built column-wise (a list per column, one pandas construction), so
it costs about as much again as loading the entries (benchmarks/frame_bench.py).
Pure; imports nothing from Jupyter.
"""

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .ai import Text, ToolCall
from .cost import priced_tokens
from .errors import DurableError
from .kinds import text as kind_text
from .kinds.annotation import AnnotationEntry
from .session import CompactionEntry, CustomEntry, MessageEntry, display_text, entry_kind
from .session.labels import names_by_target
from .sources import Session, read

if TYPE_CHECKING:
    import os

    import pandas as pd

    from .session import Store

COLUMNS = (
    "session_id", "id", "parent_id", "type", "kind", "role", "injected", "origin", "text", "tool_name",
    "is_error", "model", "input_tokens", "output_tokens", "cost_usd", "created_at", "on_active_path", "labels",
)  # fmt: skip
EXTRAS = ("source",)  # the log file a session was read from, else the store it is in
ANNOTATION_COLUMNS = (
    "session_id", "id", "target_id", "note", "score", "tags", "by", "created_at", "latest", "source",
)  # fmt: skip


def pandas() -> Any:
    """Return the pandas module; raises :class:`DurableError` naming the ``frames`` extra when pandas
    or pyarrow is missing."""
    try:
        import pandas as pd
        import pyarrow  # noqa: F401 - the frame's string and list columns are Arrow's
    except ImportError as e:
        raise DurableError(
            f"durable_nb.frame needs pandas and pyarrow ({e.name} is missing): pip install 'durable_nb[frames]'"
        ) from None
    return pd


def frame(source: object, *, sessions: str | Iterable[str] | None = None) -> "pd.DataFrame":
    """Return one row per entry of ``source``'s sessions (``sessions``: only those ids), in :data:`COLUMNS`
    order, then :data:`EXTRAS`.

    ``source``: an Agent, a Store, a store string, a log file or a folder of
    logs (:func:`durable_nb.sources.read`). ``type`` is the entry's shape
    (``message``, ``compaction``, ``custom``), ``kind`` what listings call it
    (:func:`~durable_nb.session.entry_kind`); ``tool_name`` the tool a result
    answers, or the tools an assistant reply calls (comma-separated);
    ``input_tokens`` / ``output_tokens`` are nullable integers (missing
    without usage), ``cost_usd`` a float, NaN where no price is known (never
    0); ``created_at`` a UTC datetime (NaT when the log has none); ``labels``
    the label names on the entry (a list). Rows are in each session's append
    order, sessions in the source's order. Raises :class:`DurableError` in
    one line for a source that is not a store or log, a session it lacks, or
    pandas missing. Cost: one load of each session, then O(entries).
    """
    pd = pandas()
    return _build(pd, read(source, sessions))


def _build(pd: Any, found: list[Session]) -> "pd.DataFrame":
    cols: dict[str, list[Any]] = {c: [] for c in (*COLUMNS, *EXTRAS)}
    sid, ids, parents, types, kinds = cols["session_id"], cols["id"], cols["parent_id"], cols["type"], cols["kind"]
    roles, injected, origins, texts, tools = (
        cols["role"],
        cols["injected"],
        cols["origin"],
        cols["text"],
        cols["tool_name"],
    )
    errors, models, inp, out, cost = (
        cols["is_error"],
        cols["model"],
        cols["input_tokens"],
        cols["output_tokens"],
        cols["cost_usd"],
    )
    created, active, labels, where = cols["created_at"], cols["on_active_path"], cols["labels"], cols["source"]  # fmt: skip
    nan, none, empty = math.nan, None, list[str]()
    no_calls: list[ToolCall] = []
    for s in found:
        named = names_by_target(e for e in s.entries if type(e) is not MessageEntry)
        on_path = s.on_path
        n = len(s.entries)
        sid += [s.session_id] * n
        where += [s.where] * n
        for e in s.entries:
            ids.append(e.id)
            parents.append(e.parent_id)
            created.append(e.created_at or none)
            active.append(on_path(e.id))
            labels.append(named.get(e.id, empty) if named else empty)
            if type(e) is MessageEntry:  # entry_kind inlined for messages: its injection, else its role
                m = e.message
                role = m.role
                how = none if m.injected is None else m.injected.value
                kinds.append(how or role)
                types.append("message")
                roles.append(role)
                injected.append(how)
                origins.append(m.origin)
                c = m.content
                texts.append(c[0].text if len(c) == 1 and type(c[0]) is Text else m.text())
                errors.append(m.is_error)
                models.append(m.model)
                if role == "assistant":
                    calls = m.tool_calls() if len(c) > 1 or (c and type(c[0]) is not Text) else no_calls
                    tools.append(", ".join(c.name for c in calls) if calls else none)
                    used = priced_tokens(m)
                    if used is None:
                        inp.append(none)
                        out.append(none)
                        cost.append(nan)
                    else:
                        inp.append(used[0])
                        out.append(used[1])
                        cost.append(nan if used[2] is None else float(used[2]))
                else:
                    tools.append(m.tool_name)
                    inp.append(none)
                    out.append(none)
                    cost.append(nan)
                continue
            kinds.append(entry_kind(e))
            types.append("compaction" if isinstance(e, CompactionEntry) else "custom")
            roles.append(none)
            injected.append(none)
            origins.append(none)
            texts.append(_text(e))
            tools.append(none)
            errors.append(False)
            models.append(none)
            inp.append(none)
            out.append(none)
            cost.append(nan)
    return _frame(pd, cols)


def _text(e: Any) -> str:
    if isinstance(e, CustomEntry):
        own = kind_text(e)
        if own is not None:
            return own
    return display_text(e)


_KINDS = {
    "input_tokens": "int64", "output_tokens": "int64", "score": "float64", "cost_usd": "float64",
    "is_error": "bool", "on_active_path": "bool", "latest": "bool", "labels": "list", "tags": "list",
    "created_at": "time",
}  # fmt: skip


def _times(pd: Any, values: list[str | None]) -> Any:
    """Parse RFC 3339 times to UTC: the agent's own format at C speed, anything else (no fraction,
    other offsets, garbage -> NaT) through pandas' ISO 8601 parser."""
    series = pd.Series(values, dtype=object)
    try:
        return pd.to_datetime(series, utc=True, format="%Y-%m-%dT%H:%M:%S.%f%z")
    except ValueError:
        return pd.to_datetime(series, utc=True, format="ISO8601", errors="coerce")


def _frame(pd: Any, cols: dict[str, list[Any]]) -> "pd.DataFrame":
    """One construction from the column lists: text, whole numbers and lists as Arrow arrays
    (``pd.ArrowDtype``: nullable, built in C), floats and booleans as NumPy, times parsed by pandas."""
    import numpy as np
    import pyarrow as pa

    data: dict[str, Any] = {}
    for name, values in cols.items():
        how = _KINDS.get(name, "string")
        if how == "time":
            data[name] = _times(pd, values)
        elif how in ("float64", "bool"):
            data[name] = np.array(values, dtype=how)
        else:
            t = {"string": pa.string(), "int64": pa.int64(), "list": pa.list_(pa.string())}[how]
            data[name] = pd.array(pa.array(values, type=t), dtype=pd.ArrowDtype(t))
    return pd.DataFrame(data)


def annotations(
    source: object,
    *,
    sessions: str | Iterable[str] | None = None,
    store: "Store | str | os.PathLike[str] | None" = None,
) -> "pd.DataFrame":
    """Return the annotations of ``source``'s sessions as a frame (:data:`ANNOTATION_COLUMNS`), one row
    per annotation in log order.

    ``latest`` is True for the latest annotation of each target (the one
    views show; earlier ones are kept). With ``store`` (a Store or store
    string), the annotations of read-only sources kept there in sidecar
    sessions (:func:`durable_nb.annotate`) are added after each source's own.
    Raises as :func:`frame` does. Cost: one load of each session read.
    """
    pd = pandas()
    from .sidecar import sidecar_entries

    cols: dict[str, list[Any]] = {c: [] for c in ANNOTATION_COLUMNS}
    for s in read(source, sessions):
        notes = [e for e in s.entries if isinstance(e, AnnotationEntry)]
        if store is not None and s.file:
            notes += sidecar_entries(store, s.file, s.session_id)
        last = {e.target_id: e.id for e in notes}
        for e in notes:
            for name, value in (
                ("session_id", s.session_id), ("id", e.id), ("target_id", e.target_id), ("note", e.note),
                ("score", math.nan if e.score is None else e.score), ("tags", list(e.tags)), ("by", e.by),
                ("created_at", e.created_at or None), ("latest", last[e.target_id] == e.id),
                ("source", e.source or s.where),
            ):  # fmt: skip
                cols[name].append(value)
    return _frame(pd, cols)
