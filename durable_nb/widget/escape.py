"""The two helpers of the static HTML forms (:mod:`.fallback`, :mod:`.comparison`): escape, clip."""

from __future__ import annotations

from html import escape
from typing import Any


def text(value: Any) -> str:
    """Return ``value`` as escaped HTML text (quotes included; ``None`` is ``""``). O(len)."""
    return escape("" if value is None else str(value), quote=True)


def clip(s: str, limit: int) -> str:
    """Return ``s`` cut to ``limit`` characters, saying how many more there were. O(limit)."""
    return s if len(s) <= limit else f"{s[:limit]}… ({len(s) - limit} more characters)"
