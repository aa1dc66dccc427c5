"""Where a store is, written as one string: a JSONL folder, a SQLite file or a PostgreSQL DSN.

The same strings work for ``%durable store``, ``%config DurableMagics.store``
and ``python -m durable_nb copy``::

    .durable                         a JSONL folder (the default)
    sqlite:///home/ann/sessions.db   a SQLite file (absolute; sqlite:sessions.db is relative)
    sessions.db                      a SQLite file too (.db, .sqlite, .sqlite3)
    postgresql://ann@db.example/team a PostgreSQL database (also postgres://)
    host=db user=ann service=team    a PostgreSQL database too (libpq key/value pairs, see :mod:`.dsn`)
    $DATABASE_URL                    the store an environment variable holds (also ${DATABASE_URL})

A store string that is one ``$NAME`` / ``${NAME}`` is that environment
variable's value (:func:`expand_env`), so a DSN's password can stay out of
the notebook; what is shown is the store's description (a DSN with its
password masked). Only a whole string is expanded, once: a ``$`` inside a
DSN (a password may hold one) or a path is kept as written.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .dsn import is_dsn
from .store import Describable, SessionFiles, Store

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def expand_env(spec: str) -> str:
    """Return the value of the environment variable ``spec`` names when it is one ``$NAME`` or
    ``${NAME}`` (surrounding blanks allowed), else ``spec`` unchanged. The value is not expanded again.

    Raises :class:`~durable_nb.errors.DurableError` (one line naming the
    variable, never a value) when it is not set or empty."""
    m = _VAR.fullmatch(spec.strip())
    if m is None:
        return spec
    from ..errors import DurableError

    name = m.group(1) or m.group(2)
    value = os.environ.get(name, "")
    if not value.strip():
        raise DurableError(
            f"the store ${name} is {'empty' if name in os.environ else 'not set'} in this kernel's environment: "
            f"set it before starting Jupyter (export {name}=postgresql://...), or write the store itself"
        )
    return value


def store_kind(spec: str) -> str:
    """Return ``"postgres"``, ``"sqlite"`` or ``"jsonl"`` for a store string, its ``$NAME`` expanded
    (nothing is opened). A libpq key/value string is PostgreSQL whichever keys it has (see
    :func:`~durable_nb.session.dsn.is_dsn`). Raises ``DurableError`` for an unset variable."""
    return _kind(expand_env(spec))


def _kind(spec: str) -> str:
    s = spec.strip()
    if is_dsn(s):
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

    ``$NAME`` / ``${NAME}`` are expanded first (:func:`expand_env`). Raises
    :class:`~durable_nb.errors.DurableError` for an unset variable and when a
    SQLite or PostgreSQL store cannot be opened (the message masks a DSN's password).
    A JSONL store's path that is a file (a log) is refused in one line.
    Opening a JSONL folder touches nothing; the SQL stores connect at once.
    """
    from ..errors import DurableError
    from .jsonlstore import JsonlStore
    from .pgstore import PostgresStore
    from .sqlitestore import SqliteStore

    spec = expand_env(os.fspath(spec))
    kind = _kind(spec)  # the value of a $NAME is not expanded again
    if kind == "postgres":
        return PostgresStore(spec.strip())
    if kind == "sqlite":
        if not sqlite_path(spec).strip() or sqlite_path(spec).endswith("/"):
            raise DurableError(f"{spec!r} names no database file: write sqlite:///path/to/sessions.db")
        return SqliteStore(_local(spec, kind, base))
    folder = _local(spec, kind, base)
    if folder.exists() and not folder.is_dir():
        raise DurableError(
            f"{folder} is a file, not a store: a JSONL store is a folder of session logs "
            "(open a log with %durable open, or name a folder, a .db file or a postgresql:// DSN)"
        )
    return JsonlStore(folder)


def _local(spec: str, kind: str, base: str | os.PathLike[str] | None) -> Path:
    """The absolute path of a SQLite or JSONL store string (its ``$NAME`` expanded), from ``base`` (the
    current directory when ``None``)."""
    root = Path(base) if base is not None else Path.cwd()
    return (root / Path(sqlite_path(spec) if kind == "sqlite" else spec.strip()).expanduser()).resolve()


def check_store_path(
    spec: str | os.PathLike[str], base: str | os.PathLike[str] | None = None, *, existing: bool = False
) -> None:
    """Raise :class:`~durable_nb.errors.DurableError` in one line, naming the path, when the store string
    ``spec`` (a JSONL folder or a SQLite file, as :func:`open_store` reads it) cannot be what was meant:
    a store that does not exist in a folder that does not exist either (a new store is made in an
    existing folder only: anything else is most likely a typo), a ``.jsonl`` file that does not exist
    (a JSONL store is a folder), or, with ``existing`` (reading, which creates nothing), any store that
    does not exist. When a name in the folder above is close to the one that is missing, the message
    says the path meant. A PostgreSQL DSN is not checked here. O(names in that folder, at most 1,000).
    """
    from ..errors import DurableError

    spec = expand_env(os.fspath(spec))
    kind = _kind(spec)
    if kind == "postgres":
        return
    path = _local(spec, kind, base)
    if path.exists() or path.is_symlink():
        return
    if kind == "jsonl" and path.suffix.lower() == ".jsonl":
        raise DurableError(
            f"no store at {path}: a JSONL store is a folder of session logs, not a .jsonl file; "
            f"name its folder (like {path.parent / '.durable'}), a .db file or a postgresql:// DSN"
        )
    gap = path  # the topmost part of the path missing
    while not gap.parent.is_dir() and gap.parent != gap:
        gap = gap.parent
    if not existing and gap == path:
        return  # a new store in an existing folder
    meant = _meant(path, gap, existing)
    if meant is not None:
        raise DurableError(
            f"no {'store' if gap == path else f'folder {gap}, so no store'} at {path}: did you mean {meant}?"
        )
    if existing:
        raise DurableError(f"no store at {path}: name an existing folder, .db file or postgresql:// DSN")
    raise DurableError(
        f"no folder {gap}, so no store at {path}: correct the path, or make the folder first (mkdir -p {path.parent})"
    )


def _meant(path: Path, missing: Path, existing: bool) -> Path | None:
    """Return ``path`` with its ``missing`` part replaced by the closest name in the folder above it, if
    one is close and the result exists (``existing``) or could be made (its folder exists); else ``None``."""
    import difflib
    import itertools

    try:
        names = [p.name for p in itertools.islice(missing.parent.iterdir(), 1000)]
    except OSError:
        return None
    near = difflib.get_close_matches(missing.name, names, n=1, cutoff=0.6)
    if not near:
        return None
    meant = missing.parent / near[0] / path.relative_to(missing)
    return meant if (meant.exists() if existing else meant.parent.is_dir()) else None


def describe(store: Store, session_id: str = "") -> str:
    """Return how messages name a store: its folder, its SQLite file, or its DSN with the password masked
    (:class:`~.store.Describable`; another store: its class name). With ``session_id``: where that
    session is kept, its file in a store with a file per session (JSONL), else the store. O(1)."""
    if session_id and isinstance(store, SessionFiles):
        return str(store.file(session_id))
    return store.describe() if isinstance(store, Describable) else type(store).__name__


KIND_NAMES = {"jsonl": "JSONL folder", "sqlite": "SQLite file", "postgres": "PostgreSQL"}  # how messages name a kind


def kind_of_store(store: Store) -> str:
    """Return the kind :func:`store_kind` gives the string of a store that :func:`open_store` opens
    (``"jsonl"``, ``"sqlite"``, ``"postgres"``), ``"memory"`` for a :class:`~.memstore.MemoryStore`,
    ``""`` for a store of one's own. The one map from store classes to kinds. O(1)."""
    from .jsonlstore import JsonlStore
    from .memstore import MemoryStore
    from .pgstore import PostgresStore
    from .sqlitestore import SqliteStore

    for cls, kind in (
        (JsonlStore, "jsonl"),
        (SqliteStore, "sqlite"),
        (PostgresStore, "postgres"),
        (MemoryStore, "memory"),
    ):
        if isinstance(store, cls):
            return kind
    return ""
