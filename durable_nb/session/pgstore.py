"""The PostgreSQL store: sessions shared by a team, across machines.

Through psycopg 3 and a ``psycopg_pool`` connection pool (install
``durable_nb[postgres]``). Two tables, created on first use when missing::

    durable_sessions(id PRIMARY KEY, parent_id, created_at)
    durable_entries(seq IDENTITY PRIMARY KEY, session, id, body JSONB, words TSVECTOR,
                    UNIQUE (session, id))

``body`` is the entry as the codec encodes it (the JSONL store's line, kept
as JSONB); ``words`` indexes the entry's text for search (GIN). JSONB has no
form for a NUL character (``\u0000``, e.g. a tool's ``find -print0``) or a
NaN/Infinity number; a line that may hold one is kept escaped instead, as
``{"created_at": ..., "durable_nb_line": "<the line as a JSON string>"}``
(no ``type`` key, which every entry has), and read back as that line, so
this store holds every value the codec writes. Rows are
only ever inserted: an append is one transaction, idempotent per entry id,
and ends with ``NOTIFY durable_nb`` (the session id) so other kernels can
show new entries live (:meth:`PostgresStore.subscribe`). Two kernels on two
machines appending to one session each insert their own rows, growing
sibling branches (rule R14); nothing is overwritten.

**The password never leaves this object.** The DSN is read by libpq's rules
on the way in (:mod:`.dsn`): the password is handed to libpq as a separate
parameter, and every message this store raises, and its ``repr``, carries
the DSN rebuilt from its parsed parameters with the password masked
(``postgresql://ann:***@db/team``). Prefer ``PGPASSWORD`` or a
``~/.pgpass`` file, which keep it out of the notebook altogether.

Access (see ``docs/stores.md``): a role with ``SELECT`` only can open and
inspect sessions; its append attempt raises one clear line.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import DurableError, SessionExists, SessionNotFound
from .codec import same_line
from .dsn import mask, missing_psycopg, split_dsn
from .entry import Entry, now
from .pgload import streamed
from .search import Hit, search_text, words
from .sqlrows import decode_rows, hits_of
from .store import SessionRecord, check_session_id

CHANNEL = "durable_nb"
MAX_WORD = 100  # longer "words" are not indexed (no one searches for them)
MAX_INDEX_BYTES = 900_000  # PostgreSQL's tsvector holds at most 1 MB

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS durable_sessions (
        id text PRIMARY KEY,
        parent_id text NOT NULL DEFAULT '',
        created_at text NOT NULL DEFAULT '')""",
    """CREATE TABLE IF NOT EXISTS durable_entries (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session text NOT NULL REFERENCES durable_sessions(id),
        id text NOT NULL,
        body jsonb NOT NULL,
        words tsvector NOT NULL,
        UNIQUE (session, id))""",
    "CREATE INDEX IF NOT EXISTS durable_entries_by_session ON durable_entries (session, seq)",
    "CREATE INDEX IF NOT EXISTS durable_entries_words ON durable_entries USING gin (words)",
]

_APPEND = """
INSERT INTO durable_entries (session, id, body, words)
SELECT %(s)s, x.i, x.b::jsonb, array_to_tsvector(string_to_array(x.w, ' '))
FROM unnest(%(ids)s::text[], %(bodies)s::text[], %(words)s::text[]) WITH ORDINALITY AS x(i, b, w, n)
ORDER BY x.n
ON CONFLICT (session, id) DO NOTHING
RETURNING id
"""

_STORED = "SELECT id, body::text FROM durable_entries WHERE session = %s AND id = ANY(%s)"
ESCAPED = "durable_nb_line"  # the key of an entry kept escaped (see the module docs)
_BODY = f"CASE WHEN body ? 'type' THEN body::text ELSE body->>'{ESCAPED}' END"  # the entry's line
# Sessions oldest first, then by id in code point order as every store lists them ("C": not "a" before "B");
# a search's hits in that order, each session's in append order.
_OLDEST = 's.created_at COLLATE "C", s.id COLLATE "C"'
_ORDER = 's.created_at COLLATE "C", e.session COLLATE "C", e.seq'
_NO_JSONB = re.compile(r"\\u0000|[:,\[]-?(?:NaN|Infinity)")  # may hold what JSONB cannot (a false hit costs nothing)


def _psycopg():
    try:
        import psycopg
        import psycopg_pool
    except ImportError as e:
        raise missing_psycopg(e) from None
    return psycopg, psycopg_pool


def jsonb_body(entry: Entry, line: str) -> str:
    """Return the JSONB text kept for ``entry`` whose line is ``line``: the line itself, or, when it may
    hold a NUL or a NaN/Infinity number (which JSONB refuses), the escaped form of the module docs."""
    if _NO_JSONB.search(line) is None:
        return line
    return json.dumps({"created_at": entry.created_at, ESCAPED: line}, ensure_ascii=False)


def index_words(entry: Entry) -> str:
    """Return the words an entry is found by, distinct, space-separated, within PostgreSQL's tsvector limit."""
    out, size, seen = [], 0, set()
    for w in words(search_text(entry)):
        if w in seen or len(w) > MAX_WORD:
            continue
        seen.add(w)
        size += len(w.encode("utf-8")) + 8
        if size > MAX_INDEX_BYTES:
            break
        out.append(w)
    return " ".join(out)


def _tsquery(query: str) -> str:
    """Return a ``tsquery`` (for a ``::tsquery`` cast) matching every word of ``query``, each quoted."""
    return " & ".join("'" + w.replace("\\", "\\\\").replace("'", "''") + "'" for w in words(query))


class PostgresStore:
    """A store of many sessions in a PostgreSQL database.

    ``dsn`` is a libpq connection string or URI. ``pool_size`` caps the
    connections this store opens (one is opened at once); each is checked
    when taken from the pool (one round trip), so connections a server
    restart killed are replaced instead of failing the next calls. Opening checks
    the connection and creates the tables if they are missing (a role that
    cannot create them can still use tables that exist). Raises
    :class:`DurableError` for a DSN libpq cannot read, a server it cannot
    reach, a refused login, or missing tables it may not create; messages
    carry the DSN with its password masked (:attr:`dsn`).
    """

    def __init__(self, dsn: str, *, pool_size: int = 4, timeout: float = 10.0) -> None:
        psycopg, psycopg_pool = _psycopg()
        self._psycopg = psycopg
        self._conninfo, self._password, self.dsn = split_dsn(dsn)
        self._kwargs = {"password": self._password} if self._password is not None else {}
        self._timeout = timeout
        try:  # one direct attempt first: a wrong password or a missing server fails at once, clearly
            psycopg.connect(self._conninfo, **self._kwargs, connect_timeout=max(1, int(timeout))).close()
        except psycopg.Error as e:
            raise DurableError(f"cannot connect to PostgreSQL at {self.dsn}: {self._line(e)}") from None
        _quiet_logging()
        self._pool = psycopg_pool.ConnectionPool(
            self._conninfo,
            kwargs=dict(self._kwargs, connect_timeout=max(1, int(timeout))),
            min_size=1,
            max_size=max(1, pool_size),
            open=True,
            name="durable_nb",
            check=psycopg_pool.ConnectionPool.check_connection,  # a connection a server restart killed is replaced
        )
        self._listener: _Listener | None = None
        self._lock = threading.Lock()
        self._ensure_schema()

    def __repr__(self) -> str:
        return f"PostgresStore({self.dsn!r})"

    def describe(self) -> str:
        """Return the DSN with its password masked."""
        return self.dsn

    def close(self) -> None:
        """Close the pool and stop the notification listener."""
        if self._listener is not None:
            self._listener.stop()
        self._pool.close()

    # -- errors --------------------------------------------------------------------------

    def _why(self) -> str:
        """Return why a connection fails (one line, password masked), by trying one."""
        try:
            self._psycopg.connect(self._conninfo, **self._kwargs, connect_timeout=max(1, int(self._timeout))).close()
        except self._psycopg.Error as e:
            return self._line(e)
        return "the connection pool timed out"

    def _line(self, e: BaseException) -> str:
        text = " ".join(str(e).split())
        return mask(text, self._password)

    def _error(self, e: BaseException, doing: str) -> DurableError:
        """Return the one-line :class:`DurableError` for a database error while ``doing`` something."""
        psycopg = self._psycopg
        if isinstance(e, psycopg.errors.InsufficientPrivilege):
            user = self._conninfo_user()
            return DurableError(
                f"cannot {doing}: the PostgreSQL role {user!r} has read-only access to the sessions at "
                f"{self.dsn} ({self._line(e)}); ask for INSERT on durable_sessions and durable_entries"
            )
        if isinstance(e, psycopg.errors.UntranslatableCharacter | psycopg.errors.InvalidTextRepresentation):
            return DurableError(
                f"cannot {doing}: PostgreSQL's JSONB refused this entry ({self._line(e)}); nothing was written"
            )
        return DurableError(f"cannot {doing} at {self.dsn}: {self._line(e)}")

    def _conninfo_user(self) -> str:
        import getpass

        from psycopg.conninfo import conninfo_to_dict

        return str(conninfo_to_dict(self._conninfo).get("user") or getpass.getuser())

    def _run(self, doing: str, fn: Callable[[Any], Any]) -> Any:
        """Run ``fn(connection)`` in one transaction; database errors become one-line :class:`DurableError`."""
        psycopg = self._psycopg
        try:
            with self._pool.connection(timeout=self._timeout) as conn:
                with conn.transaction():
                    return fn(conn)
        except psycopg.Error as e:
            if type(e).__module__.startswith("psycopg_pool"):  # PoolTimeout: no connection could be made
                raise DurableError(
                    f"cannot {doing}: no connection to PostgreSQL at {self.dsn}: {self._why()}"
                ) from None
            raise self._error(e, doing) from None

    def _ensure_schema(self) -> None:
        def create(conn):
            have = conn.execute(
                "SELECT to_regclass('durable_sessions') IS NOT NULL AND to_regclass('durable_entries') IS NOT NULL"
            ).fetchone()[0]
            if have:
                return
            conn.execute("SELECT pg_advisory_xact_lock(7346152039)")  # two first openers: one creates
            for statement in _SCHEMA:
                conn.execute(statement)

        self._run("create the durable_nb tables", create)

    # -- the store contract ------------------------------------------------------------------

    def create_session(
        self, id: str, parent_id: str = "", *, entries: Sequence[Entry] = (), created_at: str = ""
    ) -> SessionRecord:
        """Create a session holding ``entries`` in one transaction (all or nothing);
        raises ``SessionExists`` when the id is taken. ``created_at`` keeps a copied
        session's time (now when empty)."""
        check_session_id(id)
        rec = SessionRecord(id, parent_id, created_at or now())
        args = self._rows(id, entries)

        def insert(conn):
            cur = conn.execute(
                "INSERT INTO durable_sessions VALUES (%s, %s, %s) ON CONFLICT (id) DO NOTHING",
                (id, parent_id, rec.created_at),
            )
            if cur.rowcount and entries:
                conn.execute(_APPEND, args)
            return cur.rowcount

        if not self._run(f"create session {id!r}", insert):
            raise SessionExists(f"session {id!r} already exists in {self.dsn}")
        return rec

    def load_session(self, id: str) -> SessionRecord:
        check_session_id(id)
        row = self._run(
            f"load session {id!r}",
            lambda c: c.execute(
                "SELECT id, parent_id, created_at FROM durable_sessions WHERE id = %s", (id,)
            ).fetchone(),
        )
        if row is None:
            raise SessionNotFound(f"no session {id!r} in {self.dsn}")
        return SessionRecord(*row)

    def load_entries(self, id: str) -> list[Entry]:
        """Return the session's entries in append order. Raises ``SessionNotFound``; a row that does
        not decode raises :class:`~durable_nb.errors.CorruptLog` naming the session and entry.

        Cost: one indexed query, O(entries), its rows decoded as they arrive (:mod:`.pgload`); only
        when that is refused are the rows read again with their ids, to name the bad one."""
        check_session_id(id)

        def read(conn):
            if conn.execute("SELECT 1 FROM durable_sessions WHERE id = %s", (id,)).fetchone() is None:
                return None
            where = "FROM durable_entries WHERE session = %s ORDER BY seq"
            entries = streamed(conn, f"SELECT {_BODY} {where}", (id,))
            if entries is not None:
                return entries, None
            return None, conn.execute(f"SELECT id, {_BODY} {where}", (id,)).fetchall()

        got = self._run(f"load session {id!r}", read)
        if got is None:
            raise SessionNotFound(f"no session {id!r} in {self.dsn}")
        entries, rows = got
        return entries if rows is None else decode_rows(rows, f"{self.dsn} session {id!r}")

    def append_entries(self, id: str, entries: Sequence[Entry]) -> None:
        """Append entries in one transaction (all or nothing), then notify listeners.

        Everything is encoded first (an unencodable entry writes nothing).
        Idempotent: an entry whose id the session already holds with the
        same content is skipped; the same id with other content raises
        :class:`DurableError` and writes nothing. Raises ``SessionNotFound``;
        a read-only role gets a one-line :class:`DurableError`.
        Cost: four round trips (the pool's check of the connection, begin, the batch and its
        notification, commit), whatever the batch's size; one more when an id was already stored.
        """
        check_session_id(id)
        if not entries:
            return
        args = self._rows(id, entries)

        def insert(conn):  # one round trip for the insert and the notify (pipeline mode)
            try:
                with conn.pipeline():
                    cur = conn.execute(_APPEND, args)
                    conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, id))
            except self._psycopg.errors.ForeignKeyViolation:  # no such session
                raise _Missing from None
            inserted = {r[0] for r in cur.fetchall()}
            skipped = [i for i in args["ids"] if i not in inserted]
            if skipped:  # a retried append, or a clash: compare with what is stored (rare: one more query)
                stored = dict(conn.execute(_STORED, (id, skipped)).fetchall())
                for i, b in zip(args["ids"], args["bodies"]):
                    if i in stored and not same_line(stored[i], b):
                        raise _Clash(i)  # rolls the transaction back: nothing appended, nobody notified

        try:
            self._run(f"append to session {id!r}", insert)
        except _Missing:
            raise SessionNotFound(f"no session {id!r} in {self.dsn}") from None
        except _Clash as c:
            raise DurableError(
                f"session {id!r} already holds an entry {c.args[0]!r} with other content; nothing was appended"
            ) from None

    @staticmethod
    def _rows(id: str, entries: Sequence[Entry]) -> dict[str, Any]:
        """Return the query arguments of ``entries`` for session ``id`` (all encoded here, before any write)."""
        from .codec import encode_line

        return {
            "s": id,
            "ids": [e.id for e in entries],
            "bodies": [jsonb_body(e, encode_line(e)[:-1].decode("utf-8")) for e in entries],
            "words": [index_words(e) for e in entries],
        }

    def list_sessions(self) -> list[SessionRecord]:
        """Return every session's record, oldest first (then by id, in code point order, as every store)."""
        sql = f"SELECT id, parent_id, created_at FROM durable_sessions s ORDER BY {_OLDEST}"
        rows = self._run("list sessions", lambda c: c.execute(sql).fetchall())
        return [SessionRecord(*r) for r in rows]

    def summaries(self, unreadable: list[tuple[str, str]] | None = None) -> list[tuple[SessionRecord, int, str]]:
        """Return ``(record, entry count, last entry's created_at or "")`` for every session, oldest
        first, without decoding an entry: what ``%durable sessions`` lists. One query. (``unreadable``
        is the SQLite store's; JSONB rows are always JSON, so nothing is added to it here.)"""
        rows = self._run(
            "list sessions",
            lambda c: c.execute(
                "SELECT s.id, s.parent_id, s.created_at, "
                "(SELECT count(*) FROM durable_entries e WHERE e.session = s.id), "
                "(SELECT e.body->>'created_at' FROM durable_entries e WHERE e.session = s.id "
                "ORDER BY e.seq DESC LIMIT 1) "
                f"FROM durable_sessions s ORDER BY {_OLDEST}"
            ).fetchall(),
        )
        return [(SessionRecord(a, b, c), n, last or "") for a, b, c, n, last in rows]

    def search(self, query: str, session: str | None = None, limit: int = 50) -> list[Hit]:
        """Return the entries whose text holds every word of ``query``, at most ``limit``: sessions
        oldest first (as :meth:`list_sessions`), each session's entries in append order, the order of
        every store; ``session`` limits it to one session (``SessionNotFound`` if it is missing).

        The rule of :mod:`.search`: the GIN index finds the candidates by the
        words it holds, a word longer than :data:`MAX_WORD` (never indexed) by
        the entry's JSON text holding it, and each candidate is checked against the rule. Cost: an
        index lookup (a scan of the rows for a long word alone), sorting the candidates, decoding a page."""
        qw = words(query)
        if not qw:
            return []
        sql = f"SELECT e.session, e.id, {_BODY}, e.seq, s.created_at FROM durable_entries e JOIN durable_sessions s "
        sql += f"ON s.id = e.session WHERE ({_ORDER}) > (%s, %s, %s)"
        short = [w for w in qw if len(w) <= MAX_WORD]
        args: list[Any] = [_tsquery(" ".join(short))] if short else []
        sql += " AND e.words @@ %s::tsquery" if short else ""
        for w in qw:
            if len(w) > MAX_WORD:
                sql += " AND strpos(lower(e.body::text), %s) > 0"
                args.append(w)
        if session is not None:
            sql += " AND e.session = %s"
            args.append(self.load_session(session).id)
        sql += f" ORDER BY {_ORDER} LIMIT %s"
        page = max(limit, 100)
        out: list[Hit] = []
        after: tuple[str, str, int] = ("", "", 0)
        while len(out) < limit:
            rows = self._run("search", lambda c: c.execute(sql, [*after, *args, page]).fetchall())
            out += hits_of([r[:3] for r in rows], query, self.dsn)
            if len(rows) < page:
                break
            after = (rows[-1][4], rows[-1][0], rows[-1][3])
        return out[:limit]

    # -- live updates -----------------------------------------------------------------------

    def subscribe(self, session_id: str, callback: Callable[[str], object]) -> Callable[[], None]:
        """Call ``callback(session_id)`` (from a background thread) after each append to that session,
        by any process on any machine; return a function that unsubscribes.

        One listening connection per store, opened on the first subscription
        (``LISTEN durable_nb``) and re-opened after a lost connection. A
        callback must be quick and thread-safe (hand the work to the main
        thread); its exceptions are swallowed.
        """
        check_session_id(session_id)
        with self._lock:
            if self._listener is None:
                self._listener = _Listener(self)
            listener = self._listener
        return listener.add(session_id, callback)


def _quiet_logging() -> None:
    """Keep psycopg's and the pool's log records out of a notebook's cells.

    Without a handler of their own, Python's last-resort handler prints their
    warnings (the pool's "error connecting" while a server is down, from its
    worker threads) to stderr, which a kernel shows in whichever cell is
    running. A ``NullHandler`` on the ``psycopg`` logger stops that; records
    still reach handlers an application configures (propagation is kept).
    The errors that matter reach the user as this store's one-line messages."""
    import logging

    log = logging.getLogger("psycopg")
    if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
        log.addHandler(logging.NullHandler())


class _Missing(Exception):
    """The session of an append does not exist (raised inside the transaction to roll it back)."""


class _Clash(Exception):
    """An entry id already stored with other content (raised inside the transaction to roll it back)."""


class _Listener:
    """The thread behind :meth:`PostgresStore.subscribe`."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.callbacks: dict[str, list[Callable[[str], object]]] = {}
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="durable_nb-listen", daemon=True)
        self.thread.start()
        self.ready.wait(self.store._timeout)

    def add(self, session_id: str, callback: Callable[[str], object]) -> Callable[[], None]:
        with self.lock:
            self.callbacks.setdefault(session_id, []).append(callback)

        def remove() -> None:
            with self.lock:
                cbs = self.callbacks.get(session_id, [])
                if callback in cbs:
                    cbs.remove(callback)

        return remove

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)

    def _loop(self) -> None:
        psycopg = self.store._psycopg
        while not self.stopped.is_set():
            try:
                with psycopg.connect(self.store._conninfo, **self.store._kwargs, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.ready.set()
                    while not self.stopped.is_set():
                        for n in conn.notifies(timeout=0.5):
                            with self.lock:
                                cbs = list(self.callbacks.get(n.payload, ()))
                            for cb in cbs:
                                try:
                                    cb(n.payload)
                                except Exception:
                                    pass
            except psycopg.Error:
                self.ready.set()
                self.stopped.wait(1.0)  # the server went away: try again shortly
