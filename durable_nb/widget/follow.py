"""Following appends by other kernels: a store that notifies them wakes the widget on the kernel's thread.

On a store that notifies appends (PostgreSQL's ``LISTEN/NOTIFY``,
:meth:`~durable_nb.session.PostgresStore.subscribe`), an open widget in a kernel follows appends
made by any other kernel: the notification is handed to the kernel's main thread (its IO loop),
which reads the new entries into the agent (:meth:`~durable_nb.durable.Agent.refresh`, the leaf
stays) and syncs, with no cell run. A busy kernel catches up when its cell ends.
"""

from __future__ import annotations

import weakref
from typing import Any

from ..session import Subscribable


def main_thread_caller() -> Any:
    """Return the running kernel's thread-safe ``add_callback`` (runs a function on its main thread),
    or ``None`` outside a kernel (terminal IPython, plain Python)."""
    try:
        from IPython import get_ipython

        return get_ipython().kernel.io_loop.add_callback
    except AttributeError:
        return None


def follow(widget: Any) -> Any:
    """Subscribe ``widget`` to appends by other writers when its store notifies them and a kernel
    runs; return the unsubscribe function, or ``None``. Holds the widget weakly."""
    store = widget.agent.store
    call = main_thread_caller()
    if not isinstance(store, Subscribable) or call is None:
        return None
    ref = weakref.ref(widget)
    widget._pending = False

    def on_append(_session_id: str) -> None:  # on the listener's thread: hand over, once per burst
        w = ref()
        if w is not None and not w._pending:
            w._pending = True
            call(w._catch_up)

    return store.subscribe(widget.agent.session_id, on_append)
