"""llm ``logs.db`` with hostile rows (issue 25, item 13): a parent_hash cycle, a payload that is
not an object, a string ``text_ref``, bad base64; each one ``CorruptLog`` line naming the row,
never a hang or a raw traceback. The database is written by llm itself, then tampered with."""

from __future__ import annotations

import multiprocessing
import shutil
import sqlite3

import pytest
from llm_logs import write_logs

from durable_nb.errors import CorruptLog
from durable_nb.importers import open_session


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    path = tmp_path_factory.mktemp("llm-hostile") / "logs.db"
    return path, write_logs(path)


def _tampered(written, tmp_path, sql: str, *params) -> tuple:
    path, ids = written
    copy = tmp_path / "logs.db"
    shutil.copy(path, copy)
    with sqlite3.connect(copy) as db:
        db.execute(sql, params)
    return copy, ids


def _open_in_child(path, cid, out) -> None:
    try:
        out.put(("ok", len(open_session(path, cid).agent.entries())))
    except Exception as e:  # noqa: BLE001 - the test reads what came out
        out.put((type(e).__name__, str(e)))


def _open(path, cid) -> tuple[str, str]:
    """Open conversation ``cid`` in a child process; a hang is killed after 20 s and reported."""
    out: multiprocessing.Queue = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(target=_open_in_child, args=(path, cid, out))
    child.start()
    child.join(20)
    if child.is_alive():
        child.kill()
        child.join()
        return "hang", "still opening after 20 s"
    return out.get(timeout=5)


def test_a_parent_hash_cycle_opens_instead_of_looping_forever(written, tmp_path):
    path, ids = written
    with sqlite3.connect(path) as db:
        root, main_tip, other_tip = db.execute(
            "select (select hash from messages where parent_hash is null order by rowid limit 1),"
            " (select tip_message_hash from threads where id = ?), (select tip_message_hash from threads where id = ?)",
            [ids.main, ids.other],
        ).fetchone()
    for cid, child, parent in ((ids.main, root, main_tip), (ids.other, other_tip, other_tip)):
        bad, _ = _tampered(written, tmp_path, "update messages set parent_hash = ? where hash = ?", parent, child)
        kind, what = _open(bad, cid)
        assert kind == "ok" and what > 0, (cid, kind, what)


@pytest.mark.parametrize(
    "sql, names",
    [
        ("update parts set payload = '[1,2]' where id = (select min(id) from parts)", "payload is a JSON list"),
        ("update parts set payload = '\"x\"' where id = (select min(id) from parts)", "payload is a JSON str"),
        (
            "update parts set payload = '{\"text_ref\": \"abc\"}' where payload like '%text_ref%'",
            "text_ref is not a list",
        ),
        ("update attachments set content = 'not base64!!!'", "unexpected row shape (Error: "),
    ],
)
def test_a_hostile_row_is_one_corrupt_log_line_naming_it(written, tmp_path, sql, names):
    bad, ids = _tampered(written, tmp_path, sql)
    kind, what = _open(bad, ids.main)
    assert kind == CorruptLog.__name__, (kind, what)
    assert what.startswith(f"{bad}: ") and names in what and "\n" not in what, what
    assert "part " in what or "message b2:" in what  # the row is named
