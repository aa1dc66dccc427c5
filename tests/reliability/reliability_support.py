"""Helpers shared by the reliability tests: how to start a Python child on this checkout.

(A plain module, not a conftest: ``tests/core`` has its own conftest.)
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support import ROOT, child_env  # noqa: F401  (child_env: used by the crash and concurrency tests)

HERE = Path(__file__).resolve().parent


NOOP_LOCK = "DURABLE_NB_TEST_NOOP_LOCK"
FSYNC = "DURABLE_NB_TEST_FSYNC"


def apply_lock_switch() -> None:
    """In a child: when ``$DURABLE_NB_TEST_NOOP_LOCK`` is set, make the JSONL store's
    lock do nothing (as ``flock`` does on some network file systems); when
    ``$DURABLE_NB_TEST_FSYNC`` is set, every JSONL store the child opens is
    ``JsonlStore(root, fsync=True)``."""
    from durable_nb.session import jsonlstore

    if os.environ.get(NOOP_LOCK):
        import contextlib

        jsonlstore.exclusive = contextlib.nullcontext
    if os.environ.get(FSYNC):
        plain = jsonlstore.JsonlStore.__init__

        def with_fsync(self, root, *, fsync: bool = True) -> None:
            plain(self, root, fsync=True)

        jsonlstore.JsonlStore.__init__ = with_fsync  # type: ignore[method-assign]


def in_child(fn, *, fsize: int | None = None, as_nobody: bool = False) -> str:
    """Run ``fn()`` in a forked child under a real fault; return what happened as one line.

    ``fsize`` caps the size of any file the child writes (``RLIMIT_FSIZE``: a
    write past it stops part-way and fails with ``EFBIG``, as on a full disk;
    Python ignores ``SIGXFSZ``). ``as_nobody`` runs the child as user
    ``nobody`` when this process is root (root ignores permission bits, so a
    read-only folder is only read-only for another user). Returns
    ``"ok <repr of the result>"`` or ``"<ExceptionType>: <message>"``.
    Everything ``fn`` needs must already be imported (the child may not be
    able to read the interpreter's files).
    """
    import resource
    import traceback

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(r)
            if as_nobody and os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            if fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            try:
                out = f"ok {fn()!r}"
            except BaseException as e:
                out = f"{type(e).__name__}: {e}"
                if not isinstance(e, Exception):
                    out += "\n" + traceback.format_exc()
            os.write(w, out.encode("utf-8", "backslashreplace"))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        out = fh.read().decode()
    os.waitpid(pid, 0)
    return out
