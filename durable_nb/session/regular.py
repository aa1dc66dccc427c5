"""Store readers open regular files only: a FIFO, a device or a socket in a store folder is refused.

A FIFO named ``x.jsonl`` blocks ``open()`` forever (no writer comes); a
symlink to ``/dev/zero`` reads without end. Every store reader opens
through :func:`open_regular`, which opens without blocking
(``O_NONBLOCK``), checks the opened file itself (``fstat``: no race with a
rename) and refuses anything that is not a regular file with one
:class:`~durable_nb.errors.CorruptLog` line naming it. A symlink to a
regular file is fine.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import CorruptLog

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def kind(mode: int) -> str:
    """Return what a file of ``mode`` is, in words (``"a FIFO"``, ``"a folder"``...)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def refusal(f: str | os.PathLike[str], mode: int) -> CorruptLog:
    """Return the one-line error for a store file ``f`` that is not a regular file (``mode`` from stat)."""
    return CorruptLog(f"{f} is {kind(mode)}, not a regular file: a store reads regular files only")


def open_regular(f: str | os.PathLike[str], flags: int = os.O_RDONLY) -> int:
    """Return a file descriptor of ``f`` opened with ``flags``, once it is known to be a regular file.

    Never blocks on a FIFO (opened ``O_NONBLOCK``, which is then cleared).
    Raises :class:`CorruptLog` for anything but a regular file, and
    ``OSError`` (``FileNotFoundError`` included) as ``os.open`` does."""
    fd = os.open(f, flags | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise refusal(f, st.st_mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_regular(f: Path) -> None:
    """Raise :class:`CorruptLog` when ``f`` exists and is not a regular file (symlinks followed);
    nothing when it is one or does not exist. One ``stat``."""
    try:
        mode = f.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISREG(mode):
        raise refusal(f, mode)
