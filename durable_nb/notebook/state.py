"""The notebook's session: the agent, the staged injected entries, and which cell made which entry.

One :class:`NotebookSession` lives in the kernel (held by the magics). It
owns the :class:`~durable_nb.durable.Agent` on the notebook's store, the
meta/ephemeral entries staged for the next turn, an optional session opened
read-only for inspection, and the live widgets to re-sync. **A cell is a
position in the tree** (:mod:`.positions`): :meth:`NotebookSession.rewind_for`
applies that rule before a cell acts.

Nothing here imports a display: the magics render; this module decides.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import ai, durable
from ..durable import Agent, Branch, Event, FanOut, Replay, new_session_id
from ..errors import DurableError, InvalidSessionId, SessionExists, SessionNotFound
from ..kinds.leaf_move import move_leaf, resume_point
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
    SessionRow,
    Store,
    is_ephemeral,
    is_turn_start,
    search_store,
    session_rows,
)
from . import ahead
from .identity import DEFAULT_SESSION, default_session_name  # noqa: F401  - importable from here as before
from .positions import (  # noqa: F401  - cell_entry and entry_origin are importable from here as before
    CellIndex,
    before_turns,
    cell_entry,
    entry_origin,
    leaf_at,
    resolve_ref,
    unanswered,
)
from .render import store_place
from .turn import Turn, cell_input, injected_entry

if TYPE_CHECKING:
    from .. import importers


class NotebookSession:
    """The notebook's session state (see the module docs).

    ``store`` is a store or a JSONL store's folder, ``session_id`` the session
    to continue (created by its first write: :class:`~durable_nb.session.CreatedOnWrite`),
    ``model`` anything :func:`durable_nb.models.build` accepts. ``fork_of``
    names the session a copied notebook came from: when ``session_id`` is
    missing and ``fork_of`` exists, ``session_id`` starts as a fork of its
    active path (``forked_from`` names it). Nothing is written until used, but that fork.
    """

    def __init__(
        self, store: Store | str | os.PathLike[str], session_id: str, model: ModelLike = None, fork_of: str = ""
    ) -> None:
        self.store: Store = store if isinstance(store, Store) else JsonlStore(Path(store))
        self._model: ModelLike = model
        self.inspected: importers.Imported | None = None  # an importers.Imported while a saved log is open read-only
        self.staged: list[MessageEntry] = []
        self.spent: dict[str, str] = {}  # origin -> text of the ephemeral input this kernel sent (never stored)
        self._cells: CellIndex | None = None  # which entry each cell made, for the current agent
        self._held = self._owed = False  # widget syncs held (syncs_held); one was asked for meanwhile
        self.forked_from = ""
        self.resumed_at_choice = ""  # the entry _open resumed at because the leaf was last moved there
        if fork_of and not self._exists(session_id) and self._exists(fork_of):
            self.own = self._fork_of(fork_of, session_id)
        else:
            self.own = self._open(session_id)

    # -- which agent ------------------------------------------------------

    def _open(self, session_id: str) -> Agent:
        """Open ``session_id`` at the leaf last chosen (:func:`~durable_nb.kinds.leaf_move.resume_point`:
        a deliberate leaf move is recorded), else where the library resumes it; sets :attr:`resumed_at_choice`.
        Computes the first look ahead, once: the active path and its model view (O(depth), mostly at C
        speed for a log that is one chain), which ``%durable status``, the widget and the first turn
        share, the labels they show (one pass at C speed), and the cells' entries
        (:class:`~durable_nb.notebook.positions.CellIndex`, O(n) at C speed);
        and what the first turn would pay once (:mod:`.ahead`: its imports, the young collections)."""
        ahead.imports()
        agent = Agent(
            model=self._model, store=CreatedOnWrite(self.store), session_id=session_id, publisher=self._published
        )
        at = resume_point(agent.entries())
        self.resumed_at_choice = ""
        if at != agent.leaf_id:
            agent.branch(at)
            self.resumed_at_choice = at or "the root"
        agent.system  # noqa: B018 - the first look, computed ahead (see above)
        agent.labels()  # which status and the widget show (a loaded log's are found when first asked for)
        self._cells = CellIndex(agent)  # and which entry each cell made (the first turn's rewind reads it)
        self._cells.latest()
        ahead.settle()
        return agent

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
        of the current agent, however it was displayed (the widget module keeps the one registry);
        while :meth:`syncs_held`, only note that one is owed."""
        if self._held:
            self._owed = True
            return
        self._owed = False
        widget = sys.modules.get("durable_nb.widget")  # loaded once any widget exists
        if widget is not None:
            widget.sync_widgets(self.agent)

    @contextmanager
    def syncs_held(self) -> Iterator[None]:
        """Hold the widgets' syncs while a cell moves the leaf before it writes (a re-run cell's rewind):
        a widget's sync is of the whole change since the last, so the sync of what the cell writes next
        carries the move too, one round of messages fewer for the page. Leaving it syncs nothing:
        :meth:`settle` pays a sync still owed (:func:`.cells.run_cell` calls it as the cell ends)."""
        self._held = True
        try:
            yield
        finally:
            self._held = False

    def settle(self) -> None:
        """Sync the widgets when a sync was held and none has run since (:meth:`syncs_held`). O(1) else."""
        if self._owed:
            self.sync()

    def _published(self, event) -> None:  # lifecycle events from the agent, after success
        if hasattr(self, "own"):  # session_init arrives while __init__ is still opening the agent
            self.sync()

    # -- cells as positions ---------------------------------------------------

    def cell_position(self, origin: str | None, chat: bool = False) -> Entry | None:
        """Return the cell's first entry on the active path (the cell would rewind before it), else ``None``
        (:meth:`.positions.CellIndex.position`). ``chat`` or a cell without an origin never rewinds."""
        if chat or not origin:
            return None
        if self._cells is None or self._cells.agent is not self.agent:
            self._cells = CellIndex(self.agent)
        return self._cells.position(origin)

    def rewind_for(self, origin: str | None, chat: bool = False) -> Entry | None:
        """Apply the cell-as-position rule: branch to before the cell's entry if it is on the path; return
        that entry (``None`` when the cell acts at the leaf). Nothing is written."""
        e = self.cell_position(origin, chat)
        if e is not None:
            self.writable().branch(e.parent_id)
        return e

    # -- staging ------------------------------------------------------------------

    def stage(self, kind: str, body: str, origin: str | None) -> bool:
        """Stage a ``meta`` or ``ephemeral`` entry for the next turn; return True if it replaced one: a
        re-run cell's staged entry is replaced in place (cells without an origin always add one)."""
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
        return cell_input(self.staged, "turn", body, origin)

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
        new = durable.mark_ephemeral(cell_input(self.staged, kind, body, origin))  # as the run marks it
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
        """Run one turn (staged entries + the cell's message), filling ``turn`` and handing each event to
        ``on_event`` after it; ``tools`` and ``settings`` go to :meth:`Agent.run`. Returns ``turn``.

        The staged entries are consumed once the input is stored; widgets sync
        after each persistence receipt. A failure or an interrupt propagates,
        keeping the input and every stored reply and tool result (the partial
        reply in ``turn.deltas`` is not stored). With no reply stored yet, the
        ephemeral entries are staged again (:meth:`_restage`) and the leaf
        moves to before the unanswered message, so no other turn resends it
        and re-running the cell retries it. Input that cannot be stored (full
        disk, read-only folder) consumes nothing.
        """
        agent = self.writable()
        staged = list(self.staged)
        consumed = False
        stream = agent.run(*self.inputs(body, origin), tools=tools, settings=settings)
        try:
            for ev in stream:
                turn.record(ev)
                if ev.type == "agent_start":
                    self._spend(staged)
                    self.staged, consumed = [], True
                self._receipt(ev)
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

    def _spend(self, staged: list[MessageEntry]) -> None:
        """Remember the text of each ephemeral input of ``staged`` a turn now sends, by origin (:attr:`spent`):
        it is never stored, so this kernel is the only place a later notice can quote it from."""
        self.spent.update({e.message.origin: e.message.text() for e in staged if is_ephemeral(e) and e.message.origin})

    def _receipt(self, ev: Event) -> None:
        """Sync the widgets after a persistence receipt (a turn's input or a message stored)."""
        if ev.type in ("agent_start", "message_end"):
            self.sync()

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

        The staged meta entries are stored once, shared by the branches, and
        the staging is consumed once the turn starts; widgets sync after each
        receipt. When no variant got a reply (all failed, an interrupt), the
        ephemeral entries are staged again and the leaf is back at the fork
        point. Errors before anything is written consume nothing.
        """
        agent = self.writable()
        staged = list(self.staged)
        started = False

        def receipt(branch: Branch, ev: Event) -> None:
            nonlocal started
            if ev.type == "agent_start" and not started:
                self._spend(staged)
                self.staged, started = [], True
            self._receipt(ev)
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
        tool_results: str = "call",
    ) -> Replay:
        """Replay the active path from the entry ``ref`` names (an id, a label, 4+ characters of an id;
        ``None``: the whole path) into a sibling branch (:meth:`Agent.replay
        <durable_nb.durable.Agent.replay>`); return the :class:`~durable_nb.durable.Replay`.
        Widgets are synced after each receipt; refused while a log is open read-only. ``tool_results``:
        ``"reuse"`` answers tool calls from the stored results (no tool runs)."""
        agent = self.writable("replay")
        start = self.resolve(ref).id if ref is not None else None

        def receipt(ev: Event) -> None:
            self._receipt(ev)
            if on_event is not None:
                on_event(ev)

        try:
            return agent.replay(
                start, model, system, tools=tools, on_event=receipt, tool_results=tool_results, **(settings or {})
            )
        finally:
            self.sync()

    def leave_unanswered(self) -> MessageEntry | None:
        """Move the leaf to before a cell's unanswered message at the leaf and return it (``None``, moving
        nothing, when the leaf is answered): the rule :func:`.positions.unanswered` describes."""
        e = unanswered(self.agent)
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
            raise DurableError(f"no session {session!r} in {store_place(self.store)}; %durable sessions lists them")
        return search_store(self.store, text, session, limit)

    def resolve(self, ref: str) -> Entry:
        """Return the entry ``ref`` names: an id, a label or 4+ characters of an id. ``DurableError`` otherwise."""
        return resolve_ref(self.agent, ref)

    def branch(self, ref: str) -> Entry:
        """Move the leaf to the entry ``ref`` names (an id, a label, 4+ characters of an id; a bookkeeping
        entry's: the entry it names, :func:`~.positions.leaf_at`); return it. Ephemeral targets are refused."""
        e = leaf_at(self.agent, ref)
        self._move(e.id)
        return e

    def _move(self, entry_id: str) -> None:
        """Move the leaf on purpose: recorded in the notebook's own session (:func:`~durable_nb.kinds.leaf_move.move_leaf`)
        so a restart resumes there; an opened log's copy is only moved."""
        if self.inspected is not None:
            self.agent.branch(entry_id)
        else:
            move_leaf(self.own, entry_id)

    def rewind(self, turns: int = 1) -> str:
        """Move the leaf to before the last ``turns`` turns (ordinary user messages); return the new leaf.

        Injected entries stored before a rewound turn stay. ``DurableError``
        when the path has fewer turns.
        """
        target = before_turns(self.agent.path(), turns)
        self._move(target)
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

        ``at`` (an id, a label, 4+ characters of an id; a bookkeeping entry's:
        the entry it names) copies the path to that entry instead. While a saved log is open read-only, its path is
        the one copied (the log itself is never touched) and inspection ends:
        the fork is how a session from elsewhere is continued.
        """
        if at is not None:
            at = leaf_at(self.agent, at).id
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
        """Open a saved log read-only for inspection and return its :class:`~durable_nb.importers.Imported`:
        a session id of this store, or a log file's path (``conversation``: which one of llm's database).

        ``at`` puts the leaf at that entry (a search hit's; a bookkeeping entry's: the entry it names,
        :func:`~.positions.leaf_at`); else it is where the session resumes. The
        agent works on an in-memory copy; turns, staging, notes, fork and compact are refused until
        :meth:`close`.
        """
        from ..importers import open_session, stored_copy

        p = Path(ref).expanduser()
        if self._exists(ref, quiet=False):
            imported = stored_copy(self.store, ref)
        elif p.exists() or p.is_symlink() or os.sep in ref:
            imported = open_session(p, conversation)  # a clear error if it is not a readable file
        else:
            raise DurableError(
                f"no session {ref!r} in {store_place(self.store)} and no file {ref!r}; %durable sessions lists them"
            )
        if at is not None:
            imported.agent.branch(leaf_at(imported.agent, at).id)
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
