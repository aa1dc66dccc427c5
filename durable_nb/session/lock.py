"""An exclusive lock on an open file, so two processes appending to one log take turns.

POSIX systems use ``flock`` (the whole file, released when the descriptor is
closed); Windows uses ``msvcrt.locking`` on the file's first byte. Nothing
is imported that a platform lacks, so ``import durable_nb`` works on both.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
try:
    import msvcrt
except ImportError:  # POSIX
    msvcrt = None  # type: ignore[assignment]


@contextmanager
def exclusive(fd: int) -> Iterator[None]:
    """Hold an exclusive lock on the open file ``fd`` while the block runs, waiting for it if needed.

    Cooperating writers (every durable_nb process) exclude each other; a
    reader is never blocked. On a platform with neither ``fcntl`` nor
    ``msvcrt`` the block runs unlocked (one writer at a time is then the
    caller's business). Cost: one system call each way, plus the wait.
    """
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    elif msvcrt is not None:
        pos = os.lseek(fd, 0, os.SEEK_CUR)
        os.lseek(fd, 0, os.SEEK_SET)
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for about 10 s, then raises
                break
            except OSError:
                continue
        os.lseek(fd, pos, os.SEEK_SET)
        try:
            yield
        finally:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        yield
