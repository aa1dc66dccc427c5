"""``python -m durable_nb copy SRC DST``: every store to every store and importer logs in,
losslessly (the same JSON per entry, the same session records) and idempotently."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from core_helpers import msg

from durable_nb import ai, session, transfer
from durable_nb.errors import DurableError

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "importers" / "fixtures"


def _fill(st) -> None:
    """Two sessions (one a fork of the other), branches, every entry shape."""
    st.create_session("alpha")
    big = session.CustomEntry(id="c", parent_id="2", kind="blob", data={"x": [1, 2.5, None, "é"], "big": 2**70})
    reply = ai.Message(
        "assistant",
        [ai.Text("t"), ai.ToolCall("k", "ls", {"d": "/"}), ai.Image(b"\x89PNG", "image/png")],
        usage={"input_tokens": 1, "output_tokens": 2},
        model="m",
    )
    st.append_entries(
        "alpha",
        [
            msg("1", text="hello", injected="meta", at="2026-01-01T00:00:00.000000Z"),
            session.MessageEntry(id="2", parent_id="1", message=reply),
            msg("3", "1", text="a sibling"),
            big,
            session.CompactionEntry(id="4", parent_id="c", summary="s", first_kept_id="2", tokens_before=9),
        ],
    )
    st.create_session("beta", parent_id="alpha")
    st.append_entries("beta", [msg("x", text="forked")])


def _snapshot(st) -> dict:
    return {
        r.id: (r.parent_id, r.created_at, [session.encode_line(e) for e in st.load_entries(r.id)])
        for r in st.list_sessions()
    }


def _spec(kind: str, tmp_path: Path, request, name: str) -> str:
    if kind == "jsonl":
        return str(tmp_path / name)
    if kind == "sqlite":
        return f"sqlite://{tmp_path / (name + '.db')}"
    pg = request.getfixturevalue("pg_server")
    schema = pg.new_schema()
    return pg.dsn(schema)


def test_a_copy_closes_the_stores_it_opened(tmp_path, request, pg_server, monkeypatch):
    """The source's and the destination's connections go when the copy ends, not when the collector
    finds them (a PostgreSQL pool found so in one of its own threads: "cannot join current thread")."""
    closed: list[str] = []
    for cls in (session.PostgresStore, session.SqliteStore):
        real = cls.close
        monkeypatch.setattr(cls, "close", lambda self, real=real: (closed.append(type(self).__name__), real(self))[1])
    for src_kind, dst_kind in (("postgres", "sqlite"), ("sqlite", "postgres")):
        src, dst = (
            _spec(src_kind, tmp_path, request, "s" + src_kind),
            _spec(dst_kind, tmp_path, request, "d" + src_kind),
        )
        s = session.open_store(src)
        _fill(s)
        s.close()
        closed.clear()
        before = set(threading.enumerate())
        assert [c.added for c in transfer.copy(src, dst, echo=lambda _: None)] == [5, 1]
        assert sorted(closed) == ["PostgresStore", "SqliteStore"], (src_kind, closed)
        assert [t.name for t in threading.enumerate() if t not in before] == []


@pytest.mark.parametrize(
    "src_kind, dst_kind",
    [("jsonl", "sqlite"), ("sqlite", "postgres"), ("postgres", "jsonl"), ("jsonl", "postgres"), ("sqlite", "jsonl")],
)
def test_copy_between_stores_is_lossless_and_idempotent(tmp_path, request, src_kind, dst_kind):
    src, dst = _spec(src_kind, tmp_path, request, "src"), _spec(dst_kind, tmp_path, request, "dst")
    s = session.open_store(src)
    _fill(s)
    lines: list[str] = []
    done = transfer.copy(src, dst, echo=lines.append)
    assert [(c.session_id, c.added, c.created) for c in done] == [("alpha", 5, True), ("beta", 1, True)]
    d = session.open_store(dst)
    assert _snapshot(d) == _snapshot(s)

    again = transfer.copy(src, dst, echo=lines.append)  # a finished copy: nothing changes
    assert [(c.added, c.created) for c in again] == [(0, False), (0, False)]
    assert "already complete" in lines[-1]
    s.append_entries("alpha", [msg("5", "4")])  # the source grew: only the new entry goes over
    assert [c.added for c in transfer.copy(src, dst, echo=lines.append)] == [1, 0]
    assert _snapshot(d) == _snapshot(s)
    for st in (s, d):
        getattr(st, "close", lambda: None)()


def test_copy_an_interrupted_copy_is_finished_by_running_it_again(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst.db"
    s = session.JsonlStore(src)
    _fill(s)
    d = session.SqliteStore(dst)
    d.create_session("alpha", created_at=s.load_session("alpha").created_at)
    d.append_entries("alpha", s.load_entries("alpha")[:2])  # as if the copy died half way
    transfer.copy(str(src), str(dst), echo=lambda line: None)
    assert _snapshot(d) == _snapshot(s)


@pytest.mark.parametrize("fixture", ["pi-v3-branches.generated.jsonl", "spotter-tool_heavy.jsonl"])
def test_copy_from_an_importer_readable_log_keeps_what_the_importer_reads(tmp_path, fixture):
    from durable_nb.importers import open_session

    log = FIXTURES / fixture
    imported = open_session(log).agent
    dst = tmp_path / "team.db"
    (c,) = transfer.copy(str(log), str(dst), echo=lambda line: None)
    assert c.added == len(imported.entries()) > 0
    d = session.SqliteStore(dst)
    assert [session.encode_line(e) for e in d.load_entries(c.session_id)] == [
        session.encode_line(e) for e in imported.entries()
    ]
    assert transfer.copy(str(log), str(dst), echo=lambda line: None)[0].added == 0


def test_copy_refuses_an_entry_id_with_other_content_and_writes_nothing(tmp_path):
    s, d = session.JsonlStore(tmp_path / "s"), session.JsonlStore(tmp_path / "d")
    s.create_session("a")
    s.append_entries("a", [msg("1"), msg("2", "1")])
    d.create_session("a")
    d.append_entries("a", [msg("2", "1", text="other")])
    with pytest.raises(DurableError, match="already holds entry '2' with other content"):
        transfer.copy(str(tmp_path / "s"), str(tmp_path / "d"), echo=lambda line: None)
    assert [e.id for e in d.load_entries("a")] == ["2"]


def test_the_command_line_copies_and_says_what_it_did_in_one_line_per_session(tmp_path, pg_dsn, pg_server):
    src = tmp_path / "logs"
    _fill(session.JsonlStore(src))
    run = lambda *a: subprocess.run(
        [sys.executable, "-m", "durable_nb", "copy", *a],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    r = run(str(src), pg_dsn)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "2 session(s), 6 entries copied"
    assert "alpha: 5 of 5 entries copied (new session postgresql://durable:***@" in r.stdout
    assert pg_server.password not in r.stdout + r.stderr
    r = run(str(src), pg_dsn, "--session", "beta")
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "1 session(s), 0 entries copied"
    for bad, says in [
        (("nowhere", "x"), "no store folder, SQLite database or session log at 'nowhere'"),
        ((str(src), pg_dsn.replace(pg_server.password, "Wrong-Pw-991")), "password authentication failed"),
        ((str(src), str(tmp_path / "out"), "--session", "gamma"), "no session 'gamma'"),
    ]:
        r = run(*bad)
        assert r.returncode == 1 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "Wrong-Pw-991" not in r.stderr and pg_server.password not in r.stderr


def _reordered_source(st) -> None:
    """A session whose entries PostgreSQL's JSONB spells back in another key order: custom data and
    fields no type declares, keys longest first; a float written in exponent form."""
    st.create_session("keys")
    extra = session.MessageEntry(
        id="m", message=ai.Message("user", [ai.Text("hi")]), created_at="2026-01-01T00:00:00.000000Z"
    )
    extra.extra = {"zz_long_field_name": {"yy_nested": 1, "a": [3, 2, 1]}, "b": True}
    entries = [
        extra,
        session.CustomEntry(
            id="c1", parent_id="m", kind="data", data={"zeta_long": 1, "a": {"yy_inner": 2, "b": 1e20}}
        ),
        msg("u2", "c1", text="after"),
        session.CustomEntry(id="c2", parent_id="u2", kind="data", data={"longest_key": "x", "k": None, "big": 2**70}),
        msg("u3", "c2", text="last"),
    ]
    st.append_entries("keys", entries)


@pytest.mark.parametrize("dst_kind", ["memory", "jsonl", "sqlite", "postgres"])
def test_a_second_copy_after_an_interrupted_one_completes_with_every_entry_equal(tmp_path, request, dst_kind):
    src = str(tmp_path / "src")
    s = session.JsonlStore(src)
    _reordered_source(s)
    _fill(s)
    entries = s.load_entries("keys")
    if dst_kind == "memory":
        d = session.MemoryStore()
        transfer.copy_session(s.load_session("keys"), entries[:3], d)  # interrupted after three entries
        again = transfer.copy_session(s.load_session("keys"), entries, d)
        assert (again.added, again.created) == (2, False)
        assert transfer.copy_session(s.load_session("keys"), entries, d).added == 0
    else:
        dst = _spec(dst_kind, tmp_path, request, "dst")
        d = session.open_store(dst)
        transfer.copy_session(s.load_session("keys"), entries[:3], d)  # as if the first copy died here
        done = {c.session_id: c for c in transfer.copy(src, dst, echo=lambda line: None)}  # the second copy
        assert (done["keys"].added, done["alpha"].added, done["beta"].added) == (2, 5, 1)
        assert [c.added for c in transfer.copy(src, dst, echo=lambda line: None)] == [0, 0, 0]  # and a third
    for r in s.list_sessions():
        if dst_kind != "memory" or r.id == "keys":
            assert d.load_entries(r.id) == s.load_entries(r.id), r.id
    getattr(d, "close", lambda: None)()
