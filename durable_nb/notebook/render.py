"""Showing things in the cell output: the streaming reply, dry runs, status lines.

Model output is untrusted. :func:`markdown_html` renders Markdown with
markdown-it-py's CommonMark preset and **html disabled**, so raw HTML in a
reply (``<img src=x onerror=...>``, ``<script>``) comes out escaped, as
text; markdown-it also refuses ``javascript:``/``vbscript:``/``data:``
links. Only that HTML (plus the plain text) is handed to the front end,
never the reply as ``text/markdown`` (JupyterLab treats live outputs as
trusted and would render raw HTML inside Markdown).
"""

from __future__ import annotations

import html
import time
from collections.abc import Sequence

from .. import ai

_MD = None


def markdown_html(text: str) -> str:
    """Return safe HTML for Markdown ``text``: raw HTML is escaped, bad link schemes dropped.

    Cost: one markdown-it parse, O(len(text)).
    """
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"])
    return _MD.render(text)


def reply_bundle(text: str, note: str = "") -> dict[str, str]:
    """Return the MIME bundle of a reply: ``text/plain`` and sanitised ``text/html``.

    ``note`` (e.g. "interrupted") is appended in italics, escaped.
    """
    body = markdown_html(text)
    if note:
        body += f"<p><em>{html.escape(note)}</em></p>"
    plain = text + (f"\n[{note}]" if note else "")
    return {"text/plain": plain, "text/html": f'<div class="durable-reply">{body}</div>'}


class ReplyView:
    """A display that shows the reply as it streams and re-renders at most every ``throttle`` seconds.

    In a kernel it updates one display handle in place. Outside one
    (terminal IPython) it prints the deltas as they come instead, since
    there is no handle to update.
    """

    def __init__(self, in_kernel: bool, throttle: float = 0.05) -> None:
        self.in_kernel = in_kernel
        self.throttle = throttle
        self._handle = None
        self._last = 0.0
        self._printed = 0

    def update(self, text: str) -> None:
        """Show ``text`` (the reply so far) if the throttle allows."""
        if not self.in_kernel:
            print(text[self._printed :], end="", flush=True)
            self._printed = len(text)
            return
        now = time.monotonic()
        if self._handle is not None and now - self._last < self.throttle:
            return
        self._last = now
        self._show(reply_bundle(text))

    def final(self, text: str, note: str = "") -> None:
        """Show the complete (or, with ``note``, partial) reply."""
        if not self.in_kernel:
            print(text[self._printed :] + (f"\n[{note}]" if note else ""), flush=True)
            self._printed = len(text)
            return
        if not text and not note:
            return
        self._show(reply_bundle(text, note))

    def _show(self, bundle: dict[str, str]) -> None:
        from IPython.display import display

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
    """Return the text a listing shows for an entry: a note's body, else :func:`~durable_nb.session.display_text`."""
    from ..session import display_text

    body = getattr(e, "body", None)
    return body if isinstance(body, str) and getattr(e, "kind", "") == "note" else display_text(e)


def plural(n: int, one: str, many: str) -> str:
    """Return ``"1 entry"`` / ``"3 entries"``."""
    return f"{n} {one if n == 1 else many}"


def short(text: str, width: int = 60) -> str:
    """Return ``text`` on one line, cut to ``width`` characters with an ellipsis."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"
