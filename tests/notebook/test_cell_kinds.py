"""The kinds of a %%durable cell are declared once in Python (durable_nb.notebook.options.KINDS: the flags
and the cell tags the magic reads); the JupyterLab extension's badges and toggles
(js/labextension/src/tags.ts: TAGS, and the help text of each in WHAT) must name the same kinds, in order."""

from __future__ import annotations

import re
from pathlib import Path

from durable_nb.notebook.options import KINDS

TAGS_TS = Path(__file__).resolve().parents[2] / "js" / "labextension" / "src" / "tags.ts"


def test_the_extension_toggles_the_cell_kinds_the_magic_reads():
    text = TAGS_TS.read_text(encoding="utf-8")
    tags = re.search(r"export const TAGS = \[(.*?)\] as const;", text, re.S)
    assert tags, "tags.ts declares TAGS as `export const TAGS = [...] as const;`"
    assert tuple(re.findall(r"'([^']+)'", tags.group(1))) == KINDS
    what = re.search(r"const WHAT: Record<string, string> = \{(.*?)\n\};", text, re.S)
    assert what and tuple(re.findall(r"^\s*(\w+):", what.group(1), re.M)) == KINDS
