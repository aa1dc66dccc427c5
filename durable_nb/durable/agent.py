"""The durable agent: the one place that decides what reaches the store."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from .. import ai
from ..errors import AgentClosed, DurableError, SessionExists, SessionNotFound, UnknownEntry
from ..kinds import fork_copies
from ..kinds.annotation import AnnotationEntry, annotation
from ..models import Model, ModelLike, build, model_name
from ..session import (
    CompactionEntry,
    CustomEntry,
    Entry,
    MemoryStore,
    Store,
    ViewBuilder,
    check_session_id,
    compaction_cut,
    is_ephemeral,
    latest_compaction,
    model_view,
    new_id,
    now,
    path,
    resume_leaf,
    split_system,
    transcript_view,
)
from ..session.labels import check_label, check_target, label_entry, no_label, resolve, unlabelled
from . import fanout, replay
from .events import Event
from .fanout import Branch, FanOut
from .inputs import mark_ephemeral
from .inputs import system as system_entry
from .log import Log
from .loop import RunStream, collect, estimate_tokens, run_loop
from .replay import Replay
from .settings import check_settings
from .tools import Tool, as_tools
from .variants import Variant

__all__ = ["COMPACT_PROMPT", "Agent", "RunStream", "estimate_tokens", "new_session_id"]

Publisher = Callable[[Event], object]

SUGGEST_IDS = 5000  # an unknown reference is compared with every id only in logs up to this size

COMPACT_PROMPT = (
    "Summarize the conversation above so that it can continue without it: keep decisions, facts, open "
    "questions and the user's instructions. Reply with the summary only."
)


def new_session_id() -> str:
    """Return a fresh session id such as ``session-20261130-040512-3fa9``."""
    return f"session-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


class Agent:
    """A durable agent session: an append-only tree of entries in a store.

    ``Agent(session_id=...)`` resumes that session when the store has it
    (the leaf is the last appended entry that is not an aside, rule R9:
    :func:`~durable_nb.session.resume_leaf`) and creates it otherwise;
    with no ``session_id`` a fresh session is created. ``store=None`` uses a
    :class:`~durable_nb.session.MemoryStore`. ``model`` is anything
    :func:`durable_nb.models.build` accepts; it is built on first use, so an
    agent made only to read or branch never touches a model. ``publisher``
    receives lifecycle events after they succeed.

    A run is a loop: the model replies; each tool call in the reply runs and
    its result is stored; the model is called again, until a reply without
    tool calls or ``max_steps`` model calls. ``tools`` are callables (sync or
    async; see :class:`~durable_nb.durable.Tool`); :attr:`tools` is a list
    you can change. ``system`` sets the session's system prompt: unless the
    active path already has exactly that prompt, a system entry
    (:func:`~durable_nb.durable.system`) is appended now. Other knobs are
    attributes: :attr:`settings` (session default sampling settings,
    ``{"temperature": 0.2}``), :attr:`tool_reminder` (``f(call, result) ->
    str | None``: a text it returns is attached to the tool result as an
    :class:`~durable_nb.ai.Reminder` block, which the model reads and a
    transcript never shows).
    """

    def __init__(
        self,
        model: ModelLike = None,
        store: Store | None = None,
        session_id: str | None = None,
        publisher: Publisher | None = None,
        tools: Iterable[Callable[..., Any] | Tool] | None = None,
        system: str | None = None,
        max_steps: int = 20,
    ) -> None:
        self.publisher = publisher
        self._model_spec = model
        self._model: Model | None = None
        self.closed = False
        self.tools: list[Callable[..., Any] | Tool] = list(tools or [])
        as_tools(self.tools)  # refuse a bad tool now, not at the first run
        if not isinstance(max_steps, int) or max_steps < 1:
            raise DurableError(f"max_steps must be a whole number of at least 1, not {max_steps!r}")
        self.max_steps = max_steps
        self.settings: dict[str, Any] = {}
        self.tool_reminder: Callable[[ai.ToolCall, ai.Message], str | None] | None = None
        if session_id is None:
            session_id = new_session_id()
        check_session_id(session_id)
        self._log = Log(store if store is not None else MemoryStore(), session_id)
        resumed = True
        try:
            loaded = self.store.load_entries(session_id)
        except SessionNotFound:
            try:
                self.store.create_session(session_id)
                self._publish(Event("session_init", session_id=session_id))
                loaded, resumed = [], False
            except SessionExists:  # created by someone else in between
                loaded = self.store.load_entries(session_id)
        self._log.load(loaded)
        if loaded:
            self.leaf_id = resume_leaf(loaded)
        if resumed:
            self._publish(Event("session_init", session_id=session_id, leaf_id=self.leaf_id))
        if system is not None and system != self.system:
            self.append(system_entry(system))

    @property
    def store(self) -> Store:
        """The store the session lives in."""
        return self._log.store

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._log.session_id

    @property
    def leaf_id(self) -> str:
        """The id of the leaf: the entry the next one hangs off (``""``: before the first)."""
        return self._log.active.leaf_id

    @leaf_id.setter
    def leaf_id(self, entry_id: str) -> None:
        self._log.active.move_to(entry_id)

    # -- model -------------------------------------------------------------

    @property
    def model(self) -> ModelLike:
        """The model as given (a name, callable or object; ``None`` = default)."""
        return self._model_spec

    @model.setter
    def model(self, model: ModelLike) -> None:
        self._model_spec = model
        self._model = None

    def model_name(self) -> str:
        """Return the display name of the model (building it if needed)."""
        return model_name(self._built_model())

    def _built_model(self) -> Model:
        if self._model is None:
            self._model = build(self._model_spec)
        return self._model

    # -- reading ------------------------------------------------------------

    def entries(self, start: int = 0) -> list[Entry]:
        """Return the in-memory log in append order, ephemeral entries included.

        ``start`` skips the first ``start`` entries: the log only grows, so a
        caller that remembers how many it has seen reads just the new ones.
        O(len(log) - start).
        """
        return self._log.entries[start:]

    def id_count(self) -> int:
        """Return how many distinct ids the in-memory log holds (its id index's size: as many as
        :meth:`entries` when no id repeats). O(1)."""
        return len(self._log.by_id)

    def on_path(self, entry_id: str) -> bool:
        """True when ``entry_id`` is on the active path. O(1) (after the leaf moved, once: O(entries between the old and the new leaf))."""
        return entry_id in self._log.active

    def entry(self, entry_id: str) -> Entry:
        """Return the entry with that id; raises :class:`UnknownEntry`."""
        try:
            return self._log.by_id[entry_id]
        except KeyError:
            raise UnknownEntry(f"no entry {entry_id!r} in session {self.session_id!r}") from None

    def labels(self) -> dict[str, str]:
        """Return ``{label name: entry id}`` for the session's labels, in the order the names were set.

        See :meth:`label`. O(number of labels): the agent keeps them as entries arrive.
        """
        return dict(self._log.labels)

    def resolve(self, ref: str) -> str:
        """Return the entry id ``ref`` names: an exact entry id, else a label, else a unique id prefix.

        A prefix needs at least 4 characters. Raises :class:`UnknownEntry`
        (a :class:`DurableError`), in one line, for anything else: an
        unknown name (with the nearest label or id suggested), a short or
        ambiguous prefix, a label whose entry is not in this session. An
        ephemeral entry's id resolves (:meth:`branch` refuses it). Every
        method taking an entry from a user (``branch``, ``fork``, ``label``)
        calls this first. O(1) for an id or a label; a prefix scans the ids,
        O(entries).
        """
        return resolve(ref, self._log.by_id, self._log.labels, self.session_id, SUGGEST_IDS)

    def path(self, leaf_id: str | None = None) -> list[Entry]:
        """Return the active path (root to leaf), or the path to ``leaf_id``. O(depth)."""
        if leaf_id is None or leaf_id == self.leaf_id:
            return list(self._log.active.entries())
        return path(self._log.by_id, leaf_id)

    @property
    def depth(self) -> int:
        """The number of entries on the active path: ``len(self.path())`` without the copy.
        O(1) (after the leaf moved, once: O(entries between the old and the new leaf))."""
        return len(self._log.active)

    @property
    def system(self) -> str | None:
        """The session's system prompt on the active path (the latest system entry), or ``None``.

        Set it with ``agent.append(durable.system(text))`` (or as run input).
        O(1) (after the leaf moved, once: O(entries between the old and the new leaf)).
        """
        return self._log.active.system()

    def view_builder(self) -> ViewBuilder:
        """Return a copy of the active path's model view builder, kept up to date by the agent:
        ``view_builder().messages()`` is ``model_view(self.path())``; the caller may extend it
        (:meth:`~durable_nb.session.ViewBuilder.add`). O(depth) at C speed (a list copy); O(depth)
        once after the leaf moved elsewhere."""
        return self._log.active.view_builder()

    def view_builder_if_built(self) -> ViewBuilder | None:
        """Return :meth:`view_builder` when the agent holds the active path's view built (O(depth) at C
        speed, a list copy), else ``None`` (building it is O(depth) in Python: what a caller on a
        kernel's loop between cells must not do)."""
        return self._log.active.view_builder(built_only=True)

    def transcript(self) -> list[Entry]:
        """Return the transcript view of the active path."""
        return transcript_view(self.path())

    def messages(self) -> list[ai.Message]:
        """Return the model view of the active path (dangling tool calls repaired)."""
        return model_view(self.path())

    def preview(self, *entries: Entry | str, at: str | None = None) -> list[ai.Message]:
        """Return exactly the messages a run with this input would send first; writes nothing.

        The system prompt, if any, comes first as a ``"system"`` message
        (the agent sends it as the request's ``system``). ``at`` previews the
        run as if the leaf were at that entry (``""``: before the first
        entry); ``None`` uses the current leaf. O(depth + input).
        """
        leaf = self.leaf_id if at is None else at
        return model_view(self.path(leaf) + mark_ephemeral(self._log.prepare(entries, leaf)))

    # -- writing ------------------------------------------------------------

    def run(
        self,
        *entries: Entry | str,
        tools: Iterable[Callable[..., Any] | Tool] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> RunStream:
        """Start a run with ``entries`` as input (a ``str`` is taken as :func:`text`).

        The model, the tools (``tools`` for this run only, else
        :attr:`tools`) and the settings (``settings`` over :attr:`settings`)
        are checked first: if any is wrong this raises and nothing is
        written. Iterating the returned stream persists the durable input
        (``agent_start``), then loops: ``text_delta`` events while the model
        streams; its reply persisted (``message_end``, stamped with model,
        settings, usage, stop reason and timing); for each tool call in
        order ``tool_start``, the call, its result persisted
        (``message_end``, then ``tool_end``); and the model again, until a
        reply without tool calls or ``max_steps`` model calls
        (``stop_reason="max_steps"``; the last reply's calls still run).
        A tool that raises, gets arguments that do not fit, or is unknown
        gives an ``is_error`` result and the run goes on. Ends with
        ``agent_end``. If the model fails or the run is interrupted
        (``KeyboardInterrupt``), everything persisted so far stays, the
        partial reply is not stored, and the error is raised; a tool call
        left without a result is repaired in the model view of later runs.
        Input reaches the model in the order given; ephemeral input is seen
        by every model call of this run and never stored.
        """
        self._check_open()
        return self._stream(self._built_model(), entries, tools, settings)

    def _stream(
        self,
        model: Model,
        entries: Sequence[Entry | str],
        tools: Iterable[Callable[..., Any] | Tool] | None,
        settings: dict[str, Any] | None,
    ) -> RunStream:
        """Check the tools and settings, prepare ``entries`` at the leaf and return the run's stream (see :meth:`run`)."""
        specs = as_tools(self.tools if tools is None else tools)
        used = check_settings({**self.settings, **(settings or {})})
        prepared = mark_ephemeral(self._log.prepare(entries))
        view = self._log.active.run_view(prepared)
        return RunStream(run_loop(self, model, view, prepared, specs, used, self.leaf_id))

    def append(self, *entries: Entry | str, move: bool = True) -> list[Entry]:
        """Persist entries at the leaf without calling a model; return them with ids assigned.

        ``move=False`` leaves the leaf where it is (a bookkeeping record hung
        under it, such as a :mod:`leaf move <durable_nb.kinds.leaf_move>`).
        Ephemeral entries are refused here (they only make sense as run input).
        """
        self._check_open()
        prepared = self._log.prepare(entries)
        if any(is_ephemeral(e) for e in prepared):
            raise DurableError("append() stores entries; pass ephemeral entries to run() instead")
        self._log.commit(prepared, move=move)
        return prepared

    def refresh(self) -> list[Entry]:
        """Read the entries other writers appended to this session since it was loaded; return them.

        They join the log in the store's append order (another kernel's turn
        shows up as a sibling branch, rule R14); the leaf stays where it is,
        so this agent's next turn still continues from its own position.
        Entries already known (its own appends) are skipped. Cost: one load
        of the session from the store, O(entries).
        """
        new = [e for e in self.store.load_entries(self.session_id) if e.id not in self._log.by_id]
        with self._log.lock:  # as a commit's: serialised with commits and the labels' first reading
            for e in new:
                self._log.remember(e)
        return new

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id`` (``""`` rewinds before the first entry).

        ``entry_id`` may be a label or an id prefix (:meth:`resolve`).
        Raises :class:`UnknownEntry` for a reference that names no entry and
        :class:`DurableError` for an ephemeral entry (it is off the chain).
        Nothing is written; reopening resumes at the last appended entry.
        """
        self._check_open()
        if entry_id:
            entry_id = self.resolve(entry_id)
            target = self.entry(entry_id)
            if is_ephemeral(target):
                raise DurableError(f"cannot branch to {entry_id!r}: it is ephemeral and off the durable chain")
        from_id = self.leaf_id
        self.leaf_id = entry_id
        self._publish(Event("session_branched", session_id=self.session_id, from_id=from_id, leaf_id=entry_id))

    def label(self, name: str, entry_id: str | None = None) -> CustomEntry:
        """Name an entry: append a label entry (``kind="label"``) at the leaf and return it.

        ``entry_id`` is anything :meth:`resolve` takes (an id, a label, a
        prefix), on any branch; ``None`` labels the leaf (label entries at
        the leaf are stepped over: labelling twice names the same entry).
        Afterwards ``name`` works wherever an entry id does. A name already
        in use moves to the new entry (the latest label entry wins); if it
        already names that entry nothing is written and its label entry is
        returned. Raises :class:`DurableError` in one line for a name that
        is empty, holds whitespace or is an entry id of the session, for an
        unknown entry, an ephemeral entry (it is never stored), a label
        entry, or an empty session. The label entry is custom: the model
        never sees it; like any append it becomes the leaf, so the next turn
        follows it. O(1) beyond the store's append.
        """
        self._check_open()
        check_label(name, self.session_id, self._log.by_id)
        if entry_id is None:
            target = unlabelled(self.leaf_id, self._log.by_id)
            if not target:
                raise DurableError(f"session {self.session_id!r} has no entry to label yet: run a turn first")
        else:
            target = self.resolve(entry_id)
        check_target(self._log.by_id[target])
        if self._log.labels.get(name) == target:
            return self._log.labels.entry(name)
        (entry,) = self.append(label_entry(name, target))
        assert isinstance(entry, CustomEntry)
        return entry

    def unlabel(self, name: str) -> CustomEntry:
        """Remove the label ``name``: append the label entry that removes it (``target_id == ""``); return it.

        The entry it named is untouched. Raises :class:`DurableError` in
        one line (with the nearest label suggested) when no label has that
        name. O(1) beyond the store's append.
        """
        self._check_open()
        if name not in self._log.labels:
            raise no_label(name, self._log.labels)
        (entry,) = self.append(label_entry(name, ""))
        assert isinstance(entry, CustomEntry)
        return entry

    def annotate(
        self,
        entry_id: str,
        *,
        note: str | None = None,
        score: float | None = None,
        tags: Iterable[str] = (),
        by: str | None = None,
    ) -> AnnotationEntry:
        """Annotate an entry: append an annotation entry (``kind="annotation"``) hanging off it; return it.

        ``entry_id`` is anything :meth:`resolve` takes. ``by`` defaults to the
        OS user; the entry's ``created_at`` says when. The annotation is
        stored, never sent, and never moves the leaf; a correction is a new
        annotation (the latest wins in views, all are kept). Raises
        :class:`DurableError` in one line for an unknown or ephemeral entry,
        a score that is not a number, or nothing to say. For a read-only
        source use :func:`durable_nb.annotate`. O(1) beyond the store's append.
        """
        self._check_open()
        target = self.entry(self.resolve(entry_id))
        (entry,) = self._log.prepare([annotation(target, note=note, score=score, tags=tags, by=by)], target.id)
        self._log.commit([entry], move=False)
        assert isinstance(entry, AnnotationEntry)
        return entry

    def fork(self, new_id_: str, store: Store | None = None, at: str | None = None) -> Agent:
        """Create session ``new_id_`` (parent: this one) holding a copy of the active path.

        ``at`` copies the path to that entry instead (anything :meth:`resolve`
        takes, on any branch; not an ephemeral entry). The copy is
        :func:`durable_nb.kinds.fork_copies`: fresh ids, every field and
        timestamp kept, the ids entries name (a compaction's
        ``first_kept_id``, a label's target) following their entry. ``store``
        puts the new session in another store; its ``parent_id`` still names
        this session. Raises ``SessionExists`` if the id is taken there. The
        session is created with its entries in one step: a fork that fails (an
        entry that cannot be stored raises :class:`DurableError`, a full disk
        the store's error) leaves no session behind and the id free. Returns
        the new session's agent (same model, publisher, tools, settings and
        hooks; its store).
        """
        self._check_open()
        if at is None:
            src = self.path()
        else:
            at = self.resolve(at)
            if is_ephemeral(self._log.by_id[at]):
                raise DurableError(f"cannot fork at {at!r}: it is ephemeral and off the durable chain")
            src = self.path(at)
        store = self.store if store is None else store
        check_session_id(new_id_)
        copies = fork_copies(src)
        try:  # one step, all or nothing: a failed fork leaves no session and the id free
            store.create_session(new_id_, parent_id=self.session_id, entries=copies)
        except (UnicodeEncodeError, TypeError, RecursionError) as e:
            raise DurableError(
                f"cannot fork into {new_id_!r}: an entry of the active path cannot be stored ({e}); nothing was written"
            ) from None
        forked = Agent(self._model_spec, store, new_id_, tools=self.tools, max_steps=self.max_steps)
        forked.settings = dict(self.settings)
        forked.tool_reminder = self.tool_reminder
        forked.publisher = self.publisher  # after its construction: the source's event comes first, as in pi-go
        sid, leaf = self.session_id, forked.leaf_id
        self._publish(Event("session_forked", session_id=new_id_, parent_id=sid, leaf_id=leaf, entries=tuple(copies)))
        forked._publish(Event("session_init", session_id=new_id_, leaf_id=forked.leaf_id))
        return forked

    def compact(self, keep_turns: int = 0, prompt: str | None = None) -> CompactionEntry | None:
        """Summarise the active path with the session's model; keep the last ``keep_turns`` turns.

        A turn starts at a user message that is not injected. The model is
        asked to summarise the model view up to the kept turns (an earlier
        compaction's summary standing for what it replaced). Appends a
        :class:`CompactionEntry` at the leaf and returns it; returns ``None``
        (no entry, no event) when there is nothing to summarise. Nothing is
        removed: branching to an earlier entry gives the full history back.
        """
        self._check_open()
        if keep_turns < 0:
            raise DurableError("keep_turns must be 0 or more")
        full = self.path()
        keep_from = compaction_cut(full, keep_turns)
        if keep_from is None:
            return None
        model = self._built_model()
        head = full[:keep_from]
        at = latest_compaction(full)
        if at >= keep_from:  # the cut falls in what that compaction kept verbatim: its summary stands for the rest
            head = [*head, full[at]]
        system, request = split_system(model_view(head) + [ai.user_message(prompt or COMPACT_PROMPT)])
        summary = collect(model, request, ai.Request(system=system, settings=check_settings(self.settings)))
        first_kept = full[keep_from].id if keep_from < len(full) else ""
        tokens = estimate_tokens(model_view(full))
        entry = CompactionEntry(
            id=new_id(), parent_id=self.leaf_id, created_at=now(), summary=summary, first_kept_id=first_kept,
            tokens_before=tokens,
        )  # fmt: skip
        self._log.commit([entry])
        self._publish(Event("session_compacted", session_id=self.session_id, leaf_id=entry.id, entries=(entry,)))
        return entry

    def replay(
        self,
        from_id: str | None = None,
        model: ModelLike = None,
        system: str | None = None,
        *,
        tools: Iterable[Callable[..., Any] | Tool] | None = None,
        on_event: Callable[[Event], object] | None = None,
        tool_results: str = "call",
        **settings: Any,
    ) -> Replay:
        """Run the active path's turns again from ``from_id`` on (an id, a label, a prefix; ``None``: all),
        with another ``model``, ``system`` prompt or ``settings``, into a sibling branch; return a
        :class:`~durable_nb.durable.Replay`.

        The original stays as it was; the new branch's end is labelled with
        what changed (``gpt-4.1@replay2``) and becomes the leaf. Raises
        :class:`DurableError` (one line) before writing anything for a bad
        reference, model or setting, :class:`~durable_nb.durable.ReplayFailed`
        when a turn fails midway. ``tool_results="reuse"`` answers tool calls from the stored results
        instead of running the tools. The whole contract: :func:`durable_nb.durable.replay.replay`.
        """
        return replay.replay(self, from_id, model, system, tools, on_event, settings, tool_results)

    def fan_out(
        self,
        *entries: Entry | str,
        variants: Iterable[Variant | dict[str, Any] | ModelLike],
        tools: Iterable[Callable[..., Any] | Tool] | None = None,
        settings: dict[str, Any] | None = None,
        on_event: Callable[[Branch, Event], object] | None = None,
    ) -> FanOut:
        """Run one turn once per variant (a model, or a dict of ``model``, ``system``, ``label`` and
        settings), each on its own sibling branch, concurrently; return a :class:`~durable_nb.durable.FanOut`.

        The input before the last ordinary user message is stored once and
        shared; each branch is labelled ``<what differs>@t<turn>``; the leaf
        ends on the first variant that replied. ``on_event(branch, event)``
        runs in the caller's thread. Bad input raises :class:`DurableError`
        (one line) before anything is written; a ``KeyboardInterrupt`` stops
        every variant, nothing more is written, and it propagates. The whole
        contract: :func:`durable_nb.durable.fanout.fan_out`.
        """
        return fanout.fan_out(self, entries, variants, tools, settings, on_event)

    def close(self) -> None:
        """Close the agent: later runs, appends, branches and compactions are refused."""
        self.closed = True

    # -- internals ------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise AgentClosed(f"the agent for session {self.session_id!r} is closed; create a new Agent to continue")

    def _publish(self, ev: Event) -> None:
        if self.publisher is not None:
            self.publisher(ev)

    def __repr__(self) -> str:
        return f"<durable.Agent session={self.session_id!r} leaf={self.leaf_id!r} entries={len(self._log.entries)}>"
