"""Reading a session's entries from PostgreSQL: the bodies streamed as bytes on a thread, decoded here.

What :meth:`~durable_nb.session.PostgresStore.load_entries` runs inside its
read transaction. The rows come as raw bytes (the text type read by the
binary ``bytea`` loader: no Python string per row, no re-encode) in chunks
of :data:`CHUNK` rows (libpq 17's chunked rows; older ones get every row
at once, decoded here chunk by chunk). A reader thread takes the chunks off
the connection (:class:`~.readahead.ReadAhead`: libpq waits for the server
outside the GIL) while this thread joins each one's lines and hands them to
:func:`~durable_nb.session.codec.decode_lines`: the server keeps sending
instead of waiting, one socket buffer ahead, for a decode to finish.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import Any

from .codec import decode_lines
from .compact import collector_paused
from .entry import Entry
from .readahead import ReadAhead

CHUNK = 500
"""Rows a chunk holds (~350 KB of bodies: small enough for the server to keep sending while one is decoded)."""

_NULL = object()  # a chunk the reader refused: a row held NULL


def streamed(conn: Any, sql: str, args: tuple) -> list[Entry] | None:
    """Return the entries of the one-column query ``sql`` (each row an entry's line, in order) run with
    ``args`` on the psycopg connection ``conn``, or ``None`` when a row is refused: a NULL, or lines that
    do not decode to one entry per row (the caller then reads the rows one by one, to name the bad one).

    Every row is read even after a refusal (a stream left early would cancel the caller's transaction);
    an error leaves it early (the transaction is rolled back anyway). The reader thread has stopped
    using ``conn`` when this returns or raises. Cost: one query, O(size)."""
    import psycopg
    from psycopg.types.string import ByteaBinaryLoader

    cur = conn.cursor(binary=True)
    cur.adapters.register_loader("text", ByteaBinaryLoader)  # this cursor only: the connection is the pool's
    with collector_paused():
        if psycopg.pq.version() < 170000:
            return _decoded_all(_chunked(cur.execute(sql, args).fetchall()))
        reader = ReadAhead(lambda: _streamed_chunks(cur, sql, args), "durable_nb postgres reader")
        try:
            return _decoded_all(reader)
        finally:
            reader.stop()


def _streamed_chunks(cur: Any, sql: str, args: tuple) -> Generator[Any, None, None]:
    """Yield :func:`_chunked` of the rows ``cur.stream`` brings; the stream is closed on the way out,
    however that is (psycopg's stream holds the connection's lock until it is closed, and a stream
    closed early cancels the query)."""
    rows = cur.stream(sql, args, size=CHUNK)
    try:
        yield from _chunked(rows)
    finally:
        rows.close()


def _chunked(rows: Iterable[tuple]) -> Generator[Any, None, None]:
    """Yield the bodies of one-column ``rows`` as lists of :data:`CHUNK` (the last may be shorter), or
    :data:`_NULL` for the chunk where a NULL is met; every row is read."""
    chunk: list[bytes] = []
    refused = False
    for (body,) in rows:
        if refused:
            continue
        if body is None:
            refused = True
            yield _NULL
            continue
        chunk.append(body)
        if len(chunk) == CHUNK:
            yield chunk
            chunk = []
    if chunk and not refused:
        yield chunk


def _decoded_all(chunks: Iterable[Any]) -> list[Entry] | None:
    """Return the entries of every chunk's lines (every chunk taken), or ``None`` when one is refused."""
    out: list[Entry] | None = []
    for chunk in chunks:
        if out is None:
            continue
        if chunk is _NULL:
            out = None
            continue
        some = decode_lines(b"\n".join(chunk))
        if some is None or len(some) != len(chunk):
            out = None
            continue
        out += some
    return out
