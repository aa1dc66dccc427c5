"""Sessions you can keep and share.

- :mod:`.page`: one self-contained, read-only HTML page of a session (the
  widget's own front end with the data inside).
- :mod:`.handout`: a Markdown handout of a session.
- :mod:`.export`: :func:`export` writes any of them (or the JSONL log) by suffix.
"""

from .export import FORMATS, export, exported_line, jsonl_bytes

__all__ = ["FORMATS", "export", "exported_line", "jsonl_bytes"]
