"""The entry-tree widget: a session's whole tree, its model view and its transcript view.

    from durable_nb.widget import SessionWidget
    w = SessionWidget(agent)      # display(w), or just display the agent
    w.sync()                      # push what changed since the last sync

The front end (``static/widget.js``, ``static/widget.css``) builds the tree from a
flat log of entry *rows* and draws views that Python computed: the model view
and transcript view at the selected entry come from
:func:`~durable_nb.session.model_view`, :func:`~durable_nb.session.transcript_view`
and :func:`~durable_nb.session.display_text`, never from JavaScript.

State lives in traitlets (custom messages sent before display are lost):

- ``base`` + ``tail``: the log as rows, in append order. New rows go to the
  small ``tail``; when it outgrows ``tail_limit(len(base))`` it is folded into
  ``base``. A sync sends only the traits that changed, so one new entry costs
  the tail (amortised O(sqrt n) rows), not the whole log.
- ``leaf_id``; ``selected_id`` (``""`` = follow the leaf); ``view``
  (``"tree"``, ``"model"`` or ``"transcript"``); ``view_limit``.
- ``views``: both views and the full entry at the selected entry, recomputed
  only when the selection, the followed leaf or ``view_limit`` changes.

The one request the front end sends is ``{"action": "branch", "id": ...}``
("continue from here"): Python calls ``agent.branch(id)`` and syncs back.
The widget never writes the store.

**Live across kernels.** On a store that notifies appends (PostgreSQL's
``LISTEN/NOTIFY``, :meth:`~durable_nb.session.PostgresStore.subscribe`), an
open widget in a kernel follows appends made by any other kernel: the
notification is handed to the kernel's main thread (its IO loop), which
reads the new entries into the agent (:meth:`~durable_nb.durable.Agent.refresh`,
the leaf stays) and syncs, with no cell run. A busy kernel catches up when
its cell ends.
"""

from __future__ import annotations

import json
import math
import weakref
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .errors import DurableError
from .session import (
    CompactionEntry,
    CustomEntry,
    Entry,
    MessageEntry,
    codec,
    display_text,
    elided_count,
    is_aside,
    kept_from,
    model_view,
    transcript_view,
)

PREVIEW_CHARS = 160  # characters of text a tree row carries
DATA_CHARS = 4000  # characters of a custom entry's data shown in a view
TAIL_MIN = 64  # the tail may always hold this many rows
VIEW_LIMIT = 100  # messages per view sent at first ("show earlier" asks for 4x more)
CHARS_PER_ITEM = 500  # a view's JSON budget is this times view_limit (at least one item is sent)


def _asset(name: str) -> Path:
    """Return the path of the front-end file ``name`` (it ships inside the package, in ``durable_nb/static/``)."""
    return Path(__file__).resolve().parent / "static" / name


def tail_limit(base_len: int) -> int:
    """Return how many rows the tail may hold before it is folded into the base.

    ``max(TAIL_MIN, isqrt(2 * base_len))``: appending k entries one at a time
    then sends about k * sqrt(2n) rows in all, instead of k * n.
    """
    return max(TAIL_MIN, math.isqrt(2 * base_len))


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _elide_blobs(d: Any) -> Any:
    """Return an encoded message/entry with base64 ``data`` of images and files replaced by its size."""
    if isinstance(d, dict):
        out = {k: _elide_blobs(v) for k, v in d.items()}
        if d.get("type") in ("image", "file") and isinstance(d.get("data"), str):
            out["data"] = None
            out["bytes"] = len(d["data"]) * 3 // 4
        return out
    if isinstance(d, list):
        return [_elide_blobs(v) for v in d]
    return d


def row(entry: Entry, elided: tuple[str, str, int] | None = None) -> dict[str, Any]:
    """Return the small dict the tree draws for ``entry`` (keys with empty values left out).

    Always ``id``, ``parent_id``, ``created_at``, ``type`` (``message``,
    ``compaction``, ``custom``) and ``preview`` (:func:`display_text`, one
    line, at most ``PREVIEW_CHARS``). Messages add ``role``, ``injected``,
    ``origin``, ``tools`` (tool-call names; a message with calls and no text
    previews them as ``name({arguments})``), ``bad_arguments`` (calls whose
    arguments were not a JSON object), ``thinking`` (count of Thinking
    blocks), ``reminders`` (count of Reminder blocks), ``tool_call_id``,
    ``is_error``, ``duration_ms`` (a tool result's ``timing``); a custom entry adds ``kind``,
    ``aside`` (true for another tool's bookkeeping record, :func:`~durable_nb.session.is_aside`:
    drawn off the chain like an ephemeral entry, never a branch) and
    previews its data as JSON; a compaction adds
    ``first_kept_id``, ``tokens_before`` and ``elides`` = ``[first, last,
    count]`` of the entries before ``first_kept_id`` on its path.
    O(size of the entry's text).
    """
    r: dict[str, Any] = {
        "id": entry.id,
        "parent_id": entry.parent_id,
        "created_at": entry.created_at,
        "preview": _preview(display_text(entry)),
    }
    if isinstance(entry, MessageEntry):
        m = entry.message
        r["type"] = "message"
        r["role"] = m.role
        if m.injected is not None:
            r["injected"] = m.injected.value
        if m.origin:
            r["origin"] = m.origin
        calls = m.tool_calls()
        if calls:
            r["tools"] = [c.name for c in calls]
            r["bad_arguments"] = sum(1 for c in calls if c.malformed() is not None)
            if not r["preview"]:
                r["preview"] = _preview(" ".join(_call_text(c) for c in calls))
        thinking = sum(1 for b in m.content if b.type == "thinking")
        if thinking:
            r["thinking"] = thinking
        if m.timing and isinstance(m.timing.get("duration_ms"), (int, float)):
            r["duration_ms"] = m.timing["duration_ms"]
        reminders = sum(1 for b in m.content if b.type == "reminder")
        if reminders:
            r["reminders"] = reminders
        other = [b.type for b in m.content if b.type in ("image", "file")]
        if other:
            r["attachments"] = other
        if m.tool_call_id:
            r["tool_call_id"] = m.tool_call_id
        if m.is_error:
            r["is_error"] = True
    elif isinstance(entry, CompactionEntry):
        r["type"] = "compaction"
        r["first_kept_id"] = entry.first_kept_id
        r["tokens_before"] = entry.tokens_before
        if elided:
            r["elides"] = list(elided)
    elif isinstance(entry, CustomEntry):
        r["type"] = "custom"
        r["kind"] = entry.kind
        r["aside"] = is_aside(entry)
        data = codec.encode(entry).get("data")
        if data:
            r["preview"] = _preview(json.dumps(data, ensure_ascii=False, default=str))
    else:
        r["type"] = type(entry).__name__
    return {k: v for k, v in r.items() if v not in (None, "", [], False) or k in ("parent_id", "preview")}


def _call_text(c: Any) -> str:
    """Return a tool call as one line: ``name({"q": "x"})``, or ``name(<raw text>)`` for malformed arguments."""
    args = c.arguments["_raw"] if c.malformed() is not None else json.dumps(c.arguments, ensure_ascii=False)
    return f"{c.name}({args})"


def _view_message(m, entry_id: str) -> dict[str, Any]:
    d = _elide_blobs(codec.encode_message(m))
    d["entry_id"] = entry_id  # "" for a message the view synthesized (summary, interrupted result)
    return d


def _view_entry(e: Entry) -> dict[str, Any]:
    d: dict[str, Any] = {"id": e.id, "type": row(e)["type"], "text": display_text(e)}
    if isinstance(e, MessageEntry):
        m = e.message
        d["role"] = m.role
        # A reader sees what was done, too: the calls, the result's tool, error flag and
        # duration, and that the model reasoned (drawn collapsed). Never a Reminder block.
        blocks = [codec.encode_block(b) for b in m.content if b.type in ("tool_call", "thinking")]
        if blocks:
            d["blocks"] = blocks
        for key in ("tool_call_id", "tool_name", "is_error", "timing"):
            if getattr(m, key):
                d[key] = getattr(m, key)
    elif isinstance(e, CustomEntry):
        d["kind"] = e.kind
        data = codec.encode(e).get("data")
        if data:
            s = json.dumps(data, ensure_ascii=False, indent=1, default=str)
            d["data"] = s if len(s) <= DATA_CHARS else s[:DATA_CHARS] + "…"
    return d


def _last_within(items: list, encode: Any, limit: int) -> list[dict[str, Any]]:
    """Return the encoded last items of ``items``: at most ``limit`` of them and about
    ``limit * CHARS_PER_ITEM`` characters of JSON (always at least one). ``encode(x)``
    returns ``(dict, its JSON size)``. O(limit)."""
    budget = limit * CHARS_PER_ITEM
    out: list[dict[str, Any]] = []
    size = 0
    for x in reversed(items[-limit:]):
        d, n = encode(x)
        size += n
        if out and size > budget:
            break
        out.append(d)
    out.reverse()
    return out


def _sized(encode: Any, memo: dict | None, kind: str) -> Any:
    """Return ``x -> (encode(x), its JSON size)``, remembered in ``memo`` by object when given
    (the memo keeps each object alive, so its ``id`` is not reused while the memo lives)."""

    def sized(x: Any) -> tuple[dict[str, Any], int]:
        key = (kind, id(x))
        if memo is not None and key in memo:
            return memo[key][1]
        d = encode(x)
        pair = (d, len(json.dumps(d, ensure_ascii=False)))
        if memo is not None:
            memo[key] = (x, pair)
        return pair

    return sized


def agent_row(agent: Any, e: Entry) -> dict[str, Any]:
    """Return :func:`row` for entry ``e`` of ``agent``, with what a compaction elides.

    A compaction's ``elided`` range is the entries on its path before its
    ``first_kept_id`` (all of them if that id is not on the path).
    O(size of ``e``), plus O(depth) for a compaction.
    """
    elided = None
    if isinstance(e, CompactionEntry):
        before = agent.path(e.parent_id) if e.parent_id else []
        cut = kept_from([*before, e], len(before))
        if cut:
            elided = (before[0].id, before[cut - 1].id, cut)
    return row(e, elided)


def views_at(
    path: list[Entry], at: str, following_leaf: bool, limit: int, session_id: str = "", memo: dict | None = None
) -> tuple[dict[str, Any], str]:
    """Return the ``views`` value at entry ``at`` (``path`` is its root-to-``at`` path) and an
    error (``""``, or why ``at`` is unknown: it is not empty but ``path`` is).

    Keys: ``at``, ``following_leaf``, ``depth``, ``model`` and ``transcript``
    (each view's last ``limit`` items within about ``limit * CHARS_PER_ITEM``
    characters), ``model_total`` and ``transcript_total`` (how many there
    are), ``entry`` (the full entry at ``at``, blobs elided, or ``None``).
    Pass one ``memo`` dict to many calls over one session to encode each item
    once: the calls then return the same dict object for the same item.
    O(len(path)) + O(limit).
    """
    error = f"no entry {at!r} in session {session_id!r}" if at and not path else ""
    limit = max(1, limit)
    source = {id(e.message): e.id for e in path if isinstance(e, MessageEntry)}
    model = model_view(path)
    transcript = transcript_view(path)
    views = {
        "at": at,
        "following_leaf": following_leaf,
        "depth": len(path),
        "model": _last_within(model, _sized(lambda m: _view_message(m, source.get(id(m), "")), memo, "m"), limit),
        "model_total": len(model),
        "transcript": _last_within(transcript, _sized(_view_entry, memo, "t"), limit),
        "transcript_total": len(transcript),
        "entry": _elide_blobs(codec.encode(path[-1])) if path else None,
    }
    return views, error


_open: weakref.WeakSet[SessionWidget] = weakref.WeakSet()


def sync_widgets(agent: Any) -> None:
    """Call :meth:`SessionWidget.sync` on every open widget showing ``agent``. O(widgets)."""
    for w in list(_open):
        if w.agent is agent and w.comm is not None:
            w.sync()


def _main_thread_caller() -> Any:
    """Return the running kernel's thread-safe ``add_callback`` (runs a function on its main thread),
    or ``None`` outside a kernel (terminal IPython, plain Python)."""
    try:
        from IPython import get_ipython

        return get_ipython().kernel.io_loop.add_callback
    except AttributeError:
        return None


def _follow(widget: SessionWidget) -> Any:
    """Subscribe ``widget`` to appends by other writers when its store notifies them and a kernel
    runs; return the unsubscribe function, or ``None``. Holds the widget weakly."""
    subscribe = getattr(widget.agent.store, "subscribe", None)
    call = _main_thread_caller()
    if subscribe is None or call is None:
        return None
    ref = weakref.ref(widget)
    widget._pending = False

    def on_append(_session_id: str) -> None:  # on the listener's thread: hand over, once per burst
        w = ref()
        if w is not None and not w._pending:
            w._pending = True
            call(w._catch_up)

    return subscribe(widget.agent.session_id, on_append)


class SessionWidget(anywidget.AnyWidget):
    """The entry tree of ``agent`` (a :class:`durable_nb.durable.Agent`), with its two views.

    ``SessionWidget(agent)`` syncs once; call :meth:`sync` after the agent's
    log or leaf changes (the notebook magics do, after each persistence
    receipt). ``view`` picks the starting tab: ``"tree"``, ``"model"`` or
    ``"transcript"``.
    """

    _esm = _asset("widget.js")
    _css = _asset("widget.css")

    session_id = traitlets.Unicode("").tag(sync=True)
    base: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    tail: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    leaf_id = traitlets.Unicode("").tag(sync=True)
    elided = traitlets.Int(0).tag(sync=True)  # entries from the active path's root its latest compaction elides
    selected_id = traitlets.Unicode("").tag(sync=True)
    view = traitlets.Unicode("tree").tag(sync=True)
    view_limit = traitlets.Int(VIEW_LIMIT).tag(sync=True)
    views = traitlets.Dict().tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, agent: Any, **kwargs: Any) -> None:
        self.agent = agent
        # The first state goes out with the comm's open message: compute it before opening.
        entries = agent.entries()
        self._count = len(entries)  # rows sent (base + tail)
        self._last_id = entries[-1].id if entries else ""  # to notice a replaced log
        selected, limit = kwargs.get("selected_id", ""), kwargs.get("view_limit", VIEW_LIMIT)
        self._views_key = (selected or agent.leaf_id, not selected, limit)
        views, error = self._views_at(*self._views_key)
        super().__init__(
            session_id=agent.session_id,
            base=[self._row(e) for e in entries],
            leaf_id=agent.leaf_id,
            elided=elided_count(agent.path()),
            views=views,
            error=error,
            **kwargs,
        )
        self.on_msg(self._on_request)
        _open.add(self)
        self._unsubscribe = _follow(self)

    def close(self) -> None:
        """Close the widget and stop following its store."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        super().close()

    def _catch_up(self) -> None:
        """On the main thread: read what other writers appended and sync every widget of the agent."""
        self._pending = False
        if self.comm is None:
            return
        try:
            new = self.agent.refresh()
        except DurableError as e:  # the database went away: say so, keep what is shown
            self.error = str(e)
            return
        if new:
            sync_widgets(self.agent)

    def sync(self) -> None:
        """Push the agent's current log and leaf to the front end, sending only what changed.

        New entries are appended to ``tail`` (folded into ``base`` when the
        tail outgrows :func:`tail_limit`); a log that shrank or changed under
        the widget is re-sent whole. The views are recomputed only when the
        entry they are at changed. Everything goes out as one update message.
        Cost: O(new entries + tail), plus O(depth) when the views move, plus
        O(n) on a fold (rare). A no-op sync sends nothing.
        """
        entries = self.agent.entries()
        n = len(entries)
        with self.hold_sync():
            replaced = n < self._count or (self._count and entries[self._count - 1].id != self._last_id)
            if replaced:
                self.base, self.tail, self._count = [], [], 0
            if n > self._count:
                new = [self._row(e) for e in entries[self._count :]]
                tail = self.tail + new
                if len(tail) > tail_limit(len(self.base)):
                    self.base, self.tail = self.base + tail, []
                else:
                    self.tail = tail
            self._count = n
            self._last_id = entries[-1].id if entries else ""
            self.session_id = self.agent.session_id
            self.leaf_id = self.agent.leaf_id
            self.elided = elided_count(self.agent.path())
            self._update_views()

    def _row(self, e: Entry) -> dict[str, Any]:
        return agent_row(self.agent, e)

    @traitlets.observe("selected_id", "view_limit")
    def _selection_changed(self, _change: dict) -> None:
        if hasattr(self, "_views_key"):
            self._update_views()

    def _update_views(self) -> None:
        """Recompute ``views`` for the selected entry (or the leaf) if it moved. O(depth)."""
        key = (self.selected_id or self.agent.leaf_id, not self.selected_id, self.view_limit)
        if key != self._views_key:
            self._views_key = key
            self.views, self.error = self._views_at(*key)

    def _views_at(self, at: str, following_leaf: bool, limit: int) -> tuple[dict[str, Any], str]:
        """Return :func:`views_at` for entry ``at`` of the agent. O(depth of ``at``) + O(limit)."""
        return views_at(self.agent.path(at) if at else [], at, following_leaf, limit, self.agent.session_id)

    def _static_state(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("session_id", "base", "tail", "leaf_id", "elided", "views")}

    def __repr__(self) -> str:
        from .share import fallback  # not at import time: share's page imports this module

        return f"SessionWidget({fallback.header(self._static_state())})"

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """Return the widget view plus a static fallback: ``text/html`` (the tree and both
        views, escaped, no script; see :mod:`durable_nb.share.fallback`) and a ``text/plain``
        summary. JupyterLab and Notebook 7 draw the widget; a renderer with no kernel or
        widget manager (nbconvert, nbviewer, GitHub) shows the fallback. The fallback is the
        session as it was when the output was displayed. O(n) for the tree layout."""
        from .share import fallback

        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        state = self._static_state()
        data = {**data, "text/plain": fallback.text(state), "text/html": fallback.html(state)}
        return data, metadata

    def _on_request(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Handle ``{"action": "branch", "id": ...}``: move the leaf there, follow it, sync back."""
        if not isinstance(content, dict) or content.get("action") != "branch":
            return
        try:
            self.agent.branch(str(content.get("id", "")))
        except DurableError as e:
            self.error = str(e)
            return
        with self.hold_sync():
            self.error = ""
            self.selected_id = ""
            self.sync()
