"""Sampling settings: the named ones are checked; provider extras pass through verbatim."""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import DurableError

NAMED = ("temperature", "max_tokens", "top_p", "seed", "stop")
_CREDENTIAL = re.compile(
    r"api[_-]?key|secret|passw(or)?d|authori[sz]ation|(auth|access|bearer|refresh)[_-]?token", re.I
)


class SettingsError(DurableError):
    """A setting of the wrong type or out of range (one line naming it)."""


@functools.cache
def _settings_model() -> Any:
    """The pydantic model of the named settings, built on the first check (pydantic is imported
    then, not with ``%load_ext``: ~30 ms)."""
    import pydantic

    class _Settings(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")

        temperature: float | None = pydantic.Field(None, ge=0)
        max_tokens: int | None = pydantic.Field(None, gt=0)
        top_p: float | None = pydantic.Field(None, ge=0, le=1)
        seed: int | None = None
        stop: str | list[str] | None = None

    return _Settings


def check_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Return ``settings`` checked and converted (``"0.2"`` → ``0.2``), unset and ``None`` ones left out.

    ``temperature`` (≥ 0), ``max_tokens`` (> 0), ``top_p`` (0–1), ``seed``
    (an integer) and ``stop`` (a string or a list of strings) are checked;
    any other key is a provider extra, passed through unchanged, unless it
    is a near miss of a named one (``temprature``), which is refused as a
    typo, or names a credential (``api_key``, ``extra_headers`` holding an
    ``Authorization``: settings are stored with every reply, and a key never
    reaches a store). Raises :class:`SettingsError` with one line naming each
    bad setting, never showing a credential's value. O(keys).
    """
    _refuse_credentials(settings, "")
    for key in settings:
        near = difflib.get_close_matches(key, NAMED, n=1, cutoff=0.85)
        if key not in NAMED and near:
            raise SettingsError(f"unknown setting {key!r} (did you mean {near[0]!r}?)")
    import pydantic

    try:
        parsed = _settings_model().model_validate(settings)
    except pydantic.ValidationError as e:
        bad = []
        for err in e.errors(include_url=False):
            name = str(err["loc"][0]) if err["loc"] else "settings"
            bad.append(f"{name}={err['input']!r}: {err['msg'].lower()}")
        raise SettingsError("bad setting " + "; ".join(bad)) from None
    return {k: v for k, v in parsed.model_dump().items() if v is not None}


def read_value(text: str) -> Any:
    """Return a setting typed on a command line: JSON when it is JSON (``0.2``, ``true``, ``["a"]``), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _refuse_credentials(settings: Mapping[str, Any], within: str) -> None:
    """Raise :class:`SettingsError` for a key (at any depth of nested dicts) that names a credential."""
    for key, value in settings.items():
        name = f"{within}{key}"
        if isinstance(key, str) and _CREDENTIAL.search(key):
            raise SettingsError(
                f"setting {name!r} is a credential: settings are stored with every reply, so it is not taken "
                "(the value is not shown); set the provider's environment variable (OPENAI_API_KEY, "
                "ANTHROPIC_API_KEY) or give the model a client made with the key"
            )
        if isinstance(value, Mapping):
            _refuse_credentials(value, f"{name}.")
