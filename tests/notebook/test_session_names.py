"""One table of notebook names (js/labextension/test/session_names.json) and the session id each is named by:
the kernel's rule (durable_nb.session.notebook_session_id, through default_session_name) must give every id,
and the kernel must accept it. The extension's port (nameBasedId, js/labextension/src/names.ts) is checked
against the same table by js/labextension/test/names.test.ts (vitest, run by tests/widget/test_js_units.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from durable_nb.notebook.identity import default_session_name
from durable_nb.session import check_session_id

TABLE = Path(__file__).resolve().parents[2] / "js" / "labextension" / "test" / "session_names.json"
ROWS = json.loads(TABLE.read_text(encoding="utf-8"))["names"]


@pytest.mark.parametrize("row", ROWS, ids=[r["why"] for r in ROWS])
def test_the_kernel_names_each_notebook_as_the_table_says(row):
    sid = default_session_name({"__session__": f"/home/u/{row['name']}.ipynb"}, {})
    assert sid == row["id"]
    assert check_session_id(sid) == sid  # the kernel takes the id the extension migrates to


def test_the_table_covers_what_went_wrong():
    whys = " ".join(r["why"] for r in ROWS)
    assert all(w in whys for w in ("NFD", "combining", "Devanagari", "astral", "UTF-16", "bytes"))
