"""The durable agent: the one place that decides what reaches the store."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import msgspec

from .. import ai
from ..errors import AgentClosed, DurableError, ModelError, SessionExists, SessionNotFound, UnknownEntry, suggest
from ..kinds import fork_copies
from ..models import Model, ModelLike, build, model_name, open_stream
from ..models.surrogates import repair_message
from ..session import (
    CompactionEntry,
    CustomEntry,
    Entry,
    MemoryStore,
    MessageEntry,
    Store,
    ViewBuilder,
    check_session_id,
    is_ephemeral,
    is_turn_start,
    kept_from,
    latest_compaction,
    model_view,
    new_id,
    now,
    path,
    split_system,
    transcript_view,
)
from ..session.labels import label_entry, label_of, label_problem
from .active import ActivePath, RunView
from .events import Event
from .fanout import Branch, FanOut, drive
from .inputs import mark_ephemeral, text
from .inputs import system as system_entry
from .replay import Replay, ReplayFailed, plan
from .settings import SettingsError, check_settings
from .tools import Tool, as_tools, error_text, result_text
from .variants import Variant, as_variant, names

Publisher = Callable[[Event], object]

SUGGEST_IDS = 5000  # an unknown reference is compared with every id only in logs up to this size

COMPACT_PROMPT = (
    "Summarize the conversation above so that it can continue without it: keep decisions, facts, open "
    "questions and the user's instructions. Reply with the summary only."
)


def new_session_id() -> str:
    """Return a fresh session id such as ``session-20261130-040512-3fa9``."""
    return f"session-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


class RunStream:
    """The events of one run. Iterating drives the run; :meth:`wait` finishes it.

    Iteration raises the run's error after yielding the ``agent_end`` event
    that carries it. ``messages`` holds what the run produced so far.
    """

    def __init__(self, events: Iterator[Event]) -> None:
        self._events = events
        self.messages: list[ai.Message] = []
        self.error: BaseException | None = None
        self.stop_reason = ""
        self.done = False

    def __iter__(self) -> RunStream:
        return self

    def __next__(self) -> Event:
        if self.done:
            raise StopIteration
        try:
            ev = next(self._events)
        except StopIteration:
            self.done = True
            raise
        except BaseException as e:
            self.done = True
            self.error = e
            raise
        if ev.type == "message_end" and ev.message is not None:
            self.messages.append(ev.message)
        elif ev.type == "agent_end":
            self.stop_reason = ev.stop_reason
        return ev

    def wait(self) -> list[ai.Message]:
        """Drive the rest of the run; return the produced messages or raise the run's error."""
        for _ in self:
            pass
        if self.error is not None:
            raise self.error
        return self.messages

    def close(self) -> None:
        """Stop the run where it is: what was persisted stays, a reply still streaming is not stored."""
        self.done = True
        close = getattr(self._events, "close", None)
        if close is not None:
            close()


class Agent:
    """A durable agent session: an append-only tree of entries in a store.

    ``Agent(session_id=...)`` resumes that session when the store has it
    (the leaf is the last appended entry, rule R9) and creates it otherwise;
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
        self.store: Store = store if store is not None else MemoryStore()
        self.publisher = publisher
        self._model_spec = model
        self._model: Model | None = None
        self._log: list[Entry] = []
        self._by_id: dict[str, Entry] = {}
        self._labels: dict[str, tuple[str, CustomEntry]] = {}  # name -> (target id, its latest label entry)
        self._active = ActivePath(self._by_id)
        self._lock = threading.RLock()  # commits are serialised (a fan-out's runs commit from threads)
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
        self.session_id = session_id
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
        for e in loaded:
            self._remember(e)
        if loaded:
            self.leaf_id = loaded[-1].id
        if resumed:
            self._publish(Event("session_init", session_id=session_id, leaf_id=self.leaf_id))
        if system is not None and system != self.system:
            self.append(system_entry(system))

    @property
    def leaf_id(self) -> str:
        """The id of the leaf: the entry the next one hangs off (``""``: before the first)."""
        return self._active.leaf_id

    @leaf_id.setter
    def leaf_id(self, entry_id: str) -> None:
        self._active.move_to(entry_id)

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
        return self._log[start:]

    def on_path(self, entry_id: str) -> bool:
        """True when ``entry_id`` is on the active path. O(1) (after the leaf moved, once: O(entries between the old and the new leaf))."""
        return entry_id in self._active

    def entry(self, entry_id: str) -> Entry:
        """Return the entry with that id; raises :class:`UnknownEntry`."""
        try:
            return self._by_id[entry_id]
        except KeyError:
            raise UnknownEntry(f"no entry {entry_id!r} in session {self.session_id!r}") from None

    def labels(self) -> dict[str, str]:
        """Return ``{label name: entry id}`` for the session's labels, in the order the names were set.

        See :meth:`label`. O(number of labels): the agent keeps them as entries arrive.
        """
        return {name: target for name, (target, _) in self._labels.items()}

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
        if not isinstance(ref, str) or not ref:
            raise UnknownEntry("name an entry: an entry id, a label, or 4+ characters of an id")
        if ref in self._by_id:
            return ref
        if ref in self._labels:
            target = self._labels[ref][0]
            if target not in self._by_id:
                raise UnknownEntry(f"label {ref!r} names entry {target!r}, which is not in session {self.session_id!r}")
            return target
        where = f"in session {self.session_id!r}"
        hits = [i for i in self._by_id if i.startswith(ref)] if len(ref) >= 4 else []
        if len(hits) == 1:
            return hits[0]
        if hits:
            shown = ", ".join(sorted(hits)[:3]) + (", ..." if len(hits) > 3 else "")
            raise UnknownEntry(f"{ref!r} starts {len(hits)} entry ids {where} ({shown}): give more characters")
        if 0 < len(ref) < 4 and any(i.startswith(ref) for i in self._by_id):
            raise UnknownEntry(f"{ref!r} is too short to name an entry {where}: give at least 4 characters of its id")
        near = suggest(ref, [*self._labels, *(self._by_id if len(self._by_id) <= SUGGEST_IDS else ())])
        raise UnknownEntry(f"no entry or label {ref!r} {where}{near}")

    def path(self, leaf_id: str | None = None) -> list[Entry]:
        """Return the active path (root to leaf), or the path to ``leaf_id``. O(depth)."""
        if leaf_id is None or leaf_id == self.leaf_id:
            return list(self._active.entries())
        return path(self._by_id, leaf_id)

    @property
    def depth(self) -> int:
        """The number of entries on the active path: ``len(self.path())`` without the copy.
        O(1) (after the leaf moved, once: O(entries between the old and the new leaf))."""
        return len(self._active)

    @property
    def system(self) -> str | None:
        """The session's system prompt on the active path (the latest system entry), or ``None``.

        Set it with ``agent.append(durable.system(text))`` (or as run input).
        O(1) (after the leaf moved, once: O(entries between the old and the new leaf)).
        """
        return self._active.system()

    def view_builder(self) -> ViewBuilder:
        """Return a copy of the active path's model view builder, kept up to date by the agent:
        ``view_builder().messages()`` is ``model_view(self.path())``; the caller may extend it
        (:meth:`~durable_nb.session.ViewBuilder.add`). O(depth) at C speed (a list copy); O(depth)
        once after the leaf moved elsewhere."""
        return self._active.view_builder()

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
        return model_view(self.path(leaf) + mark_ephemeral(self._prepare(entries, leaf)))

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
        prepared = mark_ephemeral(self._prepare(entries))
        return RunStream(self._run(model, self._active.run_view(prepared), prepared, specs, used, self.leaf_id))

    def _run(
        self,
        model: Model,
        view: RunView,
        prepared: list[Entry],
        tools: list[Tool],
        settings: dict[str, Any],
        parent: str,
        move: bool = True,
        halt: threading.Event | None = None,
    ) -> Iterator[Event]:
        """The loop of one run on its own chain: each entry's parent is the run's previous entry (``parent``
        first), whatever the leaf does meanwhile. ``move=False`` (a fan-out's variants) leaves the leaf alone;
        once ``halt`` is set, the run's next commit raises ``KeyboardInterrupt`` instead of writing."""
        durable = self._commit(prepared, move, halt)
        at = durable[-1].id if durable else parent  # the run's own end
        sid = self.session_id
        yield Event("agent_start", session_id=sid, leaf_id=at, entries=tuple(durable))
        by_name = {t.name: t for t in tools}
        specs = [t.spec() for t in tools]
        produced: list[ai.Message] = []
        deltas: list[str] = []
        stop = ""
        try:
            for step in range(1, self.max_steps + 1):
                deltas = []
                request = ai.Request(system=view.system, tools=specs, settings=settings)
                start = time.perf_counter()
                first: float | None = None
                final = None
                for item in open_stream(model, view.context(), request):
                    if first is None:
                        first = time.perf_counter()
                    if isinstance(item, str):
                        if item:
                            deltas.append(item)
                            yield Event("text_delta", session_id=sid, delta=item)
                    elif isinstance(item, ai.Message):
                        final = item
                    else:
                        raise ModelError(
                            f"model {model_name(model)} yielded {type(item).__name__}; yield str or ai.Message"
                        )
                end = time.perf_counter()
                if final is None:
                    final = ai.assistant_message("".join(deltas))
                final = msgspec.structs.replace(
                    repair_message(final),  # surrogate halves a model's chunks left apart
                    role="assistant",
                    injected=None,
                    model=final.model or model_name(model),
                    settings=settings or None,
                    timing={"ttft_ms": _ms(start, first or end), "total_ms": _ms(start, end)},
                )
                reply = self._message_entry(final, at)
                self._commit([reply], move, halt)
                at = reply.id
                view.add(final)
                produced.append(final)
                deltas = []
                yield Event("message_end", session_id=sid, leaf_id=reply.id, entries=(reply,), message=final)
                calls = final.tool_calls()
                stop = final.stop_reason or ""
                if not calls:
                    break
                for call in calls:
                    yield Event("tool_start", session_id=sid, leaf_id=at, call=call)
                    result, duration = self._call_tool(call, by_name)
                    entry = self._message_entry(result, at)
                    self._commit([entry], move, halt)
                    at = entry.id
                    view.add(result)
                    produced.append(result)
                    yield Event("message_end", session_id=sid, leaf_id=entry.id, entries=(entry,), message=result)
                    yield Event(
                        "tool_end",
                        session_id=sid,
                        leaf_id=entry.id,
                        entries=(entry,),
                        call=call,
                        result=result,
                        duration_ms=duration,
                    )
                if step == self.max_steps:
                    stop = "max_steps"
        except GeneratorExit:
            raise
        except BaseException as e:
            yield Event("agent_end", session_id=sid, leaf_id=at, error=e, partial="".join(deltas))
            raise
        yield Event("agent_end", session_id=sid, leaf_id=at, messages=tuple(produced), stop_reason=stop)

    def _message_entry(self, message: ai.Message, parent: str) -> MessageEntry:
        return MessageEntry(id=new_id(), parent_id=parent, created_at=now(), message=message)

    def _call_tool(self, call: ai.ToolCall, tools: dict[str, Tool]) -> tuple[ai.Message, float]:
        """Run one tool call; return its tool-result message and the time it took in ms.

        Unknown tool, malformed or unfitting arguments, or an exception in the
        tool give an ``is_error`` result (the model reads why); a
        ``KeyboardInterrupt`` (or any ``BaseException`` that is not an
        ``Exception``) propagates and stops the run. :attr:`tool_reminder`
        may attach a :class:`~durable_nb.ai.Reminder`.
        """
        start = time.perf_counter()
        error = False
        tool = tools.get(call.name)
        malformed = call.malformed()
        if tool is None:
            known = ", ".join(sorted(tools)) or "none"
            text_, error = f"unknown tool {call.name!r}; the tools are: {known}", True
        elif malformed:
            text_, error = f"the arguments of {call.name} could not be read: {malformed}", True
        else:
            try:
                text_ = result_text(tool(call.arguments))
            except Exception as e:  # noqa: BLE001 - the model reads the error and the run goes on
                text_, error = error_text(e), True
        duration = _ms(start, time.perf_counter())
        result = ai.Message(
            role="tool_result",
            content=[ai.Text(text_)],
            tool_call_id=call.id,
            tool_name=call.name,
            is_error=error,
            timing={"duration_ms": duration},
        )
        if self.tool_reminder is not None:
            note = self.tool_reminder(call, result)
            if note:
                result = msgspec.structs.replace(result, content=[*result.content, ai.Reminder(note)])
        return result, duration

    def append(self, *entries: Entry | str) -> list[Entry]:
        """Persist entries at the leaf without calling a model; return them with ids assigned.

        Ephemeral entries are refused here (they only make sense as run input).
        """
        self._check_open()
        prepared = self._prepare(entries)
        if any(is_ephemeral(e) for e in prepared):
            raise DurableError("append() stores entries; pass ephemeral entries to run() instead")
        self._commit(prepared)
        return prepared

    def refresh(self) -> list[Entry]:
        """Read the entries other writers appended to this session since it was loaded; return them.

        They join the log in the store's append order (another kernel's turn
        shows up as a sibling branch, rule R14); the leaf stays where it is,
        so this agent's next turn still continues from its own position.
        Entries already known (its own appends) are skipped. Cost: one load
        of the session from the store, O(entries).
        """
        new = [e for e in self.store.load_entries(self.session_id) if e.id not in self._by_id]
        for e in new:
            self._remember(e)
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
        problem = label_problem(name)
        if problem is None and name in self._by_id:
            problem = f"{name!r} is an entry id of session {self.session_id!r}; a label needs a name of its own"
        if problem is not None:
            raise DurableError(problem)
        if entry_id is None:
            target = self._unlabelled_leaf()
            if not target:
                raise DurableError(f"session {self.session_id!r} has no entry to label yet: run a turn first")
        else:
            target = self.resolve(entry_id)
        e = self._by_id[target]
        if is_ephemeral(e):
            raise DurableError(f"cannot label {target!r}: it is ephemeral and never stored")
        if label_of(e) is not None:
            raise DurableError(f"{target!r} is a label entry; label the entry it names instead")
        if name in self._labels and self._labels[name][0] == target:
            return self._labels[name][1]
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
        if name not in self._labels:
            known = ", ".join(self._labels) or "none"
            raise DurableError(f"no label {name!r}{suggest(name, self._labels)}; the labels are: {known}")
        (entry,) = self.append(label_entry(name, ""))
        assert isinstance(entry, CustomEntry)
        return entry

    def _unlabelled_leaf(self) -> str:
        """Return the leaf, stepping up over label entries (``""`` when nothing else is on the path)."""
        at = self.leaf_id
        while at and label_of(self._by_id[at]) is not None:
            at = self._by_id[at].parent_id
        return at

    def fork(self, new_id_: str, store: Store | None = None, at: str | None = None) -> Agent:
        """Create session ``new_id_`` (parent: this one) holding a copy of the active path.

        ``at`` copies the path to that entry instead (anything
        :meth:`resolve` takes: an id, a label, a prefix; on any branch; not
        an ephemeral entry). The copy is re-chained with fresh ids;
        timestamps are kept (an entry without one, imported from a record that had none, gets the time of the fork: pi-go refuses an empty one), and so is every field the entries carry; a compaction's ``first_kept_id`` and a label's
        ``target_id`` follow their entry (a label copied without its target,
        one naming an entry on another branch, names nothing in the copy).
        ``store`` puts the
        new session in another store (e.g. a session opened read-only in
        memory, continued in the notebook's store); its ``parent_id`` still
        names this session. Raises ``SessionExists`` if the id is taken there.
        The new session is created with its entries in one step (the store's
        ``create_session(..., entries=...)``): a fork that fails (an entry that
        cannot be stored raises :class:`DurableError`, a full disk the store's
        error) leaves no session behind and the id free.
        Returns the new session's agent (same model, publisher, tools,
        settings and hooks; its store).
        """
        self._check_open()
        if at is None:
            src = self.path()
        else:
            at = self.resolve(at)
            if is_ephemeral(self._by_id[at]):
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
        forked = Agent(
            model=self._model_spec,
            store=store,
            session_id=new_id_,
            tools=self.tools,
            max_steps=self.max_steps,
        )
        forked.settings = dict(self.settings)
        forked.tool_reminder = self.tool_reminder
        forked.publisher = self.publisher  # after its construction: the source's event comes first, as in pi-go
        self._publish(
            Event(
                "session_forked",
                session_id=new_id_,
                parent_id=self.session_id,
                leaf_id=forked.leaf_id,
                entries=tuple(copies),
            )
        )
        forked._publish(Event("session_init", session_id=new_id_, leaf_id=forked.leaf_id))
        return forked

    def compact(self, keep_turns: int = 0, prompt: str | None = None) -> CompactionEntry | None:
        """Summarise the active path with the session's model; keep the last ``keep_turns`` turns.

        A turn starts at a user message that is not injected. Appends a
        :class:`CompactionEntry` at the leaf and returns it; returns ``None``
        (no entry, no event) when there is nothing to summarise. Nothing is
        removed: branching to an earlier entry gives the full history back.
        """
        self._check_open()
        if keep_turns < 0:
            raise DurableError("keep_turns must be 0 or more")
        full = self.path()
        at = latest_compaction(full)
        start = kept_from(full, at) if at >= 0 else 0  # where the entries not yet summarised begin
        live = [e for e in full[start:] if not isinstance(e, CompactionEntry)]
        turns = [i for i, e in enumerate(live) if is_turn_start(e)]
        if not keep_turns:
            cut = len(live)
        elif len(turns) > keep_turns:
            cut = turns[-keep_turns]
        else:
            return None
        if not any(isinstance(e, MessageEntry) for e in live[:cut]):
            return None
        first_kept = live[cut].id if cut < len(live) else ""
        model = self._built_model()
        keep_from = full.index(live[cut]) if cut < len(live) else len(full)
        system, request = split_system(model_view(full[:keep_from]) + [ai.user_message(prompt or COMPACT_PROMPT)])
        summary = _collect(model, request, ai.Request(system=system, settings=check_settings(self.settings)))
        before = model_view(full)
        entry = CompactionEntry(
            id=new_id(),
            parent_id=self.leaf_id,
            created_at=now(),
            summary=summary,
            first_kept_id=first_kept,
            tokens_before=estimate_tokens(before),
        )
        self._commit([entry])
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
        **settings: Any,
    ) -> Replay:
        """Run the active path's turns again from ``from_id`` on, with another model, system prompt or settings,
        into a sibling branch; return a :class:`~durable_nb.durable.Replay`.

        ``from_id`` is an entry id, a label or a unique id prefix (see
        :meth:`resolve`) of an entry on the active path; ``None`` replays the
        whole path. The input of each turn from there on is copied in order
        (user messages with their meta entries, system prompts, notes; origins
        kept) and the model answers it again, tool loop included (``tools``
        for the replay, else :attr:`tools`). The model's side of the original
        (replies, tool results) is not copied, nor are labels and compaction
        entries. ``model`` (``None``: the agent's), ``system`` (replaces
        every system prompt of the replayed part; ``None``: kept) and
        ``settings`` (over the settings each original reply was made with)
        are what changes. The new branch hangs off the parent of the first
        replayed entry, so it is that entry's sibling and the original stays
        as it was; the leaf ends on the new branch's end, which gets a label
        naming what changed (``gpt-4.1@replay2``). Ephemeral input was never
        stored: a turn that had some (its user message's
        ``ephemeral_context``) is replayed without it, and
        :attr:`~durable_nb.durable.Replay.warnings` names it. ``on_event``
        gets every event of every replayed run.

        Raises :class:`DurableError` (one line) before writing anything for
        an unknown entry or label, an entry off the active path, nothing to
        replay (no user message from there on), a model that cannot be built
        or a bad setting; :class:`~durable_nb.durable.ReplayFailed` when a
        turn fails midway (its ``result`` holds what was written; the leaf is
        where it stopped). A ``KeyboardInterrupt`` propagates as is. Cost:
        one run per turn, O(depth) to plan.
        """
        self._check_open()
        full = self.path()
        if from_id is None or from_id == "":
            start = 0
        else:
            target = self.resolve(from_id)
            if not self.on_path(target):
                raise DurableError(
                    f"entry {target} is not on the active path: branch to a leaf below it first, "
                    "or replay from an entry of the active path"
                )
            start = next(i for i, e in enumerate(full) if e.id == target)
        if not full:
            raise DurableError("nothing to replay: the session has no entries yet")
        pl = plan(full[start:], full[start].parent_id, drop_system=system is not None)
        where = f"from {full[start].id}" if start else "on the active path"
        if not pl.turns:
            raise DurableError(f"nothing to replay {where}: no user message there to send again")
        built = build(model) if model is not None else self._built_model()
        as_tools(self.tools if tools is None else tools)
        check_settings({**self.settings, **settings})  # a bad setting fails here, before anything is written
        first_turn = sum(1 for e in full[:start] if is_turn_start(e)) + 1
        result = Replay(fork_id=pl.fork_id, original_leaf_id=self.leaf_id, warnings=list(pl.skipped))
        for i, marks in enumerate(pl.ephemeral):
            if marks:
                user = pl.turns[i][-1]
                said = ", ".join(o or "no origin" for o in marks)
                result.warnings.append(
                    f"turn {first_turn + i} ({user.id}) was sent {len(marks)} ephemeral "
                    f"input{'s' if len(marks) != 1 else ''} ({said}) that {'was' if len(marks) == 1 else 'were'} "
                    f"never stored: replayed without {'it' if len(marks) == 1 else 'them'}"
                )
        self.branch(pl.fork_id)
        try:
            if system is not None and system != self.system:
                result.entries += self.append(system_entry(system))
            for i, group in enumerate(pl.turns):
                base = self.settings if pl.settings[i] is None else pl.settings[i]
                for ev in self._stream(built, group, tools, {**(base or {}), **settings}):
                    if ev.type in ("agent_start", "message_end"):
                        result.entries += ev.entries
                    if ev.type == "message_end" and ev.message is not None:
                        result.messages.append(ev.message)
                    if on_event is not None:
                        on_event(ev)
                result.turns += 1
            if pl.tail:
                result.entries += self.append(*pl.tail)
        except Exception as e:
            result.leaf_id = self.leaf_id
            cause = str(e) if isinstance(e, DurableError) else f"{type(e).__name__}: {e}"
            raise ReplayFailed(
                f"replay stopped at turn {first_turn + result.turns} ({cause}); the new branch keeps "
                f"{result.turns} replayed turn{'s' if result.turns != 1 else ''} (leaf {self.leaf_id})",
                result,
            ) from e
        keys = [k for k, given in (("model", model is not None), ("system", system is not None)) if given]
        keys += list(settings)
        change = Variant(model=built, system=system, settings=settings, label="" if keys else f"replay{first_turn}")
        (result.label,) = names([change], f"replay{first_turn}", self.labels(), keys=keys)
        result.entries.append(self.label(result.label))  # at the new end: the leaf moves onto it
        result.leaf_id = self.leaf_id
        return result

    def fan_out(
        self,
        *entries: Entry | str,
        variants: Iterable[Variant | dict[str, Any] | ModelLike],
        tools: Iterable[Callable[..., Any] | Tool] | None = None,
        settings: dict[str, Any] | None = None,
        on_event: Callable[[Branch, Event], object] | None = None,
    ) -> FanOut:
        """Run one turn once per variant, each on its own sibling branch, concurrently; return a
        :class:`~durable_nb.durable.FanOut`.

        ``entries`` is a run's input (as :meth:`run` takes it); its last
        ordinary user message and what follows it go to every branch, the
        input before it (meta entries, notes) is stored once, at the leaf,
        and shared; ephemeral input reaches every variant's model and is
        never stored. A variant is a model (a name, a callable, a model
        object) or a dict with ``model``, ``system``, ``label`` and settings
        (see :mod:`durable_nb.durable.variants`); ``settings`` apply to every
        variant (a variant's own win). A variant whose system prompt differs
        from the session's stores it on its branch. Each branch gets a label
        naming what differs, ``<what>@t<turn>`` (``offline@t3``,
        ``temperature=1@t3``), unique in the session.

        The variants' model calls and tool calls run in threads at the same
        time (so their tools must tolerate that); the agent stores their
        entries one commit at a time. ``on_event(branch, event)`` is called in
        the caller's thread with each variant's events as they come (``branch``
        is its :class:`~durable_nb.durable.Branch`, filled so far). A variant
        that fails ends only its own branch (``Branch.error``; its stored
        entries stay); the others go on. Afterwards the leaf is on the first
        variant that replied (in the order given), else at the fork point.

        Raises :class:`DurableError` (one line, naming the variant) before
        anything is written for no variant, no user message in ``entries``,
        a model that cannot be built or a bad setting. A
        ``KeyboardInterrupt`` stops every variant at its next event and
        propagates. Cost: one thread and one run per variant.
        """
        self._check_open()
        vs = [as_variant(v) for v in variants]
        if not vs:
            raise DurableError("fan_out needs at least one variant (a model, or a dict of model/system/settings)")
        models: list[Model] = []
        used: list[dict[str, Any]] = []
        for i, v in enumerate(vs, 1):
            try:
                models.append(build(v.model) if v.model is not None else self._built_model())
                used.append(check_settings({**self.settings, **(settings or {}), **v.settings}))
            except ModelError as e:
                raise ModelError(f"variant {i}: {e}") from None
            except SettingsError as e:
                raise SettingsError(f"variant {i}: {e}") from None
        specs = as_tools(self.tools if tools is None else tools)
        items = [text(e) if isinstance(e, str) else e for e in entries]
        k = max((i for i, e in enumerate(items) if is_turn_start(e)), default=-1)
        if k < 0:
            raise DurableError("fan_out needs the user's message to send (a str or durable.text(...))")
        shared = self._prepare(items[:k])
        fork = next((e.id for e in reversed(shared) if not is_ephemeral(e)), self.leaf_id)
        current = self.system
        for x in shared:
            if isinstance(x, MessageEntry) and x.message.role == "system" and not is_ephemeral(x):
                current = x.message.text()
        user = items[k]
        origin = user.message.origin if isinstance(user, MessageEntry) else None
        runs = []
        for v in vs:
            own: list[Entry | str] = list(items[k:])
            if v.system is not None and v.system != current:
                sys_entry = system_entry(v.system)
                sys_entry.message.origin = origin  # the cell's own entry (a re-run finds it)
                own.insert(0, sys_entry)
            prepared = mark_ephemeral(self._prepare(own, fork), shared)
            runs.append((prepared, self._active.run_view(shared + prepared)))
        turn = sum(1 for e in self.path() if is_turn_start(e)) + 1
        labels = names([replace(v, model=m) for v, m in zip(vs, models)], f"t{turn}", self.labels())
        self._commit(shared)
        stop = threading.Event()
        out = FanOut(fork_id=fork, branches=[Branch(n, v, i) for i, (n, v) in enumerate(zip(labels, vs))])
        streams = [
            RunStream(self._run(m, view, prepared, specs, u, fork, move=False, halt=stop))
            for m, u, (prepared, view) in zip(models, used, runs)
        ]

        def receipt(i: int, ev: Event) -> None:
            b = out.branches[i]
            if ev.type in ("agent_start", "message_end"):
                b.entries += ev.entries
                b.leaf_id = ev.leaf_id
            if ev.type == "message_end" and ev.message is not None:
                b.messages.append(ev.message)
            elif ev.type == "agent_end":
                b.stop_reason = ev.stop_reason
            if on_event is not None:
                on_event(b, ev)

        try:
            drive(streams, receipt, stop, self._lock)
        finally:
            for b, s in zip(out.branches, streams):
                b.error = s.error if s.error is not None else (None if s.done else KeyboardInterrupt())
            ok = [b for b in out.branches if b.ok and b.leaf_id]
            self.branch(ok[0].leaf_id if ok else fork)
            out.leaf_id = self.leaf_id
        for b in ok:  # each branch's label entry goes at its own end
            self.branch(b.leaf_id)
            b.entries.append(self.label(b.name))
            b.leaf_id = self.leaf_id
        self.branch(ok[0].leaf_id if ok else fork)
        out.leaf_id = self.leaf_id
        return out

    def close(self) -> None:
        """Close the agent: later runs, appends, branches and compactions are refused."""
        self.closed = True

    # -- internals ------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise AgentClosed(f"the agent for session {self.session_id!r} is closed; create a new Agent to continue")

    def _prepare(self, entries: Sequence[Entry | str], parent: str | None = None) -> list[Entry]:
        """Copy the input with fresh ids, timestamps and parents (the caller's objects are untouched).

        Each durable entry's parent is the previous durable entry (the first's
        is the current leaf); an ephemeral entry hangs off the leaf as it is
        at that point and never becomes a parent.
        """
        out: list[Entry] = []
        parent = self.leaf_id if parent is None else parent
        for e in entries:
            if isinstance(e, str):
                e = text(e)
            if not isinstance(e, Entry):
                raise DurableError(
                    f"run input must be entries (durable.text(...), durable.meta(...)); got {type(e).__name__}"
                )
            c = msgspec.structs.replace(e, id=new_id(), parent_id=parent, created_at=now())
            out.append(c)
            if not is_ephemeral(c):
                parent = c.id
        return out

    def _commit(self, entries: list[Entry], move: bool = True, stop: threading.Event | None = None) -> list[Entry]:
        """The one write path: persist, then remember, then advance the leaf. Returns the durable entries.

        ``entries`` come from :meth:`_prepare` (or are built at the leaf the
        same way): each durable entry is the child of the durable entry before
        it, the first hangs off the leaf. The durable ones go to the store in
        one append; if that raises, nothing changes in memory and the error
        propagates. Then every entry joins the in-memory log (ephemeral ones
        too: they get an id but hang off the leaf, rule R8) and the leaf moves
        to the last durable entry, growing the cached active path in place
        (``move=False``: the leaf stays; a fan-out's variants grow branches
        beside it). Commits are serialised: runs in other threads wait their
        turn. A set ``stop`` (checked under the same lock as the write, see
        :func:`~durable_nb.durable.fanout.drive`) refuses the commit with
        ``KeyboardInterrupt``. O(len(entries)) beyond the store's own cost.
        """
        durable = [e for e in entries if not is_ephemeral(e)]
        with self._lock:
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt("stopped: nothing more is written")
            if durable:
                self.store.append_entries(self.session_id, durable)
            for e in entries:
                self._remember(e)
            if move:
                self._active.extend(durable)
        return durable

    def _remember(self, e: Entry) -> None:
        if e.id in self._by_id or self._active.starts_below(e.id):
            self._active.invalidate()  # the id resolves differently now: recompute the path
        self._log.append(e)
        self._by_id[e.id] = e
        named = label_of(e)
        if named is not None and isinstance(e, CustomEntry):  # the latest label entry for a name wins; "" removes it
            name, target = named
            if target:
                self._labels[name] = (target, e)
            else:
                self._labels.pop(name, None)

    def _publish(self, ev: Event) -> None:
        if self.publisher is not None:
            self.publisher(ev)

    def __repr__(self) -> str:
        return f"<durable.Agent session={self.session_id!r} leaf={self.leaf_id!r} entries={len(self._log)}>"


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 3)


def _collect(model: Model, messages: list[ai.Message], request: ai.Request) -> str:
    """Run ``model`` to completion and return its reply text."""
    deltas, final = [], None
    for item in open_stream(model, messages, request):
        if isinstance(item, str):
            deltas.append(item)
        elif isinstance(item, ai.Message):
            final = item
    return final.text() if final is not None else "".join(deltas)


def estimate_tokens(messages: Sequence[ai.Message]) -> int:
    """Return a rough token count (characters / 4) of the messages' text and reminders."""
    chars = sum(len(getattr(b, "text", "")) for m in messages for b in m.content)
    return (chars + 3) // 4
