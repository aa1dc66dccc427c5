"""Reading ahead on a thread: a store's rows come from the database while the caller decodes the ones before.

What the SQL stores' reloads share (:mod:`.sqliteload`, :mod:`.pgload`). The
database's part of a reload waits outside the GIL (SQLite joining a chunk
inside ``sqlite3_step``, libpq waiting for the server's next rows), and the
decode holds it (msgspec), so with a second core the two overlap and the
wall time tends to the larger of them instead of their sum (CPU time stays
their sum). The caller holds whatever lock guards the connection for the
whole time, and uses the connection again only after :meth:`ReadAhead.stop`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import closing
from typing import Any

_END = object()  # the thread's last item: every item was queued


class ReadAhead:
    """Iterate the items of the generator ``items()`` run on a daemon thread named ``name``, at most
    ``ahead`` of them waiting; an exception the thread met is raised by the iteration, after the items
    before it. :meth:`stop` (always, in a ``finally``) ends the thread: after it the connection the
    generator used is the caller's again. Starting the thread costs ~0.1 ms."""

    def __init__(self, items: Callable[[], Generator[Any, None, None]], name: str, ahead: int = 2) -> None:
        self._queue: queue.Queue = queue.Queue(ahead)
        self._stopping = self._ended = False
        self._thread = threading.Thread(target=self._run, args=(items,), name=name, daemon=True)
        self._thread.start()

    def _run(self, items: Callable[[], Generator[Any, None, None]]) -> None:
        end: object = _END
        try:
            with closing(items()) as made:  # closed on this thread, so a stream left early is cleaned up here
                for item in made:
                    if self._stopping:
                        break
                    self._queue.put(item)
        except BaseException as e:  # raised by the iterating thread
            end = e
        finally:
            self._queue.put(end)

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        if self._ended:
            raise StopIteration
        item = self._queue.get()
        if isinstance(item, BaseException):
            self._ended = True
            raise item
        if item is _END:
            self._ended = True
            raise StopIteration
        return item

    def stop(self) -> None:
        """Stop the generator after the item under way (the items not taken are dropped) and wait for the
        thread. The queue is drained to its last item, so the thread never waits on it."""
        self._stopping = True
        while not self._ended:
            item = self._queue.get()
            self._ended = item is _END or isinstance(item, BaseException)
        self._thread.join()
