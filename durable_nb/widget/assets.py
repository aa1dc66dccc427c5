"""Where the front end's files are: they ship inside the package, in ``durable_nb/static/``."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import DurableError

STATIC = Path(__file__).resolve().parent.parent / "static"


NOT_BUILT = (
    "durable_nb's front end is not built in this checkout: run ./dev build (it bundles js/ into durable_nb/static/)"
)


def asset(name: str) -> Path:
    """Return the path of the front-end file ``name`` (``widget.js``, ``widget.css``, ``export.js``): the
    esbuild bundle of ``js/widget``, which the wheel ships and ``./dev build`` makes in a checkout. O(1)."""
    return STATIC / name


def built(name: str) -> str:
    """Return the text of the built front-end file ``name``; raise ``DurableError`` (:data:`NOT_BUILT`)
    in a checkout never built."""
    try:
        return asset(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DurableError(NOT_BUILT) from None


def front_end(name: str) -> Path | str:
    """Return the built file ``name`` for anywidget; in a checkout never built, a module that says
    :data:`NOT_BUILT` in one line where the widget would be (and an empty stylesheet). O(1)."""
    path = asset(name)
    if path.is_file():
        return path
    if name.endswith(".css"):
        return ""
    return (
        "export default { render({ el }) { const p = document.createElement('div'); "
        f"p.className = 'dnb-not-built'; p.textContent = {json.dumps(NOT_BUILT)}; el.append(p); }} }};\n"
    )
