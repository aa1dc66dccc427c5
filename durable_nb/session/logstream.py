"""A JSONL log's entries decoded as its file is read, a block at a time.

The common case of :meth:`~durable_nb.session.JsonlStore.load_entries`: a
log that ends with a newline and holds one entry per line. Reading the whole
file first costs a buffer the size of the log in fresh memory (its page
faults are ~15% of a reload) and every scan of it (the line count, the
check for the :data:`~durable_nb.ai.EXTRA` name) runs over memory no cache
holds. Here one buffer of ~256 KB is read into again and again: each block's
whole lines are checked and decoded while they are in the cache, by the same
steps as :func:`~durable_nb.session.codec.decode_lines` (strict, else by
kind or by runs of lines), and settled (:func:`~durable_nb.session.codec.settle`).
Anything else (a torn tail, a blank line, an object over lines, a line that
does not decode, lines read by runs that may carry the legacy ``"meta"`` flag) gives
``None``, and the caller reads the file whole on its general path, which
finds and names what it is.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from .codec import lenient_chunk, settle, strict_chunk
from .compact import collector_paused
from .entry import Entry

_BLOCK = 1 << 18
_EXTRA_BYTES = b"extra\x7f"  # ai.EXTRA, encoded


def stream_entries(
    fd: int, head: Callable[[bytes], object], may_be_legacy: Callable[[bytes], bool]
) -> tuple[list[Entry], int] | None:
    """Return the entries of the log open at ``fd`` (read from its current offset, the start) and
    the number of bytes read, or ``None`` for the general path (see the module docs).

    ``head(first_line)`` checks the ``session_init`` line (it raises for a bad one);
    ``may_be_legacy(block)`` says whether lines read by runs (the one-pass decoders refused them)
    may carry the legacy flag.
    The cyclic GC is paused while the entries are built. O(size), the file read once."""
    with collector_paused():
        return _stream(fd, head, may_be_legacy)


def _stream(
    fd: int, head: Callable[[bytes], object], may_be_legacy: Callable[[bytes], bool]
) -> tuple[list[Entry], int] | None:
    read = io.FileIO(fd, closefd=False).readinto
    buf = bytearray(_BLOCK)
    view = memoryview(buf)
    out: list[Entry] = []
    fill = total = 0
    prev: str | None = None  # None: the session_init line is still to come
    while True:
        if fill == len(buf):  # one line longer than the buffer: grow it
            buf = buf + bytes(len(buf))
            view = memoryview(buf)
        k = read(view[fill:])
        if not k:
            return (out, total) if fill == 0 and prev is not None else None  # else a torn tail, or no line
        fill += k
        total += k
        end = buf.rfind(b"\n", 0, fill) + 1
        if not end:
            continue
        start = 0
        if prev is None:
            start = buf.find(b"\n", 0, end) + 1
            head(bytes(view[: start - 1]))
            prev = ""
        if end > start:
            prev = _block(buf, view, start, end, prev, out, may_be_legacy)
            if prev is None:
                return None
        rest = fill - end
        view[:rest] = bytes(view[end:fill])
        fill = rest


def _block(
    buf: bytearray,
    view: memoryview,
    start: int,
    end: int,
    prev: str,
    out: list[Entry],
    may_be_legacy: Callable[[bytes], bool],
) -> str | None:
    """Decode the whole lines ``buf[start:end]`` into ``out``, settled after ``prev``; return the last
    id, or ``None`` when they are not one entry a line that the fast steps take."""
    chunk = view[start:end]
    spelled = buf.find(b"\x7f", start, end) >= 0 and buf.find(_EXTRA_BYTES, start, end) >= 0
    part = None if spelled else strict_chunk(chunk)
    if part is None:
        part = lenient_chunk(chunk, spelled, lambda: not may_be_legacy(bytes(chunk)))
        if part is None:
            return None
    if len(part) != _lines(chunk):  # blank lines, an object over lines: the general path
        return None
    got = settle(part, prev)
    if got is not None:
        out += part
    return got


def _lines(chunk: memoryview) -> int:
    """Return the number of newlines in ``chunk``: the bytes a copy of it loses without them (two C
    passes, ~17 µs for 256 KB against ~50-90 for one ``find`` a line or a ``count``)."""
    part = bytes(chunk)
    return len(part) - len(part.replace(b"\n", b""))
