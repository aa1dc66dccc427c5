"""The session browser: every session of a store (and other tools' logs) as a sortable table.

    from durable_nb.widget.browser import SessionBrowser
    SessionBrowser(store_digests(store), where=".durable", on_open=open_it)   # what %durable sessions shows

The front end (``static/browser.js``, ``static/browser.css``: its own esbuild bundle of
``js/widget/src/browser``) draws the rows Python synced (``rows``: :meth:`durable_nb.digests.Digest.row`)
and sorts them by the ``sort`` trait (a column, ``-`` first for descending), which the page sets.
A click on a row (or Enter) sends ``{"action": "open", "ref": ...}``: the kernel calls ``on_open(ref)``
and shows what it answered in ``status`` (``opened`` is the row's ref). Where no widget is drawn,
the output carries :func:`text` (what ``%durable sessions`` printed before it was a widget) and
:func:`html` (the same table, static, escaped, no script). Cost: O(rows) per sync and per fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anywidget
import traitlets

from ..digests import listing
from ..errors import DurableError
from ..importers.found import TOOLS, human_size
from .assets import front_end
from .escape import text as _e

_TD = "text-align:left;vertical-align:top;padding:2px 8px"
_NUM = "text-align:right;vertical-align:top;padding:2px 8px;font-variant-numeric:tabular-nums"


class SessionBrowser(anywidget.AnyWidget):
    """A table of sessions: ``digests`` (:class:`durable_nb.digests.Digest`), found in ``where``
    (shown in the header), ``current`` being the notebook's session. ``on_open(ref)`` opens a row
    and returns the line to show (raise :class:`DurableError` to show that instead)."""

    _esm = front_end("browser.js")
    _css = front_end("browser.css")

    rows: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)  # Digest.row() each
    where = traitlets.Unicode("").tag(sync=True)
    current = traitlets.Unicode("").tag(sync=True)
    sort = traitlets.Unicode("-last").tag(sync=True)
    opened = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        digests: Sequence[Any],
        *,
        where: str = "",
        current: str = "",
        on_open: Callable[[str], str] | None = None,
        **kwargs: Any,
    ) -> None:
        self._on_open = on_open
        super().__init__(rows=[d.row() for d in digests], where=where, current=current, **kwargs)
        self.on_msg(self._on_request)

    def _on_request(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Open the row a page asked for (``{"action": "open", "ref": ...}``); anything else is ignored."""
        if not isinstance(content, dict) or content.get("action") != "open":
            return
        self.open_row(str(content.get("ref", "")))

    def open_row(self, ref: str) -> None:
        """Open the row ``ref`` through ``on_open`` and show its answer (a ref not in the table, or
        an error: one line in ``status``, nothing opened)."""
        row = next((r for r in self.rows if r["ref"] == ref), None)
        if row is None:
            self.status = f"no row {ref!r} in this table"
            return
        if row["problem"]:
            self.status = f"{row['name']} cannot be read: {row['problem']}"
            return
        try:
            said = self._on_open(ref) if self._on_open is not None else f"%durable open {ref}"
        except DurableError as e:
            self.opened, self.status = "", str(e)
            return
        self.opened, self.status = ref, said

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """Return the widget view plus :func:`text` and :func:`html` for a renderer that draws no
        widget (nbconvert, GitHub, a terminal). O(rows)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        state = {"rows": self.rows, "where": self.where, "current": self.current}
        return {**data, "text/plain": text(state), "text/html": html(state)}, metadata

    def __repr__(self) -> str:
        return text({"rows": self.rows, "where": self.where, "current": self.current}).rstrip("\n")


def text(state: dict[str, Any]) -> str:
    """Return the listing :func:`durable_nb.digests.listing` writes for the rows of ``state``."""
    return listing(state["rows"], state["where"], state.get("current", ""))


def _cells(r: dict[str, Any], current: str) -> list[tuple[str, bool]]:
    """Return the row's cells as ``(text, numeric)``, as the page draws them."""
    tokens = ""
    if r["input_tokens"] is not None and (r["input_tokens"] or r["output_tokens"]):
        tokens = f"{r['input_tokens']:,} / {r['output_tokens']:,}"

    def num(v: int | None) -> str:
        return "" if v is None else f"{v:,}"

    mark = " (notebook)" if not r["read_only"] and r["ref"] == current else ""
    return [
        (r["name"] + mark, False),
        (num(r["entries"]), True),
        (num(r["turns"]), True),
        (num(r["branches"]), True),
        (", ".join(r["models"]), False),
        (tokens, True),
        (r["cost_text"], True),
        ((r["last"] or "")[:16].replace("T", " "), False),
        (human_size(r["size"]) if r["size"] is not None else "", True),
        (dict(TOOLS).get(r["tool"], r["tool"]) if r["read_only"] else "", False),
    ]


HEADERS = (
    "session",
    "entries",
    "turns",
    "branches",
    "models",
    "tokens in / out",
    "cost",
    "last activity",
    "size",
    "read-only",
)


def html(state: dict[str, Any]) -> str:
    """Return the table as static HTML (no script; every string escaped), newest activity first,
    with the ``%durable open`` line of each row. O(rows)."""
    rows = sorted(state["rows"], key=lambda r: r["last"] or "", reverse=True)
    head = "".join(f'<th style="{_TD}">{h}</th>' for h in HEADERS)
    body = []
    for r in rows:
        if r["problem"]:
            cells = f'<td style="{_TD}">{_e(r["name"])}</td><td colspan="9" style="{_TD}">unreadable: {_e(r["problem"])}</td>'
        else:
            cells = "".join(f'<td style="{_NUM if n else _TD}">{_e(t)}</td>' for t, n in _cells(r, state["current"]))
        body.append(f'<tr title="%durable open {_e(r["ref"])}">{cells}</tr>')
    own = sum(1 for r in rows if not r["read_only"])
    caption = f"{own} session(s) in {_e(state['where'])}" + (
        f" · {len(rows) - own} log(s) of other tools" if len(rows) > own else ""
    )
    return (
        f'<div class="dnb-browser-static"><div style="margin:2px 0 6px">{caption} · %durable open NAME opens one</div>'
        f'<table style="border-collapse:collapse;font-size:12px"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )
