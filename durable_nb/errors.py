"""The package's exceptions.

Every error durable_nb raises on purpose derives from :class:`DurableError`,
and its message says what to do next. The store-contract errors keep the
builtin base a caller may already catch (``KeyError``, ``ValueError``) too.
"""

import difflib
from collections.abc import Iterable


def suggest(word: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the choice nearest ``word``, or ``""`` when none is near.

    O(len(choices) * len(word)**2) at worst (difflib).
    """
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f" (did you mean {near[0]!r}?)" if near else ""


class DurableError(Exception):
    """Base of durable_nb's own errors; the message says what to do."""


class SessionNotFound(DurableError, KeyError):
    """No session with that id exists in the store."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "session not found"


class SessionExists(DurableError, ValueError):
    """A session with that id already exists in the store."""


class InvalidSessionId(DurableError, ValueError):
    """A session id that is empty or could escape the store folder."""


class CorruptLog(DurableError):
    """A stored log that cannot be decoded (names the file and line)."""


class LogChanged(DurableError):
    """A session's log was truncated or replaced since this store read or wrote it;
    nothing was appended (appending would leave a log that no longer opens, or
    entries whose parents are gone)."""


class StoreWriteError(DurableError):
    """The store could not write (read-only folder, full disk, ...); nothing of the
    batch was kept. The message names the file and the system's reason."""


class EphemeralNotStored(DurableError, ValueError):
    """An ephemeral entry was given to a store: a store never keeps one (rule R8)."""


class UnknownEntry(DurableError, KeyError):
    """An entry id that is not in the session's log."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown entry"


class AgentClosed(DurableError):
    """The agent was closed; create a new one to run again."""


class ModelError(DurableError):
    """A model could not be built or failed; the message names the cause."""
