"""The open pays what the first turn after it would pay once (#32, :mod:`durable_nb.notebook.ahead`):
the settings check's and the replies' imports, and the young collections that would walk the lists the
open made (the log's entries, the path, its model view). Checked in-process, without a kernel."""

from __future__ import annotations

import gc
import sys

from durable_nb import ai
from durable_nb.notebook.state import NotebookSession
from durable_nb.session import JsonlStore, MessageEntry, new_id
from durable_nb.session.codec import encode_line

SIZE = 5_000


def test_the_open_leaves_no_long_list_young_and_imports_the_first_turns_modules(tmp_path):
    store = JsonlStore(tmp_path)
    store.create_session("s")
    lines, parent = [], ""
    for i in range(SIZE):
        m = ai.Message("user" if i % 2 == 0 else "assistant", [ai.Text(f"entry {i}")])
        e = MessageEntry(id=new_id(), parent_id=parent, created_at="2026-12-01T00:00:00.000000Z", message=m)
        lines.append(encode_line(e))
        parent = e.id
    with open(store.file("s"), "ab") as f:
        f.write(b"".join(lines))
    st = NotebookSession(tmp_path, "s")
    young = [len(o) for g in (0, 1) for o in gc.get_objects(g) if isinstance(o, list) and len(o) >= SIZE]
    assert len(st.agent.entries()) == SIZE
    assert not young, young  # the open's lists of n items went to the oldest generation
    assert "pydantic" in sys.modules and "markdown_it" in sys.modules and "genai_prices" in sys.modules
