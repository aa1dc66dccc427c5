"""What the first turn after an open would pay once, paid by the open instead (#32: the first turn
after opening a long session costs about what a turn on a short one does).

:func:`imports` runs before the log is read, :func:`settle` after the open has computed its first look
and after the widget's preparation has copied it (:func:`durable_nb.widget.preparation.prepare`).
"""

from __future__ import annotations

import gc


def imports() -> None:
    """Import and build what a turn's first use of them needs: the settings check's pydantic model and
    the Markdown renderer of replies (~70-80 ms once per kernel, ~0 after; before the log is read, so
    the collections these allocations trigger walk no loaded log)."""
    from ..durable.settings import check_settings
    from .render import markdown_html

    check_settings({})
    markdown_html("")


def settle() -> None:
    """Collect the two young generations, so the containers the open just made (the log's entry lists,
    the active path, its model view: a few lists of n items) move to the oldest one, which only full
    collections walk (rare: Python waits until the survivors grow by a quarter). Left young, each young
    collection of the first turn walks them again (~60 ms at 1M entries, twice in a turn). Cost: one
    walk of what is young, ~60 ms at 1M, ~0 for a short session."""
    gc.collect(1)
