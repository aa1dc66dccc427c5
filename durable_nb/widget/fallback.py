"""The static fallback of a session widget: HTML that needs no kernel and no script.

    from durable_nb.widget import fallback
    fallback.html(state)    # the tree, active path, branch markers; model and transcript views
    fallback.text(state)    # a few lines for text/plain

``state`` is :meth:`SessionWidget._static_state() <durable_nb.widget.SessionWidget>`:
what the widget syncs (``session_id``, ``leaf_id``, ``views``) plus ``lines`` (the
tree's first and last lines, each as the page fetches it: ``row``, ``depth``,
``mark``, ``kids``, ``on``, ``elided``), ``line_count`` and ``entry_count``, so the
static page shows exactly the lines and views the live widget draws, computed
once in Python (:class:`~durable_nb.widget.layout.Layout`, :func:`~durable_nb.widget.row`,
:func:`~durable_nb.widget.views_at`).
Nothing here runs script, loads a URL or trusts a string: every value from the
session goes through :func:`html.escape`; the only markup is this module's own
(tables, ``<details>``, ``<code>``, inline styles that renderers may strip).
Sizes are bounded: the tree shows its first and last :data:`ROWS` lines with a
count of the rest, a view shows what the widget's ``views`` hold (its last
items, with a count of the earlier ones), a text block at most
:data:`TEXT_CHARS` characters.
"""

from __future__ import annotations

import json
from typing import Any

from .. import ai
from ..durable.mcp import provenance_line
from ..evals import grid
from ..session.kinds import bookkeeping_kinds
from ..session.labels import by_target
from .encoding import START_ROW as START
from .escape import clip
from .escape import text as _e
from .layout import Layout

ROWS = 30  # tree lines shown at each end of a big session
TEXT_CHARS = 4000  # characters of one text block shown
MAX_INDENT = 16  # deeper branches are drawn at this indent (as in the widget)
PLAIN_LINES = 6  # transcript lines in text/plain
# each view's last items in the display's fallback when a page that saves the whole one is attached
# (durable_nb.notebook.page: the first paint; nbconvert and pages without the extension get it whole)
LIVE_ITEMS = 12

_TD = "text-align:left;vertical-align:top"  # notebook themes right-align table cells
_MONO = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace"
_PRE = "white-space:pre-wrap;word-break:break-word;margin:2px 0"


def _short(entry_id: str) -> str:
    return entry_id[:8] if entry_id else "—"


def layout(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int, str]]:
    """Return the tree of ``rows`` (dicts with ``id``, ``parent_id``, ``created_at``, maybe ``injected``
    or ``aside``) as ``(row, depth, mark)`` lines in the order the widget draws them
    (:class:`~durable_nb.widget.layout.Layout` decides it, siblings in :func:`~durable_nb.session.sort_siblings`
    order; the START row is :data:`START`; rows of a bookkeeping kind, a label or a leaf move, are left out). O(n)."""
    by_id: dict[str, dict[str, Any]] = {}
    hidden = bookkeeping_kinds()  # kinds never drawn as rows (labels, verdicts, annotations, leaf moves)
    for r in rows:
        by_id.setdefault(r["id"], r)
    lay = Layout.build(
        [r["id"] for r in rows],
        [r.get("parent_id") or "" for r in rows],
        [r.get("injected") == "ephemeral" or bool(r.get("aside")) for r in rows],
        [r.get("type") == "custom" and r.get("kind") in hidden for r in rows],
        [str(r.get("created_at") or "") for r in rows],
    )
    return [(by_id[i] if i else START, *lay.info(i)) for i in lay.lines]


def last_items(views: dict[str, Any], n: int) -> dict[str, Any]:
    """Return ``views`` with each view's list cut to its last ``n`` items (the totals unchanged, so the
    fallback says how many earlier ones it leaves out). O(n)."""
    out = dict(views)
    for k in ("model", "transcript"):
        items = views.get(k) or []
        out[k] = items[-n:] if n > 0 else []
        out[f"{k}_total"] = views.get(f"{k}_total") or len(items)
    return out


def bundle(state: dict[str, Any], view_items: int | None = None) -> dict[str, str]:
    """Return the ``text/plain`` and ``text/html`` of ``state``; with ``view_items``, of each view's
    last that many items (the short fallback, :data:`LIVE_ITEMS`). O(ROWS + view size)."""
    if view_items is not None:
        state = {**state, "views": last_items(state["views"], view_items)}
    return {"text/plain": text(state), "text/html": html(state)}


def _badge(text: str) -> str:
    return f'<code style="{_MONO}">[{_e(text)}]</code>'


def _label(r: dict[str, Any]) -> str:
    if r.get("type") == "message":
        return r.get("role", "")
    if r.get("type") == "custom":
        return f"custom · {r.get('kind') or '?'}"
    return r.get("type", "")


def chip_text(chip: dict[str, Any]) -> str:
    """Return a chip (:mod:`durable_nb.widget.chips`) as one line: ``pass · exact`` / ``fail · judge · 0.2``
    for a verdict, ``★ 0.5 #wrong-tool · ana: the note`` for an annotation (the latest of its author; ``×2``
    when it corrects an earlier one). O(size of the chip)."""
    more = f" ×{chip['count']}" if chip.get("count", 1) > 1 else ""
    if chip.get("kind") == "verdict":
        score = f" · {chip['score']:g}" if isinstance(chip.get("score"), (int, float)) else ""
        shown = "error" if chip.get("error") else "pass" if chip.get("passed") else "fail"
        return f"{shown} · {chip.get('grader') or 'grader'}{score}{more}"
    parts = [f"★ {chip['score']:g}"] if isinstance(chip.get("score"), (int, float)) else []
    parts += [f"#{t}" for t in chip.get("tags") or ()]
    who = f" · {chip['by']}" if chip.get("by") else ""
    note = f": {clip(str(chip['note']), 80)}" if chip.get("note") else ""
    return f"{' '.join(parts) or 'note'}{who}{note}{more}"


def _injection(d: dict[str, Any]) -> str:
    inj = d.get("injected")
    if not inj:
        return ""
    shown = ai.shown_origin(d.get("origin"))
    return _badge(f"{inj} · {shown}" if shown else inj)


def _lanes(line: dict[str, Any]) -> str:
    """Return the lanes before a line's dot as text, as the widget draws them (its ``rails``,
    :meth:`~durable_nb.widget.layout.Layout.rails`): ``│`` where a lane runs on, ``├``/``└`` at a
    branch's own level (``┄`` after it for an ephemeral entry or an aside). A line without
    ``rails`` (an older saved state) draws ``│`` at every level. O(levels)."""
    depth, mark = line["depth"], line["mark"]
    own = mark in ("branch", "eph")
    rails = line.get("rails")
    if rails is None:
        lead = {"branch": "└ ", "eph": "┄ "}.get(mark, "")
        return "│ " * min(depth - bool(lead), MAX_INDENT) + lead
    rails = rails[-MAX_INDENT:]
    out = ["  "] * (min(depth, MAX_INDENT) - len(rails))
    for i, on in enumerate(rails):
        if i == len(rails) - 1 and own:
            out.append(("├" if on else "└") + ("┄" if mark == "eph" else " "))
        else:
            out.append("│ " if on else "  ")
    return "".join(out)


def _tree_line(line: dict[str, Any], leaf: str, names: dict[str, list[str]]) -> str:
    r, depth, on = line["row"], line["depth"], line.get("on", False)
    glyph = _lanes(line) + ("◇" if r.get("aside") else "●" if on else "○")
    badges = [_badge(f"# {n}") for n in names.get(r["id"], [])]
    badges.append(_injection(r))
    if r["id"] == leaf:
        badges.append(_badge("leaf"))
    badges += [_badge(chip_text(c)) for c in line.get("chips") or ()]
    if line.get("kids", 0) > 1:
        badges.append(_badge(f"{line['kids']} branches"))
    if line.get("elided"):
        badges.append(_badge("elided by compaction"))
    if depth > MAX_INDENT:
        badges.append(_badge(f"depth {depth}"))
    if r.get("tools"):
        badges.append(_badge("calls " + ", ".join(map(str, r["tools"]))))
    if r.get("tool_call_id"):
        badges.append(_badge("result · error" if r.get("is_error") else "result"))
    if r.get("reminders"):
        badges.append(_badge(f"+{r['reminders']} reminder"))
    if r.get("attachments"):
        badges.append(_badge(", ".join(map(str, r["attachments"]))))
    if r.get("tokens"):
        tin, tout = r["tokens"]
        badges.append(_badge(f"{tin:,} in / {tout:,} out · {r.get('cost', '')}"))
    text = r.get("preview", "")
    if r.get("type") == "compaction":
        el = r.get("elides")
        span = f"elides {el[2]} entries {_short(el[0])}…{_short(el[1])}" if el else "elides nothing"
        text = f"{span} · ~{r.get('tokens_before') or 0} tokens · {text}"
    label = _e(_label(r))
    label = f"<b>{label}</b>" if on else label
    return (
        f'<tr data-id="{_e(r["id"])}" title="{_e(r["id"])} · {_e(r.get("created_at", ""))}">'
        f'<td style="white-space:pre;{_TD};{_MONO}">{_e(glyph)}</td>'
        f'<td style="{_TD}">{label} {" ".join(b for b in badges if b)}</td>'
        f'<td style="{_TD}">{_e(text)}</td></tr>'
    )


def tree_html(
    lines: list[dict[str, Any]],
    leaf_id: str,
    limit: int = ROWS,
    count: int | None = None,
    labels: dict[str, str] | None = None,
) -> str:
    """Return the tree as an HTML table: its first and last ``limit`` lines, a count of the rest.

    ``lines`` are the tree's lines as the widget's page fetches them (see the module doc):
    all of them, or the first and last ones of ``count``. Active-path rows are bold with
    ``●`` (others ``○``); the leaf, branch points, injected entries, compaction ranges, tool
    calls and results, label names (``labels``: ``{name: entry id}``) and replies' tokens and
    cost carry text badges. O(limit + labels).
    """
    names = by_target(labels or {})
    count = len(lines) if count is None else count
    shown: list[dict[str, Any] | None] = (
        [*lines] if count <= 2 * limit and len(lines) == count else [*lines[:limit], None, *lines[-limit:]]
    )
    body = []
    for line in shown:
        if line is None:
            body.append(
                f'<tr><td colspan="3" style="{_TD}"><i>… {count - 2 * limit} more entries not shown …</i></td></tr>'
            )
        else:
            body.append(_tree_line(line, leaf_id, names))
    return f'<table class="dnb-static-tree">{"".join(body)}</table>'


def blocks_html(blocks: list[dict[str, Any]], for_model: bool) -> str:
    """Return content blocks (as the codec encodes them) as escaped HTML.

    Text as pre-wrapped text (at most :data:`TEXT_CHARS` characters);
    reminder blocks marked (``model only`` in the model view); tool calls as
    name, id and JSON arguments; thinking in a closed ``<details>``; images
    and files as a one-line description (never fetched or decoded).
    """
    out = []
    for b in blocks or []:
        t = b.get("type")
        if t == "text":
            out.append(f'<div style="{_PRE}">{_e(clip(b.get("text", ""), TEXT_CHARS))}</div>')
        elif t == "reminder":
            tag = "reminder block · model only" if for_model else "reminder block"
            out.append(f'<div>{_badge(tag)}<div style="{_PRE}">{_e(clip(b.get("text", ""), TEXT_CHARS))}</div></div>')
        elif t == "tool_call":
            args = json.dumps(b.get("arguments") or {}, ensure_ascii=False, indent=2, default=str)
            call = _badge(f"tool call · {b.get('name', '')} · {b.get('id', '')}")
            out.append(f'<div>{call}<pre style="{_PRE}">{_e(clip(args, TEXT_CHARS))}</pre></div>')
        elif t == "thinking":
            text = b.get("text") or ("(redacted)" if b.get("redacted") else "")
            out.append(
                f'<details><summary>thinking</summary><div style="{_PRE}">{_e(clip(text, TEXT_CHARS))}</div></details>'
            )
        else:
            size = f", {b['bytes']} bytes" if b.get("bytes") is not None else ""
            name = f" {b['name']}" if b.get("name") else ""
            mime = b.get("mime_type") or ""
            out.append(f"<div>{_e(f'[{t}{name} {mime}{size}] (not displayed)')}</div>")
    return "".join(out)


def _earlier(shown: int, total: int) -> str:
    return f"<p><i>{total - shown} earlier not shown</i></p>" if total > shown else ""


def model_html(views: dict[str, Any]) -> str:
    """Return the model view items of ``views`` as HTML cards (numbered as in the whole view)."""
    items = views.get("model") or []
    total = views.get("model_total") or len(items)
    out = [_earlier(len(items), total)]
    for i, m in enumerate(items, start=total - len(items) + 1):
        head = [f"<b>{i} {_e(m.get('role', ''))}</b>", _injection(m)]
        if not m.get("entry_id"):
            synth = str(m.get("origin") or "").startswith("compaction:")
            head.append(_badge("compaction summary" if synth else "synthesized"))
        elif not m.get("injected") and m.get("origin"):
            head.append(_badge(m["origin"]))
        if m.get("tool_call_id"):
            head.append(_badge(f"result for {m['tool_call_id']}" + (" · error" if m.get("is_error") else "")))
        head += [_badge(f"MCP {line}") for line in _servers(m) if line]
        if m.get("entry_id"):
            head.append(f'<code style="{_MONO}">{_e(_short(m["entry_id"]))}</code>')
        out.append(_card(" ".join(h for h in head if h), blocks_html(m.get("content") or [], True)))
    return "".join(out)


def _servers(m: dict[str, Any]) -> list[str]:
    """The MCP provenance lines of a message (its own record, a result's; its calls', an assistant's), once each."""
    records = [m.get("mcp"), *(b.get("mcp") for b in m.get("content") or [] if b.get("type") == "tool_call")]
    return list(dict.fromkeys(provenance_line(r) for r in records if r))


def transcript_html(views: dict[str, Any]) -> str:
    """Return the transcript view items of ``views`` as HTML cards."""
    items = views.get("transcript") or []
    total = views.get("transcript_total") or len(items)
    out = [_earlier(len(items), total)]
    for t in items:
        kind = t.get("type")
        label = t.get("role") if kind == "message" else f"custom · {t.get('kind')}" if kind == "custom" else kind
        head = f'<b>{_e(label)}</b> <code style="{_MONO}">{_e(_short(t.get("id", "")))}</code>'
        if kind == "custom" and t.get("readable"):  # a kind that says how it reads: that, its record folded
            body = f'<div style="{_PRE}">{_e(clip(t.get("text", ""), TEXT_CHARS))}</div>'
            if t.get("data"):
                body += f'<details><summary>record</summary><pre style="{_PRE}">{_e(t["data"])}</pre></details>'
        elif kind == "custom":
            body = f'<pre style="{_PRE}">{_e(t["data"])}</pre>' if t.get("data") else ""
        elif t.get("text"):
            text = f"Summary: {t['text']}" if kind == "compaction" else t["text"]
            body = f'<div style="{_PRE}">{_e(clip(text, TEXT_CHARS))}</div>'
        else:
            body = "<i>(no text)</i>"
        out.append(_card(head, body))
    if not items:
        out.append("<p><i>Nothing for a reader here.</i></p>")
    return "".join(out)


def _card(head: str, body: str) -> str:
    return f'<div style="border-left:3px solid #8888;padding:2px 8px;margin:6px 0"><div>{head}</div>{body}</div>'


def header(state: dict[str, Any]) -> str:
    """Return the one-line description of a widget state, e.g.
    ``session 'demo' · 14 entries · leaf 1a2b3c4d (depth 9)``."""
    n = state.get("entry_count", 0)
    leaf = state.get("shown_leaf") or state.get("leaf_id") or ""
    depth = (state.get("views") or {}).get("depth")
    where = f"leaf {_short(leaf)}" + (f" (depth {depth})" if depth is not None and leaf else "")
    ro = f"read-only copy of {state['read_only']} · " if state.get("read_only") else ""
    return f"{ro}session {state.get('session_id', '')!r} · {n} entries · {where if leaf else 'empty'}"


def html(state: dict[str, Any], limit: int = ROWS) -> str:
    """Return the static fallback of a widget state: one self-contained HTML fragment, no script.

    A header (session id, entry count, leaf), the tree (:func:`tree_html`),
    then ``<details>`` sections: the evaluation grid when the state holds one
    (:mod:`durable_nb.evals.grid`), the transcript view (open), the model view,
    both at the entry the views are at (the leaf when following it). Every
    string from the session is escaped. O(limit), plus the size of the views.
    """
    views = state.get("views") or {}
    at = views.get("at") or ""
    where = f"{_short(at)}{' (leaf)' if views.get('following_leaf') else ''}" if at else "(empty)"
    lines = state.get("lines") or []
    count = state.get("line_count", len(lines))
    ev = state.get("evaluation") or {}
    grid_html = (
        f"<details open><summary>Evaluation grid: {_e(ev['run'])}</summary>{grid.html(ev)}</details>" if ev else ""
    )
    return (
        '<div class="dnb-static">'
        f"<p><b>durable session</b> {_e(header(state))} · <i>a saved snapshot: run the notebook for the live widget</i></p>"
        f"{grid_html}"
        f"<details open><summary>Tree ({state.get('entry_count', 0)} entries; ● active path)</summary>{tree_html(lines, state.get('shown_leaf') or state.get('leaf_id') or '', limit, count, state.get('labels'))}</details>"
        f"<details open><summary>Transcript view at {_e(where)}: what a person reads ({views.get('transcript_total', 0)} entries)</summary>"
        f"{transcript_html(views)}</details>"
        f"<details><summary>Model view at {_e(where)}: what the model receives ({views.get('model_total', 0)} messages)</summary>"
        f"{model_html(views)}</details>"
        "</div>"
    )


def text(state: dict[str, Any], lines: int = PLAIN_LINES) -> str:
    """Return the plain-text fallback: the header line, then the evaluation grid when the state holds one,
    else the last ``lines`` items of the transcript view at the leaf, one line each (role: preview)."""
    views = state.get("views") or {}
    items = (views.get("transcript") or [])[-lines:]
    total = views.get("transcript_total") or len(items)
    out = [f"durable session widget · {header(state)}"]
    if state.get("evaluation"):
        return "\n".join([*out, grid.text(state["evaluation"])])
    if total > len(items):
        out.append(f"  … {total - len(items)} earlier transcript entries")
    for t in items:
        who = t.get("role") or (f"custom · {t.get('kind')}" if t.get("type") == "custom" else t.get("type"))
        line = " ".join(str(t.get("text") or "").split())
        out.append(f"  {who}: {line[:100] + '…' if len(line) > 100 else line}")
    return "\n".join(out)
