"""One self-contained, read-only HTML page of a session: the widget, with its data inside.

    from durable_nb.share.page import page_html
    Path("session.html").write_text(page_html(agent))

The page runs the widget's own front end against a read-only stand-in for
anywidget's model: ``static/export.js`` (the bundle of ``js/widget/src/export.ts``,
the widget inside) and ``widget.css``, inlined; so it has the same tree, views, details panel,
keyboard and branch navigation as the live widget, from ``file://`` with no
network and no kernel. The lines and views are what
:class:`~durable_nb.widget.SessionWidget` would send (:func:`~durable_nb.widget.tree_line`,
:func:`~durable_nb.widget.views_at`), computed here once per embedded entry.

Bounded cost: a view at an entry costs O(its depth), so views are embedded
for as many entries as :data:`VIEW_BUDGET` allows, in this order: the leaf,
the branch tips, the active path up from the leaf, then the rest from the
newest. Every entry's details are always embedded; selecting an entry whose
views were left out says so. Items shared by many views are stored once.

Safety: the page carries a Content-Security-Policy that allows only its own
inline script and style (no request of any kind: images, fetches, fonts,
frames); the data is JSON in a ``<script type="application/json">`` block
with every ``<`` escaped; the front end puts every string in through
``textContent``. Without script, a ``<noscript>`` holds the static fallback
(:mod:`durable_nb.widget.fallback`). A session with evaluation runs shows the newest one's grid
(:mod:`durable_nb.evals.grid`) in the Evaluation tab and in the fallback.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html import escape
from typing import Any

from ..cost import tally
from ..evals import latest_grid
from ..session import MessageEntry, codec, elided_count, is_ephemeral
from ..widget import VIEW_LIMIT, agent_layout, cost_text, elide_blobs, fallback, tree_line, views_at
from ..widget.assets import built
from ..widget.chips import Chips
from ..widget.encoding import entry_title
from ..widget.listing import facts, noted, timeline
from ..widget.tree import leaf_shown
from ..widget.views import at_shown_leaf

VIEW_BUDGET = 200_000  # path entries walked (sum of depths) to embed views: about 1 s here, and all of a few-hundred-entry session
CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
PAGE_CSS = """
body { margin: 16px; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 13px; }
.dnb-page-head { margin: 0 0 8px; color: #555; }
@media (prefers-color-scheme: dark) { body { background: #1e1e1e; color: #e6e6e6; } .dnb-page-head { color: #aaa; } }
"""


def _script_safe(source: str, name: str) -> str:
    """Return ``source`` (a front-end file) unchanged; raise if it could end its ``<script>``/``<style>`` early."""
    if re.search(r"</(script|style)|<!--", source, re.I):
        raise ValueError(f"{name} contains '</script', '</style' or '<!--': it cannot be inlined")
    return source


def _json_in_html(value: Any) -> str:
    """Return ``value`` as JSON that is safe inside ``<script type="application/json">`` (no ``<``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def view_order(agent: Any) -> list[str]:
    """Return the entry ids in the order their views are embedded: the leaf, the branch tips
    (newest first), the active path up from the leaf, then every other entry from the newest. O(n)."""
    entries = agent.entries()
    has_child = {e.parent_id for e in entries if e.parent_id and not is_ephemeral(e)}
    tips = [e.id for e in reversed(entries) if e.id not in has_child and not is_ephemeral(e)]
    path = [e.id for e in reversed(agent.path())]
    shown = leaf_shown(agent)
    order = dict.fromkeys([x for x in (shown, agent.leaf_id) if x])
    for ids in (tips, path, [e.id for e in reversed(entries)]):
        order.update(dict.fromkeys(ids))
    return list(order)


def page_data(agent: Any, budget: int = VIEW_BUDGET, limit: int = VIEW_LIMIT) -> dict[str, Any]:
    """Return what the page embeds for ``agent``: ``state`` (the widget's traits: ``tree``, leaf,
    view, ...), ``lines`` (every line of the tree as the widget's page fetches them, with the
    active path of the exported leaf; ``static/export.js`` answers the page's requests from them),
    ``items`` (each distinct view item and entry, once), ``views`` (``{id: [model
    refs, model total, transcript refs, transcript total, depth, elided count, cost]}`` for the
    embedded entries),
    ``entries`` (``{id: full encoding}`` of every entry, blobs elided, with its details' ``title``) and ``notes``.

    Views are embedded in :func:`view_order` while the sum of the depths stays within
    ``budget`` (the leaf's always). Cost: O(n) + O(budget + embedded entries * ``limit``).
    """
    entries = agent.entries()
    items: list[Any] = []
    interned: dict[int, int] = {}
    memo: dict = {}  # views_at gives the same dict for the same item, and keeps it alive

    def ref(item: dict[str, Any]) -> int:
        if id(item) not in interned:
            interned[id(item)] = len(items)
            items.append(item)
        return interned[id(item)]

    by_id = {e.id: e for e in entries}
    depth: dict[str, int] = {}
    for e in entries:  # parents come before children in a log; anything else is walked
        depth[e.id] = depth[e.parent_id] + 1 if e.parent_id in depth else len(agent.path(e.id))
    views: dict[str, list[Any]] = {}
    spent = 0
    for at in view_order(agent):
        if views and spent + depth[at] > budget:
            continue
        spent += depth[at]
        path = agent.path(at)
        v, _ = views_at(path, at, False, limit, agent.session_id, memo)
        views[at] = [
            [ref(m) for m in v["model"]],
            v["model_total"],
            [ref(t) for t in v["transcript"]],
            v["transcript_total"],
            v["depth"],
            elided_count(path),  # the widget's `elided` when the page's leaf moves here
            v["cost"],
        ]
    lay = agent_layout(agent)
    chips = Chips.of(entries)
    path = agent.path()
    elided = elided_count(path)
    elided_ids = {e.id for e in path[:elided]}
    shown = leaf_shown(agent)
    leaf_line = lay.position(shown) if shown else -1
    state = {
        "session_id": agent.session_id,
        "tree": {"rev": 1, "lines": len(lay), "entries": len(entries), "changed_from": 0, "leaf_line": leaf_line},
        "leaf_id": agent.leaf_id,
        "elided": elided,
        "selected_id": "",
        "view": "tree",
        "view_limit": limit,
        "views": {},
        "error": "",
        "labels": agent.labels(),
        "session_cost": cost_text(tally(e.message for e in entries if isinstance(e, MessageEntry))),
        "evaluation": latest_grid(entries, agent.session_id),  # the newest evaluation run's grid ({}: none)
    }
    return {
        "state": state,
        "lines": [tree_line(agent, lay, i, elided_ids, chips) for i in lay.lines],
        "items": items,
        "views": views,
        "entries": {i: {**elide_blobs(codec.encode(e)), "title": entry_title(e)} for i, e in by_id.items()},
        "shown_leaf": shown,  # the leaf badge's entry (the leaf stepped up over a label)
        "facts": [_facts(by_id[i], chips) if i else {} for i in lay.lines],  # per line, for the List panel
        "timeline": timeline(agent),
        "notes": {
            "missing": f"The views at {{id}} are not in this page (it holds them at {len(views)} of {len(entries)} "
            "entries: the leaf, the branch tips and the active path first). The details below are complete.",
            "limit": f"This page holds the last {limit} items of each view.",
        },
    }


def _facts(e: Any, chips: Chips) -> dict[str, Any]:
    f = {**facts(e), **noted(chips, e.id)}
    return {k: v for k, v in f.items() if not (v is None or v is False or v in ("", []) or (k == "tokens" and v == 0))}


def page_html(agent: Any, source: str = "", budget: int = VIEW_BUDGET) -> str:
    """Return one self-contained HTML page showing ``agent``'s session read-only (see the module doc).

    ``source`` (a file or store the session came from) is named in the page's
    header. Raises ``ValueError`` if a front-end file cannot be inlined (it
    holds ``</script``). Cost: :func:`page_data`.
    """
    data = page_data(agent, budget)
    leaf = agent.leaf_id
    static = dict(
        data["state"],
        views=at_shown_leaf(views_at(agent.path(), leaf, True, VIEW_LIMIT, agent.session_id)[0], agent),
        lines=data["lines"],
        line_count=len(data["lines"]),
        shown_leaf=data["shown_leaf"],
        entry_count=len(agent.entries()),
    )
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = (
        f"<b>durable_nb</b> session <code>{escape(agent.session_id)}</code> · {len(agent.entries())} entries · "
        f"exported {when}{' from ' + escape(source) if source else ''} · read-only page"
    )
    export_js = _script_safe(built("export.js"), "export.js")
    css = _script_safe(built("widget.css"), "widget.css")
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>durable_nb session {escape(agent.session_id)}</title>\n"
        f"<style>{PAGE_CSS}\n{css}</style>\n"
        "</head><body>\n"
        f'<p class="dnb-page-head">{head}</p>\n'
        '<div id="dnb-root"></div>\n'
        f"<noscript>{fallback.html(static)}</noscript>\n"
        f'<script type="application/json" id="dnb-data">{_json_in_html(data)}</script>\n'
        f'<script type="module">\n{export_js}\n</script>\n'
        "</body></html>\n"
    )
