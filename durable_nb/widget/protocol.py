"""The page protocol, Python side: every synced trait, every request the page sends and every reply.

Its TypeScript twin is ``js/widget/src/protocol.ts``; tests/widget/test_protocol_ts.py compares the two, so keep
this module declarations only (``TypedDict``, ``Literal``), readable with
:func:`typing.get_type_hints`: a field the page may miss is ``NotRequired``.

**Traits** (:class:`Traits`; small whatever the session size, so a saved notebook's widget state
stays small). Custom messages sent before the page renders are lost, so everything the first paint
needs is a trait: the layout's revision and size (:class:`Tree`), the leaf, what the latest
compaction elides, the selection, the tab, both views at the selected entry (:class:`Views`: their
last ``view_limit`` items), the labels, the session's cost, the comparison, the hidden kind groups,
the evaluation grid.

**Requests** (:data:`Request`, the page's ``model.send({"action": NAME, ...})``), dispatched by
:attr:`SessionWidget.ACTIONS <durable_nb.widget.SessionWidget.ACTIONS>` (one method per
:data:`Action`). Reads are answered by a custom message carrying ``"reply": NAME``
(:data:`Reply`); the page ignores a reply whose ``rev`` is not its current ``tree.rev``. Actions
that change the session (``branch``, ``compare``, ``filter``) answer by setting traits, or ``error``.

- ``lines``: the layout's lines ``start`` to ``stop`` (at most ``MAX_LINES``).
- ``locate``: the line of an entry (or of its nearest drawn ancestor ``drawn`` under a kind
  filter; ``-1`` if unknown): how the page reveals any entry.
- ``branch`` ("continue from here"): ``agent.branch(id)``, then a sync.
- ``search``: the entries of the whole tree (every branch, hidden ones too) whose text holds every
  word of ``query`` (the rule of ``%durable search``), in drawn order, at most ``MAX_HITS`` of ``total``.
- ``compare``: sets ``comparison`` (ids, labels or prefixes) and ``view = "compare"``; no ids clears it.
- ``filter``: lays the tree out again with those :data:`FilterGroup` groups hidden, sets ``hidden``.
- ``views``: the whole ``views`` value (a ``views`` reply with ``base`` ``-1``), for a part the page holds stale.
- ``query``: the List panel's page of entries passing a :class:`Filter`, sorted, with the values each
  filter can take (:mod:`durable_nb.widget.listing`); ``step``: the next / previous entry, turn or
  branch point in drawn order (the keys); ``timeline``: the session's turns in time order, with cost.
- ``fallback``: the output's static fallback as it would be displayed now (``text/html`` and
  ``text/plain``, bounded as :mod:`durable_nb.widget.fallback` says, never the short one). The page
  asks as the notebook is saved if the session changed since its last one, and once after a display
  that carried the short fallback (:mod:`durable_nb.notebook.page`); durable_nb's JupyterLab /
  Notebook 7 extension writes it into the output, so a saved notebook's fallback is the session at
  save time. A turn sends none.
- ``module``: the widget's code, for a page with no served copy (:mod:`durable_nb.widget.module`).

Once the page has asked for lines, a sync pushes ``lines`` replies (the changed lines near the leaf
but those it holds, :mod:`durable_nb.widget.pushed`) before the ``tree`` update announcing them, and
a sync moving the views along with the leaf sends a ``views`` reply (:class:`ViewsReply`, before the
update; :mod:`durable_nb.widget.views_delta`): the small fields and the parts the shown tab draws, the
trait changing in the kernel without an update message. The page asks for a part it holds stale.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

# the List panel's, the keys' and the timeline's declarations, re-exported: one protocol
from .protocol_nav import (  # noqa: F401
    Facets,
    Filter,
    ModuleReply,
    ModuleRequest,
    QueryRequest,
    SortKey,
    StepReply,
    StepRequest,
    StepWhat,
    TimelineReply,
    TimelineRequest,
    Turn,
)

# -- names ---------------------------------------------------------------------------------------

Action = Literal[
    "lines", "locate", "branch", "search", "compare", "filter", "views", "query", "step", "timeline", "fallback",
    "module",
]  # fmt: skip
ReplyName = Literal["lines", "locate", "search", "views", "query", "step", "timeline", "fallback", "module"]
View = Literal["tree", "model", "transcript", "compare", "grid", "list"]  # the tab the page shows
Mark = Literal["root", "cont", "branch", "eph"]  # how a line hangs off the line above it
RowType = Literal["message", "compaction", "custom", "start"]
FilterGroup = Literal["custom", "aside", "tool_result"]  # the kind groups the tree can hide
GridMark = Literal["regressed", "improved", "changed"]  # a grid cell against its baseline


# -- what a trait holds --------------------------------------------------------------------------


class Tree(TypedDict):
    """``tree``: the layout's revision, its line and entry counts, the first line changed since the
    previous ``rev`` (``0``: drop every cached line) and the leaf's line (``-1``: not drawn)."""

    rev: int
    lines: int
    entries: int
    changed_from: int
    leaf_line: int


class Row(TypedDict):
    """What the tree draws for one entry (:func:`durable_nb.widget.row`; empty fields left out)."""

    id: str
    parent_id: str
    type: RowType
    preview: str
    what: str  # what the row is labelled: a message's role, "custom · <kind>", the type (encoding.shown_kind)
    turn: NotRequired[bool]  # a user message that starts a turn (is_turn_start): "no reply" when unanswered
    created_at: NotRequired[str]
    role: NotRequired[str]
    injected: NotRequired[str]
    origin: NotRequired[str]
    tools: NotRequired[list[str]]
    bad_arguments: NotRequired[int]
    thinking: NotRequired[int]
    reminders: NotRequired[int]
    attachments: NotRequired[list[str]]
    tool_call_id: NotRequired[str]
    is_error: NotRequired[bool]
    duration_ms: NotRequired[float]
    tokens: NotRequired[list[int]]  # [input, output]
    cost: NotRequired[str]
    kind: NotRequired[str]
    aside: NotRequired[bool]
    first_kept_id: NotRequired[str]
    tokens_before: NotRequired[int]
    elides: NotRequired[list[Any]]  # [first id, last id, count]


class Chip(TypedDict):
    """A chip on a line: the latest verdict of a run's grader or annotation of an author
    (:mod:`durable_nb.widget.chips`); ``count`` of them were written (all kept in the log)."""

    kind: str  # "verdict" or "annotation" (the bookkeeping kind)
    key: str  # who: the annotation's author, the verdict's "run/grader"
    id: str  # the latest entry's id
    count: int
    by: NotRequired[str]
    at: NotRequired[str]  # when (created_at)
    score: NotRequired[float]
    tags: NotRequired[list[str]]
    note: NotRequired[str]
    run: NotRequired[str]
    grader: NotRequired[str]
    passed: NotRequired[bool]
    reason: NotRequired[str]
    error: NotRequired[str]


class Line(TypedDict):
    """One line of the tree as the page fetches it (:func:`durable_nb.widget.tree_line`)."""

    row: Row
    depth: int
    mark: Mark
    rails: list[bool]  # its lanes, outermost first (Layout.rails): True = a lane runs on past it
    kids: int  # durable children drawn: a branch count, 0 = "no reply"
    on: bool  # on the active path
    elided: bool  # elided by the active path's latest compaction
    chips: NotRequired[list[Chip]]  # verdicts and annotations on this entry (bookkeeping entries are never lines)


class ViewMessage(TypedDict):
    """An item of the model view: a message in the log's encoding (:class:`durable_nb.ai.Message`'s
    fields; blobs elided, fields other tools wrote kept) and the entry it comes from."""

    role: str
    content: list[dict[str, Any]]
    entry_id: str  # "" for a message the view synthesized (a summary, an interrupted result)
    injected: NotRequired[str]
    origin: NotRequired[str]
    tool_call_id: NotRequired[str]
    tool_name: NotRequired[str]
    is_error: NotRequired[bool]
    usage: NotRequired[dict[str, Any]]
    stop_reason: NotRequired[str]
    model: NotRequired[str]
    settings: NotRequired[dict[str, Any]]
    timing: NotRequired[dict[str, Any]]
    ephemeral_context: NotRequired[list[str]]
    api: NotRequired[str]
    provider: NotRequired[str]
    error: NotRequired[str]
    timestamp: NotRequired[str]
    mcp: NotRequired[dict[str, Any]]  # a tool result's MCP provenance (durable.mcp_tools; extra fields of the log)
    reused: NotRequired[str]  # a result answered from stored results (tools reused): the entry it copies


class ViewEntry(TypedDict):
    """An item of the transcript view (:func:`durable_nb.widget.encoding.view_entry`)."""

    id: str
    type: RowType
    text: str
    what: str  # as Row.what
    role: NotRequired[str]
    blocks: NotRequired[list[dict[str, Any]]]  # tool calls and thinking
    tool_call_id: NotRequired[str]
    tool_name: NotRequired[str]
    is_error: NotRequired[bool]
    timing: NotRequired[dict[str, Any]]
    kind: NotRequired[str]
    readable: NotRequired[bool]  # text is the kind's own reading (durable_nb.kinds.text)
    data: NotRequired[str]  # a custom entry's data as JSON, cut


class Views(TypedDict):
    """``views``: both views at entry ``at`` (each its last ``view_limit`` items) and the entry in full."""

    at: str
    following_leaf: bool
    depth: int
    model: list[ViewMessage]
    model_total: int
    transcript: list[ViewEntry]
    transcript_total: int
    entry: dict[str, Any] | None  # the entry at ``at`` in the log's encoding, blobs elided
    title: str  # the details' heading of ``entry`` (encoding.entry_title; "" without one)
    cost: str  # tokens and cost of the path's replies ("" for none)


class TallyState(TypedDict):
    """Tokens and cost of a compare side."""

    input_tokens: int
    output_tokens: int
    reported: int
    cost: str
    summary: str


class CompareMessage(TypedDict):
    """A message of a compare side, by its index ``i`` in the request."""

    i: NotRequired[int]
    role: str
    text: str
    injected: NotRequired[str]
    origin: NotRequired[str]
    tool_call_id: NotRequired[str]
    is_error: NotRequired[bool]


class CompareSide(TypedDict):
    """One compared entry: its request, settings, reply and cost."""

    ref: str
    entry_id: str
    reply_id: str
    labels: list[str]
    model: str | None
    settings: dict[str, Any]
    total_ms: float | None
    created_at: str
    system: str | None
    messages: list[CompareMessage]
    message_total: int
    reply: CompareMessage | None
    cost: TallyState | None
    branch_cost: TallyState


class Change(TypedDict):
    """One step of a diff of two requests' messages."""

    op: str
    a: int | None
    b: int | None


class Diff(TypedDict):
    """Side ``a`` against side ``b``: the message changes, and what else differs (``[a's, b's]``)."""

    a: int
    b: int
    same: int  # messages the same
    messages: list[Change]
    system: list[str] | None
    model: list[str] | None
    settings: dict[str, list[Any]]


class Comparison(TypedDict):
    """``comparison`` (``{}``: none): :func:`durable_nb.widget.comparison.state`."""

    sides: list[CompareSide]
    diffs: list[Diff]


class GridVerdict(TypedDict):
    """One grader's verdict in a grid cell."""

    grader: str
    passed: bool
    score: NotRequired[float]
    reason: NotRequired[str]
    error: NotRequired[str]


class GridCell(TypedDict):
    """One case × variant pair of the grid (``variant``: its column)."""

    case: int
    variant: int
    passed: bool
    entry_id: str  # the reply's entry ("" when it has none): a click opens it
    reply: str  # its first characters
    verdicts: list[GridVerdict]
    cost: str  # "" when unknown
    ms: float | None
    tokens: int | None
    score: NotRequired[float]  # the mean of its graders' scores, when they gave scores
    error: NotRequired[str]
    baseline: NotRequired[GridMark]  # against the baseline run (left out: the same)


class GridCase(TypedDict):
    index: int
    label: str  # its fields on one line


class EvalGrid(TypedDict):
    """``evaluation`` (``{}``: none): :func:`durable_nb.evals.grid.state`, cases × variants."""

    run: str
    baseline: str  # "": none
    finished: bool
    variants: list[str]
    graders: list[str]
    cases: list[GridCase]  # the rows shown (at most grid.MAX_CASES)
    case_total: int
    cells: list[GridCell]
    summary: str


class Traits(TypedDict):
    """Every synced trait of :class:`~durable_nb.widget.SessionWidget` and what it holds."""

    session_id: str
    tree: Tree
    leaf_id: str
    elided: int  # entries from the active path's root its latest compaction elides
    selected_id: str  # "": follow the leaf
    view: View
    view_limit: int
    views: Views
    views_rev: int  # which ``views`` value it is (a ``views`` reply names the one it changes)
    error: str
    labels: dict[str, str]  # label name -> entry id
    session_cost: str  # tokens and cost of every reply, all branches ("" for none)
    comparison: Comparison | dict[str, Any]  # {}: none
    hidden: list[FilterGroup]
    read_only: str  # what a log opened read-only is a copy of ("": writable)
    evaluation: EvalGrid | dict[str, Any]  # {}: none


# -- requests ------------------------------------------------------------------------------------


class LinesRequest(TypedDict):
    action: Literal["lines"]
    start: int
    stop: int


class LocateRequest(TypedDict):
    action: Literal["locate"]
    id: str


class BranchRequest(TypedDict):
    action: Literal["branch"]
    id: str


class SearchRequest(TypedDict):
    action: Literal["search"]
    query: str


class CompareRequest(TypedDict):
    action: Literal["compare"]
    ids: list[str]


class FilterRequest(TypedDict):
    action: Literal["filter"]
    hide: list[FilterGroup]


class ViewsRequest(TypedDict):
    action: Literal["views"]


class FallbackRequest(TypedDict):
    action: Literal["fallback"]


Request = (
    LinesRequest
    | LocateRequest
    | BranchRequest
    | SearchRequest
    | CompareRequest
    | FilterRequest
    | ViewsRequest
    | QueryRequest
    | StepRequest
    | TimelineRequest
    | FallbackRequest
    | ModuleRequest
)


# -- replies -------------------------------------------------------------------------------------


class LinesReply(TypedDict):
    reply: Literal["lines"]
    rev: int
    start: int
    total: int
    lines: list[Line]
    kept: NotRequired[list[int]]  # a push: ``lines`` skip [lo, hi), which the page keeps at rev's tree update


class LocateReply(TypedDict):
    reply: Literal["locate"]
    id: str
    rev: int
    index: int  # -1: unknown
    drawn: str  # the entry itself, or its nearest drawn ancestor under a kind filter


class Hit(TypedDict):
    id: str
    index: int
    drawn: str


class SearchReply(TypedDict):
    reply: Literal["search"]
    query: str
    rev: int
    total: int
    hits: list[Hit]


class ListDelta(TypedDict):
    """A view list's new items: ``head``, the last ``back`` its last delta dropped, ``keep`` from ``drop``, ``add``."""

    drop: int
    keep: int
    add: list[Any]
    head: NotRequired[list[Any]]
    back: NotRequired[int]


class ViewsReply(TypedDict):
    """``views`` at revision ``seq`` from revision ``base`` (``-1``: ``views`` whole): every field but the parts,
    ``entry`` if the tab shown draws it, a :class:`ListDelta` for its view list (a part left out: stale on the page)."""

    reply: Literal["views"]
    rev: int
    seq: int
    base: int
    views: dict[str, Any]
    model: NotRequired[ListDelta]
    transcript: NotRequired[ListDelta]


class ListItem(TypedDict):
    """An entry of the flat list: its row and chips, on the active path or not, and the line drawing it
    (``index``; ``drawn``: itself, or its nearest drawn ancestor under a kind filter; ``-1``/``""``: none)."""

    id: str
    index: int
    drawn: str
    row: Row
    chips: list[Chip]
    on: bool


class QueryReply(TypedDict):
    reply: Literal["query"]
    rev: int
    seq: int
    sort: SortKey
    total: int
    start: int
    items: list[ListItem]
    facets: Facets


class FallbackReply(TypedDict):
    reply: Literal["fallback"]
    rev: int
    html: str  # the output's text/html
    text: str  # the output's text/plain


Reply = (
    LinesReply | LocateReply | SearchReply | ViewsReply | QueryReply | StepReply | TimelineReply | FallbackReply
    | ModuleReply
)  # fmt: skip
