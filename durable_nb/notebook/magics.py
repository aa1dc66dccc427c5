"""The IPython glue: ``%%durable`` (a turn, or a staged/noted cell) and ``%durable <verb>``.

Parsing is :mod:`.args`, the verbs :mod:`.verbs`, cell tags :mod:`.tags`,
the session logic :mod:`.state`, output :mod:`.render`; this module wires
them to IPython and is the notebook layer's one error boundary: a mistake
(a :class:`~durable_nb.errors.DurableError` from any layer, or a
``UsageError`` from parsing) is shown as IPython's one ``UsageError`` line,
and a failed turn as one :class:`TurnFailed` line; neither shows a traceback.

After a turn the reply text is in the notebook variable ``_durable`` (and in
``VAR`` with ``--out VAR``). A model failure leaves the cell's message
stored (the leaf is that message; re-run the cell to retry as a sibling)
and the partial reply is shown, marked, and not stored; it is reported as
one line. An interrupt (the stop button) does the same and then re-raises
``KeyboardInterrupt`` so the kernel reports the cell as interrupted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from traitlets import Float, Unicode, observe

from ..durable import ReplayFailed, Tool, as_tools, check_settings, parse_variants, read_value
from ..errors import DurableError
from ..models.failures import env_secrets, redact
from ..session import MessageEntry, Store, open_store
from ..session.dsn import shown_dsn
from . import args as argmod
from .identity import identity
from .interpolate import interpolate
from .render import ReplyView, dry_run_text, footer, plural, short, thinking_of, tool_line
from .state import NotebookSession, Turn, default_session_name
from .tags import current_cell, request_metadata
from .verbs import VERBS, model_label


class TurnFailed(Exception):
    """A turn whose model failed or was cut off: shown as its one-line message, without a traceback.

    IPython shows an exception's ``_render_traceback_()`` lines instead of a
    traceback; a kernel reports ``ename`` ``TurnFailed``.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {self}"]


class TurnInterrupted(KeyboardInterrupt):
    """The stop button during a turn: one line, no traceback; the kernel still reports an interrupted cell
    (``ename`` ``TurnInterrupted``, a ``KeyboardInterrupt``), so Run All stops there."""

    _render_traceback_ = TurnFailed._render_traceback_


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Turn a :class:`~durable_nb.errors.DurableError` raised inside into IPython's one-line ``UsageError``.

    The one place the notebook layer maps the package's errors to what a
    notebook shows; ``UsageError``, ``TurnFailed`` and anything else pass
    through unchanged.
    """
    try:
        yield
    except DurableError as e:
        raise UsageError(str(e)) from None


@magics_class
class DurableMagics(Magics):
    """``%%durable`` / ``%durable``; settings via ``%config DurableMagics.<name> = ...``."""

    shell: Any  # the InteractiveShell (IPython's Magics declares it None until __init__ sets it)

    model = Unicode(
        "", help="Model for turns: 'offline', 'openai:<model>', ... ('' = $DURABLE_NB_MODEL or offline)."
    ).tag(config=True)
    store = Unicode(
        ".durable",
        help="Where sessions are kept: a folder of JSONL logs (relative paths are from the kernel's working "
        "directory, the notebook's folder), sqlite:///path.db, or a postgresql:// DSN (shown with its password "
        "masked; better keep it in PGPASSWORD or ~/.pgpass).",
    ).tag(config=True)
    session = Unicode(
        "",
        help="Session id to use ('' = the id the notebook's metadata keeps (durable_nb extension), "
        "else named after the notebook, or 'default').",
    ).tag(config=True)
    throttle = Float(0.05, help="Seconds between re-renders of a streaming reply.").tag(config=True)

    def __init__(self, shell=None, **kw) -> None:
        super().__init__(shell=shell, **kw)
        self._state: NotebookSession | None = None
        self._carry: list = []  # staged entries kept across a %config change of store/session
        self._identity: str | None = None  # the notebook-metadata session id the state was opened for
        self._secret_store: tuple[str, str] | None = None  # (masked spec shown in .store, the real spec)
        self._opened: tuple[str, Store] | None = None  # (spec, store): a SQL store is opened once
        self.tool_names: dict[str, None] = {}  # %durable tools add: notebook names, looked up at each turn
        self.settings: dict[str, Any] = {}  # %durable set: defaults for every turn (kept in this kernel)

    # -- state ----------------------------------------------------------------

    @property
    def state(self) -> NotebookSession:
        """The notebook's session, opened on first use (store resolved against the current directory).

        Which session: ``%config DurableMagics.session`` if set; else the id the
        notebook's metadata keeps, sent with the execute request by the
        durable_nb extension (see :mod:`.identity`; a copied notebook forks its
        original here, said in one line); else one named after the notebook.
        The state is reopened when the request names another notebook id than
        the one it was opened for; ``%durable use`` stays in force otherwise.
        """
        ident = None if self.session else identity(request_metadata(self.shell))
        if self._state is not None and (ident is None or ident.session == self._identity):
            return self._state
        carry = self._state.staged if self._state is not None else self._carry
        ns: dict[str, object] = self.shell.user_ns if self.shell is not None else {}
        sid = ident.session if ident else self.session or default_session_name(ns)
        self._state = NotebookSession(
            self.open_store(), sid, self.model or None, fork_of=ident.fork_of if ident else ""
        )
        self._identity = ident.session if ident else None
        self._state.staged, self._carry = carry, []
        if self._state.forked_from:
            n = len(self._state.own.entries())
            print(
                f"this notebook is a copy: its session {sid} starts as a fork of {self._state.forked_from} "
                f"({plural(n, 'entry', 'entries')}); {self._state.forked_from} is left as it was"
            )
        return self._state

    def open_store(self, spec: str | None = None) -> Store:
        """Return the store ``spec`` names (``.store`` when ``None``), opened once per spec: see
        :func:`~durable_nb.session.open_store`. Raises ``DurableError`` when it cannot be opened."""
        if spec is None:
            spec = self.store
            if self._secret_store is not None and self._secret_store[0] == spec:
                spec = self._secret_store[1]
        if self._opened is None or self._opened[0] != spec:
            store = open_store(spec)
            old, self._opened = self._opened, (spec, store)
            if old is not None and hasattr(old[1], "close"):
                old[1].close()
        return self._opened[1]

    def use_store(self, spec: str) -> Store:
        """Open the store ``spec`` names and make it the notebook's (``.store``, password masked); return it.

        Nothing changes when it cannot be opened (``DurableError``, one line)."""
        store = self.open_store(spec)
        self.store = spec
        return store

    @observe("store", "session")
    def _reopen(self, change) -> None:
        if change["name"] == "store" and shown_dsn(change["new"]) != change["new"]:
            # keep the password out of the trait (%config DurableMagics shows it): the real spec stays here
            self._secret_store = (shown_dsn(change["new"]), change["new"])
            self.store = self._secret_store[0]
            return
        old = getattr(self, "_state", None)
        self._carry = old.staged if old is not None else []
        self._state = None  # the next use opens the new store / session

    @observe("model")
    def _model_changed(self, change) -> None:
        # not validated here (%config would only log an error): the next turn reports a bad name
        state = getattr(self, "_state", None)
        if state is not None:
            state.model = change["new"] or None

    # -- tools and settings ---------------------------------------------------------

    def resolve_tools(self, names) -> list[Tool]:
        """Return the notebook functions ``names`` name as tools, in order.

        Raises ``DurableError`` (one line) for a name the notebook does not
        define (with the nearest callable's name), something that cannot be a
        tool, or two tools with one name. Cost: building each new tool's
        schema once.
        """
        ns = self.shell.user_ns if self.shell is not None else {}
        fns = []
        for n in names:
            if n not in ns:
                callables = [k for k, v in ns.items() if callable(v) and not k.startswith("_")]
                raise DurableError(
                    f"no {n!r} in the notebook{argmod.suggest(n, callables)}: define the function first, then add it"
                )
            fns.append(ns[n])
        return as_tools(fns)

    def tool_list(self) -> list[Tool]:
        """Return the session's tools (``%durable tools add``), looked up in the notebook now."""
        return self.resolve_tools(list(self.tool_names))

    def turn_settings(self, call: argmod.Call) -> dict[str, Any]:
        """Return the settings for a turn: the session's defaults, then the cell's options; checked (one line if not)."""
        return check_settings({**self.settings, **{k: read_value(v) for k, v in call.settings}})

    # -- the magic ----------------------------------------------------------------

    @no_var_expand
    @argmod.documented
    @line_cell_magic
    def durable(self, line: str, cell: str | None = None):
        # the docstring is replaced by args.HELP plus the options (see %durable?)
        with one_line_errors():
            call = argmod.parse(line, cell is not None)
            try:
                if cell is not None:
                    return self._cell(call, cell)
                return VERBS[call.verb].run(self, call)
            finally:
                self._prepare_widget()

    def _prepare_widget(self) -> None:
        """Once this cell has ended, start preparing the session's widget in the background
        (:func:`durable_nb.widget.after_cell`: a long session's layout, tallies and views), so a
        later ``%durable show`` paints at once. Only with the widget installed; O(1) here."""
        try:
            from ..widget import after_cell
        except ImportError:  # no anywidget in this install: there is no widget to prepare
            return
        if self._state is not None:
            after_cell(self._state.agent)

    # -- cells ------------------------------------------------------------------------

    def _cell(self, call: argmod.Call, cell: str) -> None:
        info = current_cell(self.shell)
        kind = argmod.cell_kind(call.kind, info.tags)
        if call.out and kind != "turn":
            raise DurableError(f"--out binds a reply, but this cell is a {kind} cell and calls no model")
        if call.out and call.out in getattr(self.shell, "user_ns_hidden", {}):  # names the shell itself set
            raise DurableError(argmod.out_refusal(call.out))
        body = cell[:-1] if cell.endswith("\n") else cell
        if not body.strip():
            raise DurableError("the cell is empty: write the message below the %%durable line")
        if call.interpolate:
            body = interpolate(body, self.shell.user_ns)
        st = self.state
        fanned = call.models is not None or call.variants is not None
        if fanned and kind != "turn":
            raise DurableError(f"--models and --variants fan out a turn; this is a {kind} cell and calls no model")
        variants = self.variants(call) if fanned else None
        if call.dry_run:
            if kind == "note":
                raise DurableError("--dry-run previews a turn; a note cell sends nothing")
            msgs, new = st.preview(body, info.origin, call.chat, kind)
            print(dry_run_text(msgs, new, model_label(st.own.model)))
            if variants is not None:
                print(
                    f"fan-out: {plural(len(variants), 'variant', 'variants')}, each on its own branch: "
                    + "; ".join(
                        ", ".join(f"{k}={model_label(v) if k == 'model' else v!r}" for k, v in d.items()) or "as is"
                        for d in variants
                    )
                )
            return None
        if (call.tools is not None or call.settings) and kind != "turn":
            raise DurableError(f"--tools and the settings go with a turn; this is a {kind} cell and calls no model")
        tools, settings = None, None
        if kind == "turn":
            if variants is None:
                st.check_model()  # a model that cannot start moves nothing and writes nothing
            tools = self.resolve_tools(call.tools) if call.tools is not None else self.tool_list()
            settings = self.turn_settings(call)
        st.writable(
            {"turn": "run a turn", "note": "add a note", "system": "set the system prompt"}.get(kind, "stage entries")
        )
        before = st.agent.depth
        rewound = st.rewind_for(info.origin, call.chat)
        if rewound is not None:
            left = before - st.agent.depth
            print(
                f"↺ this cell ran before: rewound to before its entry {rewound.id} "
                f"({plural(left, 'entry', 'entries')} left the active path and stay on a sibling branch)"
            )
        if kind == "turn":
            skipped = st.leave_unanswered()
            if skipped is not None:
                print(
                    f"↷ the last message ({short(skipped.message.text())!r}) never got a reply: this turn continues "
                    "from before it (it stays in the log, unanswered; re-run its cell to retry it)"
                )
        if kind in ("meta", "ephemeral"):
            replaced = st.stage(kind, body, info.origin)
            st.sync()
            print(
                f"{'re-staged' if replaced else 'staged'} {kind}: {short(body)!r} "
                f"({len(st.staged)} staged for the next turn)"
            )
            return None
        if kind == "note":
            note = st.note(body, info.cell_id)
            print(f"note {note.id} appended to {st.own.session_id} (kept, never sent to the model)")
            return None
        if kind == "system":
            e = st.system(body, info.origin)
            print(f"system prompt set: entry {e.id} on the active path; the next turns send it as the system prompt")
            return None
        if variants is not None:
            return self._fan_out(st, body, info.origin, call.out, variants, tools, settings)
        return self._turn(st, body, info.origin, call.out, tools, settings)

    # -- fan-out and replay ----------------------------------------------------------

    def model_of(self, name: str) -> Any:
        """Return the model a magic's word names: a notebook function or model object of that name, else the
        name itself (``offline``, ``openai:gpt-4.1``: built later). A plain word that is neither is refused in
        one line, with the nearest notebook function suggested."""
        ns = self.shell.user_ns if self.shell is not None else {}
        obj = ns.get(name)
        if obj is not None and (callable(obj) or hasattr(obj, "stream")):
            return obj
        if name.isidentifier() and name not in ("offline", "echo"):
            callables = [k for k, v in ns.items() if callable(v) and not k.startswith("_")]
            raise DurableError(
                f"no model {name!r}{argmod.suggest(name, [*callables, 'offline'])}: a model is offline, "
                "<provider>:<model> (openai:gpt-4.1-mini) or a function defined in the notebook"
            )
        return name

    def variants(self, call: argmod.Call) -> list[dict[str, Any]]:
        """Return the variants a fan-out cell asks for: ``--models`` × ``--variants`` (either alone works).

        ``--variants`` is a notebook name holding a list of dicts (or models),
        else the text :func:`~durable_nb.durable.parse_variants` reads. A
        ``model`` in a variant is read as :meth:`model_of` reads it. Raises
        ``DurableError`` (one line) for a bad name or spec.
        """
        ns = self.shell.user_ns if self.shell is not None else {}
        rows: list[dict[str, Any]] = [{}]
        if call.variants is not None:
            spec = call.variants.strip()
            if spec.isidentifier() and "=" not in spec:
                held = ns.get(spec)
                if not isinstance(held, (list, tuple)) or not held:
                    raise DurableError(
                        f"--variants {spec}: {'no' if spec not in ns else 'not a list in'} notebook variable {spec!r}"
                        f"{argmod.suggest(spec, [k for k in ns if not k.startswith('_')]) if spec not in ns else ''}; "
                        'give a list of dicts, or write the variants: --variants "temperature=0 | temperature=1"'
                    )
                rows = [dict(v) if isinstance(v, dict) else {"model": v} for v in held]
            else:
                rows = parse_variants(spec)
                for r in rows:
                    if isinstance(r.get("model"), str):
                        r["model"] = self.model_of(r["model"])
        if call.models is not None:
            models = [self.model_of(m) for m in call.models]
            rows = [{**r, "model": m} for m in models for r in rows]
        return rows

    def _fan_out(
        self,
        st: NotebookSession,
        body: str,
        origin: str | None,
        out: str | None,
        variants: list[dict[str, Any]],
        tools: list[Tool] | None,
        settings: dict[str, Any] | None,
    ) -> None:
        in_kernel = getattr(self.shell, "kernel", None) is not None
        views: list[ReplyView] = []
        deltas: dict[int, list[str]] = {}
        partial: dict[int, str] = {}
        replied: dict[int, str] = {}  # variants whose run ended with a reply stored: its text

        def on_event(b, ev) -> None:
            if not views:  # the turn started (every check passed): one output per variant, in their order
                for n in range(1, len(variants) + 1):
                    views.append(ReplyView(in_kernel=in_kernel, throttle=self.throttle, title=f"variant {n}"))
                    if in_kernel:
                        views[-1].update("")
            i = b.index
            views[i].title = b.name
            if ev.type == "text_delta":
                deltas.setdefault(i, []).append(ev.delta)
                if in_kernel:
                    views[i].update("".join(deltas[i]))
            elif ev.type == "message_end" and ev.message is not None and ev.message.role == "assistant":
                deltas[i] = []
            elif ev.type == "agent_end":
                partial[i] = ev.partial
                if ev.error is None:
                    replied[i] = b.text

        try:
            result = st.fan_out(body, origin, variants, on_event=on_event, tools=tools, settings=settings)
        except KeyboardInterrupt:
            for i, v in enumerate(views):
                if i in replied:
                    v.final(replied[i])  # it finished before the stop: stored, on its branch
                else:
                    v.final("".join(deltas.get(i, [])), "interrupted: this partial reply was not saved")
            raise TurnInterrupted(
                f"interrupted: every variant stopped; what each stored stays on its branch (leaf {st.own.leaf_id})"
            ) from None
        lines, failures = [], []
        for b in result.branches:
            if b.index >= len(views):  # a variant that sent no event
                views.append(ReplyView(in_kernel=in_kernel, throttle=self.throttle))
            view = views[b.index]
            view.title = b.name
            if b.ok:
                view.final(
                    b.text, thinking=thinking_of(next((m for m in reversed(b.messages) if m.role == "assistant"), None))
                )
                replies = [m for m in b.messages if m.role == "assistant"]
                took = sum(
                    (m.timing or {}).get("total_ms", 0) or (m.timing or {}).get("duration_ms", 0) for m in b.messages
                )
                model = (replies[-1].model if replies else None) or model_label(b.variant.model or st.own.model)
                lines.append(
                    f"— {b.name} · {footer(model, replies, took / 1000)} · {plural(len(b.entries), 'entry', 'entries')}"
                )
                continue
            cause = str(b.error) if isinstance(b.error, DurableError) else f"{type(b.error).__name__}: {b.error}"
            cause = " ".join(redact(cause, env_secrets()).split())
            text = partial.get(b.index, "")
            view.final(text, f"failed: {cause}" + ("; this partial reply was not saved" if text else ""))
            kept = (
                f"its message is kept without a reply on its branch ({b.entries[-1].id})"
                if b.entries and not any(m.role == "assistant" for m in b.messages)
                else f"what it stored stays on its branch ({plural(len(b.entries), 'entry', 'entries')})"
            )
            failures.append((b.name, cause, kept))
        ok = [b for b in result.branches if b.ok]
        if not ok:
            causes = "; ".join(f"{name}: {cause}" for name, cause, _ in failures)
            raise TurnFailed(
                f"every variant failed ({causes}); each message is kept without a reply on its branch, "
                f"the leaf is back at {result.fork_id or 'the root'}; re-run the cell to retry"
            )
        for line in lines:
            print(line)
        for name, cause, kept in failures:
            print(f"✗ {name} failed: {cause} — {kept}; the other variants are kept")
        texts = {b.name: b.text for b in ok}
        self.shell.user_ns["_durable"] = texts
        if out:
            self.shell.user_ns[out] = texts
        print(
            f"fan-out of {len(result.branches)} from {result.fork_id or 'the root'}: {len(ok)} replied"
            + (f", {len(result.failed)} failed" if result.failed else "")
            + f"; leaf on {ok[0].name} (the first that replied); labels: {', '.join(b.name for b in ok)}"
        )
        return None

    def _turn(
        self,
        st: NotebookSession,
        body: str,
        origin: str | None,
        out: str | None,
        tools: list[Tool] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> None:
        in_kernel = getattr(self.shell, "kernel", None) is not None
        views = [ReplyView(in_kernel=in_kernel, throttle=self.throttle)]  # one per model call

        def on_event(ev) -> None:
            if ev.type == "message_end" and ev.message.role == "assistant" and ev.message.tool_calls():
                views[-1].final(ev.message.text(), thinking=thinking_of(ev.message))
            elif ev.type == "tool_end":
                print(tool_line(ev.call, ev.result, ev.duration_ms), flush=True)
                views.append(ReplyView(in_kernel=in_kernel, throttle=self.throttle))

        turn = Turn()
        start = time.perf_counter()
        try:
            st.run(
                body,
                origin,
                turn,
                on_delta=lambda t: views[-1].update(t.text),
                on_event=on_event,
                tools=tools,
                settings=settings,
            )
        except KeyboardInterrupt:
            views[-1].final("".join(turn.deltas), "interrupted: this partial reply was not saved")
            raise TurnInterrupted(self._after_failure(st, turn, "interrupted")) from None
        except Exception as e:  # a model or provider failure: one line, the session stays usable
            partial = "".join(turn.deltas)
            views[-1].final(partial, "the model failed: this partial reply was not saved" if partial else "")
            cause = str(e) if isinstance(e, DurableError) else f"{type(e).__name__}: {e}"
            cause = " ".join(redact(cause, env_secrets()).split())  # no key, no line break reaches the cell
            raise TurnFailed(f"{cause} — {self._after_failure(st, turn, 'the turn failed')}") from None
        elapsed = time.perf_counter() - start
        views[-1].final(turn.text, thinking=thinking_of(turn.reply))
        self.shell.user_ns["_durable"] = turn.text
        if out:
            self.shell.user_ns[out] = turn.text
        if turn.stop_reason == "max_steps":
            print(
                f"stopped after {len(turn.replies)} model calls (max_steps): every result is saved; "
                "send another turn to let the model go on"
            )
        model = (turn.reply.model if turn.reply is not None else None) or st.own.model_name()
        print(
            f"— {footer(model, turn.replies, elapsed)} · {st.own.session_id} · leaf {turn.leaf_id} · "
            f"{plural(turn.written, 'entry', 'entries')} written"
        )
        return None

    def replay(self, call: argmod.Call) -> None:
        """``%durable replay [ENTRY|LABEL] [--model M] [--system TEXT] [settings]``: run the active path's turns
        again into a sibling branch, each reply streaming below, then a summary and any warnings."""
        st = self.state
        st.writable("replay")
        model = self.model_of(call.model) if call.model is not None else None
        tools = self.resolve_tools(call.tools) if call.tools is not None else self.tool_list()
        settings = {k: read_value(v) for k, v in call.settings}
        in_kernel = getattr(self.shell, "kernel", None) is not None
        views: list[ReplyView] = []
        texts: list[str] = []
        turns = [0]

        def on_event(ev) -> None:
            if ev.type == "agent_start":
                turns[0] += 1
                user = next((e for e in reversed(ev.entries) if isinstance(e, MessageEntry)), None)
                said = short(user.message.text()) if user is not None else ""
                print(f"↻ turn {turns[0]}: {said!r}", flush=True)
                views.append(ReplyView(in_kernel=in_kernel, throttle=self.throttle))
                texts.append("")
            elif ev.type == "text_delta":
                texts[-1] += ev.delta
                views[-1].update(texts[-1])
            elif ev.type == "message_end" and ev.message is not None and ev.message.role == "assistant":
                views[-1].final(ev.message.text(), thinking=thinking_of(ev.message))
            elif ev.type == "tool_end":
                print(tool_line(ev.call, ev.result, ev.duration_ms), flush=True)
                views.append(ReplyView(in_kernel=in_kernel, throttle=self.throttle))
                texts.append("")

        try:
            r = st.replay(call.args[0] if call.args else None, model, call.system, settings, tools, on_event)
        except ReplayFailed as e:
            cause = " ".join(redact(str(e), env_secrets()).split())
            raise TurnFailed(cause) from None
        except KeyboardInterrupt:
            raise TurnInterrupted(
                f"replay interrupted: the turns replayed so far stay on the new branch (leaf {st.own.leaf_id}); "
                "the original branch is unchanged"
            ) from None
        print(
            f"replayed {plural(r.turns, 'turn', 'turns')} into a new branch from {r.fork_id or 'the root'}: "
            f"label {r.label}, leaf {r.leaf_id} · {plural(len(r.entries), 'entry', 'entries')} written; "
            f"the original branch (leaf {r.original_leaf_id}) is unchanged"
        )
        for w in r.warnings:
            print(f"warning: {w}")

    @staticmethod
    def _after_failure(st: NotebookSession, turn: Turn, what: str) -> str:
        if not turn.input_ids:
            return f"{what} before anything was written; re-run the cell to try again"
        if turn.replies:
            last = st.own.path()[-1] if st.own.depth else None
            dangling = isinstance(last, MessageEntry) and bool(last.message.tool_calls())
            return (
                f"{what}; your message and {plural(len(turn.replies), 'reply', 'replies')} with their tool results "
                f"are saved (leaf {st.own.leaf_id})"
                + ("; the unfinished tool call reaches the model as interrupted" if dangling else "")
                + "; re-run the cell to retry"
            )
        return (
            f"{what}; your message is kept in the log without a reply (the next turn continues from before it), "
            "the partial reply is not; re-run this cell to retry"
        )
