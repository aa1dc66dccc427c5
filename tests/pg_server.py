"""A real PostgreSQL server for the tests: ``initdb`` + ``pg_ctl`` in a temporary folder.

Debian's ``postgresql`` package provides the binaries (``./dev test``
installs it). PostgreSQL refuses to run as root, so as root the server runs
as the ``postgres`` OS user (``runuser``); otherwise as the current user.
It listens on a unix socket in its own folder only (no TCP port, nothing to
collide with). Logins: the superuser ``postgres`` (trusted, for the tests'
administration) and ``durable`` with a password (scram-sha-256), which is
what the stores use, so every store test goes through password login.

Usable from a test (``conftest.py``'s fixtures) and from a benchmark.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path


def find_bin() -> Path | None:
    """Return the newest PostgreSQL ``bin`` folder (``/usr/lib/postgresql/<v>/bin``), or ``None``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


class PgServer:
    """A throwaway PostgreSQL cluster; :meth:`start`, then :meth:`stop` (which deletes it).

    ``fast=True`` turns fsync off (the tests kill clients, never the server).
    """

    def __init__(self, fast: bool = True) -> None:
        bindir = find_bin()
        if bindir is None:
            raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql; ./dev test does it)")
        self.bin = bindir
        self.fast = fast
        self.base = Path(tempfile.mkdtemp(prefix="durable-pg-"))
        self.data = self.base / "data"
        self.sock = self.base / "sock"
        self.password = "pw-" + secrets.token_urlsafe(12)
        self._as_root = os.geteuid() == 0
        self._n = 0

    def _run(self, *args: str) -> None:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self._as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)

    def start(self) -> PgServer:
        self.sock.mkdir()
        os.chmod(self.base, 0o755)
        os.chmod(self.sock, 0o777)
        if self._as_root:
            shutil.chown(self.base, "postgres", "postgres")
            shutil.chown(self.sock, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-E", "UTF8", "--no-sync", "-A", "trust")
        (self.data / "pg_hba.conf").write_text(
            "local all postgres trust\nlocal all all scram-sha-256\nhost all all 127.0.0.1/32 scram-sha-256\n"
        )
        opts = f"-k {self.sock} -c listen_addresses='' -c max_connections=200"
        if self.fast:
            opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.base / "log"), "-o", opts, "-w", "start")
        self.admin(f"CREATE ROLE durable LOGIN PASSWORD '{self.password}'")
        self.admin("CREATE DATABASE durable OWNER durable")
        return self

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(self.base, ignore_errors=True)

    def admin(self, sql: str, dbname: str = "postgres") -> None:
        """Run ``sql`` as the superuser (autocommit)."""
        import psycopg

        with psycopg.connect(host=str(self.sock), user="postgres", dbname=dbname, autocommit=True) as c:
            c.execute(sql)

    def dsn(self, schema: str = "public", user: str = "durable", password: str | None = None) -> str:
        """Return the URI of the ``durable`` database for ``user`` (the ``durable`` role's password by
        default), its search path set to ``schema`` (so a store's tables land there)."""
        pw = self.password if password is None else password
        return f"postgresql://{user}:{pw}@/durable?host={self.sock}&options=-csearch_path%3D{schema}"

    def new_schema(self) -> str:
        """Create an empty schema owned by ``durable`` in the ``durable`` database; return its name.

        Much faster than a database per test (a few ms instead of ~0.5 s)."""
        self._n += 1
        name = f"t{self._n}_{secrets.token_hex(3)}"
        self.admin(f"CREATE SCHEMA {name} AUTHORIZATION durable", "durable")
        return name

    def drop_schema(self, name: str) -> None:
        self.admin(f"DROP SCHEMA IF EXISTS {name} CASCADE", "durable")
