"""A PostgreSQL password in any spelling libpq accepts never reaches a message, a setting or a file.

Against the real server of ``tests/pg_server.py`` (password login): a role
whose password holds ``/``, ``~`` and a space, written as lowercase and
uppercase %-hex, as a %-encoded ``?pass%77ord=`` query key, and as a quoted
key/value pair; then a key/value DSN without ``dbname=`` (item 2), a
``service=`` DSN (``PGSERVICEFILE``), and ``$DATABASE_URL`` (item 3). The
magics run in IPython's own shell in this process; the CLI in a subprocess.
"""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
from urllib.parse import quote

import pytest
from IPython.core.error import UsageError
from reliability_support import ROOT

from durable_nb import session
from durable_nb.errors import DurableError


@pytest.fixture
def role(pg_server, pg_dsn):
    """``(user, password, token, schema)``: a login role whose password holds ``/``, ``~`` and a space;
    ``token`` is the password's distinctive part (hex: the same in every encoding)."""
    token = secrets.token_hex(8)
    user, pw = f"spell_{token[:6]}", f"Pw/{token}~x y"
    schema = pg_dsn.rsplit("%3D", 1)[1]
    pg_server.admin(f"CREATE ROLE {user} LOGIN PASSWORD '{pw}'")
    pg_server.admin(f"GRANT ALL ON SCHEMA {schema} TO {user}", "durable")
    pg_server.admin(f"GRANT CONNECT ON DATABASE durable TO {user}")
    return user, pw, token, schema


def _lower_hex(s: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), s)


def spellings(sock, user, pw, schema) -> dict[str, str]:
    enc = quote(pw, safe="").replace("~", "%7E")
    opts = f"options=-csearch_path%3D{schema}"
    return {
        "uri, lowercase %-hex": f"postgresql://{user}:{_lower_hex(enc)}@/durable?host={sock}&{opts}",
        "uri, uppercase %7E": f"postgresql://{user}:{enc}@/durable?host={sock}&{opts}",
        "uri, %-encoded ?password=": f"postgresql://{user}@/durable?host={sock}&pass%77ord={_lower_hex(enc)}&{opts}",
        "key/value, quoted": f"host={sock} user={user} dbname=durable password='{pw}' options='-csearch_path={schema}'",
    }


def _leaks(token: str, text: str) -> bool:
    return token in text


def test_every_spelling_of_the_password_is_masked_in_repr_dsn_errors_and_the_notebook(
    role, pg_server, shell, capsys, tmp_path
):
    user, pw, token, schema = role
    for i, (name, dsn) in enumerate(spellings(pg_server.sock, user, pw, schema).items()):
        st = session.open_store(dsn)
        try:
            assert type(st).__name__ == "PostgresStore", name
            assert not _leaks(token, repr(st) + st.dsn + session.describe(st)), (name, st.dsn)
            assert "***" in st.dsn, (name, st.dsn)
            with pytest.raises(session.SessionNotFound) as e:
                st.load_entries("nope")
            assert not _leaks(token, str(e.value)), name
        finally:
            st.close()
        capsys.readouterr()
        shell.run_line_magic("durable", f"store {dsn!r}" if " " in dsn else f"store {dsn}")
        shell.run_line_magic("durable", f"new s{i}")
        shell.run_line_magic("durable", "status")
        shell.run_line_magic("durable", "sessions")
        shell.run_line_magic("config", "DurableMagics")
        shell.run_line_magic("durable", f"export {tmp_path / f'h{i}.md'}")
        out = capsys.readouterr()
        shown = out.out + out.err + (tmp_path / f"h{i}.md").read_text()
        assert "PostgreSQL" in shown and "***" in shown, (name, shown)
        assert not _leaks(token, shown), (name, shown)
        assert not _leaks(token, str(shell.find_magic("durable").__self__.store)), name
    shell.run_line_magic("config", "DurableMagics.store = '.durable'")


def test_a_bad_key_value_dsn_never_echoes_its_words(pg_server):
    for dsn in (
        f"host={pg_server.sock} user=durable password=correct horse battery staple",
        f"dbname=durable host={pg_server.sock} password=correct horse battery staple",
        "postgresql://durable:correct-horse@/durable?battery=staple",
    ):
        with pytest.raises(DurableError) as e:
            session.open_store(dsn)
        text = str(e.value)
        assert "\n" not in text and "cannot read the PostgreSQL DSN" in text, text
        assert not any(w in text for w in ("correct", "horse", "battery", "staple")), text


def test_a_key_value_dsn_without_dbname_is_a_postgresql_store_not_a_folder(pg_server, pg_dsn, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    schema = pg_dsn.rsplit("%3D", 1)[1]
    dsn = f"host={pg_server.sock} user=durable password={pg_server.password} options='-csearch_path={schema}'"
    assert session.store_kind(dsn) == "postgres"
    st = session.open_store(dsn)
    try:
        assert type(st).__name__ == "PostgresStore" and pg_server.password not in st.dsn
        st.create_session("kv")
    finally:
        st.close()
    assert list(tmp_path.iterdir()) == []  # no folder named after the password


def _cli(*args, env=None, cwd=None):
    base = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "durable_nb", *args],
        capture_output=True,
        text=True,
        env=dict(base, **(env or {})),
        cwd=cwd,
        timeout=60,
    )


def test_a_service_dsn_and_a_database_url_from_the_environment_reach_postgresql(pg_server, pg_dsn, tmp_path):
    schema = pg_dsn.rsplit("%3D", 1)[1]
    src = tmp_path / "logs"
    session.JsonlStore(src).create_session("a")
    services = tmp_path / "pg_service.conf"
    services.write_text(
        f"[team]\nhost={pg_server.sock}\ndbname=durable\nuser=durable\noptions=-csearch_path={schema}\n"
    )
    env = {"PGSERVICEFILE": str(services), "PGPASSWORD": pg_server.password}
    r = _cli("copy", str(src), "service=team", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "a: 0 of 0 entries copied (new session service=team)" in r.stdout, r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "pg_service.conf"]  # no folder 'service=team'
    r = _cli("copy", str(src), "$DATABASE_URL", env={"DATABASE_URL": pg_dsn}, cwd=tmp_path)
    assert r.returncode == 0 and "already complete in postgresql://durable:***@" in r.stdout, r.stdout + r.stderr
    assert pg_server.password not in r.stdout + r.stderr
    r = _cli("copy", str(src), "${NOT_SET_ANYWHERE}", cwd=tmp_path)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "$NOT_SET_ANYWHERE is not set" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "pg_service.conf"]


def test_the_store_magic_expands_database_url_and_never_shows_it(pg_server, pg_dsn, shell, capsys, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", pg_dsn)
    capsys.readouterr()
    for spelled in ("$DATABASE_URL", "${DATABASE_URL}"):
        shell.run_line_magic("durable", f"store {spelled}")
        shell.run_line_magic("durable", "sessions")
        shell.run_line_magic("config", "DurableMagics")
        out = capsys.readouterr()
        assert "store: PostgreSQL postgresql://durable:***@" in out.out, out.out
        assert pg_server.password not in out.out + out.err
    with pytest.raises(UsageError) as e:
        shell.run_line_magic("durable", "store $NOT_SET_ANYWHERE")
    assert "$NOT_SET_ANYWHERE is not set" in str(e.value) and "\n" not in str(e.value)
    shell.run_line_magic("config", "DurableMagics.store = '.durable'")
