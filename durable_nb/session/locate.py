"""Where a store is, written as one string: a JSONL folder, a SQLite file or a PostgreSQL DSN.

The same strings work for ``%durable store``, ``%config DurableMagics.store``
and ``python -m durable_nb copy``::

    .durable                         a JSONL folder (the default)
    sqlite:///home/ann/sessions.db   a SQLite file (absolute; sqlite:sessions.db is relative)
    sessions.db                      a SQLite file too (.db, .sqlite, .sqlite3)
    postgresql://ann@db.example/team a PostgreSQL database (also postgres://, or 'host=... dbname=...')
"""

from __future__ import annotations

import os
from pathlib import Path

from .store import Store

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def store_kind(spec: str) -> str:
    """Return ``"postgres"``, ``"sqlite"`` or ``"jsonl"`` for a store string (nothing is opened)."""
    s = spec.strip()
    if s.startswith(("postgresql://", "postgres://")) or ("dbname=" in s and "=" in s.split()[0]):
        return "postgres"
    if s.startswith("sqlite:") or s.lower().endswith(SQLITE_SUFFIXES):
        return "sqlite"
    return "jsonl"


def sqlite_path(spec: str) -> str:
    """Return the file path of a SQLite store string (``sqlite:///abs.db`` -> ``/abs.db``, ``sqlite:x.db`` -> ``x.db``)."""
    s = spec.strip()
    if s.startswith("sqlite:"):
        s = s[len("sqlite:") :]
        if s.startswith("//"):
            s = s[2:]
    return s


def open_store(spec: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> Store:
    """Return the store a string names (see the module docs); relative paths are from ``base``
    (the current directory when ``None``).

    Raises :class:`~durable_nb.errors.DurableError` when a SQLite or
    PostgreSQL store cannot be opened (the message masks a DSN's password).
    Opening a JSONL folder touches nothing; the SQL stores connect at once.
    """
    from ..errors import DurableError
    from .jsonlstore import JsonlStore
    from .pgstore import PostgresStore
    from .sqlitestore import SqliteStore

    if not isinstance(spec, str):
        spec = os.fspath(spec)
    kind = store_kind(spec)
    if kind == "postgres":
        return PostgresStore(spec.strip())
    root = Path(base) if base is not None else Path.cwd()
    if kind == "sqlite":
        if not sqlite_path(spec).strip() or sqlite_path(spec).endswith("/"):
            raise DurableError(f"{spec!r} names no database file: write sqlite:///path/to/sessions.db")
        return SqliteStore((root / Path(sqlite_path(spec)).expanduser()).resolve())
    return JsonlStore((root / Path(spec.strip()).expanduser()).resolve())


def describe(store: Store) -> str:
    """Return how messages name a store: its folder, its SQLite file, or its DSN with the password masked."""
    for attr in ("dsn", "path", "root"):
        v = getattr(store, attr, None)
        if v is not None:
            return str(v)
    return type(store).__name__
