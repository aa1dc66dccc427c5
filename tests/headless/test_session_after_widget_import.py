"""Regression: a notebook session can be created in a fresh folder after the widget module was imported.

(Creating the first session publishes ``session_init``; the publisher synced widgets of
``self.agent`` before ``__init__`` had set it: AttributeError on the first magic.)
The session file is created by the first write, not by opening the notebook.
"""

import durable_nb.widget  # noqa: F401  (the widget registry exists, as after any displayed widget)
from durable_nb.notebook.state import NotebookSession


def test_first_session_created_after_the_widget_module_is_loaded(tmp_path):
    s = NotebookSession(tmp_path / ".durable", "fresh")
    assert s.own.session_id == "fresh" and not (tmp_path / ".durable").exists()
    s.note("first write", "c1")
    assert (tmp_path / ".durable" / "fresh.jsonl").is_file()
