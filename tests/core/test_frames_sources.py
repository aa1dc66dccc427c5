"""Which sessions durable_nb.frame reads: a misspelt store path and a folder of log folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import durable_nb
from durable_nb import session
from durable_nb.durable import Agent
from durable_nb.errors import DurableError
from durable_nb.importers import open_session

pd = pytest.importorskip("pandas")
FIXTURES = Path(__file__).parent.parent / "importers" / "fixtures"


@pytest.mark.parametrize("name", ["typo.db", "missing/typo.db", "typo.sqlite"])
def test_a_misspelt_database_is_one_line_and_nothing_is_made(tmp_path, name):
    """Reading makes nothing: a .db path naming no database was an empty frame, and an empty database
    (and its missing folders) was left behind."""
    Agent(store=session.SqliteStore(tmp_path / "real.db"), session_id="s").append("hello")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    for read in (durable_nb.frame, durable_nb.annotations):
        with pytest.raises(DurableError, match=r"^no (store|folder)") as e:
            read(str(tmp_path / name))
        assert "\n" not in str(e.value)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert len(durable_nb.frame(str(tmp_path / "real.db"))) == 1  # an existing database still reads


def test_a_folder_of_project_folders_is_read_as_logs(tmp_path):
    """``frame("~/.claude/projects")`` (docs/frames.md): the logs are one folder down, none beside
    them; such a folder was taken for an empty store and gave an empty frame."""
    projects = tmp_path / "projects"
    (projects / "-home-me-app").mkdir(parents=True)
    log = projects / "-home-me-app" / "4d5611e5.jsonl"
    shutil.copy(FIXTURES / "spotter-tool_heavy.jsonl", log)
    f = durable_nb.frame(projects)
    assert len(f) == len(open_session(log).agent.entries()) == 34
    assert set(f.source) == {str(log)}
    assert list(projects.rglob("*")) == [projects / "-home-me-app", log]  # nothing written
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    assert len(durable_nb.frame(empty)) == 0  # nothing under it at all: an empty store, as before
