"""Where the front end's files are: they ship inside the package, in ``durable_nb/static/``."""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "static"


def asset(name: str) -> Path:
    """Return the path of the front-end file ``name`` (``widget.js``, ``widget.css``, ``export.js``). O(1)."""
    return STATIC / name
