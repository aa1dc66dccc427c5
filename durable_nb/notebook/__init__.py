"""The notebook layer: ``%load_ext durable_nb`` registers ``%%durable`` and ``%durable``.

``current()`` returns the kernel's :class:`~.state.NotebookSession` (its
``agent`` is the :class:`durable_nb.durable.Agent` the magics use), for
Python access: e.g. ``current().agent.model = my_function``.
"""

from __future__ import annotations

from ..durable import Agent
from . import page
from .magics import DurableMagics
from .state import Note, NotebookSession

_magics: DurableMagics | None = None

__all__ = ["DurableMagics", "Note", "NotebookSession", "current", "load_ipython_extension"]


def load_ipython_extension(ipython) -> None:
    """Register the magics and their settings (``%config DurableMagics``), and show an
    :class:`~durable_nb.durable.Agent` displayed in a cell as its session widget."""
    global _magics
    _magics = DurableMagics(shell=ipython, parent=ipython)
    ipython.register_magics(_magics)
    if _magics not in ipython.configurables:
        ipython.configurables.append(_magics)
    ipython.display_formatter.ipython_display_formatter.for_type(Agent, show_agent)
    page.listen(ipython)  # does a page that saves the widget's whole fallback show this kernel's outputs?
    # The widget (anywidget, ipywidgets: most of the import time) is not imported here: the first
    # %durable cell imports it as it ends (DurableMagics._prepare_widget), before a %durable show.


def show_agent(agent: Agent) -> None:
    """Display ``agent`` as a :class:`~durable_nb.widget.SessionWidget` (the widget is imported here, on first use)."""
    from IPython.display import display

    from ..widget import SessionWidget

    display(SessionWidget(agent))


def current() -> NotebookSession:
    """Return the notebook's session (opened on first use). Raises ``RuntimeError`` before ``%load_ext durable_nb``."""
    if _magics is None:
        raise RuntimeError("run %load_ext durable_nb first")
    return _magics.state
