"""Safe placeholder filling, shared by notebook cells (``{{name}}``) and evaluation templates.

The rules (see :mod:`durable_nb.notebook.interpolate` for the notebook's
syntax): a placeholder names a dotted identifier; attributes are read
statically (:func:`inspect.getattr_static`), so no property,
``__getattr__`` or other descriptor code runs; attributes the interpreter
stores (``__slots__`` members, fields of built-in types) are read. The value
is inserted as ``str(value)``. Refused, each with one line
(:class:`InterpolationError`): names and attributes starting with ``_``, the
environment (``os.environ`` or a dict copied from it), and any value whose
text holds an API key or token from the environment. Pure: imports nothing
from Jupyter.
"""

from __future__ import annotations

import inspect
import os
import re
import types
from collections.abc import Callable, Mapping, Sequence

from .errors import DurableError
from .models.failures import env_secrets

# descriptors implemented by the interpreter: reading them runs no Python code of anyone's
_BUILTIN_DESCRIPTORS = (types.MemberDescriptorType, types.GetSetDescriptorType)


class InterpolationError(DurableError):
    """A placeholder that cannot be filled: missing, private, code-running, the environment or a key."""


def fill(
    text: str,
    namespace: Mapping[str, object],
    pattern: re.Pattern[str],
    missing: Callable[[str, str], str],
    secrets: Sequence[str] | None = None,
) -> str:
    """Return ``text`` with every match of ``pattern`` replaced from ``namespace``.

    ``pattern``'s group ``esc`` is an optional escaping backslash (an escaped
    match is kept without it), group ``name`` the dotted name. ``missing(head, dotted)``
    gives the message for a name not in ``namespace``; ``secrets`` are the
    texts no value may hold (default: the environment's keys, read once per
    call: a caller filling many texts reads them once). Raises
    :class:`InterpolationError` (one line) for that and for a refused value
    (see the module docs). O(len(text)) plus ``str()`` of each value.
    """

    keys = env_secrets() if secrets is None else secrets

    def replace(m: re.Match[str]) -> str:
        escaped, dotted = m.group("esc"), m.group("name")
        if escaped:
            return m.group(0)[1:]
        return value_text(dotted, namespace, re.sub(r"\s+", "", m.group(0)), missing, keys)

    return pattern.sub(replace, text)


def value_text(
    dotted: str,
    namespace: Mapping[str, object],
    shown: str,
    missing: Callable[[str, str], str],
    secrets: Sequence[str] = (),
) -> str:
    """Return the text of ``dotted`` (``name`` or ``name.attr...``) read from ``namespace`` by the rules above.

    ``shown`` is the placeholder as written (for the messages), ``secrets`` the texts the value may not
    hold. Raises :class:`InterpolationError`.
    """
    head, *attrs = dotted.split(".")
    private = next((n for n in (head, *attrs) if n.startswith("_")), None)
    if private is not None:
        raise InterpolationError(
            f"{shown}: {private!r} starts with _ and is not interpolated (private or internal); "
            f"put the value in a variable first"
        )
    if head not in namespace:
        raise InterpolationError(missing(head, dotted))
    value = namespace[head]
    for i, a in enumerate(attrs):
        value = _read(value, a, shown, ".".join([head, *attrs[:i]]))
    if _is_environment(value):
        raise InterpolationError(f"{shown}: the environment variables are never interpolated whole (they hold keys)")
    out = str(value)
    if any(s in out for s in secrets):
        raise InterpolationError(f"{shown}: its text holds an API key or token from the environment; not interpolated")
    return out


def _read(value: object, attr: str, shown: str, where: str) -> object:
    """Return ``value.attr`` read statically; :class:`InterpolationError` when missing or only code could produce it."""
    try:
        raw = inspect.getattr_static(value, attr)
    except AttributeError:
        raise InterpolationError(f"{shown}: {where} ({type(value).__name__}) has no attribute {attr!r}") from None
    in_instance = attr in _instance_dict(value)
    if in_instance or not hasattr(type(raw), "__get__"):
        return raw
    if isinstance(raw, _BUILTIN_DESCRIPTORS):
        return getattr(value, attr)  # a slot or a built-in type's field: the interpreter reads it
    kind = "property" if isinstance(raw, property) else "method" if callable(raw) else "computed attribute"
    raise InterpolationError(
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
