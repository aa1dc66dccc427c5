"""Annotations of read-only sources: kept beside them, in a sidecar session of a store you name.

An imported log (a Claude Code transcript, a Codex rollout, a pi session, a
durable_nb log opened as a file) is never written. :func:`annotate` appends
its annotations to the session :func:`sidecar_id` names in ``store`` (your
notebook's ``.durable`` folder, a ``.db`` file, PostgreSQL): one sidecar
session per source file and session, ``annotations-<file stem>-<12 hex>``,
the hex a hash of the file's absolute path and the session id. Each entry
is an :class:`~durable_nb.kinds.annotation.AnnotationEntry` whose
``source`` is that absolute path, ``source_session`` the session and
``target_id`` the entry's id in the source. Moving the log file moves its
key: its annotations stay under the old path. :func:`durable_nb.annotations`
with ``store=`` reads them back beside the source's own.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from contextlib import nullcontext
from pathlib import Path

from .durable.agent import SUGGEST_IDS
from .errors import SessionNotFound
from .kinds.annotation import AnnotationEntry, annotation
from .session import Store, check_store_path, new_id, now, open_store
from .session.labels import labels, resolve
from .sources import closing, read


def sidecar_id(file: str | os.PathLike[str], session_id: str) -> str:
    """Return the id of the sidecar session holding the annotations of ``session_id`` read from ``file``. O(1)."""
    key = _key(file)
    stem = re.sub(r"[^\w.\-]+", "-", Path(key).stem)[:60].strip("-.") or "log"
    digest = hashlib.sha256(f"{key}\0{session_id}".encode()).hexdigest()[:12]
    return f"annotations-{stem}-{digest}"


def _key(file: str | os.PathLike[str]) -> str:
    return str(Path(file).expanduser().resolve())


def _store(store: Store | str | os.PathLike[str], *, existing: bool) -> closing | nullcontext[Store]:
    """The store to use, closed afterwards when opened here from a string.

    A string is checked first (:func:`~durable_nb.session.check_store_path`): a typo in it is one line
    naming the path, never a new store in a new folder, nor, when reading (``existing``), an empty answer.
    """
    if isinstance(store, Store):
        return nullcontext(store)
    check_store_path(store, existing=existing)
    return closing(open_store(store))


def annotate(
    source: object,
    entry_id: str,
    *,
    store: Store | str | os.PathLike[str],
    note: str | None = None,
    score: float | None = None,
    tags: Iterable[str] = (),
    by: str | None = None,
    session: str | None = None,
) -> AnnotationEntry:
    """Annotate entry ``entry_id`` of a read-only ``source`` (a log file or an
    :class:`~durable_nb.importers.Imported`); the annotation is kept in ``store``'s sidecar session
    (:func:`sidecar_id`), the source file is never written. Return the stored annotation.

    ``entry_id`` is an id, a label or a 4+ character prefix; ``session``
    picks a session when the source holds several. The checks and their
    one-line errors are :meth:`durable_nb.durable.Agent.annotate`'s; a source
    that is a store's own session is refused (annotate it with its agent).
    A store string that does not exist yet is made in an existing folder
    only (a missing folder is one line, most likely a typo).
    Cost: one read of the source, one append to ``store``.
    """
    from .errors import DurableError

    found = read(source, session)
    if len(found) != 1:
        ids = ", ".join(s.session_id for s in found)
        raise DurableError(f"{source!r} holds {len(found)} sessions ({ids}): pick one with session=")
    s = found[0]
    if not s.file:
        raise DurableError(f"session {s.session_id!r} is in a store: annotate it with Agent(...).annotate")
    by_id = {e.id: e for e in s.entries}
    target = by_id[resolve(entry_id, by_id, labels(s.entries), s.session_id, SUGGEST_IDS)]
    entry = annotation(
        target, note=note, score=score, tags=tags, by=by, source=_key(s.file), source_session=s.session_id
    )
    entry.id, entry.parent_id, entry.created_at = new_id(), "", now()
    sid = sidecar_id(s.file, s.session_id)
    with _store(store, existing=False) as st:
        try:
            st.append_entries(sid, [entry])
        except SessionNotFound:
            st.create_session(sid, entries=[entry])
    return entry


def sidecar_entries(store: Store | str | os.PathLike[str], file: str, session_id: str) -> list[AnnotationEntry]:
    """Return the annotations ``store`` keeps for ``session_id`` read from ``file``, in log order
    (none when it keeps no sidecar for it; a store string naming no store is one line, never none).
    Cost: one load of the sidecar session."""
    try:
        with _store(store, existing=True) as st:
            entries = st.load_entries(sidecar_id(file, session_id))
    except SessionNotFound:
        return []
    key = _key(file)
    return [e for e in entries if isinstance(e, AnnotationEntry) and e.source == key and e.source_session == session_id]
