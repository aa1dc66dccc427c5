"""Helpers for the importer tests: the fixture folder and small readers of an opened session."""

from __future__ import annotations

import json
from pathlib import Path

from durable_nb import ai
from durable_nb.importers import Imported, open_session
from durable_nb.session.view import INTERRUPTED

FIXTURES = Path(__file__).parent / "fixtures"
ALL = sorted(p.name for p in FIXTURES.glob("*.jsonl"))
# The pi v1 prefix is cut right after a tool call (see SOURCES.md): the only incomplete log here.
INCOMPLETE = {"pi-mono-v1-before-compaction-prefix.jsonl"}


def opened(name: str) -> Imported:
    return open_session(FIXTURES / name)


def raw_lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line.strip()]


def synthesized(msgs: list[ai.Message]) -> list[ai.Message]:
    """The tool results the model view made up for calls without a result."""
    return [m for m in msgs if m.role == "tool_result" and m.is_error and m.text() == INTERRUPTED]


def texts(msgs: list[ai.Message]) -> list[str]:
    return [m.text() for m in msgs]
