"""What the SQL stores add to the contract: idempotent entry ids, many connections on one
database, the network file system refusal (SQLite), the DSN's password and roles (PostgreSQL)."""

from __future__ import annotations

import logging
import sqlite3

import pytest
from core_helpers import ids, msg

from durable_nb import session
from durable_nb.errors import DurableError
from durable_nb.session.sqlitestore import check_local, filesystem_type
from tests.support import store_opener


@pytest.fixture(params=["sqlite", "postgres"])
def reopen(request, tmp_path):
    """A function that opens another store object on one SQLite file / PostgreSQL schema."""
    with store_opener(request.param, tmp_path, request) as (open_store, _):
        yield open_store


def test_a_second_connection_sees_every_session_and_entry(reopen):
    one, two = reopen(), reopen()
    one.create_session("a")
    one.append_entries("a", [msg("1"), msg("2", "1")])
    with pytest.raises(session.SessionExists):
        two.create_session("a")
    two.append_entries("a", [msg("3", "1")])
    assert ids(one.load_entries("a")) == ids(reopen().load_entries("a")) == ["1", "2", "3"]
    assert [h.entry_id for h in two.search("3")] == ["3"]


def test_appending_an_entry_again_is_a_no_op_and_other_content_under_its_id_is_refused(reopen):
    st = reopen()
    st.create_session("a")
    st.append_entries("a", [msg("1"), msg("2", "1")])
    st.append_entries("a", [msg("2", "1"), msg("3", "2")])  # a retried batch: 2 is skipped, 3 added
    assert ids(st.load_entries("a")) == ["1", "2", "3"]
    with pytest.raises(DurableError, match="already holds an entry '3' with other content"):
        st.append_entries("a", [msg("4", "3"), msg("3", "2", text="changed")])
    assert ids(st.load_entries("a")) == ["1", "2", "3"]  # all or nothing: 4 is not there either
    assert st.load_entries("a")[2].message.text() == "3"


def test_a_store_keeps_what_the_jsonl_store_writes_byte_for_byte(tmp_path):
    st = session.SqliteStore(tmp_path / "s.db")
    st.create_session("a")
    e = session.CustomEntry(id="c", kind="k", data={"x": [1, 2.5, None, "é"], "big": 2**70})
    st.append_entries("a", [msg("1"), e])
    (body,) = sqlite3.connect(tmp_path / "s.db").execute("SELECT body FROM entries WHERE id = 'c'").fetchone()
    assert body.encode() + b"\n" == session.encode_line(e)
    assert st.load_entries("a")[1] == e


# -- SQLite on a network file system ---------------------------------------------------------

MOUNTS = """\
/dev/vda / ext4 rw,relatime 0 0
server:/export/home /home nfs4 rw,relatime,vers=4.2 0 0
//nas/share /mnt/my\\040share cifs rw 0 0
alice@host:/x /mnt/ssh fuse.sshfs rw 0 0
tmpfs /home/local tmpfs rw 0 0
"""


@pytest.mark.parametrize(
    "path, kind",
    [
        ("/srv/db.sqlite", "ext4"),
        ("/home/ann/nb/store.db", "nfs4"),
        ("/home/local/store.db", "tmpfs"),
        ("/home/localx/store.db", "nfs4"),
        ("/mnt/my share/store.db", "cifs"),
        ("/mnt/ssh/a/b.db", "fuse.sshfs"),
    ],
)
def test_the_file_system_of_a_path_is_read_from_the_mount_table(path, kind):
    assert filesystem_type(path, MOUNTS) == kind


def test_a_database_on_a_network_file_system_is_refused_with_one_clear_line():
    with pytest.raises(DurableError, match="nfs4 network file system, where SQLite's locking is unsafe") as e:
        check_local("/home/ann/nb", MOUNTS)
    assert "\n" not in str(e.value) and "PostgreSQL" in str(e.value)
    check_local("/home/local", MOUNTS)  # tmpfs is local
    assert filesystem_type("/tmp", "") is None  # an unreadable table: nothing to tell


def test_the_real_mount_table_says_this_folder_is_local(tmp_path):
    assert filesystem_type(tmp_path) not in (None, *session.sqlitestore.NETWORK_FS)
    session.SqliteStore(tmp_path / "ok.db").close()


# -- PostgreSQL: the password, and roles -----------------------------------------------------


def _never_shows(password: str, err: BaseException, caplog) -> None:
    text = str(err) + repr(err) + "".join(r.getMessage() for r in caplog.records)
    assert password not in text
    assert "\n" not in str(err)
    assert err.__suppress_context__ or err.__cause__ is None


@pytest.mark.parametrize(
    "case",
    ["wrong password", "wrong database", "no server (socket)", "no server (tcp)", "unreadable dsn", "bad option"],
)
def test_the_password_never_reaches_an_error_or_a_log(pg_server, caplog, case):
    caplog.set_level(logging.DEBUG)
    pw = "S3cret-" + case.replace(" ", "-")
    dsn = {
        "wrong password": pg_server.dsn(password=pw),
        "wrong database": pg_server.dsn(password=pw).replace("/durable?", "/nodb?"),
        "no server (socket)": f"postgresql://durable:{pw}@/durable?host=/nonexistent",
        "no server (tcp)": f"postgresql://durable:{pw}@127.0.0.1:1/durable",
        "unreadable dsn": f"host=/tmp user=durable password={pw} junk",
        "bad option": f"postgresql://durable:{pw}@/durable?bogus=1",
    }[case]
    with pytest.raises(DurableError) as e:
        session.PostgresStore(dsn, timeout=3)
    _never_shows(pw, e.value, caplog)
    assert ("***" in str(e.value)) or case == "unreadable dsn"
    if case == "wrong password":
        assert "password authentication failed" in str(e.value)


def test_the_store_masks_its_dsn_and_keeps_the_password_out_of_what_it_stores(pg_dsn, pg_server):
    st = session.PostgresStore(pg_dsn)
    try:
        assert pg_server.password not in repr(st) + st.dsn and "durable:***@" in st.dsn
        st.create_session("a")
        st.append_entries("a", [msg("1")])
        with pytest.raises(session.SessionNotFound) as e:
            st.load_entries("nope")
        assert pg_server.password not in str(e.value)
    finally:
        st.close()


def test_a_read_only_role_can_inspect_and_an_append_is_refused_in_one_line(pg_dsn, pg_server, caplog):
    schema = pg_dsn.rsplit("%3D", 1)[1]
    writer = session.PostgresStore(pg_dsn)
    writer.create_session("a")
    writer.append_entries("a", [msg("1", text="hello team")])
    # docs/stores.md: the two groups and one member each
    pw = "Member-pw-7f3a"
    pg_server.admin(
        f"""DO $$ BEGIN
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'durable_readers') THEN
                CREATE ROLE durable_readers NOLOGIN; END IF;
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'durable_writers') THEN
                CREATE ROLE durable_writers NOLOGIN; END IF;
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ann') THEN
                CREATE ROLE ann LOGIN PASSWORD '{pw}' IN ROLE durable_writers; END IF;
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'bob') THEN
                CREATE ROLE bob LOGIN PASSWORD '{pw}' IN ROLE durable_readers; END IF;
            END $$""",
    )
    pg_server.admin(
        f"GRANT USAGE ON SCHEMA {schema} TO durable_readers, durable_writers; "
        f"GRANT SELECT ON {schema}.durable_sessions, {schema}.durable_entries TO durable_readers; "
        f"GRANT SELECT, INSERT ON {schema}.durable_sessions, {schema}.durable_entries TO durable_writers",
        "durable",
    )
    member = session.PostgresStore(pg_server.dsn(schema, user="ann", password=pw))
    try:  # a writer: no UPDATE, no DELETE, and every append works
        member.create_session("b")
        member.append_entries("a", [msg("w", "1", text="from ann")])
        member.append_entries("a", [msg("w", "1", text="from ann")])  # idempotent under INSERT-only rights
        assert ids(writer.load_entries("a")) == ["1", "w"]
    finally:
        member.close()
    reader_pw = pw
    reader = session.PostgresStore(pg_server.dsn(schema, user="bob", password=reader_pw))
    try:
        assert ids(reader.load_entries("a")) == ["1", "w"]
        assert [r.id for r in reader.list_sessions()] == ["a", "b"]
        assert [h.entry_id for h in reader.search("team")] == ["1"]
        with pytest.raises(
            DurableError, match=r"^cannot append to session 'a': the PostgreSQL role 'bob' has read-only"
        ) as e:
            reader.append_entries("a", [msg("2", "1")])
        _never_shows(reader_pw, e.value, caplog)
        with pytest.raises(DurableError, match="read-only"):
            reader.create_session("c")
        assert ids(writer.load_entries("a")) == ["1", "w"]
    finally:
        reader.close()
        writer.close()


@pytest.mark.parametrize(
    "spec, kind",
    [
        (".durable", "jsonl"),
        ("sqlite:///tmp/x.db", "sqlite"),
        ("sqlite:x.db", "sqlite"),
        ("notes/team.sqlite3", "sqlite"),
        ("postgresql://ann@db/team", "postgres"),
        ("postgres://db/team", "postgres"),
        ("host=db dbname=team", "postgres"),
    ],
)
def test_a_store_string_names_its_kind(spec, kind):
    assert session.store_kind(spec) == kind


@pytest.mark.parametrize("spec", ["sqlite:", "sqlite://", "sqlite:///tmp/"])
def test_a_sqlite_string_without_a_file_is_one_clear_line(spec, tmp_path):
    with pytest.raises(DurableError, match="names no database file: write sqlite:///path/to/sessions.db"):
        session.open_store(spec, base=tmp_path)


def test_open_store_resolves_relative_paths_from_base(tmp_path):
    st = session.open_store("sqlite:sub/x.db", base=tmp_path)
    assert st.path == tmp_path / "sub" / "x.db"
    st.close()
    assert session.open_store("logs", base=tmp_path).root == tmp_path / "logs"


def test_summaries_count_and_date_each_session_as_loading_it_would(reopen):
    st = reopen()
    st.create_session("a")
    st.create_session("b", parent_id="a")
    st.append_entries("a", [msg("1", at="2026-01-01T00:00:00Z"), msg("2", "1", at="2026-01-02T00:00:00Z")])
    got = st.summaries()
    want = [(r, len(es := st.load_entries(r.id)), es[-1].created_at if es else "") for r in st.list_sessions()]
    assert got == want and [(r.id, n, last) for r, n, last in got] == [
        ("a", 2, "2026-01-02T00:00:00Z"),
        ("b", 0, ""),
    ]
