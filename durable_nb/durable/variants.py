"""Variants of one turn (fan-out) or of a replay: which model, system prompt and settings, and their names.

A variant is a dict: ``model`` (anything :func:`durable_nb.models.build`
takes), ``system`` (a system prompt), ``label`` (a name of your choosing)
and any other key is a setting (``temperature``, ``max_tokens``, a provider
extra). On a magic's line variants are written as text, see
:func:`parse_variants`. The names given to the branches say what differs
between the variants (:func:`names`). Pure: nothing here builds a model or
writes an entry.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import DurableError
from ..models import ModelLike
from .settings import read_value

MAX_PART = 24  # characters of one value shown in a name
KEYS = ("model", "system", "label")  # a variant's keys besides settings


@dataclass(frozen=True)
class Variant:
    """One variant: ``model`` (``None``: the agent's), ``system`` (``None``: the
    session's), ``settings`` over the session's defaults, an explicit ``label``."""

    model: ModelLike = None
    system: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""


def as_variant(item: Variant | Mapping[str, Any] | str | Any) -> Variant:
    """Return ``item`` as a :class:`Variant`: a dict (see the module docs), or a bare model
    (a name, a callable, a model object). Raises :class:`DurableError` for a label with whitespace
    or a key that is a near miss of ``model``, ``system`` or ``label`` (``modle``: not sent as a setting)."""
    if isinstance(item, Variant):
        v = item
    elif isinstance(item, Mapping):
        rest = {str(k): x for k, x in item.items() if k not in KEYS}
        for k in rest:
            near = difflib.get_close_matches(k, KEYS, n=1, cutoff=0.8)
            if near:
                raise DurableError(f"unknown variant key {k!r} (did you mean {near[0]!r}?)")
        system = item.get("system")
        v = Variant(
            model=item.get("model"),
            system=None if system is None else str(system),
            settings=rest,
            label=str(item.get("label") or ""),
        )
    else:
        v = Variant(model=item)
    if v.label and (v.label != v.label.strip() or any(c.isspace() for c in v.label)):
        raise DurableError(f"a variant's label is one word without spaces, not {v.label!r}")
    return v


def parse_variants(text: str) -> list[dict[str, Any]]:
    """Return the variants written on a magic's line: ``"temperature=0 | temperature=1 max_tokens=50"``.

    Variants are separated by ``|``; each is ``KEY=VALUE`` pairs separated by
    spaces, quoted as in a shell when a value has spaces
    (``system="Answer in French"``). A value is read as JSON when it is JSON
    (``0.2``, ``true``), else kept as text. Keys: ``model``, ``system``,
    ``label`` or a setting. Raises :class:`DurableError` (one line) for a
    part without ``=``, an empty variant or unbalanced quotes. O(len(text)).
    """
    out = []
    for i, part in enumerate(_split_bars(text), 1):
        try:
            words = shlex.split(part)
        except ValueError as e:
            raise DurableError(f"variant {i} ({part.strip()!r}) cannot be read: {e}") from None
        if not words:
            raise DurableError(f"variant {i} is empty: write KEY=VALUE pairs between the | signs")
        v: dict[str, Any] = {}
        for w in words:
            key, eq, value = w.partition("=")
            if not eq or not key:
                raise DurableError(
                    f'variant {i}: {w!r} is not KEY=VALUE (like temperature=0, model=offline, system="Be brief")'
                )
            v[key] = value if key in ("model", "system", "label") else read_value(value)
        out.append(v)
    return out


def _split_bars(text: str) -> list[str]:
    """Split at ``|`` outside quotes."""
    parts: list[str] = []
    cur: list[str] = []
    quote = ""
    for c in text:
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "|":
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(c)
    parts.append("".join(cur))
    return parts


def model_word(spec: ModelLike) -> str:
    """Return a model spec as one short word: a name without its base URL, a function's name."""
    if spec is None or spec == "":
        return "default"
    if isinstance(spec, str):
        return spec.split("@http", 1)[0].strip() or spec
    return str(getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__)


def _word(text: str) -> str:
    """Return ``text`` as one word: whitespace runs become ``_``, cut to :data:`MAX_PART` characters."""
    w = re.sub(r"\s+", "_", text.strip())
    return w if len(w) <= MAX_PART else w[: MAX_PART - 1] + "…"


def describe(v: Variant, keys: Iterable[str]) -> str:
    """Return the part of a name that shows ``keys`` of ``v`` (``"model"``, ``"system"`` or a setting).

    A key the variant does not set is left out; nothing left gives ``"default"``.
    """
    parts = []
    for k in keys:
        if k == "model":
            parts.append(_word(model_word(v.model)))
        elif k == "system" and v.system is not None:
            parts.append("system=" + (_word(v.system) or "none"))
        elif k in v.settings:
            parts.append(f"{k}={_word(str(v.settings[k]))}")
    return ",".join(parts) or "default"


def names(
    variants: Sequence[Variant], marker: str, taken: Iterable[str] = (), keys: Sequence[str] | None = None
) -> list[str]:
    """Return one name per variant, ``<what differs>@<marker>`` (``offline@t3``, ``temperature=0@t3``).

    What differs: the model (as :func:`model_word`), the system prompt and
    each setting whose value is not the same in every variant; a variant's
    own ``label`` is used as it is. ``keys`` names what to show instead
    (a replay shows what it changed). When nothing differs (the same variant
    twice, to sample again) the model names them. A name already in
    ``taken`` or given twice gets ``.2``, ``.3``... so every name is new.
    O(variants × keys).
    """
    if keys is None:
        keys = differing(variants) or ["model"]
    used = set(taken)
    out = []
    for v in variants:
        base = v.label or f"{describe(v, keys)}@{marker}"
        name, n = base, 1
        while name in used:
            n += 1
            name = f"{base}.{n}"
        used.add(name)
        out.append(name)
    return out


def differing(variants: Sequence[Variant]) -> list[str]:
    """Return what differs between ``variants``: ``"model"``, ``"system"``, setting names (one variant: its model)."""
    keys: list[str] = []
    if len(variants) == 1 or len({model_word(v.model) for v in variants}) > 1:
        keys.append("model")
    if len({v.system for v in variants}) > 1:
        keys.append("system")
    for k in dict.fromkeys(k for v in variants for k in v.settings):
        if len({repr(v.settings.get(k)) for v in variants}) > 1:
            keys.append(k)
    return keys
