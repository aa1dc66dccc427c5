"""A typo in the store a read-only log's annotations are kept in is one line naming the path, never silent.

``durable_nb.annotate(log, entry, store=...)`` and ``durable_nb.annotations(log, store=...)`` take a
store string, as ``%durable store`` and ``%config DurableMagics.store`` do (the store ``%durable
annotate`` keeps a read-only log's annotations in). A new store is made in an existing folder only:
a path whose folder does not exist is refused (it made the whole chain of folders), reading a store
that does not exist is refused (it answered "no annotations", and a SQLite path made an empty
database), and a file that is not a store says so.
"""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

import durable_nb
from durable_nb import durable, session
from durable_nb.errors import DurableError
from durable_nb.sidecar import sidecar_entries


@pytest.fixture
def log(tmp_path):
    """A durable_nb log file (read-only here: its annotations go to a sidecar) and its entry."""
    src = session.JsonlStore(tmp_path / "src")
    (entry,) = durable.Agent(store=src, session_id="s1").append("the answer is 42")
    return str(src.file("s1")), entry.id


def _files(tmp_path) -> list[str]:
    return sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if "src" not in p.parts)


def _refused(call, message: str) -> None:
    with pytest.raises(DurableError) as e:
        call()
    assert str(e.value) == message


def test_a_store_in_a_folder_that_does_not_exist_is_one_line_and_makes_nothing(tmp_path, log):
    file, eid = log
    (tmp_path / "real").mkdir()
    before = _files(tmp_path)
    for store in (tmp_path / "reel" / ".durable", str(tmp_path / "reel" / ".durable")):  # a typo in a folder
        _refused(
            lambda: durable_nb.annotate(file, eid, store=store, note="n"),
            f"no folder {tmp_path / 'reel'}, so no store at {tmp_path / 'reel/.durable'}: "
            f"did you mean {tmp_path / 'real/.durable'}?",
        )
    for store in (str(tmp_path / "nope/deeper/notes.db"), f"sqlite:///{tmp_path}/nope/deeper/notes.db"):
        _refused(
            lambda: durable_nb.annotate(file, eid, store=store, note="n"),
            f"no folder {tmp_path / 'nope'}, so no store at {tmp_path / 'nope/deeper/notes.db'}: "
            f"correct the path, or make the folder first (mkdir -p {tmp_path / 'nope/deeper'})",
        )
    _refused(
        lambda: durable_nb.annotate(file, eid, store=str(tmp_path / "real/notes.jsonl"), note="n"),
        f"no store at {tmp_path / 'real/notes.jsonl'}: a JSONL store is a folder of session logs, not a .jsonl "
        f"file; name its folder (like {tmp_path / 'real/.durable'}), a .db file or a postgresql:// DSN",
    )
    assert _files(tmp_path) == before  # no folder, no file


@pytest.mark.parametrize("name", [".durable", "notes.db", "sqlite:notes.db"])
def test_a_new_store_in_an_existing_folder_is_made_and_read_back(tmp_path, log, monkeypatch, name):
    file, eid = log
    monkeypatch.chdir(tmp_path)
    made = durable_nb.annotate(file, eid, store=name, note="checked")
    assert [e.id for e in sidecar_entries(name, file, "s1")] == [made.id]
    assert list(durable_nb.annotations(file, store=name)["note"]) == ["checked"]


def test_reading_a_store_that_does_not_exist_is_one_line_and_makes_nothing(tmp_path, log):
    file, eid = log
    durable_nb.annotate(file, eid, store=tmp_path / ".durable", note="kept")
    before = _files(tmp_path)
    _refused(
        lambda: durable_nb.annotations(file, store=str(tmp_path / ".durabel")),
        f"no store at {tmp_path / '.durabel'}: did you mean {tmp_path / '.durable'}?",
    )
    _refused(
        lambda: sidecar_entries(str(tmp_path / "notes.db"), file, "s1"),  # a SQLite store was made to read it
        f"no store at {tmp_path / 'notes.db'}: name an existing folder, .db file or postgresql:// DSN",
    )
    assert _files(tmp_path) == before
    assert [e.note for e in sidecar_entries(str(tmp_path / ".durable"), file, "s1")] == ["kept"]


def test_a_file_that_is_not_a_store_is_one_line(tmp_path, log):
    file, eid = log
    (tmp_path / "notes.db").write_text("my notes, not a database\n")
    for call in (
        lambda: durable_nb.annotate(file, eid, store=str(tmp_path / "notes.db"), note="n"),
        lambda: durable_nb.annotations(file, store=str(tmp_path / "notes.db")),
    ):
        _refused(
            call,
            f"{tmp_path / 'notes.db'} is not a SQLite database, so not a store (if it was one, it is damaged: "
            "restore it from a copy): name a folder, a new .db file or a postgresql:// DSN",
        )
    _refused(  # the log itself given as the store
        lambda: durable_nb.annotate(file, eid, store=file, note="n"),
        f"{file} is a file, not a store: a JSONL store is a folder of session logs (open a log with %durable "
        "open, or name a folder, a .db file or a postgresql:// DSN)",
    )
    assert (tmp_path / "notes.db").read_text() == "my notes, not a database\n"


def test_the_notebook_store_setting_refuses_a_store_in_a_missing_folder_in_one_line(
    shell, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "team").mkdir()
    with pytest.raises(UsageError) as e:
        shell.run_line_magic("durable", "store taem/sessions.db")
    want = f"no folder {tmp_path / 'taem'}, so no store at {tmp_path / 'taem/sessions.db'}: did you mean "
    assert str(e.value) == want + f"{tmp_path / 'team/sessions.db'}?"
    shell.run_line_magic("config", "DurableMagics.store = 'taem/.durable'")
    with pytest.raises(UsageError, match=r"^no folder .*taem, so no store at .*: did you mean .*team/\.durable\?$"):
        shell.run_line_magic("durable", "status")
    assert not (tmp_path / "taem").exists()
    capsys.readouterr()
    shell.run_line_magic("durable", "store team/sessions.db")  # a new store in an existing folder
    assert "store: SQLite file" in capsys.readouterr().out and (tmp_path / "team/sessions.db").is_file()
    shell.run_line_magic("config", "DurableMagics.store = '.durable'")
