"""The garbage collector's part in a first look: what was just made leaves the young generations.

    settle()   # after the open has computed its first look, after a widget's preparation copied it

Shared by the notebook's open (:mod:`durable_nb.notebook.ahead`) and the widget's preparation
(:mod:`durable_nb.widget.preparation`), which import nothing from each other for it. Pure: no Jupyter.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect the two young generations, so the containers just made (the log's entry lists, the
    active path, its model view, a preparation's copies: a few lists of n items) move to the oldest
    one, which only full collections walk (rare: Python waits until the survivors grow by a quarter).
    Left young, each young collection of the next cell walks them again (~60 ms at 1M entries, twice
    in a first turn). Cost: one walk of what is young, ~60 ms at 1M, ~0 for a short session."""
    gc.collect(1)
