"""The entry-tree widget: a session's whole tree, its model view and its transcript view.

    from durable_nb.widget import SessionWidget
    w = SessionWidget(agent)      # display(w), or just display the agent
    w.sync()                      # push what changed since the last sync

The front end (``static/widget.js``, ``static/widget.css``) draws the tree from
*lines* Python lays out (:class:`durable_nb.layout.Layout`, kept up to date
one entry at a time) and fetches only the lines it draws, plus a margin, by
custom message. It draws views that Python computed: the model view and
transcript view at the selected entry come from
:func:`~durable_nb.session.model_view`, :func:`~durable_nb.session.transcript_view`
and :func:`~durable_nb.session.display_text`, never from JavaScript.

**Synced state (traitlets; small whatever the session size, so a saved
notebook's widget state stays small).** Custom messages sent before the page
renders are lost, so everything the first paint needs is here:

- ``tree``: ``{"rev", "lines", "entries", "changed_from", "leaf_line"}``: the
  layout's revision, how many lines and entries, the first line index that
  changed since the previous ``rev`` (the page drops cached lines from there;
  ``0`` when the active path moved off its old leaf or the layout was redone),
  and the leaf's line index (``-1`` when not drawn).
- ``leaf_id``; ``elided`` (entries from the active path's root its latest
  compaction elides); ``selected_id`` (``""`` = follow the leaf); ``view``
  (``"tree"``, ``"model"`` or ``"transcript"``); ``view_limit``; ``error``.
- ``comparison``: the compare view's data (``{}``: none); ``hidden``: the kind
  groups the tree hides (see the ``filter`` request).
- ``views``: both views (their last ``view_limit`` items) and the full entry
  at the selected entry. Following the leaf they are kept up to date from the
  new entries of each sync (O(new entries + view_limit), never the whole path);
  at a selected entry they are computed once per selection (O(its depth)).
- ``labels``: ``{name: entry id}`` (:meth:`~durable_nb.durable.Agent.labels`). A label
  can move to an entry whose line the page has cached, so names travel here, not in
  rows; the page draws them on the rows and in the details. A reply's tokens and cost
  never change, so they are row fields (see :func:`row`). ``session_cost``: tokens and
  cost of every reply in the session (all branches), kept as a running total
  (O(new entries) per sync); the views carry the same for the path they are at (``cost``).

**Requests (the page's ``model.send({"action": NAME, ...})``), dispatched by
the one table** :attr:`SessionWidget.ACTIONS` (action -> method name; each
method takes the request dict). Replies to reads go back as custom messages
(``self.send``) carrying ``"reply": NAME``; actions that change the session
answer by setting traits:

- ``{"action": "lines", "start": a, "stop": b}`` -> ``{"reply": "lines", "rev",
  "start": a, "total", "lines": [line, ...]}`` (at most :data:`MAX_LINES`), a
  line being ``{"row": row(), "depth", "mark", "kids", "on", "elided"}``
  (``mark`` ``root``/``cont``/``branch``/``eph``; ``kids`` the entry's durable
  children: branch count and "no reply"; ``on``: on the active path). The page
  ignores a reply whose ``rev`` is not its current ``tree.rev``.
- ``{"action": "locate", "id": X}`` -> ``{"reply": "locate", "id": X, "rev",
  "index", "drawn"}``: the line index of entry ``X`` (or of its nearest drawn
  ancestor ``drawn`` under a kind filter; ``-1`` if unknown). This is how the
  page reveals any entry (a search hit on another branch: locate, scroll there,
  the lines arrive by ``lines``, select it).
- ``{"action": "branch", "id": X}`` ("continue from here"): ``agent.branch(X)``,
  then a sync (traits) or ``error``.
- ``{"action": "search", "query": Q}`` -> ``{"reply": "search", "query": Q,
  "rev", "total", "hits": [{"id", "index", "drawn"}, ...]}``: the entries of
  the whole tree (every branch, ephemeral and hidden entries too) whose text
  holds every word of ``Q`` (:class:`~durable_nb.session.Finder`, the rule of
  ``%durable search``), in drawn order (``index`` is the line of ``drawn``:
  the entry itself, or its nearest drawn ancestor under a kind filter), at
  most :data:`MAX_HITS` of ``total``.
- ``{"action": "compare", "ids": [A, B, ...]}``: sets ``comparison``
  (:func:`durable_nb.share.comparison.of`: ids, labels or prefixes) and
  ``view = "compare"``; no ids clears it (back to the tree); a bad ref sets ``error``.
- ``{"action": "filter", "hide": [GROUP, ...]}``: lays the tree out again with
  the entries of those :func:`kind_group` groups hidden (``custom``,
  ``aside``, ``tool_result``) and sets ``hidden``; an unknown group sets ``error``.

**Hooks for more actions.** Add a name to :attr:`ACTIONS` and a method. A kind
filter (hide custom / progress entries) calls :meth:`SessionWidget.relayout`
with a predicate: the layout is redone once (O(n)) with those entries hidden
(their children hang off the nearest drawn ancestor) and ``tree`` tells the
page to refetch. Extra per-row fields (labels, tokens, cost) go in :func:`row`.
The widget never writes the store.

**Cost per sync**: O(new entries) for the layout (a new branch point: O(the
subtree that becomes a branch); a new root or an orphan: O(n) once) and
O(new entries + view_limit) for the views; bytes sent: the changed traits
(``views`` within ``view_limit * CHARS_PER_ITEM`` characters) plus the lines
the page then asks for (about a screenful), whatever the session size.

**Prepared ahead (long sessions).** A first widget lays out the whole log,
tallies every reply and builds the active path's views: O(n), about 1.5 s at
300k entries on a slow core. For a log of :data:`PREPARE_MIN` entries or more
the notebook prepares it when a ``%durable`` cell ends (:func:`prepare`: the
layout in a background thread that reads only the entries logged so far, the
views from the agent's kept active path); the next widget takes it and adds
what was logged since, so a later ``%durable show`` paints at once. A show
that comes before the layout is done waits for it.

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
import threading
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from . import ai
from .cost import Tally, format_cost, format_tally, keep_tally, kept_tally, message_cost, tally, tokens
from .errors import DurableError
from .layout import START, Layout
from .session import (
    CompactionEntry,
    CustomEntry,
    Entry,
    Finder,
    MessageEntry,
    ViewBuilder,
    codec,
    display_text,
    elided_count,
    is_aside,
    is_ephemeral,
    kept_from,
    model_view,
    transcript_view,
)
from .session.labels import label_of

START_PREVIEW = "start of the session: the first entries branch here"
PREVIEW_CHARS = 160  # characters of text a tree row carries
DATA_CHARS = 4000  # characters of a custom entry's data shown in a view
MAX_LINES = 400  # lines one "lines" reply may carry
PUSH_AROUND = 40  # lines around the leaf a sync pushes to a page that is drawn (it scrolls there)
VIEW_LIMIT = 100  # messages per view sent at first ("show earlier" asks for 4x more)
CHARS_PER_ITEM = 500  # a view's JSON budget is this times view_limit (at least one item is sent)
MAX_HITS = 1000  # search hits one "search" reply carries ("total" says how many there are)
MAX_QUERY = 500  # characters of a search query read
FILTERS = ("custom", "aside", "tool_result")  # the kind groups the tree can hide (kind_group)


def _asset(name: str) -> Path:
    """Return the path of the front-end file ``name`` (it ships inside the package, in ``durable_nb/static/``)."""
    return Path(__file__).resolve().parent / "static" / name


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _elide_blobs(d: Any) -> Any:
    """Return an encoded message/entry with base64 ``data`` of images and files replaced by its size
    (a file's name, ``filename`` on the wire, is also given as ``name``, as the page reads it)."""
    if isinstance(d, dict):
        out = {k: _elide_blobs(v) for k, v in d.items()}
        if d.get("type") in ("image", "file") and isinstance(d.get("data"), str):
            out["data"] = None
            out["bytes"] = len(d["data"]) * 3 // 4
        if d.get("type") == "file" and d.get("filename"):
            out["name"] = d["filename"]
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
    ``is_error``, ``duration_ms`` (a tool result's ``timing``); an assistant message adds
    ``tokens`` (``[input, output]`` from its usage, :func:`durable_nb.cost.tokens`; absent without
    usage) and ``cost`` (:func:`~durable_nb.cost.format_cost`: ``"$0.00045"`` or ``"cost unknown"``,
    never $0 for unknown); a custom entry adds ``kind``,
    ``aside`` (true for another tool's bookkeeping record, :func:`~durable_nb.session.is_aside`:
    drawn off the chain like an ephemeral entry, never a branch) and
    previews its data as JSON (a label entry: :func:`display_text`, ``label v1 → <id>``); a compaction adds
    ``first_kept_id``, ``tokens_before`` and ``elides`` = ``[first, last,
    count]`` of the entries before ``first_kept_id`` on its path.
    O(size of the entry's text), plus pricing an assistant message (~0.2 ms the first time, cached).
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
        if m.role == "assistant":
            counted = tokens(m)
            if counted is not None:
                r["tokens"] = list(counted)
            r["cost"] = format_cost(message_cost(m))
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
        data = codec.custom_fields(entry)
        if data and label_of(entry) is None:  # a label entry previews as what it does (display_text)
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
        data = codec.custom_fields(e)
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
    are), ``entry`` (the full entry at ``at``, blobs elided, or ``None``),
    ``cost`` (tokens and cost of the replies on the path, :func:`cost_text`).
    Pass one ``memo`` dict to many calls over one session to encode each item
    once: the calls then return the same dict object for the same item.
    O(len(path)) + O(limit).
    """
    error = f"no entry {at!r} in session {session_id!r}" if at and not path else ""
    source = {id(e.message): e.id for e in path if isinstance(e, MessageEntry)}
    model = model_view(path)
    transcript = transcript_view(path)
    last = path[-1] if path else None
    views = _views(
        at, following_leaf, len(path), model, len(model), transcript, len(transcript), last, source, limit, memo
    )
    views["cost"] = cost_text(tally(e.message for e in path if isinstance(e, MessageEntry)))
    return views, error


def cost_text(t: Tally) -> str:
    """Return :func:`~durable_nb.cost.format_tally` of ``t``, or ``""`` when it counts no reply."""
    return format_tally(t) if t.priced or t.unpriced else ""


def _views(
    at: str,
    following_leaf: bool,
    depth: int,
    model: list,
    model_total: int,
    transcript: list,
    transcript_total: int,
    last: Entry | None,
    source: dict[int, str],
    limit: int,
    memo: dict | None,
) -> dict[str, Any]:
    """Return a ``views`` value (see :func:`views_at`) from the views' last items (``model`` and
    ``transcript`` may hold just their tails) and totals. O(limit)."""
    limit = max(1, limit)
    return {
        "at": at,
        "following_leaf": following_leaf,
        "depth": depth,
        "model": _last_within(model, _sized(lambda m: _view_message(m, source.get(id(m), "")), memo, "m"), limit),
        "model_total": model_total,
        "transcript": _last_within(transcript, _sized(_view_entry, memo, "t"), limit),
        "transcript_total": transcript_total,
        "entry": _elide_blobs(codec.encode(last)) if last is not None else None,
    }


class _PathState:
    """What following a leaf starts from: its path and the path's model view, transcript view,
    elided count and tally, each the widget's own (copies). O(depth)."""

    def __init__(self, agent: Any) -> None:
        """The state at ``agent``'s leaf, from the agent's kept active path and view (copies, at C
        speed; built first if the agent has not yet: O(depth) then, as a first turn would) and the
        path's :func:`~durable_nb.cost.kept_tally`. Call it on the agent's own thread. O(depth)."""
        path = agent.path()
        self.leaf, self.path, self.builder = agent.leaf_id, path, agent.view_builder()
        self.cost = kept_tally(agent, "path", path)
        self.transcript: list[Entry] = transcript_view(path)
        self.elided = elided_count(path)


class _Followed:
    """The views of the active path, kept up to date as it grows (what the widget shows
    while following the leaf): O(new entries) per extension, O(depth) to start over."""

    def __init__(self, agent: Any, start: _PathState | None = None) -> None:
        self.agent = agent
        self.reset(start)

    def reset(self, start: _PathState | None = None) -> None:
        """Start over from the agent's active path (or from ``start``, a state computed for one of
        the agent's leaves: :meth:`move` then follows the agent). O(depth)."""
        st = start if start is not None else _PathState(self.agent)
        path = st.path
        self.leaf = st.leaf
        self.builder: ViewBuilder = st.builder
        self.transcript: list[Entry] = st.transcript
        self.path = path
        # message -> entry id, for the messages the views show: filled backwards from the end as far as
        # the last view_limit message entries reach (never the whole path), plus the system prompt's entry
        self.source: dict[int, str] = {}
        self._covered = len(path)  # self.source holds path[_covered:]
        self._counted = 0  # non-system message entries in it
        system = self.builder.system
        if system is not None:
            self.source[id(system)] = next(
                (e.id for e in path if isinstance(e, MessageEntry) and e.message is system), ""
            )
        self.depth = len(path)
        self.last: Entry | None = path[-1] if path else None
        self.elided = st.elided
        self.elided_ids = frozenset(e.id for e in path[: self.elided])  # what its latest compaction elides
        self.cost = st.cost

    def move(self, new: int) -> bool:
        """Follow the agent's leaf; ``new``: how many entries were appended since the last call.
        Return True when the new leaf continues the old one's path (the old active path is still
        active), False when the views started over. O(new entries), or O(depth) to start over."""
        leaf = self.agent.leaf_id
        if leaf == self.leaf:
            return True
        chain: list[Entry] = []
        cur = leaf
        while cur != self.leaf and len(chain) <= new:
            try:
                e = self.agent.entry(cur)
            except DurableError:
                break
            chain.append(e)
            cur = e.parent_id
            if not cur and self.leaf:
                break
        if cur != self.leaf or any(isinstance(e, CompactionEntry) for e in chain):
            self.reset()
            return False
        chain.reverse()
        self.cost = tally((e.message for e in chain if isinstance(e, MessageEntry)), self.cost)
        for e in chain:
            if isinstance(e, MessageEntry):
                self.builder.add(e.message)
                self.source[id(e.message)] = e.id
                self._counted += e.message.role != "system"
                if e.message.injected is None:
                    self.transcript.append(e)
            else:
                self.transcript.append(e)
        self.path.extend(chain)
        self.depth += len(chain)
        self.last = chain[-1]
        self.leaf = leaf
        keep_tally(self.agent, "path", self.depth, leaf, self.cost)
        return True

    def _cover(self, limit: int) -> None:
        """Extend :attr:`source` backwards until it holds the last ``limit`` non-system message entries
        (the view's last ``limit`` items come from them, or are synthesized). O(entries added)."""
        path, source = self.path, self.source
        while self._counted < limit and self._covered > 0:
            self._covered -= 1
            e = path[self._covered]
            if isinstance(e, MessageEntry):
                source[id(e.message)] = e.id
                self._counted += e.message.role != "system"

    def views(self, limit: int, memo: dict | None) -> dict[str, Any]:
        """Return the ``views`` value at the leaf (:func:`views_at`'s, from the kept state). O(limit)."""
        limit = max(1, limit)
        self._cover(limit)
        b = self.builder
        out = b.out
        cut = b.at if b.pending and b.at >= 0 else len(out)
        start = max(0, cut - limit)
        tail = ViewBuilder()  # the view's end only: repairing a dangling call never copies the whole path
        tail.out, tail.pending, tail.at = out[start:], b.pending, (b.at - start if b.at >= 0 else -1)
        body = tail.body()[-limit:]
        total = len(out) + len(b.pending)
        model: list = body
        if b.system is not None:
            total += 1
            if start == 0 and len(body) < limit:
                model = [b.system, *body]
        tr = self.transcript
        views = _views(
            self.leaf, True, self.depth, model, total, tr[-limit:], len(tr), self.last, self.source, limit, memo
        )
        views["cost"] = cost_text(self.cost)
        return views


def tree_line(agent: Any, layout: Layout, entry_id: str, elided: set[str] | frozenset[str]) -> dict[str, Any]:
    """Return the line the page draws for ``entry_id`` of ``layout`` (``""``: the START row).

    Keys: ``row`` (:func:`agent_row`), ``depth``, ``mark``, ``kids`` (durable
    children), ``on`` (on ``agent``'s active path) and ``elided`` (in ``elided``:
    the ids its latest compaction elides). O(size of the entry), plus O(depth) for a compaction.
    """
    depth, mark = layout.info(entry_id)
    if entry_id == START:
        r: dict[str, Any] = {"id": "", "parent_id": "", "type": "start", "preview": START_PREVIEW}
        return {"row": r, "depth": 0, "mark": "root", "kids": layout.kids_of(START), "on": False, "elided": False}
    return {
        "row": agent_row(agent, agent.entry(entry_id)),
        "depth": depth,
        "mark": mark,
        "kids": layout.kids_of(entry_id),
        "on": agent.on_path(entry_id),
        "elided": entry_id in elided,
    }


def _extended(lay: Layout, new: list[Entry]) -> Layout:
    """Return ``lay`` (no kind filter) with the entries ``new`` added, its changes taken. O(new entries)."""
    for e in new:
        lay.add(e.id, e.parent_id, off_chain(e), False, e.created_at)
    lay.take_changes()
    return lay


def off_chain(e: Entry) -> bool:
    """True for an entry drawn hanging off its parent, never a branch: an ephemeral message or an aside."""
    return is_ephemeral(e) or is_aside(e)


def agent_layout(agent: Any, hide: Callable[[Entry], bool] | None = None) -> Layout:
    """Return the :class:`~durable_nb.layout.Layout` of ``agent``'s whole log (``hide``: entries
    not drawn). O(n)."""
    return layout_of(agent.entries(), hide)


def layout_of(entries: list[Entry], hide: Callable[[Entry], bool] | None = None) -> Layout:
    """Return the :class:`~durable_nb.layout.Layout` of ``entries``, a log in append order
    (``hide``: entries not drawn). O(n)."""
    ids = [e.id for e in entries]
    parents = [e.parent_id for e in entries]
    eph = ai.Injection.EPHEMERAL
    off = [
        e.message.injected is eph if isinstance(e, MessageEntry) else is_aside(e) for e in entries
    ]  # off_chain, inlined
    hidden = [hide(e) for e in entries] if hide is not None else [False] * len(entries)
    return Layout.build(ids, parents, off, hidden, [e.created_at for e in entries])


def kind_group(entry: Entry) -> str:
    """Return the kind-filter group of ``entry``: ``"aside"`` (another tool's bookkeeping record,
    :func:`~durable_nb.session.is_aside`: progress lines, hook output, snapshots), ``"custom"`` (any
    other custom entry: labels, notes), ``"tool_result"``, or ``""`` (never hidden). O(1)."""
    if isinstance(entry, CustomEntry):
        return "aside" if is_aside(entry) else "custom"
    if isinstance(entry, MessageEntry) and entry.message.role == "tool_result":
        return "tool_result"
    return ""


def kind_filter(hide: Iterable[str]) -> Callable[[Entry], bool] | None:
    """Return the predicate hiding the entries whose :func:`kind_group` is in ``hide``, or ``None``
    when ``hide`` is empty. ``DurableError`` (one line) names a group that is not in :data:`FILTERS`."""
    groups = set(hide)
    unknown = sorted(groups - set(FILTERS))
    if unknown:
        raise DurableError(f"no kind filter {unknown[0]!r}: the groups are {', '.join(FILTERS)}")
    if not groups:
        return None
    return lambda e: kind_group(e) in groups


_open: weakref.WeakSet[SessionWidget] = weakref.WeakSet()

PREPARE_MIN = 20_000  # entries from which a first widget's state is worth preparing ahead (prepare)


class _Prepared:
    """What the first widget of an agent computes from its whole log, computed ahead by
    :func:`prepare`: the layout (and the session's tally, kept) from the log as it was then, in a
    background thread that reads only that list of entries; the state at the leaf
    (:class:`_PathState`), on the agent's thread. ``layout`` is set when the thread ends (it stays
    ``None`` if laying out failed). ``entries``: the agent's log now."""

    def __init__(self, agent: Any, entries: list[Entry]) -> None:
        self.count = len(entries)
        self.last_id = entries[-1].id if entries else ""
        self.layout: Layout | None = None

        def lay_out() -> None:
            try:
                self.layout = layout_of(entries)
                kept_tally(agent, "session", entries)  # kept for the widget (what %durable status counted is reused)
            except Exception:  # noqa: BLE001 - the widget then lays it out itself, and reports any error
                pass

        self.thread = threading.Thread(target=lay_out, name="durable_nb-prepare", daemon=True)
        self.thread.start()
        self.at_leaf = _PathState(agent)  # meanwhile, on this thread


# agent -> its preparation, taken by the agent's next widget
_prepared: weakref.WeakKeyDictionary[Any, _Prepared] = weakref.WeakKeyDictionary()


def prepare(agent: Any) -> _Prepared | None:
    """Prepare what the next :class:`SessionWidget` of ``agent`` would otherwise compute from the
    whole log before its first paint: the tree's layout and the session's tally, in a background
    thread (it reads only the list of entries logged so far, so the agent may go on working), and
    the state at the leaf (the path, its views and tally, from the agent's kept active path: a
    copy at C speed, or built now as a first turn would). That widget takes it and adds what was
    logged since (O(new entries)), so ``%durable show`` on a long session paints at once. The
    notebook calls this on the kernel's thread when a ``%durable`` cell ends; call it on the
    agent's thread.

    Returns the preparation, or ``None`` when there is nothing to prepare: a log shorter than
    :data:`PREPARE_MIN` (a widget lays it out at once), a preparation not yet taken, or an open
    widget of ``agent`` that a new one copies its layout from. Cost here: O(depth) at C speed
    with the agent's caches warm; the layout's O(n) runs in the thread (a widget made meanwhile
    waits for it).
    """
    if agent in _prepared or any(w.agent is agent and w._hide is None and w.comm is not None for w in list(_open)):
        return None
    entries = agent.entries()
    if len(entries) < PREPARE_MIN:
        return None
    p = _prepared[agent] = _Prepared(agent, entries)
    return p


def _take_prepared(agent: Any, entries: list[Entry]) -> _Prepared | None:
    """Return the preparation of ``agent`` (waiting for its thread if it is still laying out) and
    forget it, or ``None`` when there is none or ``entries`` (the log now) no longer extends the
    log it was made from. O(1), plus the wait."""
    p = _prepared.pop(agent, None)
    if p is None:
        return None
    p.thread.join()
    if p.layout is None or not (0 < p.count <= len(entries) and entries[p.count - 1].id == p.last_id):
        return None
    return p


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
    ``"transcript"``. The protocol with the page is in the module doc.
    """

    _esm = _asset("widget.js")
    _css = _asset("widget.css")

    # The one table of the page's requests: action -> method (which takes the request dict).
    ACTIONS: dict[str, str] = {
        "branch": "_do_branch",
        "lines": "_do_lines",
        "locate": "_do_locate",
        "search": "_do_search",
        "compare": "_do_compare",
        "filter": "_do_filter",
    }

    session_id = traitlets.Unicode("").tag(sync=True)
    tree = traitlets.Dict().tag(sync=True)  # {"rev", "lines", "entries", "changed_from", "leaf_line"}
    leaf_id = traitlets.Unicode("").tag(sync=True)
    elided = traitlets.Int(0).tag(sync=True)  # entries from the active path's root its latest compaction elides
    selected_id = traitlets.Unicode("").tag(sync=True)
    view = traitlets.Unicode("tree").tag(sync=True)
    view_limit = traitlets.Int(VIEW_LIMIT).tag(sync=True)
    views = traitlets.Dict().tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    labels = traitlets.Dict().tag(sync=True)  # {label name: entry id} (agent.labels()); the page draws names on rows
    session_cost = traitlets.Unicode("").tag(sync=True)  # tokens and cost of every reply, all branches (cost_text)
    comparison = traitlets.Dict().tag(sync=True)  # share.comparison.state of the compared entries ({}: none)
    hidden = traitlets.List(traitlets.Unicode()).tag(sync=True)  # the kind groups the tree hides
    # Not empty for a log opened read-only (%durable open): what it is a copy of; the header says so.
    read_only = traitlets.Unicode("").tag(sync=True)

    def __init__(self, agent: Any, **kwargs: Any) -> None:
        self.agent = agent
        self._hide: Callable[[Entry], bool] | None = kind_filter(kwargs.get("hidden", ()))
        self._finder = Finder()  # the find's texts, read on the first search
        self._memo: dict = {}
        self._page_seen = False  # a page has asked for lines: syncs push the new ones
        # The first state goes out with the comm's open message: compute it before opening.
        self._start()
        selected, limit = kwargs.get("selected_id", ""), kwargs.get("view_limit", VIEW_LIMIT)
        self._views_key: tuple = (selected or agent.leaf_id, not selected, limit, self._followed.leaf)
        views, error = self._views_for(*self._views_key[:3])
        super().__init__(
            session_id=agent.session_id,
            tree=self._tree_state(0),
            leaf_id=agent.leaf_id,
            elided=self._followed.elided,
            views=views,
            error=error,
            labels=agent.labels(),
            session_cost=cost_text(self._session_tally),
            **kwargs,
        )
        self.on_msg(self._on_request)
        _open.add(self)
        self._unsubscribe = _follow(self)

    def _start(self) -> None:
        """Lay out the agent's whole log (or copy another open widget's layout of it) and start
        following its leaf. O(n): at C speed when copying, plus O(new entries)."""
        agent = self.agent
        entries = agent.entries()
        ready = _take_prepared(agent, entries) if self._hide is None else None
        if ready is not None and ready.layout is not None:  # prepared ahead: add what was logged since
            self._layout = _extended(ready.layout, entries[ready.count :])
        else:
            self._layout = self._copied_layout(entries) or layout_of(entries, self._hide)
        self._count = len(entries)
        self._last_id = entries[-1].id if entries else ""  # to notice a replaced log
        self._session_tally = kept_tally(agent, "session", entries)
        if ready is not None:
            self._followed = _Followed(agent, ready.at_leaf)
            self._followed.move(len(entries) - ready.count)  # to the agent's leaf now (O(entries since), or start over)
        else:
            if entries and agent.depth == len(entries):  # the active path is the whole log: same tally
                keep_tally(agent, "path", len(entries), agent.leaf_id, self._session_tally)
            self._followed = _Followed(agent)
        self._rev = getattr(self, "_rev", 0) + 1

    def _copied_layout(self, entries: list[Entry]) -> Layout | None:
        """Return a copy of another open widget's layout of the agent, extended with the entries
        logged since it last synced (``entries``: the whole log), or ``None`` when there is none to
        copy (a kind filter on either, a log replaced since). O(n) at C speed + O(new entries)."""
        if self._hide is not None:
            return None
        for w in list(_open):
            n = getattr(w, "_count", 0)
            if w is self or w.agent is not self.agent or w._hide is not None or not 0 < n <= len(entries):
                continue
            if entries[n - 1].id != w._last_id:
                continue
            return _extended(w._layout.copy(), entries[n:])
        return None

    def _tree_state(self, changed_from: int) -> dict[str, Any]:
        lay = self._layout
        leaf = lay.drawn(self.agent.leaf_id) if self.agent.leaf_id else None
        return {
            "rev": self._rev,
            "lines": len(lay),
            "entries": self._count,
            "changed_from": changed_from,
            "leaf_line": lay.position(leaf) if leaf else -1,
        }

    def close(self) -> None:
        """Close the widget and stop following its store."""
        if getattr(self, "_unsubscribe", None) is not None:  # (not set when __init__ failed)
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
        """Push what changed since the last sync: the layout's change (``tree``), the leaf, and
        the views when the entry they are at moved. Never a row: the page asks for the lines it draws.

        A log that shrank or changed under the widget (another agent) is laid out again.
        Everything goes out as one update message; a no-op sync sends nothing.
        Cost: see the module doc (O(new entries + view_limit) for a turn).
        """
        agent = self.agent
        tail = agent.entries(max(0, self._count - 1))
        with self.hold_sync():
            if self._count and (not tail or tail[0].id != self._last_id):
                self._start()
                changed: int | None = 0
            else:
                new = tail[1:] if self._count else tail
                hide = self._hide
                for e in new:
                    self._layout.add(e.id, e.parent_id, off_chain(e), hide is not None and hide(e), e.created_at)
                self._count += len(new)
                if new:
                    self._last_id = new[-1].id
                    self._session_tally = tally(
                        (e.message for e in new if isinstance(e, MessageEntry)), self._session_tally
                    )
                    keep_tally(agent, "session", self._count, self._last_id, self._session_tally)
                changed = self._layout.take_changes()
                elided = self._followed.elided
                if not self._followed.move(len(new)) or self._followed.elided != elided:
                    changed = 0  # the active path (or what it elides) changed above the new lines
            if changed is not None:
                self._rev += 1
                tree = self._tree_state(changed)
                self._push(changed, tree["leaf_line"])
                self.tree = tree
            self.session_id = agent.session_id
            self.leaf_id = agent.leaf_id
            self.elided = self._followed.elided
            self.labels = agent.labels()  # O(labels); sent only when it changed
            self.session_cost = cost_text(self._session_tally)
            self._update_views()

    def _push(self, changed: int, leaf_line: int) -> None:
        """Send the changed lines near the leaf ahead of the ``tree`` update that announces them
        (same ``rev``), so a drawn page has them without asking: a busy kernel (a turn running)
        answers no request until its cell ends. Only once the page has asked for lines (it is
        drawn); at most ``2 * PUSH_AROUND + 1`` lines around the leaf (from the change when there is
        no leaf), usually just the new ones."""
        if not self._page_seen:
            return
        around = leaf_line if leaf_line >= 0 else changed + PUSH_AROUND  # no leaf: the page is at the top
        start = max(changed, around - PUSH_AROUND)
        stop = min(len(self._layout), around + PUSH_AROUND + 1)
        if start < stop:
            total = len(self._layout)
            self.send(
                {"reply": "lines", "rev": self._rev, "start": start, "total": total, "lines": self.lines(start, stop)}
            )

    def relayout(self, hide: Callable[[Entry], bool] | None) -> None:
        """Lay the tree out again with the entries ``hide`` picks hidden (``None``: all drawn);
        their children hang off the nearest drawn ancestor. The hook of a kind filter. O(n)."""
        self._hide = hide
        with self.hold_sync():
            self._start()
            self.tree = self._tree_state(0)

    @traitlets.observe("selected_id", "view_limit")
    def _selection_changed(self, _change: dict) -> None:
        if hasattr(self, "_views_key"):
            self._update_views()

    def _update_views(self) -> None:
        """Recompute ``views`` for the selected entry (or the leaf) if it moved. O(new entries + limit)
        following the leaf, O(depth of the selected entry) when the selection moves."""
        at = self.selected_id or self.agent.leaf_id
        key = (at, not self.selected_id, self.view_limit, self._followed.leaf if not self.selected_id else "")
        if key != self._views_key:
            self._views_key = key
            self.views, self.error = self._views_for(*key[:3])

    def _views_for(self, at: str, following_leaf: bool, limit: int) -> tuple[dict[str, Any], str]:
        """Return the ``views`` value at ``at`` and an error: from the kept state of the active path
        when following the leaf (O(limit)), else :func:`views_at` (O(depth of ``at``) + O(limit))."""
        if len(self._memo) > 40 * max(limit, VIEW_LIMIT):
            self._memo.clear()  # it keeps what it encoded alive: bounded
        if following_leaf and at == self._followed.leaf:
            return self._followed.views(limit, self._memo), ""
        return views_at(self.agent.path(at) if at else [], at, following_leaf, limit, self.agent.session_id, self._memo)

    # -- lines -------------------------------------------------------------

    def line(self, entry_id: str) -> dict[str, Any]:
        """Return :func:`tree_line` for a drawn entry of this widget's layout. O(size of the entry)."""
        return tree_line(self.agent, self._layout, entry_id, self._followed.elided_ids)

    def lines(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Return :meth:`line` for the layout's lines ``start`` to ``stop`` (at most :data:`MAX_LINES`)."""
        return [self.line(i) for i in self._layout.ids(start, min(stop, max(0, start) + MAX_LINES))]

    def _static_state(self) -> dict[str, Any]:
        """Return what the static fallback draws (:mod:`durable_nb.share.fallback`): the traits, plus
        ``lines``: the first and last ``fallback.ROWS`` lines (all of them in a small session). O(ROWS)."""
        from .share import fallback

        n, k = len(self._layout), fallback.ROWS
        head = self.lines(0, n) if n <= 2 * k else [*self.lines(0, k), *self.lines(n - k, n)]
        state = {
            k: getattr(self, k)
            for k in ("session_id", "tree", "leaf_id", "elided", "views", "labels", "read_only", "session_cost")
        }
        return {**state, "lines": head, "line_count": n, "entry_count": self._count}

    def __repr__(self) -> str:
        from .share import fallback  # not at import time: share's page imports this module

        return f"SessionWidget({fallback.header(self._static_state())})"

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """Return the widget view plus a static fallback: ``text/html`` (the tree's first and last
        lines and both views, escaped, no script; see :mod:`durable_nb.share.fallback`) and a
        ``text/plain`` summary. JupyterLab and Notebook 7 draw the widget; a renderer with no kernel or
        widget manager (nbconvert, nbviewer, GitHub) shows the fallback. The fallback is the
        session as it was when the output was displayed; a widget opened on its compare view
        (``%durable compare``) falls back to the comparison (:mod:`durable_nb.share.comparison`).
        O(fallback.ROWS + view size)."""
        from .share import fallback

        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        if self.comparison and self.view == "compare":  # %durable compare: the comparison is the fallback
            from .share import comparison

            c = self.comparison
            return {**data, "text/plain": comparison.text(c), "text/html": comparison.html(c)}, metadata
        state = self._static_state()
        data = {**data, "text/plain": fallback.text(state), "text/html": fallback.html(state)}
        return data, metadata

    # -- requests ----------------------------------------------------------

    def _on_request(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Dispatch a page request through :attr:`ACTIONS` (unknown actions are ignored)."""
        if not isinstance(content, dict):
            return
        name = self.ACTIONS.get(str(content.get("action")))
        if name is not None:
            self._page_seen = True
            getattr(self, name)(content)

    def _do_lines(self, req: dict[str, Any]) -> None:
        """``{"action": "lines", "start", "stop"}``: reply with those lines (see the module doc)."""
        try:
            start, stop = int(req.get("start", 0)), int(req.get("stop", 0))
        except (TypeError, ValueError):
            return
        self.send(
            {
                "reply": "lines",
                "rev": self._rev,
                "start": max(0, start),
                "total": len(self._layout),
                "lines": self.lines(start, stop),
            }
        )

    def _do_locate(self, req: dict[str, Any]) -> None:
        """``{"action": "locate", "id"}``: reply with the entry's line index (see the module doc)."""
        entry_id = str(req.get("id", ""))
        drawn = self._layout.drawn(entry_id) if entry_id else None
        index = self._layout.position(drawn) if drawn else -1
        self.send({"reply": "locate", "id": entry_id, "rev": self._rev, "index": index, "drawn": drawn or ""})

    def _do_search(self, req: dict[str, Any]) -> None:
        """``{"action": "search", "query"}``: reply with the matching entries in drawn order (see the module doc).

        O(new entries' text + total text) for the find, plus O(hits log hits) to order them."""
        query = str(req.get("query", ""))[:MAX_QUERY]
        lay = self._layout
        hits = []
        for entry_id in self._finder.find(self.agent.entries(), query):
            drawn = lay.drawn(entry_id)
            hits.append((lay.position(drawn) if drawn else -1, entry_id, drawn or ""))
        hits.sort(key=lambda h: h[0])
        self.send(
            {
                "reply": "search",
                "query": query,
                "rev": self._rev,
                "total": len(hits),
                "hits": [{"id": e, "index": i, "drawn": d} for i, e, d in hits[:MAX_HITS]],
            }
        )

    def _do_compare(self, req: dict[str, Any]) -> None:
        """``{"action": "compare", "ids"}``: show the comparison of those entries, or clear it (no ids)."""
        from .share import comparison

        refs = [str(x) for x in req.get("ids") or []]
        with self.hold_sync():
            if not refs:
                self.comparison = {}
                self.view = "tree" if self.view == "compare" else self.view
                return
            try:
                self.comparison = comparison.of(self.agent, refs)
            except DurableError as e:
                self.error = str(e)
                return
            self.error = ""
            self.view = "compare"

    def _do_filter(self, req: dict[str, Any]) -> None:
        """``{"action": "filter", "hide"}``: lay the tree out with those kind groups hidden. O(n)."""
        groups = sorted({str(g) for g in req.get("hide") or []})
        try:
            hide = kind_filter(groups)
        except DurableError as e:
            self.error = str(e)
            return
        with self.hold_sync():
            self.error = ""
            self.hidden = groups
            self.relayout(hide)

    def _do_branch(self, req: dict[str, Any]) -> None:
        """``{"action": "branch", "id"}``: move the leaf there, follow it, sync back (or set ``error``)."""
        try:
            self.agent.branch(str(req.get("id", "")))
        except DurableError as e:
            self.error = str(e)
            return
        with self.hold_sync():
            self.error = ""
            self.selected_id = ""
            self.sync()
