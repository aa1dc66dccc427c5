"""What the first turn after an open would pay once, paid by the open instead (#32: the first turn
after opening a long session costs about what a turn on a short one does).

:func:`imports` runs before the log is read, :func:`~durable_nb.collector.settle` after the open has
computed its first look and after the widget's preparation has copied it
(:func:`durable_nb.widget.preparation.prepare`); it lives in :mod:`durable_nb.collector` and stays
importable from here.
"""

from __future__ import annotations

from ..collector import settle

__all__ = ["imports", "settle"]


def imports() -> None:
    """Import and build what a turn's first use of them needs: the settings check's pydantic model,
    the Markdown renderer of replies and the price table (genai-prices: the first priced reply's, which
    ``%durable status``'s tally and the widget's cost line meet first; ~60-90 ms) (~150 ms once per
    kernel in all, ~0 after; before the log is read, so the collections these allocations trigger walk
    no loaded log)."""
    import genai_prices  # noqa: F401 - imported here, not by the first price

    from ..durable.settings import check_settings
    from .render import markdown_html

    check_settings({})
    markdown_html("")
