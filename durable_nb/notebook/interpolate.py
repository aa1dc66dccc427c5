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
- A value is inserted as ``str(value)``; only attribute lookups run, never
  calls or indexing.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from IPython.core.error import UsageError

PLACEHOLDER = re.compile(r"(\\?)\{\{\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*\}\}")


def interpolate(text: str, namespace: Mapping[str, object]) -> str:
    """Return ``text`` with every ``{{name}}`` / ``{{name.attr}}`` replaced from ``namespace``.

    Raises ``UsageError`` for a name not in ``namespace`` or a missing
    attribute. Text without placeholders is returned as is. O(len(text)).
    """

    def replace(m: re.Match[str]) -> str:
        escaped, dotted = m.group(1), m.group(2)
        if escaped:
            return m.group(0)[1:]
        head, *attrs = dotted.split(".")
        if head not in namespace:
            near = difflib.get_close_matches(head, [k for k in namespace if not k.startswith("_")], n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise UsageError(
                f"{{{{{dotted}}}}}: no variable {head!r} in the notebook{hint}; "
                f"write \\{{{{{dotted}}}}} for literal braces, or use --no-interpolate"
            )
        value = namespace[head]
        for i, a in enumerate(attrs):
            try:
                value = getattr(value, a)
            except AttributeError:
                where = ".".join([head, *attrs[:i]])
                raise UsageError(f"{{{{{dotted}}}}}: {where} ({type(value).__name__}) has no attribute {a!r}") from None
        return str(value)

    return PLACEHOLDER.sub(replace, text)
