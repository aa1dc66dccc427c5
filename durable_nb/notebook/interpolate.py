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
holds an API key or token from the environment.
"""

from __future__ import annotations

import difflib
import inspect
import os
import re
import types
from collections.abc import Mapping

from IPython.core.error import UsageError

from ..models.failures import env_secrets

PLACEHOLDER = re.compile(r"(\\?)\{\{\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*\}\}")
# descriptors implemented by the interpreter: reading them runs no Python code of anyone's
_BUILTIN_DESCRIPTORS = (types.MemberDescriptorType, types.GetSetDescriptorType)


def interpolate(text: str, namespace: Mapping[str, object]) -> str:
    """Return ``text`` with every ``{{name}}`` / ``{{name.attr}}`` replaced from ``namespace``.

    Raises ``UsageError`` (one line) for a name not in ``namespace``, a
    missing attribute, or a refused one (see the module docs: ``_`` names,
    properties and other code-running attributes, the environment, text
    holding a key). Text without placeholders is returned as is.
    O(len(text)) plus ``str()`` of each value.
    """

    def replace(m: re.Match[str]) -> str:
        escaped, dotted = m.group(1), m.group(2)
        if escaped:
            return m.group(0)[1:]
        head, *attrs = dotted.split(".")
        shown = f"{{{{{dotted}}}}}"
        private = next((n for n in (head, *attrs) if n.startswith("_")), None)
        if private is not None:
            raise UsageError(
                f"{shown}: {private!r} starts with _ and is not interpolated (private or internal); "
                f"put the value in a variable first"
            )
        if head not in namespace:
            near = difflib.get_close_matches(head, [k for k in namespace if not k.startswith("_")], n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise UsageError(
                f"{shown}: no variable {head!r} in the notebook{hint}; "
                f"write \\{{{{{dotted}}}}} for literal braces, or use --no-interpolate"
            )
        value = namespace[head]
        for i, a in enumerate(attrs):
            value = _read(value, a, shown, ".".join([head, *attrs[:i]]))
        if _is_environment(value):
            raise UsageError(f"{shown}: the environment variables are never interpolated whole (they hold keys)")
        out = str(value)
        if any(s in out for s in env_secrets()):
            raise UsageError(f"{shown}: its text holds an API key or token from the environment; not interpolated")
        return out

    return PLACEHOLDER.sub(replace, text)


def _read(value: object, attr: str, shown: str, where: str) -> object:
    """Return ``value.attr`` read statically; ``UsageError`` when missing or only code could produce it."""
    try:
        raw = inspect.getattr_static(value, attr)
    except AttributeError:
        raise UsageError(f"{shown}: {where} ({type(value).__name__}) has no attribute {attr!r}") from None
    in_instance = attr in _instance_dict(value)
    if in_instance or not hasattr(type(raw), "__get__"):
        return raw
    if isinstance(raw, _BUILTIN_DESCRIPTORS):
        return getattr(value, attr)  # a slot or a built-in type's field: the interpreter reads it
    kind = "property" if isinstance(raw, property) else "method" if callable(raw) else "computed attribute"
    raise UsageError(
        f"{shown}: {where}.{attr} is a {kind}; interpolation runs no code, only plain attributes are read "
        f"(put its value in a variable first)"
    )


def _instance_dict(value: object) -> Mapping[str, object]:
    try:
        d = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return {}
    return d if isinstance(d, (dict, types.MappingProxyType)) and not isinstance(value, type) else {}


def _is_environment(value: object) -> bool:
    """Return whether ``value`` is ``os.environ`` (or ``environb``) or a dict copied from it."""
    if isinstance(value, os._Environ):
        return True
    if type(value) is not dict or len(value) < 3:
        return False
    same = sum(1 for k, v in value.items() if isinstance(k, str) and os.environ.get(k) == v)
    return same >= 3 and same * 2 >= len(value)
