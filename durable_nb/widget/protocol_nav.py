"""The page protocol's part for the List panel, the keys and the timeline strip (see :mod:`.protocol`,
which re-exports every name here; :mod:`durable_nb.widget.listing` answers them), and the loader's
``module`` request (:mod:`durable_nb.widget.module` answers it). Declarations only."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

SortKey = Literal["tree", "time", "cost", "tokens"]  # how the flat list is ordered (durable_nb.widget.listing)
StepWhat = Literal["entry", "turn", "branch"]  # what the keyboard steps to


class Filter(TypedDict):
    """What the flat list keeps (:func:`durable_nb.widget.listing.matches`): every field given must hold."""

    role: NotRequired[str]
    kind: NotRequired[str]
    model: NotRequired[str]
    tool: NotRequired[str]
    tag: NotRequired[str]  # an annotation tag (the latest annotation of each author)
    error: NotRequired[bool]
    min_score: NotRequired[float]
    max_score: NotRequired[float]
    on_path: NotRequired[bool]


class QueryRequest(TypedDict):
    action: Literal["query"]
    query: Filter
    sort: SortKey
    start: int
    seq: int  # echoed: the page keeps the answer to its latest query only


class StepRequest(TypedDict):
    action: Literal["step"]
    id: str  # from this entry's line ("": from the top)
    what: StepWhat
    dir: int  # 1: next, -1: previous


class TimelineRequest(TypedDict):
    action: Literal["timeline"]
    have: NotRequired[int]  # the seq of the timeline the page holds: the reply may be its change
    view: NotRequired[str]  # the asking view's id: a widget shown twice keeps a timeline per view


class Facets(TypedDict):
    """Every value the session has for a filter field (what the list's menus offer)."""

    role: list[str]
    kind: list[str]
    model: list[str]
    tool: list[str]
    tag: list[str]


class StepReply(TypedDict):
    reply: Literal["step"]
    rev: int
    what: StepWhat
    id: str  # "": none that way
    index: int


class Turn(TypedDict):
    """A bar of the timeline: a turn (or ``n`` consecutive ones, named by the first), its start time,
    its replies' cost (``None``: unknown for one of them) and tokens, on the active path or not."""

    id: str
    at: str
    cost: float | None
    tokens: int
    n: int
    on: bool


class TimelineReply(TypedDict):
    reply: Literal["timeline"]
    rev: int
    total: int  # turns in the session
    turns: list[Turn]  # the bars from index ``start`` on (the page keeps those before it)
    start: int
    base: int  # the seq of the timeline this changes (-1: the whole timeline, start 0)
    seq: int  # this timeline's (a page that holds another base asks for the whole)
    view: str  # the request's ("": none named): every view of the widget receives the reply, the others skip it


class ModuleRequest(TypedDict):
    action: Literal["module"]


class ModuleReply(TypedDict):
    reply: Literal["module"]
    esm: str  # the widget's bundle (durable_nb/static/widget.js)
