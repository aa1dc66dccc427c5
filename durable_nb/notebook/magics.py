"""The IPython glue: ``%%durable`` (a turn, or a staged/noted cell) and ``%durable <verb>``.

Parsing is :mod:`.args`, the verbs :mod:`.verbs`, a cell :mod:`.cells`, a
turn :mod:`.turns`, what they work with :mod:`.context`, the session logic
:mod:`.state`, output :mod:`.render`; this module wires them to IPython
and is the notebook layer's one error boundary: a mistake (a
:class:`~durable_nb.errors.DurableError` from any layer, or a
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

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from traitlets import Float, Unicode, observe

from ..errors import DurableError
from ..session.dsn import shown_dsn
from . import args as argmod
from .cells import run_cell
from .context import Context
from .state import NotebookSession
from .turns import TurnFailed, TurnInterrupted
from .verbs import VERBS

__all__ = ["DurableMagics", "TurnFailed", "TurnInterrupted", "one_line_errors"]


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
        self.ctx = Context(shell, self)  # what the verbs and cells work with (before config sets a trait)
        super().__init__(shell=shell, **kw)

    @property
    def state(self) -> NotebookSession:
        """The notebook's session, opened on first use (see :attr:`.context.Context.state`)."""
        return self.ctx.state

    @observe("store", "session")
    def _reopen(self, change) -> None:
        if change["name"] == "store" and shown_dsn(change["new"]) != change["new"]:
            # keep the password out of the trait (%config DurableMagics shows it): the real spec stays aside
            self.ctx.secret_store = (shown_dsn(change["new"]), change["new"])
            self.store = self.ctx.secret_store[0]
            return
        self.ctx.reopen()  # the next use opens the new store / session

    @observe("model")
    def _model_changed(self, change) -> None:
        # not validated here (%config would only log an error): the next turn reports a bad name
        state = self.ctx.opened
        if state is not None:
            state.model = self.ctx.configured_model()

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
                    return run_cell(self.ctx, call, cell)
                return VERBS[call.verb].run(self.ctx, call)
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
        state = self.ctx.opened
        if state is not None:
            after_cell(state.agent)
