"""A session's in-memory log and the one write path to its store (the agent's bookkeeping)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from itertools import repeat

import msgspec

from ..errors import DurableError
from ..session import Entry, MessageEntry, Store, is_ephemeral, new_id, now
from ..session.compact import untrack
from ..session.labels import LABEL_KIND, Labels
from .active import ActivePath
from .inputs import text


class Log:
    """The entries of session ``session_id`` in ``store`` as this process knows them.

    ``entries`` in append order (ephemeral ones included: they get an id but
    are never stored, rule R8), ``by_id`` the id index, :attr:`labels` the
    session's labels, ``active`` the cached active path and its model view,
    ``lock`` the lock every commit takes (a fan-out's runs commit from
    threads). Only :meth:`commit` writes.
    """

    def __init__(self, store: Store, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.entries: list[Entry] = []
        self.by_id: dict[str, Entry] = {}
        self._labels: Labels | None = Labels()  # None: a loaded log's, found when first asked for
        self.active = ActivePath(self.by_id)
        self.lock = threading.RLock()

    @property
    def labels(self) -> Labels:
        """The session's labels (:class:`~durable_nb.session.labels.Labels`). A loaded log's are found
        the first time they are asked for: one pass over the log at C speed, ~0.1 µs an entry (only
        custom entries of the label kind can be labels); O(1) after, each remembered entry taken in."""
        if self._labels is not None:
            return self._labels
        with self.lock:  # the first time only: a commit's remember() may not add to it meanwhile
            if self._labels is None:
                found = Labels()
                if not all(map(MessageEntry.__instancecheck__, self.entries)) and LABEL_KIND in map(
                    getattr, self.entries, repeat("kind"), repeat(None)
                ):
                    for e in self.entries:
                        if type(e) is not MessageEntry and getattr(e, "kind", None) == LABEL_KIND:
                            found.add(e)
                self._labels = found
            return self._labels

    def prepare(self, entries: Sequence[Entry | str], parent: str | None = None) -> list[Entry]:
        """Copy the input with fresh ids, timestamps and parents (the caller's objects are untouched).

        A ``str`` is taken as :func:`~durable_nb.durable.text`. Each durable
        entry's parent is the previous durable entry (the first's is
        ``parent``, by default the leaf); an ephemeral entry hangs off the
        chain as it is at that point and never becomes a parent. Raises
        :class:`DurableError` for anything that is not an entry. O(len(entries)).
        """
        out: list[Entry] = []
        parent = self.active.leaf_id if parent is None else parent
        for e in entries:
            if isinstance(e, str):
                e = text(e)
            if not isinstance(e, Entry):
                raise DurableError(
                    f"run input must be entries (durable.text(...), durable.meta(...)); got {type(e).__name__}"
                )
            c = msgspec.structs.replace(e, id=new_id(), parent_id=parent, created_at=now())
            out.append(c)
            if not is_ephemeral(c):
                parent = c.id
        return out

    def commit(self, entries: list[Entry], move: bool = True, halt: threading.Event | None = None) -> list[Entry]:
        """The one write path: persist, then remember, then advance the leaf. Returns the durable entries.

        ``entries`` come from :meth:`prepare` (or are built the same way). The
        durable ones go to the store in one append; if that raises, nothing
        changes in memory and the error propagates. Then every entry joins
        the log and the leaf moves to the last durable entry, growing the
        cached active path in place (``move=False``: the leaf stays; a
        fan-out's variants grow branches beside it). Commits are serialised
        by :attr:`lock`; a set ``halt`` (checked under it, see
        :func:`~durable_nb.durable.fanout.drive`) refuses the commit with
        ``KeyboardInterrupt``. O(len(entries)) beyond the store's own cost.
        """
        durable = [e for e in entries if not is_ephemeral(e)]
        with self.lock:
            if halt is not None and halt.is_set():
                raise KeyboardInterrupt("stopped: nothing more is written")
            if durable:
                self.store.append_entries(self.session_id, durable)
            for e in entries:
                self.remember(e)
            if move:
                self.active.extend(durable)
        return durable

    def load(self, loaded: list[Entry]) -> None:
        """Take a session's entries as the store returned them into an empty log (what :meth:`remember`
        does for each, in one pass at C speed when the ids are distinct: ~0.2 µs an entry; its
        :attr:`labels` are found when first asked for). :attr:`entries` then leaves the cyclic
        GC's walks (:data:`~durable_nb.session.compact.untrack`)."""
        if self.entries or len(by_id := {e.id: e for e in loaded}) != len(loaded):
            for e in loaded:  # duplicate ids: the general rule
                self.remember(e)
            return
        self.entries.extend(loaded)
        if untrack is not None:  # a loaded session's list stays out of the collector's walks
            untrack(self.entries)
        self.by_id.update(by_id)
        self._labels = None

    def remember(self, e: Entry) -> None:
        """Add an entry already in the store (or ephemeral) to the log; the leaf stays. O(1). Callers hold
        :attr:`lock` (a commit does)."""
        if e.id in self.by_id or self.active.starts_below(e.id):
            self.active.invalidate()  # the id resolves differently now: recompute the path
        self.entries.append(e)
        self.by_id[e.id] = e
        if self._labels is not None:  # else found with the others when first asked for
            self._labels.add(e)
