"""Notes: a note cell's text, kept in the log and shown in transcripts, never sent to the model.

A note is read as its ``body`` (listings show it, not the kind); replayed
and copied as it is.
"""

from __future__ import annotations

from ..session.entry import CustomEntry, register_custom
from ..session.kinds import Kind, register

NOTE_KIND = "note"


class Note(CustomEntry):
    """A note cell: kept in the log and shown in transcripts, never sent to the model.

    ``body`` is the note's text, ``cell`` the id of the cell that wrote it.
    """

    kind: str = NOTE_KIND
    body: str = ""
    cell: str = ""


register_custom(NOTE_KIND, Note)


def _text(entry: CustomEntry) -> str:
    body = getattr(entry, "body", None)
    return body if isinstance(body, str) else entry.kind


KIND = register(Kind(NOTE_KIND, shown="transcript", text=_text))
