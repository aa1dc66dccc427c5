"""Reading a session's entries from PostgreSQL: the bodies streamed as bytes, decoded as they arrive.

What :meth:`~durable_nb.session.PostgresStore.load_entries` runs inside its
read transaction. The rows come as raw bytes (the text type read by the
binary ``bytea`` loader: no Python string per row, no re-encode) in chunks
of :data:`CHUNK` rows (libpq 17's chunked rows; older ones get every row
at once), and each chunk's lines are joined and handed to
:func:`~durable_nb.session.codec.decode_lines` while the server sends the
next ones: the decode overlaps the server's work instead of following it.

The rows are read in the order the ``(session, seq)`` index holds them
(``enable_sort`` is off for the transaction): without that the planner,
misled by statistics a bulk append left stale, sorted the whole session
first, spilling it to disk past ``work_mem`` (~70 MB of temporary files for
100k entries) before the first row came, so nothing overlapped.
"""

from __future__ import annotations

from typing import Any

from .codec import decode_lines
from .compact import collector_paused
from .entry import Entry

CHUNK = 500
"""Rows a chunk holds (~350 KB of bodies: small enough for the server to keep sending while one is decoded)."""


def streamed(conn: Any, sql: str, args: tuple) -> list[Entry] | None:
    """Return the entries of the one-column query ``sql`` (each row an entry's line, in order) run with
    ``args`` on the psycopg connection ``conn`` (inside a transaction: its sorts stay off until it ends),
    or ``None`` when a row is refused: a NULL, or lines that
    do not decode to one entry per row (the caller then reads the rows one by one, to name the bad one).

    Every row is read even after a refusal (a stream left early would cancel the caller's transaction);
    an error or an interrupt leaves it early, closed at once. Cost: one query, O(size)."""
    import psycopg
    from psycopg.types.string import ByteaBinaryLoader

    conn.execute("SET LOCAL enable_sort = off")  # the index's order, streamed: never a sort of the whole first
    cur = conn.cursor(binary=True)
    cur.adapters.register_loader("text", ByteaBinaryLoader)  # this cursor only: the connection is the pool's
    if psycopg.pq.version() < 170000:
        return _read(cur.execute(sql, args).fetchall())
    rows = cur.stream(sql, args, size=CHUNK)
    try:
        return _read(rows)
    finally:  # psycopg's stream holds the connection's lock until it is closed (left early: the query is
        rows.close()  # cancelled); a traceback keeping it alive would hang the transaction's end forever


def _read(rows: Any) -> list[Entry] | None:
    """Return the entries of one-column ``rows`` of lines, every row read (see :func:`streamed`)."""
    out: list[Entry] | None = []
    chunk: list[bytes] = []
    with collector_paused():
        for (body,) in rows:
            if out is None:
                continue
            if body is None:
                out = None
                continue
            chunk.append(body)
            if len(chunk) == CHUNK:
                out = _decoded(out, chunk)
                chunk = []
        return _decoded(out, chunk) if out is not None and chunk else out


def _decoded(out: list[Entry] | None, chunk: list[bytes]) -> list[Entry] | None:
    """Return ``out`` extended by the entries of ``chunk``'s lines, or ``None`` when they are not one entry a row."""
    some = decode_lines(b"\n".join(chunk))
    if out is None or some is None or len(some) != len(chunk):
        return None
    out += some
    return out
