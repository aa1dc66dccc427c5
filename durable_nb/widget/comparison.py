"""A comparison as the widget draws it, and its static forms (HTML with no script, plain text).

    from durable_nb.widget import comparison
    s = comparison.of(agent, ["A", "B"])     # JSON the widget's compare view draws
    comparison.html(s), comparison.text(s)   # for saved notebooks, terminals

``state`` holds, per side, its ref, ids, labels, model, settings, tokens, cost
and time, its reply, and the request's messages that a diff names plus the
last :data:`LAST`, at most :data:`SHOWN` of them (each as role, injection and
text lines, so no image or file bytes travel); per diff, what changed (every
change; the text and HTML forms list the first :data:`CHANGES`). Nothing here runs script or trusts a
string: every value from the session goes through :func:`html.escape`.
"""

from __future__ import annotations

from typing import Any

from .. import ai
from ..cost import Tally, format_cost, format_tally
from ..durable.comparison import Comparison, Side
from .escape import clip
from .escape import text as _e

LAST = 6  # the request's last messages shown on each side, besides those a diff names
SHOWN = 40  # messages shown per side at most: the first ones a diff names, then the last LAST
CHANGES = 40  # changes of one diff the text and HTML forms list (a count says how many more)
TEXT_CHARS = 2000  # characters of one message's text shown


def message_state(m: ai.Message) -> dict[str, Any]:
    """Return a message as the compare view shows it: ``role``, ``injected``, ``origin``,
    ``text`` (every block as :func:`~durable_nb.ai.describe_block` writes it, one per line,
    cut to :data:`TEXT_CHARS`), and ``tool_call_id`` / ``is_error`` for a tool result."""
    d: dict[str, Any] = {"role": m.role, "text": clip("\n".join(ai.describe_block(b) for b in m.content), TEXT_CHARS)}
    if m.injected is not None:
        d["injected"] = m.injected.value
    if m.origin:
        d["origin"] = m.origin
    if m.tool_call_id:
        d["tool_call_id"] = m.tool_call_id
    if m.is_error:
        d["is_error"] = True
    return d


def _tally_state(t: Tally) -> dict[str, Any]:
    return {
        "input_tokens": t.input_tokens,
        "output_tokens": t.output_tokens,
        "reported": t.reported,
        "cost": format_cost(t.cost),
        "summary": format_tally(t),
    }


def _side_state(s: Side, shown: set[int], labels: list[str]) -> dict[str, Any]:
    n = len(s.messages)
    last = set(range(max(0, n - LAST), n))
    named = sorted(shown - last)[: max(0, SHOWN - len(last))]
    keep = sorted(last | set(named))
    return {
        "ref": s.ref,
        "entry_id": s.entry_id,
        "reply_id": s.reply_id,
        "labels": labels,
        "model": s.model,
        "settings": s.settings,
        "total_ms": s.total_ms,
        "created_at": s.created_at,
        "system": s.system,
        "messages": [{"i": i, **message_state(s.messages[i])} for i in keep],
        "message_total": n,
        "reply": message_state(s.reply) if s.reply is not None else None,
        "cost": _tally_state(s.cost) if s.reply is not None else None,
        "branch_cost": _tally_state(s.branch_cost),
    }


def state(c: Comparison, labels: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Return the JSON-ready comparison the widget's compare view draws (see the module docs).

    ``labels`` maps entry ids to their label names (shown beside each side).
    ``sides[i]["messages"]`` carry their index ``i`` in the request;
    ``diffs[k]`` compares side ``a`` with side ``b`` (``a`` is 0): ``messages``
    as ``{"op", "a", "b"}``, ``same``, and ``system`` / ``model`` as
    ``[a's, b's]`` or ``None``, ``settings`` as ``{key: [a's, b's]}``.
    O(size of the messages shown).
    """
    labels = labels or {}
    shown: list[set[int]] = [set() for _ in c.sides]
    for d in c.diffs:
        for ch in d.messages:
            if ch.a is not None:
                shown[d.a].add(ch.a)
            if ch.b is not None:
                shown[d.b].add(ch.b)
    return {
        "sides": [_side_state(s, shown[i], labels.get(s.entry_id, [])) for i, s in enumerate(c.sides)],
        "diffs": [
            {
                "a": d.a,
                "b": d.b,
                "same": d.same,
                "messages": [{"op": ch.op, "a": ch.a, "b": ch.b} for ch in d.messages],
                "system": list(d.system) if d.system else None,
                "model": list(d.model) if d.model else None,
                "settings": {k: list(v) for k, v in d.settings.items()},
            }
            for d in c.diffs
        ],
    }


def of(agent: Any, refs: list[str]) -> dict[str, Any]:
    """Return :func:`state` of the entries ``refs`` names in ``agent`` (ids, labels, id prefixes; see
    :func:`durable_nb.durable.compare`), each side with its labels. ``DurableError`` (one line) for
    fewer than two refs or one that names no entry. O(the paths' depths + the diffs + the log, for labels)."""
    from ..durable import compare
    from ..session.labels import names_by_target

    return state(compare(agent, *refs), names_by_target(agent.entries()))


# -- the static forms --------------------------------------------------------------------------------


def _name(side: dict[str, Any]) -> str:
    """Return how a side is named: its short id when given by id (or prefix), else ``label (short id)``."""
    ref, eid = side["ref"], side["entry_id"]
    return eid[:8] if eid.startswith(ref) else f"{ref} ({eid[:8]})"


def _settings(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in settings.items()) or "provider defaults"


def _ms(ms: Any) -> str:
    if not isinstance(ms, (int, float)):
        return "time not recorded"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def _line(m: dict[str, Any] | None, width: int = 70) -> str:
    if m is None:
        return "(not shown: see the model view of that entry)"
    badge = f" [{m['injected']}]" if m.get("injected") else ""
    one = " ".join(m["text"].split())
    one = one if len(one) <= width else one[: width - 1] + "…"
    return f"{m['role']}{badge}: {one!r}"


def _by_index(side: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {m["i"]: m for m in side["messages"]}


def _val(v: Any) -> str:
    return "(not set)" if v is None else repr(v)


def diff_lines(s: dict[str, Any], d: dict[str, Any]) -> list[str]:
    """Return the text lines of one diff of ``state`` ``s``: a headline, then one line per difference.

    Message numbers are 1-based positions in each request (``#3``)."""
    a, b = s["sides"][d["a"]], s["sides"][d["b"]]
    ma, mb = _by_index(a), _by_index(b)
    out = []
    counts = {op: sum(1 for ch in d["messages"] if ch["op"] == op) for op in ("changed", "added", "removed")}
    what = ", ".join(f"{n} {op}" for op, n in counts.items() if n)
    same = f"{d['same']} message{'' if d['same'] == 1 else 's'} the same"
    out.append(f"{_name(b)} against {_name(a)}: {same}" + (f", {what}" if what else ""))
    if d["model"]:
        out.append(f"  model     {d['model'][0] or '(none)'} → {d['model'][1] or '(none)'}")
    for k, (va, vb) in d["settings"].items():
        out.append(f"  setting   {k}: {_val(va)} → {_val(vb)}")
    if d["system"]:
        out.append(f"  system    {_val(d['system'][0])} → {_val(d['system'][1])}")
    for ch in d["messages"][:CHANGES]:
        if ch["op"] == "changed":
            out.append(f"  ~ #{ch['a'] + 1} {_line(ma.get(ch['a']), 45)} → #{ch['b'] + 1} {_line(mb.get(ch['b']), 45)}")
        elif ch["op"] == "added":
            out.append(f"  + #{ch['b'] + 1} {_line(mb.get(ch['b']))}")
        else:
            out.append(f"  - #{ch['a'] + 1} {_line(ma.get(ch['a']))}")
    if len(d["messages"]) > CHANGES:
        out.append(f"  … and {len(d['messages']) - CHANGES} more changes")
    if not (d["model"] or d["settings"] or d["system"] or d["messages"]):
        out.append("  the requests are the same")
    return out


def _side_line(s: dict[str, Any]) -> str:
    cost = s["cost"]["summary"] if s["cost"] else "no reply"
    return f"{_name(s)}  {s['model'] or '(no reply)'} · {_settings(s['settings'])} · {cost} · {_ms(s['total_ms'])}"


def text(s: dict[str, Any]) -> str:
    """Return the comparison as plain text: one line per side (model, settings, tokens, cost, time),
    each diff, then the replies (first lines). For terminals and ``text/plain``."""
    lines = [f"compare {len(s['sides'])} entries (each against the first):"]
    lines += [f"  {_side_line(side)}" for side in s["sides"]]
    for d in s["diffs"]:
        lines += diff_lines(s, d)
    lines.append("replies:")
    for side in s["sides"]:
        r = side["reply"]
        lines.append(f"  {_name(side)}: {_line(r, 90) if r else '(none: the entry has no reply)'}")
    return "\n".join(lines)


_TD = "text-align:left;vertical-align:top;padding:2px 8px"
_PRE = "white-space:pre-wrap;word-break:break-word;margin:2px 0;font-family:ui-monospace,Menlo,Consolas,monospace"
_OPS = {"added": ("+", "#e6ffec"), "removed": ("−", "#ffebe9"), "changed": ("~", "#fff8c5")}


def _msg_html(m: dict[str, Any] | None, i: int | None = None) -> str:
    if m is None:
        return "" if i is None else f"<b>#{i + 1}</b> (not shown)"
    badge = f" [{_e(m['injected'])}]" if m.get("injected") else ""
    return f"<b>#{m['i'] + 1} {_e(m['role'])}</b>{badge}<pre style='{_PRE}'>{_e(m['text'])}</pre>"


def html(s: dict[str, Any]) -> str:
    """Return the comparison as static HTML (no script, every session string escaped): a table of
    the sides (model, settings, tokens and cost, time), each diff as a table of its differences,
    and the replies side by side."""
    sides = s["sides"]
    head = "".join(f"<th style='{_TD}'>{_e(_name(x))}</th>" for x in sides)
    rows = [
        ("entry", [x["entry_id"] for x in sides]),
        ("labels", [", ".join(x["labels"]) or "—" for x in sides]),
        ("model", [x["model"] or "(no reply)" for x in sides]),
        ("settings", [_settings(x["settings"]) for x in sides]),
        ("reply tokens · cost", [x["cost"]["summary"] if x["cost"] else "no reply" for x in sides]),
        ("branch tokens · cost", [x["branch_cost"]["summary"] for x in sides]),
        ("time", [_ms(x["total_ms"]) for x in sides]),
        ("system prompt", [x["system"] if x["system"] is not None else "(none)" for x in sides]),
        ("request", [f"{x['message_total']} message" + ("" if x["message_total"] == 1 else "s") for x in sides]),
    ]
    body = "".join(
        f"<tr><th style='{_TD}'>{_e(k)}</th>" + "".join(f"<td style='{_TD}'>{_e(v)}</td>" for v in vs) + "</tr>"
        for k, vs in rows
    )
    parts = [
        "<div class='durable-compare'>",
        f"<p><b>compare {len(sides)} entries</b> (each against the first)</p>",
        f"<table><tr><th style='{_TD}'></th>{head}</tr>{body}</table>",
    ]
    for d in s["diffs"]:
        a, b = sides[d["a"]], sides[d["b"]]
        ma, mb = _by_index(a), _by_index(b)
        parts.append(f"<p><b>{_e(diff_lines(s, d)[0])}</b></p><table>")
        if d["model"]:
            parts.append(f"<tr><td style='{_TD}'>model</td><td style='{_TD}'>{_e(d['model'][0])}</td>")
            parts.append(f"<td style='{_TD}'>{_e(d['model'][1])}</td></tr>")
        for k, (va, vb) in d["settings"].items():
            parts.append(f"<tr><td style='{_TD}'>setting {_e(k)}</td><td style='{_TD}'>{_e(_val(va))}</td>")
            parts.append(f"<td style='{_TD}'>{_e(_val(vb))}</td></tr>")
        if d["system"]:
            parts.append(f"<tr><td style='{_TD}'>system</td><td style='{_TD}'><pre style='{_PRE}'>")
            parts.append(
                f"{_e(d['system'][0])}</pre></td><td style='{_TD}'><pre style='{_PRE}'>{_e(d['system'][1])}</pre></td></tr>"
            )
        for ch in d["messages"][:CHANGES]:
            mark, bg = _OPS[ch["op"]]
            left = _msg_html(ma.get(ch["a"]), ch["a"])
            right = _msg_html(mb.get(ch["b"]), ch["b"])
            parts.append(f"<tr style='background:{bg}'><td style='{_TD}'>{mark} {ch['op']}</td>")
            parts.append(f"<td style='{_TD}'>{left}</td><td style='{_TD}'>{right}</td></tr>")
        if len(d["messages"]) > CHANGES:
            parts.append(
                f"<tr><td style='{_TD}' colspan='3'>… and {len(d['messages']) - CHANGES} more changes</td></tr>"
            )
        parts.append("</table>")
    replies = "".join(
        f"<td style='{_TD}'><pre style='{_PRE}'>{_e(x['reply']['text']) if x['reply'] else '(no reply)'}</pre></td>"
        for x in sides
    )
    parts.append(f"<p><b>replies</b></p><table><tr>{head}</tr><tr>{replies}</tr></table></div>")
    return "".join(parts)
