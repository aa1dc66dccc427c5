"""The IPython glue: ``%%durable`` (a turn, or a staged/noted cell) and ``%durable <verb>``.

Parsing is :mod:`.args`, cell tags :mod:`.tags`, the session logic
:mod:`.state`, output :mod:`.render`; this module wires them to IPython.
Every user mistake is a ``UsageError`` (IPython prints one line).

After a turn the reply text is in the notebook variable ``_durable`` (and in
``VAR`` with ``--out VAR``). A model failure leaves the cell's message
stored (the leaf is that message; re-run the cell to retry as a sibling)
and the partial reply is shown, marked, and not stored; it is reported as
one line. An interrupt (the stop button) does the same and then re-raises
``KeyboardInterrupt`` so the kernel reports the cell as interrupted.
"""

from __future__ import annotations

import os
from pathlib import Path

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from traitlets import Float, Unicode, observe

from ..errors import ModelError
from ..models import ModelLike, build
from . import args as argmod
from .interpolate import interpolate
from .render import ReplyView, dry_run_text, entry_label, entry_text, plural, short
from .state import NotebookSession, Turn, counts, default_session_name
from .tags import current_cell


@magics_class
class DurableMagics(Magics):
    """``%%durable`` / ``%durable``; settings via ``%config DurableMagics.<name> = ...``."""

    model = Unicode(
        "", help="Model for turns: 'offline', 'openai:<model>', ... ('' = $DURABLE_NB_MODEL or offline)."
    ).tag(config=True)
    store = Unicode(
        ".durable", help="Store folder; relative paths are from the kernel's working directory (the notebook's folder)."
    ).tag(config=True)
    session = Unicode("", help="Session id to use ('' = named after the notebook, or 'default').").tag(config=True)
    throttle = Float(0.05, help="Seconds between re-renders of a streaming reply.").tag(config=True)

    def __init__(self, shell=None, **kw) -> None:
        super().__init__(shell=shell, **kw)
        self._state: NotebookSession | None = None
        self._carry: list = []  # staged entries kept across a %config change of store/session

    # -- state ----------------------------------------------------------------

    @property
    def state(self) -> NotebookSession:
        """The notebook's session, opened on first use (store resolved against the current directory)."""
        if self._state is None:
            ns = self.shell.user_ns if self.shell is not None else {}
            sid = self.session or default_session_name(ns)
            self._state = NotebookSession(Path(self.store).expanduser().resolve(), sid, self.model or None)
            self._state.staged, self._carry = self._carry, []
        return self._state

    @observe("store", "session")
    def _reopen(self, change) -> None:
        old = getattr(self, "_state", None)
        self._carry = old.staged if old is not None else []
        self._state = None  # the next use opens the new store / session

    @observe("model")
    def _model_changed(self, change) -> None:
        # not validated here (%config would only log an error): the next turn reports a bad name
        if getattr(self, "_state", None) is not None:
            self._state.model = change["new"] or None

    # -- the magic ----------------------------------------------------------------

    @no_var_expand
    @argmod.documented
    @line_cell_magic
    def durable(self, line: str, cell: str | None = None):
        # the docstring is replaced by args.HELP plus the options (see %durable?)
        call = argmod.parse(line, cell is not None)
        if cell is not None:
            return self._cell(call, cell)
        return getattr(self, "_verb_" + call.verb.replace("-", "_"))(call)

    # -- cells ------------------------------------------------------------------------

    def _cell(self, call: argmod.Call, cell: str) -> None:
        info = current_cell(self.shell)
        kind = argmod.cell_kind(call.kind, info.tags)
        if call.out and kind != "turn":
            raise UsageError(f"--out binds a reply, but this cell is a {kind} cell and calls no model")
        body = cell[:-1] if cell.endswith("\n") else cell
        if not body.strip():
            raise UsageError("the cell is empty: write the message below the %%durable line")
        if call.interpolate:
            body = interpolate(body, self.shell.user_ns)
        st = self.state
        if call.dry_run:
            if kind == "note":
                raise UsageError("--dry-run previews a turn; a note cell sends nothing")
            msgs, new = st.preview(body, info.origin, call.chat, kind)
            print(dry_run_text(msgs, new, model_label(st.own.model)))
            return None
        if kind == "turn":
            st.check_model()  # a model that cannot start moves nothing and writes nothing
        st.writable({"turn": "run a turn", "note": "add a note"}.get(kind, "stage entries"))
        before = st.agent.depth
        rewound = st.rewind_for(info.origin, call.chat)
        if rewound is not None:
            left = before - st.agent.depth
            print(
                f"↺ this cell ran before: rewound to before its entry {rewound.id} "
                f"({plural(left, 'entry', 'entries')} left the active path and stay on a sibling branch)"
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
        return self._turn(st, body, info.origin, call.out)

    def _turn(self, st: NotebookSession, body: str, origin: str | None, out: str | None) -> None:
        view = ReplyView(in_kernel=getattr(self.shell, "kernel", None) is not None, throttle=self.throttle)
        turn = Turn()
        try:
            st.run(body, origin, turn, on_delta=lambda t: view.update(t.text))
        except KeyboardInterrupt:
            view.final(turn.text, "interrupted: this partial reply was not saved")
            print(self._after_failure(st, turn, "interrupted"))
            raise
        except Exception as e:  # a model or provider failure: one line, the session stays usable
            view.final(turn.text, "the model failed: this partial reply was not saved" if turn.text else "")
            raise UsageError(f"{type(e).__name__}: {e} — {self._after_failure(st, turn, 'the turn failed')}") from None
        view.final(turn.text)
        self.shell.user_ns["_durable"] = turn.text
        if out:
            self.shell.user_ns[out] = turn.text
        print(f"— {st.own.session_id} · leaf {turn.leaf_id} · {plural(turn.written, 'entry', 'entries')} written")
        return None

    @staticmethod
    def _after_failure(st: NotebookSession, turn: Turn, what: str) -> str:
        if not turn.input_ids:
            return f"{what} before anything was written; re-run the cell to try again"
        return (
            f"{what}; your message is saved (leaf {st.own.leaf_id}), the partial reply is not; re-run the cell to retry"
        )

    def _model_label(self, st: NotebookSession) -> str:
        try:
            return st.own.model_name()
        except ModelError as e:
            raise UsageError(str(e)) from None

    # -- verbs ---------------------------------------------------------------------------

    def _verb_help(self, call) -> None:
        print(self.durable.__doc__)

    def _verb_status(self, call) -> None:
        st = self.state
        a = st.agent
        where = f"read-only copy of {st.inspected.source}" if st.inspected else str(st.store.file(a.session_id))
        c = counts(a.entries())
        lines = [
            f"session  {a.session_id}  ({where})",
            f"model    {model_label(st.own.model)}",
            f"leaf     {a.leaf_id or '(root: nothing yet)'}  ({plural(a.depth, 'entry', 'entries')} on the active path)",
            f"entries  {len(a.entries())}"
            + (": " + ", ".join(f"{v} {k}" for k, v in c.items()) if c else "")
            + (" (ephemeral ones live in this kernel only)" if "ephemeral" in c else ""),
            self._staged_text(st),
        ]
        if st.inspected is not None and st.inspected.warnings:
            lines += [f"warning  {w}" for w in st.inspected.warnings]
        print("\n".join(lines))

    @staticmethod
    def _staged_text(st: NotebookSession) -> str:
        if not st.staged:
            return "staged   none"
        rows = [f"staged   {len(st.staged)} for the next turn, in this order:"]
        for i, s in enumerate(st.staged, 1):
            m = s.message
            rows.append(f"  {i}. [{m.injected.value}{' · ' + m.origin if m.origin else ''}] {short(m.text())!r}")
        return "\n".join(rows)

    def _verb_log(self, call) -> None:
        a = self.state.agent
        entries = a.entries()
        if not entries:
            print(f"session {a.session_id} has no entries yet")
            return
        on_path = {e.id for e in a.path()}
        print(f"{plural(len(entries), 'entry', 'entries')} of {a.session_id} in append order (* active path, > leaf):")
        for e in entries:
            mark = ">" if e.id == a.leaf_id else ("*" if e.id in on_path else " ")
            print(f"{mark} {e.id}  ← {e.parent_id or 'root':<12}  {entry_label(e):<22} {short(entry_text(e), 50)!r}")

    def _verb_staged(self, call) -> None:
        print(self._staged_text(self.state))

    def _verb_clear(self, call) -> None:
        n = self.state.clear()
        self.state.sync()
        print(f"cleared {plural(n, 'staged entry', 'staged entries')}")

    def _verb_sessions(self, call) -> None:
        st = self.state
        rows = st.sessions()
        if not rows:
            print(f"no saved sessions in {st.store.root}")
            return
        width = max(len(r[0]) for r in rows)
        print(f"{len(rows)} session(s) in {st.store.root}:")
        for sid, n, last in rows:
            mark = "*" if sid == st.own.session_id else " "
            when = last[:19].replace("T", " ") if last else "-"
            print(f"{mark} {sid:<{width}}  {n:>5} {'entry' if n == 1 else 'entries'}  last {when}")

    def _verb_new(self, call) -> None:
        a = self.state.new(call.args[0] if call.args else None)
        print(f"new session {a.session_id} in {self.state.store.root}")

    def _verb_use(self, call) -> None:
        a = self.state.use(call.args[0])
        print(
            f"using session {a.session_id} ({plural(len(a.entries()), 'entry', 'entries')}, leaf {a.leaf_id or 'root'})"
        )

    def _verb_open(self, call) -> None:
        imp = self.state.open(call.args[0])
        a = imp.agent
        print(
            f"opened {imp.source} read-only ({imp.format}, {plural(len(a.entries()), 'entry', 'entries')}, leaf {a.leaf_id or 'root'}); "
            "status/show/dry-run/branch inspect it; fork <new-id> continues it here; %durable close returns"
        )
        for w in imp.warnings:
            print(f"warning: {w}")

    def _verb_close(self, call) -> None:
        was = self.state.close()
        print(f"back to session {self.state.own.session_id}" if was else "nothing is open for inspection")

    def _verb_branch(self, call) -> None:
        e = self.state.branch(call.args[0])
        print(f"leaf is now {e.id}; the next turn continues from there")

    def _verb_rewind(self, call) -> None:
        try:
            n = int(call.args[0]) if call.args else 1
        except ValueError:
            raise UsageError(f"usage: %durable rewind [turns] (a number, not {call.args[0]!r})") from None
        leaf = self.state.rewind(n)
        print(f"rewound {n} turn{'s' if n != 1 else ''}: leaf is now {leaf or 'the root'}")

    def _verb_fork(self, call) -> None:
        st = self.state
        old = (
            f"{st.inspected.source} (opened read-only, left as it was)"
            if st.inspected is not None
            else st.own.session_id
        )
        a = st.fork(call.args[0])
        print(
            f"forked {old} into {a.session_id} ({plural(len(a.entries()), 'entry', 'entries')}); "
            f"the notebook now uses {a.session_id}"
        )

    def _verb_compact(self, call) -> None:
        e = self.state.compact(call.keep or 0)
        if e is None:
            print("nothing to compact")
        else:
            kept = f"verbatim from entry {e.first_kept_id}" if e.first_kept_id else "no turn kept verbatim"
            print(
                f"compacted: entry {e.id} summarises ~{e.tokens_before} tokens ({kept}); "
                "branching to an earlier entry gives the full history back"
            )

    def _verb_model(self, call) -> None:
        if call.args:
            try:
                build(call.args[0])  # builds the client, sends nothing
            except ModelError as e:
                raise UsageError(str(e)) from None
            self.model = call.args[0]
        print(f"model: {self._model_label(self.state)}")

    def _verb_dry_run(self, call) -> None:
        st = self.state
        msgs, new = st.preview(None, None)
        print(dry_run_text(msgs, new, model_label(st.own.model)))

    def _verb_show(self, call):
        try:
            from ..widget import SessionWidget
        except ImportError as e:
            raise UsageError(f"the session widget is unavailable in this install (durable_nb.widget: {e})") from None
        return SessionWidget(self.state.agent)  # it registers itself; state.sync() reaches it


def model_label(spec: ModelLike) -> str:
    """Return how the status names a model spec, without building it."""
    if spec is None or spec == "":
        return os.environ.get("DURABLE_NB_MODEL") or "offline"
    if isinstance(spec, str):
        return spec
    return str(getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__)
