"""The widget class: a session's whole tree, its model view and its transcript view, in a notebook.

See :mod:`durable_nb.widget` for what it sends and what each sync costs, and
:mod:`durable_nb.widget.protocol` for every trait, request and reply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from ..cost import tally
from ..errors import DurableError
from ..kept import keep_tally, log_shape, session_tally
from ..kinds.leaf_move import move_leaf
from ..notebook import page
from ..session import Entry, Finder, MessageEntry
from . import comparison, fallback, listing, module, preparation, pushed, views_delta
from .assets import front_end
from .chips import Chips
from .encoding import tree_line
from .follow import follow
from .layout import Layout
from .pushed import PUSH_AROUND  # noqa: F401  - importable from here, as before
from .tree import extended, kind_filter, layout_of, leaf_shown, log_of, never_drawn, off_chain
from .views import VIEW_LIMIT, Followed, at_shown_leaf, cost_text, past_fork, views_at

MAX_LINES = 400  # lines one "lines" reply may carry
MAX_HITS = 1000  # search hits one "search" reply carries ("total" says how many there are)
MAX_QUERY = 500  # characters of a search query read
# The output's own mime type: the extension's renderer shows the fallback until the widget is live.
OUTPUT_MIME = "application/vnd.durable-nb.widget+json"


class SessionWidget(anywidget.AnyWidget):
    """The entry tree of ``agent`` (a :class:`durable_nb.durable.Agent`), with its two views.

    ``SessionWidget(agent)`` syncs once; call :meth:`sync` after the agent's
    log or leaf changes (the notebook magics do, after each persistence
    receipt). ``view`` picks the starting tab: ``"tree"``, ``"model"`` or
    ``"transcript"``. The protocol with the page is :mod:`durable_nb.widget.protocol`.
    """

    _esm = module.esm()  # a loader: the code comes from the installed extension, else the kernel (module.py)
    _css = front_end("widget.css")

    # The one table of the page's requests: action -> method (which takes the request dict).
    ACTIONS: dict[str, str] = {
        "branch": "_do_branch",
        "lines": "_do_lines",
        "locate": "_do_locate",
        "search": "_do_search",
        "compare": "_do_compare",
        "filter": "_do_filter",
        "views": "_do_views",
        "query": "_do_query",
        "step": "_do_step",
        "timeline": "_do_timeline",
        "fallback": "_do_fallback",
        "module": "_do_module",
    }
    # the flat list, the keyboard's steps and the timeline strip: answered in durable_nb.widget.listing
    _do_query, _do_step, _do_timeline = listing.do_query, listing.do_step, listing.do_timeline
    _do_module = module.reply  # the widget's code, for a page with no served copy of it

    session_id = traitlets.Unicode("").tag(sync=True)
    tree = traitlets.Dict().tag(sync=True)  # {"rev", "lines", "entries", "changed_from", "leaf_line"}
    leaf_id = traitlets.Unicode("").tag(sync=True)
    elided = traitlets.Int(0).tag(sync=True)  # entries from the active path's root its latest compaction elides
    selected_id = traitlets.Unicode("").tag(sync=True)
    view = traitlets.Unicode("tree").tag(sync=True)
    view_limit = traitlets.Int(VIEW_LIMIT).tag(sync=True)
    views = traitlets.Dict().tag(sync=True)
    views_rev = traitlets.Int(0).tag(sync=True)  # which ``views`` it is: a "views" reply names the one it changes
    error = traitlets.Unicode("").tag(sync=True)
    labels = traitlets.Dict().tag(sync=True)  # {label name: entry id} (agent.labels()); the page draws names on rows
    session_cost = traitlets.Unicode("").tag(sync=True)  # tokens and cost of every reply, all branches (cost_text)
    comparison = traitlets.Dict().tag(sync=True)  # comparison.state of the compared entries ({}: none)
    hidden = traitlets.List(traitlets.Unicode()).tag(sync=True)  # the kind groups the tree hides
    # Not empty for a log opened read-only (%durable open): what it is a copy of; the header says so.
    read_only = traitlets.Unicode("").tag(sync=True)
    # An evaluation run's grid (durable_nb.evals.grid.state; {}: none): the Evaluation tab (%durable evals RUN).
    evaluation = traitlets.Dict().tag(sync=True)

    def __init__(self, agent: Any, **kwargs: Any) -> None:
        self.agent = agent
        self._hide: Callable[[Entry], bool] | None = kind_filter(kwargs.get("hidden", ()))
        # annotations kept elsewhere (a read-only log's sidecar, durable_nb.sidecar): chips on their entries
        self._annotations: list[Entry] = list(kwargs.pop("annotations", ()))
        self._finder = Finder()  # the find's texts, read on the first search
        self._memo: dict = {}
        self._page_seen = False  # a page has asked for lines: syncs push the new ones, views as a delta
        self._quiet: dict[str, Any] = {}  # trait -> the value set without an update message (sent as a delta)
        self._sent = views_delta.Sent()  # what the page holds beyond ``views`` (the items a delta dropped)
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
        preparation.opened(self)
        self._unsubscribe = follow(self)

    @classmethod
    def pinned(cls, agent: Any, at: str = "", **kwargs: Any) -> SessionWidget:
        """Return a widget pinned to entry ``at`` of ``agent`` (an id; ``""``: the leaf): the session as it
        was when that entry was written, read-only, never following later turns (:mod:`.pinned`)."""
        from .pinned import pinned_copy, pinned_note

        copy = pinned_copy(agent, at)
        return cls(copy, read_only=pinned_note(copy.leaf_id), **kwargs)

    def _start(self) -> None:
        """Lay out the agent's whole log (or copy another open widget's layout of it) and start
        following its leaf. O(n): at C speed when copying, plus O(new entries)."""
        agent = self.agent
        entries, distinct = log_of(agent)
        shape = log_shape(agent)  # the log's entry types and kinds (kept: O(entries since it was read))
        ready = preparation.take(agent, entries) if self._hide is None else None
        if ready is not None and ready.layout is not None:  # prepared ahead: add what was logged since
            self._layout = extended(ready.layout, entries[ready.count :])
        else:
            self._layout = self._copied_layout(entries) or layout_of(entries, self._hide, distinct, shape)
        self._count = len(entries)
        self._last_id = entries[-1].id if entries else ""  # to notice a replaced log
        self._session_tally = session_tally(agent, entries)
        self._chips = Chips.of(entries, shape.types, self._annotations)
        if ready is not None:
            self._followed = Followed(agent, ready.at_leaf)
            self._followed.move(len(entries) - ready.count)  # to the agent's leaf now (O(entries since), or start over)
        else:
            self._followed = Followed(agent)
        self._rev = getattr(self, "_rev", 0) + 1
        self._held = pushed.Held()  # the lines the page holds (it drops them all at a new layout)

    def _copied_layout(self, entries: list[Entry]) -> Layout | None:
        """Return a copy of another open widget's layout of the agent, extended with the entries
        logged since it last synced (``entries``: the whole log), or ``None`` when there is none to
        copy (a kind filter on either, a log replaced since). O(n) at C speed + O(new entries)."""
        if self._hide is not None:
            return None
        for w in preparation.widgets_of(self.agent):
            n = getattr(w, "_count", 0)
            if w is self or w._hide is not None or not 0 < n <= len(entries):
                continue
            if entries[n - 1].id != w._last_id:
                continue
            return extended(w._layout.copy(), entries[n:])
        return None

    def _tree_state(self, changed_from: int) -> dict[str, Any]:
        lay = self._layout
        shown = leaf_shown(self.agent)
        leaf = lay.drawn(shown) if shown else None
        return {
            "rev": self._rev,
            "lines": len(lay),
            "entries": self._count,
            "changed_from": changed_from,
            "leaf_line": lay.position(leaf) if leaf else -1,  # the leaf badge's line (above a label: its entry's)
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
            preparation.sync_widgets(self.agent)

    def sync(self) -> None:
        """Push what changed since the last sync: the layout's change (``tree``), the leaf, and
        the views when the entry they are at moved. Never a row: the page asks for the lines it draws.

        A log that shrank or changed under the widget (another agent) is laid out again.
        Everything goes out as one update message; a no-op sync sends nothing.
        Cost: see :mod:`durable_nb.widget` (O(new entries + view_limit) for a turn).
        """
        agent = self.agent
        tail, fresh = log_of(agent, max(0, self._count - 1))  # fresh: no id repeats, each new one is new
        with self.hold_sync():
            if self._count and (not tail or tail[0].id != self._last_id):
                self._start()
                changed: int | None = 0
            else:
                new = tail[1:] if self._count else tail
                hide = self._hide
                chipped = []  # entries a new verdict or annotation is about: their lines change
                for e in new:
                    unseen = never_drawn(e) or (hide is not None and hide(e))
                    self._layout.add(e.id, e.parent_id, off_chain(e), unseen, e.created_at, fresh)
                    target = self._chips.add(e)
                    if target is not None:
                        chipped.append(target)
                self._count += len(new)
                if new:
                    self._last_id = new[-1].id
                    self._session_tally = tally(
                        (e.message for e in new if isinstance(e, MessageEntry)), self._session_tally
                    )
                    keep_tally(agent, "session", self._count, self._last_id, self._session_tally)
                changed = self._layout.take_changes()
                for target in chipped:
                    drawn = self._layout.drawn(target)
                    at = self._layout.position(drawn) if drawn else -1
                    if at >= 0:
                        changed = at if changed is None else min(changed, at)
                path, elided = self._followed.path, self._followed.elided_ids
                if not self._followed.move(len(new)):  # another active path: its lines and the old's flip
                    now = self._followed
                    changed = 0 if now.elided_ids != elided else self._layout.first(past_fork(path, now.path), changed)
            if changed is not None:
                self._rev += 1
                tree = self._tree_state(changed)
                pushed.push(self, changed, tree["leaf_line"])  # the changed lines near the leaf
                self.tree = tree
            self.session_id = agent.session_id
            self.leaf_id = agent.leaf_id
            self.elided = self._followed.elided
            self.labels = agent.labels()  # O(labels); sent only when it changed
            self.session_cost = cost_text(self._session_tally)
            self._update_views(delta=self._page_seen)

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

    def _update_views(self, delta: bool = False) -> None:
        """Recompute ``views`` for the selected entry (or the leaf) if it moved. O(new entries + limit)
        following the leaf, O(depth of the selected entry) when the selection moves.

        ``delta`` (a sync, once a page is drawn): the new value goes out as a ``views`` reply with
        what changed for the tab shown (:mod:`~durable_nb.widget.views_delta`), not as the trait."""
        at = self.selected_id or self.agent.leaf_id
        key = (at, not self.selected_id, self.view_limit, self._followed.leaf if not self.selected_id else "")
        if key == self._views_key:
            return
        self._views_key = key
        views, error = self._views_for(*key[:3])
        old, base = self.views, self.views_rev
        rev = base + 1
        if delta and "views" not in getattr(self, "_states_to_send", ()):
            self._quiet = {"views": views, "views_rev": rev}
            try:
                self.views_rev, self.views = rev, views
            finally:
                self._quiet = {}
            change = self._sent.delta(old, views, self.view)
            self.send({"reply": "views", "rev": self._rev, "seq": rev, "base": base, **change})
        else:
            with self.hold_sync():
                self.views_rev, self.views = rev, views
        self.error = error

    def _should_send_property(self, key: str, value: Any) -> bool:
        """ipywidgets' hook (whether a trait change goes out in an update message): not for a value
        :meth:`_update_views` sends as a delta. Else ipywidgets' own rule."""
        if key in self._quiet and self._quiet[key] is value:
            return False
        return bool(super()._should_send_property(key, value))

    def _views_for(self, at: str, following_leaf: bool, limit: int) -> tuple[dict[str, Any], str]:
        """Return the ``views`` value at ``at`` and an error: from the kept state of the active path
        when following the leaf (O(limit)), else :func:`views_at` (O(depth of ``at``) + O(limit))."""
        if len(self._memo) > 40 * max(limit, VIEW_LIMIT):
            self._memo.clear()  # it keeps what it encoded alive: bounded
        if following_leaf and at == self._followed.leaf:
            views, error = self._followed.views(limit, self._memo), ""
        else:
            path = self.agent.path(at) if at else []
            views, error = views_at(path, at, following_leaf, limit, self.agent.session_id, self._memo)
        return (at_shown_leaf(views, self.agent) if following_leaf else views), error

    # -- lines -------------------------------------------------------------

    def line(self, entry_id: str) -> dict[str, Any]:
        """Return :func:`tree_line` for a drawn entry of this widget's layout. O(size of the entry)."""
        return tree_line(self.agent, self._layout, entry_id, self._followed.elided_ids, self._chips)

    def lines(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Return :meth:`line` for the layout's lines ``start`` to ``stop`` (at most :data:`MAX_LINES`)."""
        return [self.line(i) for i in self._layout.ids(start, min(stop, max(0, start) + MAX_LINES))]

    def _static_state(self, lines: bool = True) -> dict[str, Any]:
        """Return what the static fallback draws (:mod:`durable_nb.widget.fallback`): the traits, plus ``lines``: the
        first and last ``fallback.ROWS`` lines (all in a small session; none for ``lines=False``). O(ROWS)."""
        n, k = len(self._layout), fallback.ROWS
        head = [] if not lines else self.lines(0, n) if n <= 2 * k else [*self.lines(0, k), *self.lines(n - k, n)]
        state = {
            k: getattr(self, k)
            for k in (
                "session_id",
                "tree",
                "leaf_id",
                "elided",
                "views",
                "labels",
                "read_only",
                "session_cost",
                "evaluation",
            )
        }
        shown = leaf_shown(self.agent)
        return {**state, "shown_leaf": shown, "lines": head, "line_count": n, "entry_count": self._count}

    def __repr__(self) -> str:
        return f"SessionWidget({fallback.header(self._static_state(lines=False))})"

    def fallback_bundle(self, view_items: int | None = None) -> dict[str, str]:
        """Return the static fallback as it would be displayed now: ``text/plain`` and ``text/html``
        (the tree's first and last lines and both views, escaped, no script; see
        :mod:`durable_nb.widget.fallback`; ``view_items``: each view's last that many, the short
        one); a widget on its compare view (``%durable compare``) falls back to the comparison
        (:mod:`durable_nb.widget.comparison`). O(fallback.ROWS + view size)."""
        if self.comparison and self.view == "compare":
            c = self.comparison
            return {"text/plain": comparison.text(c), "text/html": comparison.html(c)}
        return fallback.bundle(self._static_state(), view_items)

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """Return the widget view plus :meth:`fallback_bundle` and :data:`OUTPUT_MIME` (which
        durable_nb's JupyterLab / Notebook 7 extension renders: the fallback while the widget's model
        is missing, a reopened notebook, then the widget). A renderer with no kernel or widget manager
        (nbconvert, nbviewer, GitHub) shows the fallback: whole, unless a page that writes the whole one
        in as it saves said it is attached (:mod:`durable_nb.notebook.page`); then it is the short one
        (each view's last :data:`fallback.LIVE_ITEMS` items) and OUTPUT_MIME says so. O(fallback)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        short = page.saves_fallback()
        own = {"session": self.session_id, **({"fallback": "short"} if short else {})}
        return {**data, **self.fallback_bundle(fallback.LIVE_ITEMS if short else None), OUTPUT_MIME: own}, metadata

    def get_state(self, key: Any = None, drop_defaults: bool = False) -> dict[str, Any]:
        """ipywidgets' state; the whole of it (the comm's open message, a page's state request) carries
        only the part of ``views`` the shown tab draws (:func:`views_delta.opening`, ~100 KB less)."""
        state = super().get_state(key, drop_defaults)
        if key is None and isinstance(state.get("views"), dict):
            state["views"] = views_delta.opening(state["views"], self.view)
        return state

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
        """``{"action": "lines", "start", "stop"}``: reply with those lines (:mod:`~durable_nb.widget.protocol`)."""
        try:
            start, stop = int(req.get("start", 0)), int(req.get("stop", 0))
        except (TypeError, ValueError):
            return
        lines = self.lines(start, stop)
        self._held.sent(max(0, start), lines)
        self.send(pushed.reply(self, max(0, start), lines))

    def _do_views(self, _req: dict[str, Any]) -> None:
        """``{"action": "views"}``: reply with the whole ``views`` (a part the page holds is stale)."""
        self._sent.whole()
        self.send({"reply": "views", "rev": self._rev, "seq": self.views_rev, "base": -1, "views": self.views})

    def _do_locate(self, req: dict[str, Any]) -> None:
        """``{"action": "locate", "id"}``: reply with the entry's line index (:mod:`~durable_nb.widget.protocol`)."""
        entry_id = str(req.get("id", ""))
        drawn = self._layout.drawn(entry_id) if entry_id else None
        index = self._layout.position(drawn) if drawn else -1
        self.send({"reply": "locate", "id": entry_id, "rev": self._rev, "index": index, "drawn": drawn or ""})

    def _do_search(self, req: dict[str, Any]) -> None:
        """``{"action": "search", "query"}``: reply with the matching entries in drawn order (:mod:`~durable_nb.widget.protocol`).

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

    def _do_fallback(self, _req: dict[str, Any]) -> None:
        """``{"action": "fallback"}``: reply with :meth:`fallback_bundle` (:mod:`~durable_nb.widget.protocol`)."""
        b = self.fallback_bundle()
        self.send({"reply": "fallback", "rev": self._rev, "html": b["text/html"], "text": b["text/plain"]})

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
            if self.read_only:
                self.agent.branch(str(req.get("id", "")))
            else:  # recorded, so a reopened notebook resumes there
                move_leaf(self.agent, str(req.get("id", "")))
        except DurableError as e:
            self.error = str(e)
            return
        with self.hold_sync():
            self.error = ""
            self.selected_id = ""
            self.sync()
