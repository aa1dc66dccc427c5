"""A session as a Markdown handout: the active path as a transcript, injected context marked,
branches listed.

    from durable_nb.share.handout import handout
    Path("session.md").write_text(handout(agent))

Untrusted text (everything a session holds: messages, names, models, kinds,
summaries, the source) stays text in any Markdown renderer, so it cannot forge
the handout's structure (a heading, a rule, a turn marker such as
``**User** · `1a2b3c4d```, a link, an image, raw HTML): a text is escaped
(:func:`md_block`, :func:`md_text`: ``& < >`` as entities, Markdown's
markers backslash-escaped, lines kept as lines), ids and names are inline
code, tool arguments and custom data fenced JSON blocks whose fence is longer
than any run of backticks in them. The text's own Markdown is shown as
written, not rendered.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import ai
from ..durable.mcp import provenance_line
from ..session import (
    CompactionEntry,
    CustomEntry,
    Entry,
    MessageEntry,
    codec,
    display_text,
    is_ephemeral,
    sort_siblings,
    transcript_view,
)

PREVIEW = 80  # characters of an entry shown in the branch list


_ANYWHERE = re.compile(r"[\\`*_\[\]~|#!]")  # what can start emphasis, code, a link, a table, strikethrough
_LINE_START = re.compile(r"^([-+=])|^(\d{1,9})([.)])")  # a list item, a rule or a setext underline
_AUTOLINK = re.compile(r"(?i)://|@|www\.")  # what a GFM renderer links without brackets (`www.` after `_` too)


def md_text(text: str) -> str:
    """Return untrusted ``text`` as one line of Markdown that renders as exactly that text.

    ``& < >`` become entities (raw HTML is shown, not run; no entity is
    decoded); the characters that start emphasis, code, links, images,
    headings, tables or strikethrough are backslash-escaped, as are a
    leading list, rule or setext marker and the ``:`` / ``@`` / ``.`` of bare
    autolinks; line breaks become spaces. O(len(text)).
    """
    return _escape(" ".join(text.split()))


def _escape(line: str) -> str:
    s = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _ANYWHERE.sub(lambda m: "\\" + m.group(), s)
    s = _AUTOLINK.sub(lambda m: "\\://" if m.group() == "://" else m.group()[:-1] + "\\" + m.group()[-1], s)
    return _LINE_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), s)


def md_block(text: str) -> str:
    """Return untrusted ``text`` as Markdown paragraphs that render as that text, line by line.

    Each line as :func:`md_text` makes it, its leading spaces and tabs as
    ``&nbsp;`` (so no indented code block starts), a hard break (``\\``)
    after each line that the next one continues; blank lines separate
    paragraphs. No line can start a heading, rule, list, quote, fence, HTML
    block or link definition. O(len(text)).
    """
    out: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        body = line.lstrip(" \t")
        if not body.strip():
            out.append("")
            continue
        lead = line[: len(line) - len(body)].replace("\t", "    ")
        if out and out[-1]:
            out[-1] += "\\"  # a hard line break: the line stays a line
        out.append("&nbsp;" * len(lead) + _escape(body))
    return "\n".join(out).strip("\n")


def _code(text: str) -> str:
    """Return ``text`` as inline code; a fence longer than any run of backticks in it, and no newline."""
    text = " ".join(text.split())
    fence = "`"
    while fence in text:
        fence += "`"
    return f"{fence} {text} {fence}" if "`" in text else f"{fence}{text}{fence}"


def _fenced(text: str, lang: str = "") -> str:
    """Return ``text`` (JSON) as a fenced code block: shown as written, whatever Markdown it holds (line
    breaks as ``\\n``, so a quote's ``> `` prefix reaches every line a renderer sees)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{lang}\n{text}\n{fence}"


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"


def _message(e: MessageEntry) -> str:
    m = e.message
    who = {"user": "User", "assistant": "Assistant", "tool_result": "Tool result"}.get(m.role, m.role)
    head = f"**{who}**"
    if m.tool_name:
        head += f" from {_code(m.tool_name)}" + (" (error)" if m.is_error else "")
    if m.model:
        head += f" · {md_text(m.model)}"
    parts = [f"{head} · {_code(e.id[:8])}"]
    mcp = provenance_line((m.extra or {}).get("mcp") if isinstance(m.extra, dict) else None)
    if mcp:
        parts.append(f"*MCP server: {md_text(mcp)}*")
    for b in m.content:
        if isinstance(b, ai.Text):
            parts.append(md_block(b.text))
        elif isinstance(b, ai.ToolCall):
            args = json.dumps(b.arguments, ensure_ascii=False, indent=2, default=str)
            parts.append(f"Tool call {_code(b.name)} ({_code(b.id)}):\n\n{_fenced(args, 'json')}")
        elif b.type == "reminder":
            reminder = md_block(getattr(b, "text", ""))
            note = f"*Reminder block (sent to the model, hidden from transcripts):*\n\n{reminder}"
            parts.append("\n".join("> " + line if line else ">" for line in note.split("\n")))
        elif b.type == "thinking":
            text = getattr(b, "text", "") or "(redacted)"
            parts.append(f"<details><summary>Thinking</summary>\n\n{md_block(text)}\n\n</details>")
        else:
            name = getattr(b, "name", "")
            parts.append(
                f"*[{md_text(b.type)}{' ' + md_text(name) if name else ''} {md_text(getattr(b, 'mime_type', ''))}, not included]*"
            )
    body = "\n\n".join(parts)
    if m.injected is not None:
        origin = f" from {_code(m.origin)}" if m.origin else ""
        note = f"*Injected context ({m.injected.value}{origin}): sent to the model, hidden from the transcript.*"
        return "\n".join("> " + line if line else ">" for line in f"{note}\n\n{body}".split("\n"))
    return body


def _entry(e: Entry) -> str:
    if isinstance(e, MessageEntry):
        return _message(e)
    if isinstance(e, CompactionEntry):
        return (
            f"**Compaction** · {_code(e.id[:8])} · about {e.tokens_before} tokens summarised; "
            f"the model sees this summary instead:\n\n{md_block(e.summary)}"
        )
    if isinstance(e, CustomEntry):
        data = json.dumps(codec.custom_fields(e), ensure_ascii=False, indent=2, default=str)
        return f"**Custom entry** {_code(e.kind)} · {_code(e.id[:8])} (kept, never sent to the model)\n\n{_fenced(data, 'json')}"
    return f"**{type(e).__name__}** · {_code(e.id[:8])}"


def _created(e: Entry) -> str:
    return e.created_at


def branches(entries: list[Entry], path_ids: set[str]) -> list[str]:
    """Return one Markdown list item per branch point: the entry, and each child branch with
    its tip (the newest entry on it) and length. O(n)."""
    kids: dict[str, list[Entry]] = {}
    for e in entries:
        if e.parent_id and not is_ephemeral(e):
            kids.setdefault(e.parent_id, []).append(e)
    for k in kids.values():
        sort_siblings(k, _created)  # sibling order; the last is the newest
    by_id = {e.id: e for e in entries}

    def tip(e: Entry) -> tuple[Entry, int]:
        n = 1
        while kids.get(e.id):
            e = kids[e.id][-1]
            n += 1
        return e, n

    out = []
    for pid, children in kids.items():
        if len(children) < 2 or pid not in by_id:
            continue
        p = by_id[pid]
        out.append(f"- after {_code(pid[:8])} “{md_text(_one_line(display_text(p)))}”: {len(children)} branches")
        for c in children:
            t, n = tip(c)
            mark = " (the active path)" if c.id in path_ids else ""
            out.append(
                f"  - {_code(c.id[:8])} “{md_text(_one_line(display_text(c)))}” → {n} entries, ending at "
                f"{_code(t.id[:8])} “{md_text(_one_line(display_text(t)))}”{mark}"
            )
    return out


def handout(agent: Any, source: str = "") -> str:
    """Return the Markdown handout of ``agent``'s session.

    A title and a line of facts (entries, leaf, source); the active path
    root to leaf, each entry as a section (injected context as a marked
    quote, tool calls as JSON blocks, compactions with their summary, custom
    entries with their data; ephemeral entries are not on a path); the
    branch points with each branch's tip; and how many entries the
    transcript view shows. O(n) + O(text).
    """
    path = agent.path()
    entries = agent.entries()
    ids = {e.id for e in path}
    lines = [
        f"# Session {_code(agent.session_id)}",
        "",
        f"{len(entries)} entries · leaf {_code(agent.leaf_id[:8] or '(none)')} · {len(path)} on the active path · "
        f"{len(transcript_view(path))} in the transcript view" + (f" · from {_code(source)}" if source else ""),
        "",
        "## The active path",
        "",
    ]
    if not path:
        lines += ["*Empty session: no entries yet.*", ""]
    for e in path:
        lines += [_entry(e), "", "---", ""]
    bl = branches(entries, ids)
    lines += ["## Branches", ""] + (bl or ["*One path: no branches.*"]) + [""]
    return "\n".join(lines)
