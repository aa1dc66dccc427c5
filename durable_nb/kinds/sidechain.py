"""Sidechains: the head of a Claude Code subagent run (``claude_code.sidechain``, id
``sidechain:<agentId>``, ``data.name``), written by the Claude Code importer.

The run's first line hangs off it, so it is on the chain (not an aside,
though its kind has the importer's prefix): a row of the tree, shown by its
kind, read as ``subagent run <name>``, replayed and copied as it is.
"""

from __future__ import annotations

from ..session.kinds import Kind, register
from .records import record_text

SIDECHAIN = "claude_code.sidechain"

KIND = register(Kind(SIDECHAIN, text=record_text))
