"""Commit subjects are at most 72 characters (the story goes in the body), for every commit after
:data:`SINCE`, the last commit before the rule (issue 26). Skipped outside a git checkout or where the
history does not reach back to it (a shallow clone)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SINCE = "2dd1661bf0064f520ee1a7b902f75672f84e105b"  # main when issue 26 was filed; older subjects stay as they are
LIMIT = 72
# short hash -> why: a commit that reached main with a longer subject (main is never rewritten)
WAIVED: dict[str, str] = {
    "3f4831c": "export: never over a store's log ... (88): integrated before this test was",
    "1aa6e44": "tests/dsn_secrets: one export file per spelling ... (77): integrated before this test was",
    "fefe1d0": "copy: a damaged log never blocks ... (81): integrated before this test was",
    "8e44c91": "session: kind_of_store names ... (73): integrated before this test was",
    "7b4f596": "tools: results converted with a bound ... (82): integrated before this test was",
    "b92e2f5": "llm importer: hostile rows are one CorruptLog line ... (76)",
    "c5936e9": "handout: a bare URL's '://' escaped ... (83)",
    "c3173e4": "docs/sharing, kernel test: export keeps files ... (83)",
    "8126b51": "tests/reliability/README: the faults of issue 25 ... (85)",
    "ae08bb5": "importers: drop read_records, which nothing calls ... (76)",
    "843c7c6": "resume: a reopened session never lands on an aside ... (81)",
    "dbfceeb": "tools: a result's non-string dict keys are kept ... (99)",
    "f2c658e": "handout: untrusted text is fenced ... (74): integrated before this test was",
    "0013e83": "docs/stores, search: the one search rule and why ... (84)",
    "db87058": "tests: copy now reports each unreadable session ... (102)",
    "3299ac4": "test_compare_find_browser: the custom filter hides ... (78)",
    "2c5680d": "e2e: the session browser is legible in JupyterLab's ... (73)",
    "68305c9": "benchmarks: issue 32's widget and kernel figures ... (73)",
    "8dd6f7c": "README, docs/sharing: a saved notebook's fallback is the ... (77)",
    "502f095": "benchmarks: the stores' second pass for issue 32, before ... (73)",
    "876df6a": "widget: the fork's lines found in views and layout, ... (73)",
    "334294d": "llm import: one pass over the rows, tables scanned ... (80)",
}


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60)


def test_commit_subjects_after_the_rule_are_at_most_72_characters():
    if shutil.which("git") is None or git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    if git("merge-base", "--is-ancestor", SINCE, "HEAD").returncode != 0:
        pytest.skip(f"the history does not reach {SINCE[:7]} (a shallow clone, or another line of history)")
    log = git("log", "--abbrev=7", "--format=%h %s", f"{SINCE}..HEAD")
    assert log.returncode == 0, log.stderr
    long = [
        line
        for line in log.stdout.splitlines()
        if len(line.partition(" ")[2]) > LIMIT and line.split()[0] not in WAIVED
    ]
    assert not long, f"commit subjects over {LIMIT} characters (reword them before integrating):\n" + "\n".join(
        f"{len(line.partition(' ')[2])}: {line}" for line in long
    )
