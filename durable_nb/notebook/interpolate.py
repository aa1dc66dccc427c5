"""Put notebook variables into a cell's text: ``{{name}}`` and ``{{name.attr}}``.

The syntax is chosen so ordinary prompt text is never touched: only a
*double* brace pair around a dotted Python identifier is replaced
(``{{ name }}`` with spaces is the same). JSON (``{"a": {"b": 1}}``), dicts,
f-strings (``f"{x}"``), code braces (``if (x) { y(); }``) and
``{{ 1 + 2 }}`` contain no such pair and pass through unchanged.

- Escape: ``\\{{name}}`` gives the literal text ``{{name}}`` (the backslash
  is dropped).
- An unknown name or attribute is a ``UsageError`` naming it, the nearest
  variable, the escape and ``--no-interpolate``.

What runs: attributes are read statically (:func:`inspect.getattr_static`),
so no property, ``__getattr__``, ``__getattribute__`` or other descriptor
code of yours runs; an attribute that only such code could produce (a
property, a method, a custom descriptor) is refused. Attributes the
interpreter itself stores (``__slots__`` members, attributes of built-in
types such as ``date.year``) are read. Then the value is inserted as
``str(value)``, which runs its ``__str__`` (as ``print`` would). Never
calls, indexing or arithmetic. Refused, each with one line: names and
attributes starting with ``_`` (``{{x.__class__}}``), the environment
(``{{os.environ}}`` or a dict copied from it), and any value whose text
holds an API key or token from the environment. The rules themselves live
in :mod:`durable_nb.interpolation` (evaluation templates use them too).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from IPython.core.error import UsageError

from ..interpolation import InterpolationError, fill

PLACEHOLDER = re.compile(r"(?P<esc>\\?)\{\{\s*(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*\}\}")


def interpolate(text: str, namespace: Mapping[str, object]) -> str:
    """Return ``text`` with every ``{{name}}`` / ``{{name.attr}}`` replaced from ``namespace``.

    Raises ``UsageError`` (one line) for a name not in ``namespace``, a
    missing attribute, or a refused one (see the module docs: ``_`` names,
    properties and other code-running attributes, the environment, text
    holding a key). Text without placeholders is returned as is.
    O(len(text)) plus ``str()`` of each value.
    """

    def missing(head: str, dotted: str) -> str:
        near = difflib.get_close_matches(head, [k for k in namespace if not k.startswith("_")], n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return (
            f"{{{{{dotted}}}}}: no variable {head!r} in the notebook{hint}; "
            f"write \\{{{{{dotted}}}}} for literal braces, or use --no-interpolate"
        )

    try:
        return fill(text, namespace, PLACEHOLDER, missing)
    except InterpolationError as e:
        raise UsageError(str(e)) from None
