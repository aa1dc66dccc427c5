"""The notebook's session identity: the session id the notebook file keeps in its metadata.

The durable_nb front-end extension (JupyterLab 4, Notebook 7) keeps
``metadata.durable_nb = {"session": <id>, "path": <where it was last seen>}``
in the notebook file, creates it at the first cell run, and adds it to
**every execute request's metadata** under the key ``"durable_nb"`` (next to
the cell's own metadata that JupyterLab already sends). So the kernel knows
the notebook's session before any cell runs, whatever the file is called now:
a rename or a kernel restart keeps the session, and a new notebook gets a new
id, never another notebook's session. A copy of a notebook (Duplicate, Copy,
``cp``) is noticed by the extension when it opens: the copy gets a new id and
``"fork_of": <original id>``, and the kernel forks the original's active path
into the new session on first use (the original is never appended to).

Front ends without the extension (VS Code, terminal IPython) send nothing:
the session is then named after the notebook's file (``__session__``), as
before, and ``%durable use`` picks another. :func:`durable_nb.run_notebook`
sends the notebook's ``metadata.durable_nb`` as the extension does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..session import notebook_session_id

KEY = "durable_nb"
DEFAULT_SESSION = "default"


@dataclass(frozen=True)
class Identity:
    """The notebook's ``session`` id and, for a copy not yet forked, the original's id (``fork_of``, else ``""``)."""

    session: str
    fork_of: str = ""


def identity(request_metadata: Mapping) -> Identity | None:
    """Return the identity an execute request carries under ``"durable_nb"``, or ``None``.

    ``None`` when the front end sent none (no extension) or the value is not a
    mapping with a non-empty string ``session``; a ``fork_of`` that is not a
    string, or equals ``session``, is ignored. Ids are checked later, by the
    store (an unsafe id is a one-line error there). Cost: a dict lookup.
    """
    raw = request_metadata.get(KEY) if isinstance(request_metadata, Mapping) else None
    if not isinstance(raw, Mapping):
        return None
    session, fork_of = raw.get("session"), raw.get("fork_of")
    if not isinstance(session, str) or not session:
        return None
    fork_of = fork_of if isinstance(fork_of, str) and fork_of != session else ""
    return Identity(session, fork_of)


def default_session_name(user_ns: Mapping[str, object], environ: Mapping[str, str] = os.environ) -> str:
    """Return the notebook's default session id.

    The notebook's file name without ``.ipynb`` (from ``__session__`` in the
    namespace, which ipykernel sets from ``JPY_SESSION_NAME``, or that
    variable itself), made safe by :func:`~durable_nb.session.notebook_session_id`
    (the rule existing notebooks' sessions were named by);
    ``"default"`` when the kernel does not know its notebook.
    """
    raw = user_ns.get("__session__") or environ.get("JPY_SESSION_NAME") or ""
    name = Path(str(raw)).name if raw else ""
    name = name[: -len(".ipynb")] if name.endswith(".ipynb") else name
    return notebook_session_id(name, DEFAULT_SESSION)
