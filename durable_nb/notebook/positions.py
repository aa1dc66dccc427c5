"""A cell is a position in the tree: which entry each cell made, and where a re-run cell acts.

Every entry a cell produces records the cell (``origin="cell:<cellId>"`` on
the message; the ``cell`` field of a :class:`~durable_nb.kinds.note.Note`).
Before a cell acts, the notebook looks up the cell's latest stored entry
(:meth:`CellIndex.position`): if it is on the active path, the leaf moves to
that entry's parent, so an edited or re-run cell grows a sibling branch
instead of appending a duplicate; otherwise the cell acts at the leaf. The
lookup reads the log (not kernel memory), so the rule survives kernel
restarts. Cells without an id (front ends that send none) always act at the
leaf.
"""

from __future__ import annotations

import shlex
from typing import cast

from .. import ai
from ..durable import Agent
from ..errors import DurableError, UnknownEntry
from ..kept import log_shape
from ..kinds.note import Note
from ..session import CustomEntry, Entry, MessageEntry, is_ephemeral, is_turn_start
from ..session.kinds import bookkeeping, name_of, target_of


def entry_origin(entry: Entry) -> str | None:
    """Return ``"cell:<id>"`` (or any origin) recorded on an entry, or ``None``.

    A message entry's origin is its message's; a :class:`~durable_nb.kinds.note.Note`
    records its cell; other entries have none.
    """
    if isinstance(entry, MessageEntry):
        return entry.message.origin
    if isinstance(entry, Note) and entry.cell:
        return f"cell:{entry.cell}"
    return None


def cell_entry(entries: list[Entry], origin: str) -> Entry | None:
    """Return the latest durable entry in ``entries`` (append order) made by ``origin``, or ``None``.

    Ephemeral entries are skipped: they are never stored, so they are no
    position. O(len(entries)).
    """
    for e in reversed(entries):
        if not is_ephemeral(e) and entry_origin(e) == origin:
            return e
    return None


class CellIndex:
    """The latest durable entry each origin made in ``agent``'s log (what :func:`cell_entry` finds),
    read incrementally: each lookup reads only the entries appended since the last one."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._seen = 0
        self._by_origin: dict[str, Entry] = {}

    def latest(self) -> dict[str, Entry]:
        """Return ``{origin: latest durable entry made by it}``. O(new entries), so a turn does no work
        proportional to the log (at C speed when the log's entries are all message entries, none
        ephemeral, :func:`~durable_nb.kept.log_shape`, read here first at the open: each one's origin is
        its message's)."""
        shape = log_shape(self.agent)  # the log's new entries are among the ones it describes
        new = self.agent.entries(self._seen)
        self._seen += len(new)
        if new and shape.messages_only and ai.Injection.EPHEMERAL not in shape.injected:
            plain = cast(list[MessageEntry], new)
            made: dict[str | None, Entry] = dict(zip([e.message.origin for e in plain], plain))
            made.pop("", None)  # the latest entry of each origin, in first-seen order; none for no origin
            made.pop(None, None)
            self._by_origin.update(cast(dict[str, Entry], made))
            return self._by_origin
        for e in new:
            if not is_ephemeral(e):
                o = entry_origin(e)
                if o:
                    self._by_origin[o] = e
        return self._by_origin

    def position(self, origin: str) -> Entry | None:
        """Return the cell's first entry on the active path (the cell would rewind before it), else ``None``.

        The cell's entry is its latest one (with the entries of the same cell
        right before it: a fan-out variant's system prompt and message). When
        that is on a sibling branch of the active path (a fan-out cell: its
        variants are siblings, the leaf on one of them), the sibling on the
        path counts. O(entries appended since the last call); O(depth) when
        the cell's latest entry is off the path.
        """
        agent = self.agent
        e = self.latest().get(origin)
        if e is None:
            return None
        on_path = agent.on_path(e.id)
        while e.parent_id:  # the cell's entries right before it (a variant's system prompt) are its too
            try:
                parent = agent.entry(e.parent_id)
            except UnknownEntry:  # an orphan path's gap
                break
            if entry_origin(parent) != origin:
                break
            e = parent
        if on_path:
            return e
        if e.parent_id and not agent.on_path(e.parent_id):
            return None
        sibling = next((x for x in agent.path() if x.parent_id == e.parent_id), None)
        return sibling if sibling is not None and entry_origin(sibling) == origin else None


def unanswered(agent: Agent) -> MessageEntry | None:
    """Return the leaf of ``agent`` if it is a cell's user message that was never answered, else ``None``.

    Never answered: no entry in the log has it as parent (a turn that
    failed or was stopped, in a kernel that is gone since, leaves it so).
    Only messages a cell wrote (origin ``cell:…``) count: a user message
    branched to on purpose that has replies on some branch, or the last
    message of a log imported from another tool, is left as it is. The rule
    after a failed or interrupted turn: such a message stays in the log
    (drawn as unanswered), but the leaf moves to before it, so no later turn
    sends it again unasked; re-running its cell retries it as a sibling.
    O(1) unless the leaf is such a message, then O(entries).
    """
    e = agent.entry(agent.leaf_id) if agent.leaf_id else None
    if e is None or not is_turn_start(e):
        return None
    if not (e.message.origin or "").startswith("cell:"):
        return None
    return None if any(x.parent_id == e.id for x in agent.entries()) else e


def resolve_ref(agent: Agent, ref: str) -> Entry:
    """Return the entry of ``agent`` that ``ref`` names (:meth:`~durable_nb.durable.Agent.resolve`: an id,
    a label, 4+ characters of an id). ``DurableError`` in one line otherwise, naming the verbs that list
    entries and labels."""
    try:
        return agent.entry(agent.resolve(ref))
    except UnknownEntry as e:
        raise UnknownEntry(f"{e}; %durable log lists the entries, %durable labels the labels") from None


def leaf_at(agent: Agent, ref: str) -> Entry:
    """Return the entry the leaf goes to when ``ref`` is opened, branched or forked at (:func:`resolve_ref`):
    the entry itself, or for a bookkeeping entry (a label entry, a leaf move, a verdict, an annotation:
    drawn as a chip on the entry it names and never the leaf, DESIGN §10) the entry it names.

    ``DurableError`` in one line for a bookkeeping entry that names no entry, or one the session does
    not hold (a read-only log's annotation, kept in a sidecar session: the line says how to open that
    log at that entry). O(1)."""
    e = resolve_ref(agent, ref)
    if not bookkeeping(e):
        return e
    about = target_of(e) or ""
    if not about:
        raise DurableError(
            f"entry {e.id} is {_a(e)} entry that names no entry: name an entry of the conversation "
            "(%durable log lists them)"
        )
    try:
        return agent.entry(about)
    except UnknownEntry:
        source = getattr(e, "source", "")
        how = f"%durable open {shlex.quote(source)} {about} opens that entry" if source else "open the session it is in"
        raise DurableError(
            f"entry {e.id} is {_a(e)} of entry {about}, which session {agent.session_id} does not hold: {how}"
        ) from None


def moved_to(agent: Agent, ref: str) -> str:
    """Return the line that says the leaf is not on the entry ``ref`` names but on the entry it is about
    (:func:`leaf_at`: ``ref`` names a bookkeeping entry), ``""`` otherwise. O(1)."""
    e = resolve_ref(agent, ref)
    if e.id == agent.leaf_id or not bookkeeping(e):
        return ""
    return f"{e.id} is {_a(e)} of {agent.leaf_id}: the leaf is on {agent.leaf_id}"


def _a(entry: Entry) -> str:
    """``"an annotation"``, ``"a label"``: a custom entry's kind with its article."""
    kind = name_of(cast(CustomEntry, entry))
    return ("an " if kind[:1] in "aeiou" else "a ") + kind


def before_turns(path: list[Entry], turns: int) -> str:
    """Return the entry before the last ``turns`` turns (ordinary user messages) of ``path``: where a
    rewind moves the leaf (``""``: the root). ``DurableError`` for fewer than 1 or more than the path has."""
    starts = [e for e in path if is_turn_start(e)]
    if turns < 1:
        raise DurableError("rewind needs a number of turns, 1 or more")
    if len(starts) < turns:
        raise DurableError(f"cannot rewind {turns} turn(s): the active path has {len(starts)}")
    return starts[-turns].parent_id
