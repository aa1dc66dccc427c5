"""The browser tests' contents manager: jupyter_server's own, its folder listings atomic with renames.

jupyter_server (2.21) lists a folder name by name, awaiting a worker thread between a name's
``lstat`` and its model; a file renamed or deleted in between makes the model's ``get`` raise 404,
and the whole listing fails with it (a file gone before its ``lstat`` is skipped). JupyterLab's
first save of an untitled notebook saves it and at once renames it, while the file browser lists
the folder again (the save changed it), so now and then the browser got that 404 and showed
"Directory not found" over the notebook (1 in 5 newcomer runs here, ``tests/e2e/test_newcomer.py``).
That race is JupyterLab's and jupyter_server's, not durable_nb's: here a listing, a rename and a
delete wait for each other, so a listing sees the folder before or after a rename, never halfway.
:class:`~tests.e2e.lab.LabServer` runs its servers with this class.
"""

from __future__ import annotations

import asyncio

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager


class ListingContentsManager(AsyncLargeFileManager):
    """jupyter_server's default contents manager, with listings, renames and deletes one at a time."""

    _changing: asyncio.Lock | None = None

    def _lock(self) -> asyncio.Lock:
        if self._changing is None:  # made in the server's event loop, on first use
            self._changing = asyncio.Lock()
        return self._changing

    async def _dir_model(self, path, content=True):
        if not content:  # a folder inside a listing: no names read, nothing to wait for (and no re-entry)
            return await super()._dir_model(path, content=content)
        async with self._lock():
            return await super()._dir_model(path, content=content)

    async def rename_file(self, old_path, new_path):
        async with self._lock():
            return await super().rename_file(old_path, new_path)

    async def delete_file(self, path):
        async with self._lock():
            return await super().delete_file(path)
