"""The documentation site's generated pages, checked without building the site (``./dev docs --build`` does that).

docs/hooks/reference.py writes the ``%durable`` reference and the page protocol from the code's
declarations; these tests run its generators and its stale-prose checks on every page.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from durable_nb.notebook.verbs import cell_specs, specs

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "docs" / "hooks" / "reference.py")
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)


def test_the_reference_lists_every_verb_option_and_setting():
    verbs, options, settings = reference.verb_table(), reference.verb_option_table(), reference.settings_table()
    assert all(f"| `{v['usage']}` |" in verbs for v in specs())
    assert all(f"`{o['flag']}" in options for v in specs() for o in v["options"])
    assert all(f"`{o['flag']}" in reference.cell_option_table() for o in cell_specs())
    assert "`throttle`" in settings and "`store`" in settings


def test_the_protocol_page_declares_what_the_widget_syncs():
    assert reference.protocol_mismatch() == []
    page = reference.protocol_page()
    assert "### `Traits`" in page and "### `LinesRequest`" in page and "| `leaf_id` |" in page


def test_no_page_names_a_verb_that_does_not_exist():
    stale = {p.relative_to(ROOT).as_posix(): reference.stale_mentions(p.read_text(encoding="utf-8")) for p in PAGES}
    assert not {k: v for k, v in stale.items() if v}


def test_every_marker_names_a_generated_table():
    asked = {m for p in PAGES for m in reference.MARKER.findall(p.read_text(encoding="utf-8"))}
    assert asked == set(reference.TABLES)


def test_every_repository_path_a_page_names_exists():
    missing = {p.relative_to(ROOT).as_posix(): reference.missing_paths(p.read_text(encoding="utf-8")) for p in PAGES}
    assert not {k: v for k, v in missing.items() if v}


def test_no_line_of_prose_starts_with_a_hash_that_is_not_a_heading():
    """Python-Markdown makes `#18's work` a heading (GitHub does not): pages and included files avoid it."""
    included = [ROOT / "benchmarks" / "README.md", ROOT / "tests" / "reliability" / "README.md"]
    bad = []
    for p in [*PAGES, *included]:
        fenced = False
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            fenced ^= line.startswith("```")
            if not fenced and line.startswith("#") and not line.lstrip("#").startswith(" "):
                bad.append(f"{p.relative_to(ROOT)}:{n}")
    assert not bad
