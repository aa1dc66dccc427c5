"""The entry-tree widget: a session's whole tree, its model view and its transcript view.

    from durable_nb.widget import SessionWidget
    w = SessionWidget(agent)      # display(w), or just display the agent
    w.sync()                      # push what changed since the last sync

The front end (``static/widget.js``, ``static/widget.css``: the esbuild bundle of ``js/widget/src``) draws the tree from *lines* Python
lays out (:class:`~durable_nb.widget.layout.Layout`, kept up to date one entry at a time) and
fetches only the lines it draws, plus a margin, by custom message. It draws views that Python
computed (:func:`~durable_nb.session.model_view`, :func:`~durable_nb.session.transcript_view`,
:func:`~durable_nb.session.display_text`), never from JavaScript. The widget never writes the store.

One concept per module:

- :mod:`.session_widget`: the class; :mod:`.protocol`: every trait, request and reply;
- :mod:`.encoding`: rows, lines and view items; :mod:`.views`: the views at an entry and at the leaf;
  :mod:`.views_delta`: what a sync sends a drawn page of them;
- :mod:`.layout` and :mod:`.tree`: the drawn lines, off-chain entries and kind filters;
- :mod:`.preparation`: a long session's first widget prepared ahead, the open widgets;
- :mod:`.follow`: appends by other kernels; :mod:`.fallback` and :mod:`.comparison`: the static
  HTML every output carries and the compare view's data.

**Cost per sync**: O(new entries) for the layout (a new branch point: O(the subtree that becomes
a branch); a new root or an orphan: O(n) once) and O(new entries + view_limit) for the views;
bytes sent: the changed traits plus, once a page is drawn, the new lines near the leaf and the
views' change for the tab shown (:mod:`.views_delta`: about the new entries' size); before that, or
for a selection, ``views`` whole (within ``view_limit * CHARS_PER_ITEM`` characters).
"""

from __future__ import annotations

from .assets import asset
from .encoding import DATA_CHARS, PREVIEW_CHARS, START_PREVIEW, agent_row, elide_blobs, row, tree_line
from .preparation import PREPARE_MIN, after_cell, prepare, sync_widgets
from .session_widget import MAX_HITS, MAX_LINES, MAX_QUERY, PUSH_AROUND, SessionWidget
from .tree import FILTERS, agent_layout, kind_filter, kind_group, layout_of, off_chain
from .views import CHARS_PER_ITEM, VIEW_LIMIT, cost_text, views_at

__all__ = [
    "CHARS_PER_ITEM",
    "DATA_CHARS",
    "FILTERS",
    "MAX_HITS",
    "MAX_LINES",
    "MAX_QUERY",
    "PREPARE_MIN",
    "PREVIEW_CHARS",
    "PUSH_AROUND",
    "START_PREVIEW",
    "VIEW_LIMIT",
    "SessionWidget",
    "agent_layout",
    "after_cell",
    "agent_row",
    "asset",
    "cost_text",
    "elide_blobs",
    "kind_filter",
    "kind_group",
    "layout_of",
    "off_chain",
    "prepare",
    "row",
    "sync_widgets",
    "tree_line",
    "views_at",
]
