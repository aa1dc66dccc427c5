"""Small rules about entries, each written once.

The agent, the notebook layer, the widget and the importers all ask these
questions; the answers live here so they cannot drift apart. Pure functions;
nothing here imports from Jupyter.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeGuard, TypeVar

from .entry import CompactionEntry, CustomEntry, Entry, MessageEntry
from .kinds import name_of, off_chain
from .store import MAX_ID_BYTES

DEFAULT_IMPORTED_ID = "imported"
T = TypeVar("T")
ASIDE = "aside"  # the name every aside is listed under (the kinds: durable_nb.kinds.aside)
_UNSAFE = re.compile(r"[^\w.\-]+")
_UNSAFE_CHAR = re.compile(r"[^\w.\-]")


def is_turn_start(entry: Entry) -> TypeGuard[MessageEntry]:
    """Return whether ``entry`` starts a turn: a user message that is not injected (meta or ephemeral).

    Rewind, compaction's ``keep_turns`` and Codex rollbacks count turns with this. O(1).
    """
    return isinstance(entry, MessageEntry) and entry.message.role == "user" and entry.message.injected is None


def latest_compaction(path: Sequence[Entry]) -> int:
    """Return the index of the last :class:`CompactionEntry` on ``path``, or ``-1`` when there is none.

    O(distance from the end to it), at C speed while no class derives from CompactionEntry.
    """
    if not CompactionEntry.__subclasses__():  # the type is exact: found by the interpreter's own loop
        try:
            return len(path) - 1 - operator.indexOf(map(type, reversed(path)), CompactionEntry)
        except ValueError:
            return -1
    for i in range(len(path) - 1, -1, -1):
        if isinstance(path[i], CompactionEntry):
            return i
    return -1


def kept_from(path: Sequence[Entry], at: int) -> int:
    """Return where the verbatim part starts for the compaction ``path[at]``.

    That is the index of its ``first_kept_id`` among ``path[:at]``; ``at``
    itself when that id is empty or not on the path (nothing before the
    compaction is kept: only what follows it). Everything in ``path[:result]``
    is elided (stood in for by the summary). O(at).
    """
    c = path[at]
    kept = c.first_kept_id if isinstance(c, CompactionEntry) else ""
    if kept:
        for j in range(at):
            if path[j].id == kept:
                return j
    return at


def compaction_cut(path: Sequence[Entry], keep_turns: int) -> int | None:
    """Return where on ``path`` a new compaction keeping the last ``keep_turns`` turns starts keeping
    entries verbatim (``len(path)``: none kept), or ``None`` when there is nothing to summarise.

    What the latest compaction on ``path`` already elides is left out; a turn
    starts at :func:`is_turn_start`; ``keep_turns == 0`` summarises
    everything. ``None``: no more turns than ``keep_turns``, or no message
    before the cut but system prompts (rule R11: views keep the system
    prompt, so it is never summarised). O(len(path)).
    """
    at = latest_compaction(path)
    start = kept_from(path, at) if at >= 0 else 0  # where the entries not yet summarised begin
    live = [i for i in range(start, len(path)) if not isinstance(path[i], CompactionEntry)]
    turns = [i for i in live if is_turn_start(path[i])]
    if not keep_turns:
        cut = len(path)
    elif len(turns) > keep_turns:
        cut = turns[-keep_turns]
    else:
        return None
    if not any(isinstance(e := path[i], MessageEntry) and e.message.role != "system" for i in live if i < cut):
        return None
    return cut


def elided_count(path: Sequence[Entry]) -> int:
    """Return how many entries at the start of ``path`` the latest compaction on it elides (0 without one).

    The widget draws ``path[:result]`` as elided. O(len(path)).
    """
    at = latest_compaction(path)
    return kept_from(path, at) if at >= 0 else 0


def is_aside(entry: Entry) -> bool:
    """Return whether ``entry`` is an *aside*: a custom entry holding another tool's bookkeeping
    record (a Claude Code progress/hook/snapshot/queue line, a Codex event or turn context).

    Importers hang an aside off the conversation entry it belongs to without
    continuing from it (as an ephemeral entry hangs off the leaf), so it never
    makes a branch; the transcript leaves it out (it is off the path) and the
    widget counts no branch for it. Its kind, for listings and filters, is
    :data:`ASIDE` (see :func:`entry_kind`); its own ``kind`` still names the
    record (``claude_code.progress.hook_progress``). The kinds are declared in
    :mod:`durable_nb.kinds.aside`. O(1).
    """
    return off_chain(entry)


def resume_leaf(entries: Sequence[Entry]) -> str:
    """Return where a reopened session resumes (rule R9): the id of the last appended entry that is
    not an aside (:func:`is_aside`: another tool's bookkeeping hangs off the conversation, and a
    turn continued from it would hang under it), ``""`` when there is none. O(trailing asides).
    """
    for e in reversed(entries):
        if not is_aside(e):
            return e.id
    return ""


def leaf_last(entries: Sequence[Entry], leaf_id: str) -> list[Entry]:
    """Return ``entries`` in an order that reopens at ``leaf_id`` (:func:`resume_leaf`), parents
    still before their children: the leaf and its descendants, all asides, moved to the end.

    When the leaf has a descendant that is not an aside (it was branched back to), no order can
    say it: the entries come back as they are. O(n).
    """
    if not leaf_id or resume_leaf(entries) == leaf_id:
        return list(entries)
    moved = {leaf_id}
    for e in entries:  # append order: a parent before its children
        if e.parent_id in moved and e.id != leaf_id:
            if not is_aside(e):
                return list(entries)
            moved.add(e.id)
    if not any(e.id == leaf_id for e in entries):
        return list(entries)
    return [e for e in entries if e.id not in moved] + [e for e in entries if e.id in moved]


def entry_kind(entry: Entry) -> str:
    """Return an entry's kind as listings, counts and the widget's kind filter name it.

    A message: its injection (``meta``, ``ephemeral``) if any, else its role
    (``user``, ``assistant``, ``tool_result``); ``compaction``; a custom
    entry: the name its kind is registered under (:mod:`durable_nb.kinds`:
    ``aside`` for every aside, :func:`is_aside`), else its kind (``custom``
    when empty); anything else: its class name. O(1).
    """
    if isinstance(entry, MessageEntry):
        m = entry.message
        return m.injected.value if m.injected is not None else m.role
    if isinstance(entry, CompactionEntry):
        return "compaction"
    if isinstance(entry, CustomEntry):
        return name_of(entry)
    return type(entry).__name__


def kind_group(entry: Entry) -> str:
    """Return the kind-filter group of ``entry``: ``"aside"`` (another tool's bookkeeping record,
    :func:`is_aside`: progress lines, hook output, snapshots), ``"custom"`` (any other custom entry:
    labels, notes), ``"tool_result"``, or ``""`` (never hidden). O(1)."""
    if isinstance(entry, CustomEntry):
        return ASIDE if is_aside(entry) else "custom"
    if isinstance(entry, MessageEntry) and entry.message.role == "tool_result":
        return "tool_result"
    return ""


def safe_session_id(*candidates: Any, default: str = DEFAULT_IMPORTED_ID) -> str:
    """Return the first candidate made safe as a session id (see :func:`~durable_nb.session.check_session_id`).

    Characters outside letters, digits, ``_``, ``.`` and ``-`` become ``-``;
    leading and trailing ``.``/``-`` are dropped; at most 200 characters and
    :data:`~durable_nb.session.store.MAX_ID_BYTES` bytes in UTF-8.
    Empty or non-string candidates are skipped; with none left, ``default``.
    O(length).
    """
    for c in candidates:
        if not isinstance(c, str):
            continue
        s = _fit(_UNSAFE.sub("-", c.strip()).lstrip(".-")[:200]).rstrip(".-")
        if s:
            return s
    return default


def notebook_session_id(name: str, default: str) -> str:
    """Return the session id named after a notebook (its file name without ``.ipynb``), or ``default``.

    Each character outside letters, digits, ``_``, ``.`` and ``-`` becomes its
    own ``-`` and a trailing ``-`` stays (``"My Notes (1)"`` gives
    ``"My-Notes--1-"``): unlike :func:`safe_session_id`, this is the rule
    notebooks' sessions have been named by since the first release, so a
    notebook whose metadata keeps no id still finds its session, and the
    extension's migration (``nameBasedId``, js/labextension/src/names.ts) computes the same id: both
    are tested on one table of names, js/labextension/test/session_names.json. Leading
    ``.``/``-`` dropped; at most 200 characters and ``MAX_ID_BYTES`` bytes.
    O(length).
    """
    s = _UNSAFE_CHAR.sub("-", name).lstrip(".-")[:200]
    return (_fit(s).rstrip(".-") if len(s.encode()) > MAX_ID_BYTES else s) or default


def _fit(s: str) -> str:
    """Return ``s`` cut to at most ``MAX_ID_BYTES`` bytes of UTF-8 (a long name in another script), whole characters only."""
    return s.encode()[:MAX_ID_BYTES].decode("utf-8", "ignore")


def is_legacy_meta(record: dict[str, Any]) -> bool:
    """Return whether an entry record carries the legacy top-level ``"meta": true`` flag (rule R13).

    Only ``true`` counts: ``"meta": false`` (or any other value) is not the flag. O(1).
    """
    return record.get("meta") is True


def legacy_meta_warning(session_id: str, n: int) -> str:
    """Return the one warning for ``n`` legacy-flagged entries in session ``session_id``."""
    return (
        f"session {session_id!r}: {n} entr{'y carries' if n == 1 else 'ies carry'} the legacy top-level "
        '"meta": true flag, which nothing reads: they load as ordinary messages (shown in the transcript, '
        "counted as turns by compaction). To hide them, write an upgraded copy with "
        "durable_nb.importers.upgrade_legacy_meta(path, store, new_session_id); the original is not changed."
    )


def created_key(created_at: str) -> float:
    """Return an entry's ``created_at`` as a number to order by: seconds since the epoch, UTC.

    Any ISO 8601 form is read (``Z`` or an offset, 0 to 9 fractional digits:
    Go's nanoseconds are cut to microseconds); a time without an offset is
    taken as UTC. An empty or unreadable value gives ``-inf``: it sorts
    first, as Go's zero time does in pi-go. Never raises. O(1).
    """
    try:
        t = datetime.fromisoformat(created_at)
    except (TypeError, ValueError):
        return -math.inf
    return (t if t.tzinfo is not None else t.replace(tzinfo=UTC)).timestamp()


def sort_siblings(items: list[T], created_at: Callable[[T], str]) -> list[T]:
    """Sort ``items`` (the children of one parent, or the roots), given in log order, into sibling order; return it.

    Sibling order is the one rule the tree, the widget and the share pages
    follow (pi-go's): oldest ``created_at`` first (:func:`created_key`);
    equal times, and unreadable ones, keep log (append) order (a stable
    sort). ``created_at(item)`` returns an item's timestamp (items may be
    entries, tree nodes or widget rows). Sorts in place; a list of 0 or 1
    items is returned untouched without reading a timestamp.
    O(k log k) for k siblings.
    """
    if len(items) > 1:
        items.sort(key=lambda x: created_key(created_at(x)))
    return items
