"""The notebook's session: the agent, the staged injected entries, and which cell made which entry.

One :class:`NotebookSession` lives in the kernel (held by the magics). It
owns the :class:`~durable_nb.durable.Agent` on the notebook's JSONL store,
the meta/ephemeral entries staged for the next turn, an optional session
opened read-only for inspection, and the live widgets to re-sync.

**A cell is a position in the tree.** Every entry a cell produces records
the cell (``origin="cell:<cellId>"`` on the message; the ``cell`` field of a
:class:`Note`). Before a cell acts, :meth:`NotebookSession.rewind_for` looks
up the cell's latest stored entry: if it is on the active path, the leaf
moves to that entry's parent, so an edited or re-run cell grows a sibling
branch instead of appending a duplicate; otherwise the cell acts at the
leaf. The lookup reads the log (not kernel memory), so the rule survives
kernel restarts. Cells without an id (front ends that send none) always act
at the leaf.

Nothing here imports a display: the magics render; this module decides.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import ai, durable
from ..durable import Agent, Branch, Event, FanOut, Replay, new_session_id
from ..errors import DurableError, InvalidSessionId, SessionExists, SessionNotFound, UnknownEntry
from ..kinds.note import NOTE_KIND, Note  # noqa: F401  - NOTE_KIND stays importable from here
from ..models import ModelLike
from ..session import (
    CompactionEntry,
    CreatedOnWrite,
    CustomEntry,
    Entry,
    Hit,
    JsonlStore,
    MessageEntry,
    SessionFiles,
    SessionRow,
    Store,
    describe,
    entry_kind,
    is_ephemeral,
    is_turn_start,
    notebook_session_id,
    search_store,
    session_rows,
)

if TYPE_CHECKING:
    from .. import importers

DEFAULT_SESSION = "default"


def entry_origin(entry: Entry) -> str | None:
    """Return ``"cell:<id>"`` (or any origin) recorded on an entry, or ``None``.

    A message entry's origin is its message's; a :class:`Note` records its
    cell; other entries have none.
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


def default_session_name(user_ns: Mapping[str, object], environ: Mapping[str, str] = os.environ) -> str:
    """Return the notebook's default session id.

    The notebook's file name without ``.ipynb`` (from ``__session__`` in the
    namespace, which ipykernel sets from ``JPY_SESSION_NAME``, or that
    variable itself), made safe by :func:`~durable_nb.session.notebook_session_id`
    (the rule existing notebooks' sessions were named by);
    ``"default"`` when the kernel does not know its notebook.
    """
    raw = user_ns.get("__session__") or environ.get("JPY_SESSION_NAME") or ""
    name = Path(str(raw)).name if raw else ""
    name = name[: -len(".ipynb")] if name.endswith(".ipynb") else name
    return notebook_session_id(name, DEFAULT_SESSION)


def user_entry(body: str, origin: str | None) -> MessageEntry:
    """Return the ordinary user entry for a turn cell, recording the cell as its origin."""
    entry = durable.text(body)
    entry.message.origin = origin
    return entry


def injected_entry(kind: str, body: str, origin: str | None) -> MessageEntry:
    """Return a staged ``meta`` or ``ephemeral`` entry for a tagged cell (``kind`` names which)."""
    return {"meta": durable.meta, "ephemeral": durable.ephemeral}[kind](body, origin=origin)


@dataclass
class Turn:
    """What one turn did so far; filled while it runs, so it is meaningful after a failure.

    ``input_ids`` are the persisted input entries, ``written`` counts stored
    entries, ``text`` is the reply (the step streaming now, or the last
    stored reply), ``reply`` the last stored assistant message (``None``
    until one is stored), ``replies`` every stored assistant message of the
    run (one per model call), ``leaf_id`` the leaf after, ``stop_reason``
    why the run stopped (``max_steps`` when the loop ran out of steps).
    """

    input_ids: list[str] = field(default_factory=list)
    written: int = 0
    deltas: list[str] = field(default_factory=list)
    reply: ai.Message | None = None
    replies: list[ai.Message] = field(default_factory=list)
    leaf_id: str = ""
    stop_reason: str = ""

    @property
    def text(self) -> str:
        if self.deltas or self.reply is None:
            return "".join(self.deltas)
        return self.reply.text()


class NotebookSession:
    """The notebook's session state (see the module docs).

    ``store`` is a store (JSONL, SQLite, PostgreSQL, memory) or a JSONL
    store's folder, ``session_id`` the session to continue (a missing one is
    created by its first write, see :class:`CreatedOnWrite`), ``model``
    anything :func:`durable_nb.models.build` accepts. ``fork_of`` names the
    session this notebook was copied from: when ``session_id`` does not exist
    yet and ``fork_of`` does, ``session_id`` is created as a fork of its
    active path (``forked_from`` then names it; the original is not written
    to). Nothing is built or written until used, but that fork.
    """

    def __init__(
        self, store: Store | str | os.PathLike[str], session_id: str, model: ModelLike = None, fork_of: str = ""
    ) -> None:
        self.store: Store = store if isinstance(store, Store) else JsonlStore(Path(store))
        self._model: ModelLike = model
        self.inspected: importers.Imported | None = None  # an importers.Imported while a saved log is open read-only
        self.staged: list[MessageEntry] = []
        # origin -> latest durable entry it made, for one agent, read incrementally from its log
        self._origins: tuple[Agent, list[int], dict[str, Entry]] | None = None
        self.forked_from = ""
        if fork_of and not self._exists(session_id) and self._exists(fork_of):
            self.own = self._fork_of(fork_of, session_id)
        else:
            self.own = self._open(session_id)

    # -- which agent ------------------------------------------------------

    def _open(self, session_id: str) -> Agent:
        return Agent(
            model=self._model, store=CreatedOnWrite(self.store), session_id=session_id, publisher=self._published
        )

    def _exists(self, session_id: str, quiet: bool = True) -> bool:
        """Whether the store holds ``session_id``; ``quiet=False`` lets a session that exists but cannot
        be read raise its one line (a damaged log, a FIFO) instead of reading as missing."""
        try:
            self.store.load_session(session_id)
        except (SessionNotFound, InvalidSessionId):
            return False
        except DurableError:  # an id the store refuses, a log it cannot read (reported when it is opened)
            if quiet:
                return False
            raise
        return True

    def _fork_of(self, original: str, session_id: str) -> Agent:
        """Create ``session_id`` as a fork of ``original``'s active path (a copied notebook's first use)."""
        try:
            agent = self._open(original).fork(session_id)
        except SessionExists:  # another kernel forked it first: continue that one
            return self._open(session_id)
        self.forked_from = original
        return agent

    @property
    def agent(self) -> Agent:
        """The inspected session's agent while one is open, else the notebook's own."""
        return self.inspected.agent if self.inspected is not None else self.own

    def writable(self, what: str = "run a turn") -> Agent:
        """Return the notebook's own agent; raises ``DurableError`` while a log is open read-only."""
        if self.inspected is not None:
            raise DurableError(
                f"cannot {what}: {self.inspected.source} is open read-only for inspection; "
                "%durable close returns to the notebook's session"
            )
        return self.own

    @property
    def model(self) -> ModelLike:
        return self._model

    @model.setter
    def model(self, model: ModelLike) -> None:
        self._model = model
        self.own.model = model

    # -- widgets ------------------------------------------------------------

    def sync(self) -> None:
        """Push the current state to every open :class:`~durable_nb.widget.SessionWidget`
        of the current agent, however it was displayed (the widget module keeps the one registry)."""
        widget = sys.modules.get("durable_nb.widget")  # loaded once any widget exists
        if widget is not None:
            widget.sync_widgets(self.agent)

    def _published(self, event) -> None:  # lifecycle events from the agent, after success
        if hasattr(self, "own"):  # session_init arrives while __init__ is still opening the agent
            self.sync()

    # -- cells as positions ---------------------------------------------------

    def cell_position(self, origin: str | None, chat: bool = False) -> Entry | None:
        """Return the cell's first entry on the active path (the cell would rewind before it), else ``None``.

        The cell's entry is its latest one (with the entries of the same cell
        right before it: a fan-out variant's system prompt and message). When
        that is on a sibling branch of the active path (a fan-out cell: its
        variants are siblings, the leaf on one of them), the sibling on the
        path counts. ``chat`` or a cell without an origin never rewinds.
        O(entries appended since the last call); O(depth) when the cell's
        latest entry is off the path.
        """
        if chat or not origin:
            return None
        agent = self.agent
        e = self._cell_entries(agent).get(origin)
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

    def _cell_entries(self, agent: Agent) -> dict[str, Entry]:
        """Return ``{origin: latest durable entry made by it}`` for ``agent`` (what
        :func:`cell_entry` finds), reading only the entries appended since the last call.

        Cost: O(new entries), so a turn does no work proportional to the log.
        """
        if self._origins is None or self._origins[0] is not agent:
            self._origins = (agent, [0], {})
        _, seen, by_origin = self._origins
        new = agent.entries(seen[0])
        for e in new:
            if not is_ephemeral(e):
                o = entry_origin(e)
                if o:
                    by_origin[o] = e
        seen[0] += len(new)
        return by_origin

    def rewind_for(self, origin: str | None, chat: bool = False) -> Entry | None:
        """Apply the cell-as-position rule: branch to before the cell's entry if it is on the path.

        Returns the entry rewound before (``None`` when the cell acts at the
        leaf). Nothing is written.
        """
        e = self.cell_position(origin, chat)
        if e is not None:
            self.writable().branch(e.parent_id)
        return e

    # -- staging ------------------------------------------------------------------

    def stage(self, kind: str, body: str, origin: str | None) -> bool:
        """Stage a ``meta`` or ``ephemeral`` entry for the next turn; return True if it replaced one.

        A cell's staged entry is replaced in place when the cell is re-run
        (cells without an origin always add a new one). Call
        :meth:`rewind_for` first for the cell-as-position rule.
        """
        self.writable("stage entries")
        entry = injected_entry(kind, body, origin)
        for i, s in enumerate(self.staged):
            if origin and s.message.origin == origin:
                self.staged[i] = entry
                return True
        self.staged.append(entry)
        return False

    def clear(self) -> int:
        """Drop the staged entries; return how many there were."""
        n, self.staged = len(self.staged), []
        return n

    def note(self, body: str, cell_id: str) -> Note:
        """Append a :class:`Note` at the leaf and return it (stored, never sent)."""
        (note,) = self.writable("add a note").append(Note(body=body, cell=cell_id))
        self.sync()
        return note  # type: ignore[return-value]  # append returns the entries it was given

    # -- turns -----------------------------------------------------------------------

    def check_model(self) -> str:
        """Build the model (before anything moves or is written); return its name.

        Raises :class:`~durable_nb.errors.ModelError` when it cannot be built.
        """
        return self.writable().model_name()

    def inputs(self, body: str | None, origin: str | None) -> list[Entry]:
        """Return the next turn's input: the staged entries in staging order, then the cell's message."""
        return [*self.staged, *([user_entry(body, origin)] if body is not None else [])]

    def preview(
        self, body: str | None, origin: str | None, chat: bool = False, kind: str = "turn"
    ) -> tuple[list[ai.Message], list[ai.Message]]:
        """Return ``(messages, new)``: exactly what the next turn would send, and which of them are new input.

        ``kind="turn"`` previews running the cell ``body``; ``"system"`` the
        next turn with the cell as the system prompt; ``"meta"`` or
        ``"ephemeral"`` previews the next turn with the cell staged (replacing
        its earlier staged version); ``body=None`` previews only the staged
        entries. The cell-as-position rule is applied on paper: if the cell
        would rewind, the view starts at that entry's parent. Writes nothing
        and moves nothing; the view is the agent's own (``model_view`` of the
        base path plus the input, as :meth:`Agent.run` sends it).
        """
        agent = self.agent
        if kind == "turn":
            new = self.inputs(body, origin)
        elif kind == "system":
            sys_entry = durable.system(body or "")
            new = [sys_entry, *self.staged]
        else:
            new = [
                *(s for s in self.staged if not (origin and s.message.origin == origin)),
                injected_entry(kind, body or "", origin),
            ]
        new = durable.mark_ephemeral(new)  # as the run marks it, so the listing finds the same message
        e = self.cell_position(origin, chat)
        return agent.preview(*new, at=e.parent_id if e is not None else None), [
            x.message for x in new if isinstance(x, MessageEntry)
        ]

    def run(
        self,
        body: str,
        origin: str | None,
        turn: Turn,
        on_event: Callable[[Event], object] | None = None,
        tools: list | None = None,
        settings: dict[str, Any] | None = None,
    ) -> Turn:
        """Run one turn (staged entries + the cell's message) and fill ``turn`` as it goes.

        The staged entries are consumed once the input is persisted. Widgets
        are synced after each persistence receipt. ``on_event`` gets each
        event once ``turn`` records it (text deltas, stored replies, tool
        results); ``tools`` and
        ``settings`` go to :meth:`Agent.run`. A model failure or an
        interrupt propagates: the input and every stored reply and tool
        result stay, the partial reply (in ``turn.deltas``) is not stored.
        When no reply was stored yet, the meta entries are stored and the
        ephemeral ones are staged again, and the leaf moves to before the
        unanswered user message (:meth:`leave_unanswered`), so another cell's
        turn never resends it and re-running the cell retries it with the
        same context. If the input cannot be stored (full disk, read-only
        folder, an unencodable character), nothing was consumed: the staged
        entries stay exactly as they were.
        """
        agent = self.writable()
        staged = list(self.staged)
        consumed = False
        stream = agent.run(*self.inputs(body, origin), tools=tools, settings=settings)
        try:
            for ev in stream:
                if ev.type == "agent_start":
                    self.staged, consumed = [], True
                    turn.input_ids = [e.id for e in ev.entries]
                    turn.written += len(ev.entries)
                    turn.leaf_id = ev.leaf_id
                    self.sync()
                elif ev.type == "text_delta":
                    turn.deltas.append(ev.delta)
                elif ev.type == "message_end":
                    turn.written += len(ev.entries)
                    if ev.message is not None and ev.message.role == "assistant":
                        turn.reply = ev.message
                        turn.replies.append(ev.message)
                        turn.deltas = []
                    turn.leaf_id = ev.leaf_id
                    self.sync()
                elif ev.type == "agent_end":
                    turn.stop_reason = ev.stop_reason
                if on_event is not None:
                    on_event(ev)
        except BaseException:
            if turn.reply is None:
                self._restage(staged, consumed)
                if turn.input_ids and agent.leaf_id == turn.input_ids[-1]:  # this turn's message got no reply
                    e = agent.entry(agent.leaf_id)
                    if is_turn_start(e):
                        agent.branch(e.parent_id)
                self.sync()
            raise
        return turn

    def _restage(self, staged: list[MessageEntry], consumed: bool) -> None:
        """After a turn that got no reply: stage the ephemeral entries of its input ``staged`` again (before
        anything staged since), so a retry sends them; its meta entries were stored and stay. Nothing when
        the input was never ``consumed`` (never stored, so still staged)."""
        if consumed:
            self.staged = [e for e in staged if is_ephemeral(e)] + self.staged

    def fan_out(
        self,
        body: str,
        origin: str | None,
        variants: list,
        on_event: Callable[[Branch, Event], object] | None = None,
        tools: list | None = None,
        settings: dict[str, Any] | None = None,
    ) -> FanOut:
        """Run one turn (staged entries + the cell's message) once per variant on sibling branches
        (:meth:`Agent.fan_out <durable_nb.durable.Agent.fan_out>`); return the :class:`~durable_nb.durable.FanOut`.

        The staged meta entries are stored once, shared by the branches; the
        staged entries are consumed once the turn started. Widgets are synced
        after each receipt. When no variant got a reply (all failed, or an
        interrupt), the ephemeral entries are staged again so a retry sends
        them; the leaf is then back at the fork point, so the unanswered
        messages are never sent again unasked. Errors before anything is
        written (a bad model or setting) consume nothing.
        """
        agent = self.writable()
        staged = list(self.staged)
        started = False

        def receipt(branch: Branch, ev: Event) -> None:
            nonlocal started
            if ev.type == "agent_start" and not started:
                self.staged, started = [], True
            if ev.type in ("agent_start", "message_end"):
                self.sync()
            if on_event is not None:
                on_event(branch, ev)

        try:
            out = agent.fan_out(
                *self.inputs(body, origin), variants=variants, tools=tools, settings=settings, on_event=receipt
            )
        except BaseException:
            self._restage(staged, started)
            self.sync()
            raise
        if not any(b.messages for b in out.branches):
            self._restage(staged, started)
        self.sync()
        return out

    def replay(
        self,
        ref: str | None,
        model: ModelLike = None,
        system: str | None = None,
        settings: dict[str, Any] | None = None,
        tools: list | None = None,
        on_event: Callable[[Event], object] | None = None,
    ) -> Replay:
        """Replay the active path from the entry ``ref`` names (an id, a label, 4+ characters of an id;
        ``None``: the whole path) into a sibling branch (:meth:`Agent.replay
        <durable_nb.durable.Agent.replay>`); return the :class:`~durable_nb.durable.Replay`.
        Widgets are synced after each receipt; refused while a log is open read-only."""
        agent = self.writable("replay")
        start = self.resolve(ref).id if ref is not None else None

        def receipt(ev: Event) -> None:
            if ev.type in ("agent_start", "message_end"):
                self.sync()
            if on_event is not None:
                on_event(ev)

        try:
            return agent.replay(start, model, system, tools=tools, on_event=receipt, **(settings or {}))
        finally:
            self.sync()

    def unanswered(self) -> MessageEntry | None:
        """Return the leaf if it is a cell's user message that was never answered, else ``None``.

        Never answered: no entry in the log has it as parent (a turn that
        failed or was stopped, in a kernel that is gone since, leaves it so).
        Only messages a cell wrote (origin ``cell:…``) count: a user message
        branched to on purpose that has replies on some branch, or the last
        message of a log imported from another tool, is left as it is.
        O(1) unless the leaf is such a message, then O(entries).
        """
        agent = self.agent
        e = agent.entry(agent.leaf_id) if agent.leaf_id else None
        if e is None or not is_turn_start(e):
            return None
        if not (e.message.origin or "").startswith("cell:"):
            return None
        return None if any(x.parent_id == e.id for x in agent.entries()) else e

    def leave_unanswered(self) -> MessageEntry | None:
        """Move the leaf to before an unanswered user message at the leaf (see :meth:`unanswered`); return it.

        The rule after a failed or interrupted turn: the message stays in the
        log (drawn as unanswered), but no later turn continues from it, so it
        is never sent again without the user asking. Re-running its cell
        retries it (the cell acts at the leaf, growing a sibling). Returns
        ``None`` (and moves nothing) when the leaf is answered.
        """
        e = self.unanswered()
        if e is not None:
            self.writable().branch(e.parent_id)
        return e

    def system(self, body: str, origin: str | None) -> MessageEntry:
        """Append a system-prompt entry at the leaf (the cell recorded as its origin) and return it.

        Later turns send it as the system prompt. Call :meth:`rewind_for`
        first for the cell-as-position rule (an edited system cell grows a
        sibling branch).
        """
        entry = durable.system(body)
        entry.message.origin = origin
        (stored,) = self.writable("set the system prompt").append(entry)
        self.sync()
        assert isinstance(stored, MessageEntry)
        return stored

    # -- verbs -------------------------------------------------------------------------

    def label(self, name: str, ref: str | None = None) -> CustomEntry:
        """Name the entry ``ref`` names (the leaf when ``None``) ``name``; return the label entry
        (:meth:`~durable_nb.durable.Agent.label`). Refused while a log is open read-only."""
        agent = self.writable("label an entry")
        if ref is not None:
            ref = self.resolve(ref).id
        entry = agent.label(name, ref)
        self.sync()
        return entry

    def unlabel(self, name: str) -> CustomEntry:
        """Remove the label ``name``; return the label entry that removes it. Refused while a log is open."""
        entry = self.writable("remove a label").unlabel(name)
        self.sync()
        return entry

    def search(self, text: str, session: str | None = None, limit: int = 50) -> list[Hit]:
        """Return the entries of this store whose text holds every word of ``text``, across sessions and
        branches (``session`` limits it to one). The SQL stores use their full-text index; JSONL and
        memory stores scan."""
        if session is not None and not self._exists(session):
            raise DurableError(f"no session {session!r} in {describe(self.store)}; %durable sessions lists them")
        return search_store(self.store, text, session, limit)

    def resolve(self, ref: str) -> Entry:
        """Return the entry ``ref`` names: an id, a label or 4+ characters of an id. ``DurableError`` otherwise."""
        return _resolve(self.agent, ref)

    def branch(self, ref: str) -> Entry:
        """Move the leaf to the entry ``ref`` names (an id, a label, 4+ characters of an id); return it.
        Ephemeral targets are refused."""
        e = self.resolve(ref)
        self.agent.branch(e.id)
        return e

    def rewind(self, turns: int = 1) -> str:
        """Move the leaf to before the last ``turns`` turns (ordinary user messages); return the new leaf.

        Injected entries stored before a rewound turn stay. ``DurableError``
        when the path has fewer turns.
        """
        path = self.agent.path()
        starts = [e for e in path if is_turn_start(e)]
        if turns < 1:
            raise DurableError("rewind needs a number of turns, 1 or more")
        if len(starts) < turns:
            raise DurableError(f"cannot rewind {turns} turn(s): the active path has {len(starts)}")
        target = starts[-turns].parent_id
        self.agent.branch(target)
        return target

    def new(self, session_id: str | None) -> Agent:
        """Start a new session in the store and make it the notebook's (stops any inspection)."""
        sid = session_id or new_session_id()
        try:
            self.store.create_session(sid)
        except SessionExists:
            raise SessionExists(f"session {sid!r} already exists; %durable use {sid} continues it") from None
        return self.use(sid)

    def use(self, session_id: str) -> Agent:
        """Continue ``session_id`` as the notebook's session (a missing one is created by its first
        write); stops any inspection."""
        self.own = self._open(session_id)
        self.inspected = None
        self.sync()
        return self.own

    def fork(self, new_id: str, at: str | None = None) -> Agent:
        """Fork the active path into ``new_id`` of the notebook's store and continue there; returns the new agent.

        ``at`` (an id, a label, 4+ characters of an id) copies the path to
        that entry instead. While a saved log is open read-only, its path is
        the one copied (the log itself is never touched) and inspection ends:
        the fork is how a session from elsewhere is continued.
        """
        if at is not None:
            at = self.resolve(at).id
        try:
            if self.inspected is not None:
                self.inspected.agent.fork(new_id, store=self.store, at=at)
                return self.use(new_id)
            self.own = self.own.fork(new_id, at=at)
        except SessionExists:
            raise SessionExists(f"session {new_id!r} already exists: choose another id") from None
        self.sync()
        return self.own

    def compact(self, keep: int = 0) -> CompactionEntry | None:
        """Compact the active path keeping ``keep`` turns; ``None`` when there is nothing to summarise."""
        agent = self.writable("compact")
        self.check_model()
        return agent.compact(keep_turns=keep)

    def open(self, ref: str, at: str | None = None, conversation: str | None = None):
        """Open a saved log read-only for inspection: a session id of this store, or a log file's path
        (``conversation``: which conversation of llm's log database).

        ``at`` puts the leaf at that entry (an id or a unique prefix; a
        search hit's entry); else it is where the session resumes. Returns
        the :class:`~durable_nb.importers.Imported`. Its agent works on an
        in-memory copy; turns, staging, notes, fork and compact are refused
        until :meth:`close`. Any store works (JSONL, SQLite, PostgreSQL).
        """
        from ..importers import Imported, in_memory, lone_surrogate_error, lone_surrogate_line, open_session

        p = Path(ref).expanduser()
        if self._exists(ref, quiet=False):
            entries = self.store.load_entries(ref)
            try:
                agent = in_memory(ref, entries)
            except UnicodeEncodeError:  # an escaped lone surrogate in the log
                store = self.store
                where = f"session {ref!r} in {describe(store)}"
                if isinstance(store, SessionFiles):
                    where = f"{store.file(ref)}:{lone_surrogate_line(store.file(ref).read_bytes())}"
                raise lone_surrogate_error(where) from None
            imported = Imported(agent, "durable_nb", Path(f"{describe(self.store)} session {ref}"))
        elif p.exists() or p.is_symlink() or os.sep in ref:
            imported = open_session(p, conversation)  # a clear error if it is not a readable file
        else:
            raise DurableError(
                f"no session {ref!r} in {describe(self.store)} and no file {ref!r}; %durable sessions lists them"
            )
        if at is not None:
            imported.agent.branch(_resolve(imported.agent, at).id)
        self.inspected = imported
        self.sync()
        return imported

    def close(self) -> bool:
        """Stop inspecting; return whether a log was open."""
        was, self.inspected = self.inspected is not None, None
        self.sync()
        return was

    def sessions(self) -> list[SessionRow]:
        """Return a :class:`~durable_nb.session.SessionRow` for each saved session, oldest first, then one
        for each log that cannot be read (:func:`~durable_nb.session.session_rows`)."""
        return session_rows(self.store)


def _resolve(agent: Agent, ref: str) -> Entry:
    """Return the entry of ``agent`` that ``ref`` names (:meth:`~durable_nb.durable.Agent.resolve`: an id,
    a label, 4+ characters of an id). ``DurableError`` in one line otherwise, naming the verbs that list
    entries and labels."""
    try:
        return agent.entry(agent.resolve(ref))
    except UnknownEntry as e:
        raise UnknownEntry(f"{e}; %durable log lists the entries, %durable labels the labels") from None


def counts(entries: list[Entry]) -> dict[str, int]:
    """Return entry counts by kind: ``user``, ``assistant``, ``tool_result``, ``meta``,
    ``ephemeral``, ``compaction`` and each custom kind (zero counts left out)."""
    out: dict[str, int] = {}
    for e in entries:
        k = entry_kind(e)
        out[k] = out.get(k, 0) + 1
    return out
